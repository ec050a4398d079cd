package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/dualcrf/dualcrf/decode"
	"github.com/dualcrf/dualcrf/job"
	"github.com/dualcrf/dualcrf/pipeline"
	"github.com/dualcrf/dualcrf/progress"
)

func runCommand() *cli.Command {
	return &cli.Command{
		Name:      "run",
		Usage:     "run a job file: featurize, train, decode and eval stages, re-running only what changed",
		ArgsUsage: "JOB.yaml",
		Description: `A job file (YAML) names its stages, their inputs (paths and globs, with ${DATE}, ${env:X} and
the job's vars), their options (the stage's flags, by name) and their outputs:

   name: chunking
   stages:
     - {run: featurize, inputs: [train.txt.gz], options: {template: chunking}, output: train.arrow}
     - {run: train, inputs: [train.arrow], options: {gap-tol: 0.001}, output: model.arrow}

A stage whose inputs (SHA-256), options and outputs are as its last successful run left them is
skipped; an interrupted train resumes from its checkpoint (a snapshot every 5 minutes of training
and on SIGINT/SIGTERM, unless the stage's options set checkpoint-every or checkpoint-interval); a
second run of the same job while one holds its lock is refused; the run's manifest (JSON) records
each stage's files, hashes, seconds and metrics. The error names the stage that failed; its outputs and the last manifest stay as
they were.

   dualcrf run --dry-run chunking.yaml       # what would run, what would be skipped, and why
   dualcrf run --var DATE=2026-11-23 chunking.yaml`,
		Flags:  runFlags().cliFlags(),
		Action: runFlags().checkedAction(runJob),
	}
}

// runFlags is run's flag table: its flags and the job file. The files of
// the job's stages are the stages' own, declared in their commands'
// tables (jobExec.Files), and checked by package job.
func runFlags() optionFlags[struct{}] {
	return slices.Concat(optionFlags[struct{}]{
		{catInput, argFiles("JOB.yaml", pipeline.RoleInput, false), nil, nil},
	}, plain[struct{}](catJob,
		&cli.BoolFlag{Name: "dry-run", Aliases: []string{"n"}, Usage: "print what would run and what would be skipped, and why; touch nothing"},
		&cli.StringSliceFlag{Name: "var", Usage: "set a job variable, KEY=VALUE (repeatable; DATE overrides today's date)"},
	), plain[struct{}](catProgress, progressFlag()))
}

// runJob parses the job file and runs it.
func runJob(c *cli.Context) error {
	if c.NArg() != 1 {
		return fmt.Errorf("run: want one job file, got %d arguments", c.NArg())
	}
	vars := map[string]string{}
	for _, kv := range c.StringSlice("var") {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return fmt.Errorf("run: --var %q: want KEY=VALUE", kv)
		}
		vars[k] = v
	}
	f, err := job.Parse(c.Args().First(), vars, time.Now())
	if err != nil {
		return err
	}
	p, log, done := stageProgress(c)
	defer done()
	x := jobExec{p: p}
	_, err = job.Run(c.Context, f, x, job.Options{DryRun: c.Bool("dry-run"), Log: log, Stdout: c.App.Writer, Progress: p})
	return err
}

// jobExec runs a job's stages as this command's own, in process.
type jobExec struct{ p *progress.Reporter }

// Run runs the stage args names; its bars nest under the job's.
func (x jobExec) Run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	app := newApp(strings.NewReader(""), stdout, stderr)
	return app.RunContext(withReporter(ctx, x.p), append([]string{"dualcrf"}, args...))
}

// Files declares the files of command's options, as its flag table does.
func (jobExec) Files(command string) map[string]pipeline.FileSpec { return flagFiles(command) }

// Check parses the stage's flags and checks its options as the stage
// would, without reading or writing a file.
func (jobExec) Check(args []string) error {
	app := newApp(strings.NewReader(""), io.Discard, io.Discard)
	for _, cmd := range app.Commands {
		cmd.Action = checkStage
	}
	return app.Run(append([]string{"dualcrf"}, args...))
}

// checkStage refuses the options a stage would refuse before reading its
// inputs.
func checkStage(c *cli.Context) error {
	switch c.Command.Name {
	case "train":
		_, err := trainOptions(c)
		return err
	case "featurize":
		return checkInputFlags(c)
	case "eval":
		if c.Bool("no-chunks") && c.IsSet("scheme") {
			return fmt.Errorf("eval: --scheme and --no-chunks exclude each other (--no-chunks scores tokens only)")
		}
		_, err := decode.ParseScheme(c.String("scheme"))
		return err
	}
	return nil
}
