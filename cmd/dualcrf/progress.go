package main

import (
	"context"
	"io"

	"github.com/urfave/cli/v2"

	"github.com/dualcrf/dualcrf/progress"
)

// progressFlag is --progress: how a long stage shows how far it has come,
// on standard error only.
func progressFlag() *cli.StringFlag {
	return &cli.StringFlag{Name: "progress", Value: string(progress.DefaultMode),
		Usage: "progress on standard error: auto (bars when it is a terminal, else none), bar, json (one event object per line, messages included) or none",
		Action: func(c *cli.Context, s string) error {
			_, err := progress.ParseMode(s)
			if err != nil {
				return flagRangeError(c, "progress", `"`+s+`"`, "one of "+joinModes(), "")
			}
			return nil
		}}
}

// joinModes lists the modes of --progress.
func joinModes() string {
	s := ""
	for i, m := range progress.Modes() {
		if i > 0 {
			s += ", "
		}
		s += m
	}
	return s
}

// reporterKey is the context key of a reporter shared by the stages of a
// job (dualcrf run), which they draw on instead of making their own.
type reporterKey struct{}

// withReporter returns ctx carrying the job's reporter.
func withReporter(ctx context.Context, r *progress.Reporter) context.Context {
	return context.WithValue(ctx, reporterKey{}, r)
}

// stageProgress returns the reporter --progress asks for on the app's
// standard error (nil for none, or auto off a terminal), or the job's;
// the writer the stage's messages go to through it; and the function to
// call when the stage ends.
func stageProgress(c *cli.Context) (*progress.Reporter, io.Writer, func()) {
	if r, ok := c.Context.Value(reporterKey{}).(*progress.Reporter); ok {
		return r, c.App.ErrWriter, func() {} // the job's writer passes through r already
	}
	mode, err := progress.ParseMode(c.String("progress"))
	if err != nil {
		mode = progress.None // refused by the flag's action already
	}
	r := progress.ForStderr(c.App.ErrWriter, mode)
	return r, r.Writer(c.App.ErrWriter), func() { r.Close() }
}
