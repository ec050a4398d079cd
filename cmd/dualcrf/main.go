// Command dualcrf trains linear-chain CRFs with SDCA-GAP and runs as
// Unix-pipeline stages over Arrow tables: featurize, train, decode, eval.
// Run `dualcrf --help` for the stages.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/dualcrf/dualcrf/pipeline"
)

func main() {
	ctx, stop := signalContext()
	code := run(ctx, os.Args, os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run is the whole command but for the signals and the exit: it runs the
// stage args names (args[0] is the program) reading stdin, writing tables
// to stdout and messages to stderr, and returns the exit status. Tests run
// it in-process.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	err := newApp(stdin, stdout, stderr).RunContext(ctx, args)
	return exitCode(err, context.Cause(ctx), stderr)
}

// signalContext returns a context that the first SIGINT or SIGTERM cancels
// with a *signalError cause, and a function that stops listening.
func signalContext() (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(context.Background())
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		// The first signal cancels the stage, which stops at a safe point
		// (train finishes a checkpoint write and saves where it stopped);
		// a second one ends the process at once.
		s := <-sigs
		cancel(&signalError{s})
		s = <-sigs
		fmt.Fprintf(os.Stderr, "dualcrf: second %s: exiting at once\n", signalName(s))
		os.Exit(signalStatus(s))
	}()
	return ctx, func() { signal.Stop(sigs) }
}

// signalError is the cause of a cancellation by a signal.
type signalError struct{ sig os.Signal }

func (e *signalError) Error() string { return "interrupted by " + signalName(e.sig) }

// signalName returns SIGINT or SIGTERM.
func signalName(s os.Signal) string {
	if s == syscall.SIGTERM {
		return "SIGTERM"
	}
	return "SIGINT"
}

// signalStatus is the shell's status for a process ended by s: 128 + its
// number (130 for SIGINT, 143 for SIGTERM).
func signalStatus(s os.Signal) int {
	if s == syscall.SIGTERM {
		return 128 + int(syscall.SIGTERM)
	}
	return 128 + int(syscall.SIGINT)
}

// exitCode reports err on stderr and returns the process exit status: 0 on
// success or when a downstream reader closed the pipe, 130 after SIGINT and
// 143 after SIGTERM (cause is the context's cancellation cause), 1
// otherwise.
func exitCode(err, cause error, stderr io.Writer) int {
	var se *signalError
	switch {
	case err == nil:
		return 0
	case pipeline.IsBrokenPipe(err):
		return 0
	case errors.As(cause, &se):
		// Interrupted: whatever failed after the signal (a read it ended,
		// whatever wraps that) failed because of it.
		fmt.Fprintf(stderr, "dualcrf: %s: %v\n", se, err)
		return signalStatus(se.sig)
	case errors.Is(err, context.Canceled):
		fmt.Fprintln(stderr, "dualcrf: interrupted:", err)
		return 130
	}
	fmt.Fprintln(stderr, "dualcrf:", err)
	return 1
}
