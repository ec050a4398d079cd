// Command dualcrf-beam runs dualcrf's batch stages — featurize, decode,
// eval — as Apache Beam pipelines over sharded inputs: on Beam's Prism
// runner inside this process by default, or on Flink, Spark or Dataflow
// through --runner and --endpoint. Run `dualcrf-beam --help`.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"runtime"
	"strings"
	"syscall"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/options/jobopts"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/runners"
)

func main() {
	// An engine starts this binary as a Beam worker with Beam's own flags
	// (--worker, --id, …) and no stage: beam.Init then runs the worker.
	if len(os.Args) > 1 && strings.HasPrefix(os.Args[1], "--worker") {
		flag.Parse()
		beam.Init()
		return
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		s := <-sigs
		cancel(&signalError{s})
		<-sigs
		os.Exit(signalStatus(s))
	}()
	code := run(ctx, os.Args, os.Stdout, os.Stderr)
	signal.Stop(sigs)
	os.Exit(code)
}

// signalError is the cause of a cancellation by a signal.
type signalError struct{ sig os.Signal }

func (e *signalError) Error() string { return "interrupted by " + e.sig.String() }

// signalStatus is the exit status after signal s: 128 + its number.
func signalStatus(s os.Signal) int {
	if s == syscall.SIGTERM {
		return 143
	}
	return 130
}

const usage = `dualcrf-beam runs dualcrf's batch stages as Apache Beam pipelines over sharded inputs.

Usage:
  dualcrf-beam featurize -o DIR [flags] SHARD...   text shards → DIR/part-NNNNN.arrow feature tables
  dualcrf-beam decode -m MODEL -o DIR [flags] SHARD...   feature tables (or text) → DIR/part-NNNNN.parquet
  dualcrf-beam eval [-o FILE] [flags] SHARD...     prediction tables → dualcrf eval's report

SHARD is a file or a glob (quote it); shards are taken in lexical order of
their paths, pattern by pattern, and part-NNNNN is shard NNNNN's output.
The outputs equal dualcrf featurize/decode/eval's on the concatenation of
the shards. Run 'dualcrf-beam STAGE --help' for a stage's flags.

Runner flags (every stage):
  --runner NAME     Beam runner: prism (default: in this process), universal
                    (a portable job server: Flink, Spark), dataflow, …
  --endpoint HOST:PORT  the job server's address (default: Prism's own, started here)
  --workers N       with the in-process Prism runner: CPUs the job uses (0: all)
Beam's other pipeline options (--environment_type, --project, --region,
--staging_location, …) are accepted too; see docs/beam.md.
`

// run runs the stage args names (args[0] is the program), writing the
// report to stdout and messages to stderr, and returns the exit status.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	err := dispatch(ctx, args[1:], stdout, stderr)
	switch {
	case err == nil:
		return 0
	case errors.Is(err, flag.ErrHelp):
		return 0
	}
	var sig *signalError
	if errors.As(context.Cause(ctx), &sig) {
		fmt.Fprintf(stderr, "dualcrf-beam: %v\n", sig)
		return signalStatus(sig.sig)
	}
	fmt.Fprintf(stderr, "dualcrf-beam: %v\n", err)
	return 1
}

// dispatch runs the stage args[0].
func dispatch(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return errors.New("no stage given (featurize, decode or eval)")
	}
	switch args[0] {
	case "-h", "--help", "-help", "help":
		fmt.Fprint(stdout, usage)
		return nil
	case "featurize":
		return runFeaturize(ctx, args[1:], stdout, stderr)
	case "decode":
		return runDecode(ctx, args[1:], stdout, stderr)
	case "eval":
		return runEval(ctx, args[1:], stdout, stderr)
	}
	return fmt.Errorf("unknown stage %q (want featurize, decode or eval)", args[0])
}

// stageFlags are a stage's flag set and the flags every stage has.
type stageFlags struct {
	*flag.FlagSet
	synopsis string
	stdout   io.Writer
	own      map[string]bool // the stage's own flags, shown in its help
	workers  int
	verbose  bool
	stderr   io.Writer
}

// newStageFlags returns a stage's flag set with the runner flags.
func newStageFlags(name, synopsis string, stdout, stderr io.Writer) *stageFlags {
	f := &stageFlags{FlagSet: flag.NewFlagSet(name, flag.ContinueOnError), synopsis: synopsis, stdout: stdout, stderr: stderr}
	f.SetOutput(io.Discard)
	f.IntVar(&f.workers, "workers", 0, "with the in-process Prism runner: CPUs the job uses (0: all)")
	f.BoolVar(&f.verbose, "verbose", false, "log the runner's progress (Prism's and Beam's messages) to stderr")
	f.Usage = func() {} // parse prints the help on --help, and nothing on an error
	return f
}

// usage prints the stage's help: its own flags, --runner and --endpoint.
func (f *stageFlags) usage() {
	fmt.Fprintf(f.stdout, "Usage: dualcrf-beam %s\n\nFlags:\n", f.synopsis)
	runnerUsage := map[string]string{
		"runner":   "Beam runner: prism (in this process), universal (a portable job server: Flink, Spark), dataflow, … (default prism)",
		"endpoint": "the job server's address, HOST:PORT (default: a Prism server started in this process)",
	}
	f.VisitAll(func(fl *flag.Flag) {
		usage, ok := runnerUsage[fl.Name]
		if !f.own[fl.Name] && !ok {
			return
		}
		if !ok {
			usage = fl.Usage
			if fl.DefValue != "" && fl.DefValue != "0" && fl.DefValue != "false" {
				usage += fmt.Sprintf(" (default %s)", fl.DefValue)
			}
		}
		dash := "--"
		if len(fl.Name) == 1 {
			dash = "-"
		}
		fmt.Fprintf(f.stdout, "  %s%s\t%s\n", dash, fl.Name, usage)
	})
	fmt.Fprintln(f.stdout, "Beam's other pipeline options are accepted too (see docs/beam.md).")
}

// parse adds Beam's pipeline options to the stage's flags and parses
// args, flags and operands in any order ("--" ends the flags).
func (f *stageFlags) parse(args []string) ([]string, error) {
	f.own = map[string]bool{}
	f.VisitAll(func(fl *flag.Flag) { f.own[fl.Name] = true })
	flag.CommandLine.VisitAll(func(fl *flag.Flag) {
		// Beam's options are globals: start every run from the runner's
		// defaults (Prism records its endpoint and environment in them).
		switch fl.Name {
		case "runner", "endpoint", "environment_type":
			_ = fl.Value.Set(fl.DefValue)
		}
		if f.Lookup(fl.Name) == nil {
			f.Var(fl.Value, fl.Name, fl.Usage)
		}
	})
	var operands []string
	for {
		if err := f.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				f.usage()
			}
			return nil, err
		}
		args = f.Args()
		switch {
		case len(args) == 0:
			return operands, nil
		case args[0] == "--":
			return append(operands, args[1:]...), nil
		}
		operands = append(operands, args[0])
		args = args[1:]
	}
}

// inProcess reports whether the job runs on Prism inside this process.
func inProcess() bool {
	r := strings.ToLower(*runners.Runner)
	return (r == "" || r == "prism" || r == "prismrunner") && *jobopts.Endpoint == ""
}

// start checks the runner flags, applies --workers and initializes Beam.
func (f *stageFlags) start() error {
	if f.workers < 0 {
		return fmt.Errorf("--workers %d: want a count ≥ 0", f.workers)
	}
	if f.workers > 0 {
		if !inProcess() {
			return errors.New("--workers applies to the in-process Prism runner; give the engine its parallelism (e.g. --parallelism for Flink)")
		}
		runtime.GOMAXPROCS(f.workers)
	}
	if !beam.Initialized() {
		beam.Init()
	}
	// Prism and Beam log through slog (beam.Init set it up): nothing,
	// unless --verbose.
	level := slog.LevelError + 4 // none: run prints the job's error itself
	if f.verbose {
		level = slog.LevelInfo
	}
	slog.SetDefault(slog.New(slog.NewTextHandler(f.stderr, &slog.HandlerOptions{Level: level})))
	return nil
}
