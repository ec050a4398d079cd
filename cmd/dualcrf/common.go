package main

import (
	"fmt"
	"io"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/dualcrf/dualcrf/pipeline"
	"github.com/dualcrf/dualcrf/stage"
)

// withOutput runs fn on the output for path ("" or "-" = standard output)
// and commits it only when fn succeeds, so a failing stage leaves no file.
func withOutput(c *cli.Context, path string, fn func(w io.Writer, name string) error) error {
	out, err := std(c).CreateOutput(path)
	if err != nil {
		return err
	}
	return finishOutput(c, out, fn(out, out.Name()))
}

// finishOutput commits out when err is nil and no signal came, else
// removes it; it returns what went wrong.
func finishOutput(c *cli.Context, out *pipeline.Output, err error) error {
	if err != nil {
		out.Abort()
		return err
	}
	// A signal that came while fn ran must leave no output, even when fn
	// finished: the run was interrupted.
	if err := c.Context.Err(); err != nil {
		out.Abort()
		return fmt.Errorf("%s: %w", out.Name(), err)
	}
	return out.Commit()
}

// std is the standard streams of the app: what "-" reads and writes.
func std(c *cli.Context) pipeline.Std {
	return pipeline.Std{In: c.App.Reader, Out: c.App.Writer, Ctx: c.Context}
}

// logf prints a progress or summary line on the app's standard error.
func logf(c *cli.Context, format string, args ...any) {
	fmt.Fprintf(c.App.ErrWriter, format+"\n", args...)
}

// inputName names the input at path in messages.
func inputName(path string) string {
	if pipeline.IsStdin(path) {
		return pipeline.StdinName
	}
	return path
}

// outputName names the output at path in messages.
func outputName(path string) string {
	if pipeline.IsStdin(path) {
		return pipeline.StdoutName
	}
	return path
}

// stageInput is the input at path for a stage: "" and "-" are the app's
// standard input.
func stageInput(c *cli.Context, path string) stage.Input {
	if !pipeline.IsStdin(path) {
		return stage.File(path)
	}
	r := c.App.Reader
	if r == nil {
		r = os.Stdin
	}
	return stage.Reader(r, pipeline.StdinName)
}
