package main

import (
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/dualcrf/dualcrf/pipeline"
	"github.com/dualcrf/dualcrf/plots"
)

func plotCommand() *cli.Command {
	return &cli.Command{
		Name:      "plot",
		Usage:     "overlay training logs: certified gap and suboptimality against seconds and epochs",
		ArgsUsage: "LOG…",
		Description: `Reads training logs (train --log) and draws, one curve per log, the certified gap P − D and the
primal suboptimality against training seconds and against epochs, on log axes, as SVG or PNG by
the extension of -o. Each certified epoch is a marker; consecutive certified epochs are joined by
a solid line, and a dotted line crosses epochs that were not certified (train --gap-every 1
certifies every epoch).

The suboptimality is P − P* with --ref (a number, or a training log whose best certified primal is
taken as P*); without it, P − D_best, D_best the best certified dual of the logs: a lower bound on
P*, so the curve bounds P − P* from above and ends at the last certified gap.

   dualcrf plot -o runs.svg --names sdca,lbfgs sdca.log.arrow lbfgs.log.arrow
   dualcrf plot -o runs.png --ref long.log.arrow sdca.log.arrow`,
		Flags:  plotFlags().cliFlags(),
		Action: plotFlags().checkedAction(runPlot),
	}
}

// plotFlags is plot's flag table: its flags and the files it names.
func plotFlags() optionFlags[struct{}] {
	return optionFlags[struct{}]{
		{catInput, argFiles("LOG", pipeline.RoleInput, false), nil, nil},
		{catOutput, fileOf(pipeline.RoleOutput, &cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "figure file to write: .svg or .png (required)"}), nil, nil},
		{catOutput, &cli.StringFlag{Name: "names", DefaultText: "the logs' file names", Usage: "comma-separated legend names, one per log"}, nil, nil},
		{catOutput, &cli.StringFlag{Name: "title", Usage: "title heading each panel"}, nil, nil},
		{catOutput, fileOf(pipeline.RoleInput, &cli.StringFlag{Name: "ref", DefaultText: "none: P − best certified dual", Usage: "reference optimum P* for the suboptimality P − P*: a number, or a training log whose best certified primal is P*"}).split(refPath), nil, nil},
		{catOutput, &cli.Float64Flag{Name: "gap-tol", Usage: "draw this gap target in the gap panels (0: none)"}, nil, nil},
	}
}

// refPath is where --ref's value names a file: anything but a number.
func refPath(v string) (prefix, path string) {
	if _, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil {
		return "", ""
	}
	return "", v
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
	if g := c.Float64("gap-tol"); g < 0 || math.IsNaN(g) || math.IsInf(g, 0) {
		return fmt.Errorf("plot: --gap-tol %g: want a finite number ≥ 0", g)
	}
	runs := make([]plots.Run, len(logs))
	for i, l := range logs {
		if runs[i], err = plots.ReadRun(l, names[i]); err != nil {
			return err
		}
	}
	o := plots.LogOptions{Title: c.String("title"), Ref: math.NaN(), GapTol: c.Float64("gap-tol")}
	if c.IsSet("ref") {
		if o.Ref, o.RefName, err = plotRef(c.String("ref")); err != nil {
			return err
		}
		if above := plots.AboveRef(runs, o.Ref); above != "" {
			logf(c, "plot: warning: --ref P* = %.10g is above a certified primal (%s), so it is not this problem's optimum; points with P ≤ P* are left out", o.Ref, above)
		}
	}
	fig := plots.LogFigure(runs, o)
	return withOutput(c, out, func(w io.Writer, name string) error {
		if err := fig.Write(w, format); err != nil {
			return fmt.Errorf("write %s: %w", name, err)
		}
		logf(c, "plot: %d runs -> %s", len(runs), name)
		return nil
	})
}

// plotRef reads --ref: a finite number, or a training log whose best
// certified primal is P* (named, for the axis label, by its file name).
func plotRef(s string) (float64, string, error) {
	if v, err := strconv.ParseFloat(strings.TrimSpace(s), 64); err == nil {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return 0, "", fmt.Errorf("plot: --ref %q: want a finite number (P*) or a training log", s)
		}
		return v, "", nil
	}
	if _, err := os.Stat(s); err != nil {
		return 0, "", fmt.Errorf("plot: --ref %q is neither a number (P*) nor a training log: %w", s, err)
	}
	run, err := plots.ReadRun(s, s)
	if err != nil {
		return 0, "", fmt.Errorf("plot: --ref: %w", err)
	}
	v := plots.BestPrimal([]plots.Run{run})
	if math.IsNaN(v) {
		return 0, "", fmt.Errorf("plot: --ref %s: the training log has no certified epoch", s)
	}
	return v, filepath.Base(s), nil
}
