package main

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/dualcrf/dualcrf/pipeline"
	"github.com/dualcrf/dualcrf/plots"
)

func plotCommand() *cli.Command {
	return &cli.Command{
		Name:      "plot",
		Usage:     "overlay training logs: certified gap and primal against seconds and epochs",
		ArgsUsage: "LOG…",
		Description: `Reads training logs (train --log) and draws, one curve per log, the certified gap (log10) and the
primal against training seconds and against epochs, as SVG or PNG by the extension of -o.

   dualcrf plot -o runs.svg --names sdca,lbfgs sdca.log.arrow lbfgs.log.arrow`,
		Flags: flagGroups(category(catOutput,
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "figure file to write: .svg or .png (required)"},
			&cli.StringFlag{Name: "names", DefaultText: "the logs' file names", Usage: "comma-separated legend names, one per log"},
			&cli.StringFlag{Name: "title", Usage: "title heading each panel"},
		)),
		Action: runPlot,
	}
}

// runPlot reads the logs and writes their figure.
func runPlot(c *cli.Context) error {
	if c.NArg() == 0 {
		return fmt.Errorf("plot: want at least one training log")
	}
	out := c.String("output")
	if out == "" {
		return fmt.Errorf("plot: -o FILE (.svg or .png) is required")
	}
	format, err := plots.FormatOf(out)
	if err != nil {
		return fmt.Errorf("plot: -o %w", err)
	}
	logs := c.Args().Slice()
	names := make([]string, len(logs))
	for i, l := range logs {
		names[i] = strings.TrimSuffix(filepath.Base(l), filepath.Ext(l))
	}
	if c.IsSet("names") {
		names = strings.Split(c.String("names"), ",")
		if len(names) != len(logs) {
			return fmt.Errorf("plot: --names has %d names for %d logs", len(names), len(logs))
		}
	}
	ins := make([]pipeline.Path, len(logs))
	for i, l := range logs {
		if l == "-" {
			return fmt.Errorf("plot: a training log is a file (an Arrow IPC file), not standard input")
		}
		ins[i] = pathOf("", l)
	}
	if err := checkFiles(c, "plot", ins, []pipeline.Path{pathOf("-o", out)}); err != nil {
		return err
	}
	runs := make([]plots.Run, len(logs))
	for i, l := range logs {
		if runs[i], err = plots.ReadRun(l, names[i]); err != nil {
			return err
		}
	}
	fig := plots.LogFigure(c.String("title"), runs)
	return withOutput(c, out, func(w io.Writer, name string) error {
		if err := fig.Write(w, format); err != nil {
			return fmt.Errorf("write %s: %w", name, err)
		}
		logf(c, "plot: %d runs -> %s", len(runs), name)
		return nil
	})
}
