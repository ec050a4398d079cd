package main

import (
	"fmt"
	"io"

	"github.com/urfave/cli/v2"

	"github.com/dualcrf/dualcrf/decode"
	"github.com/dualcrf/dualcrf/pipeline"
	"github.com/dualcrf/dualcrf/schemas"
	"github.com/dualcrf/dualcrf/tables"
)

func evalCommand() *cli.Command {
	return &cli.Command{
		Name:      "eval",
		Usage:     "score a prediction table: token accuracy, per-label and conlleval chunk precision/recall/F1",
		ArgsUsage: "[PREDICTIONS|-]",
		Description: `Prints conlleval's report on standard output (--json for machines; --arrow FILE writes the
overall figures as a one-row Arrow table, the scores table). Precision, recall, F1 and accuracy are
fractions in [0, 1] in --json and --arrow; the report prints them as percentages, as conlleval does.
Exits non-zero when there are no gold labels.

   dualcrf decode -m model.arrow test.arrow | dualcrf eval
   dualcrf eval --json predictions.arrow`,
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "json", Usage: "write the scores as JSON"},
			&cli.StringFlag{Name: "arrow", Usage: "also write the overall scores as a one-row Arrow IPC file"},
			&cli.StringFlag{Name: "scheme", Value: "conlleval", Usage: "chunk rules: conlleval (the 2004 script's), auto (adds IOBES), iob1, iob2, iobes"},
			&cli.BoolFlag{Name: "no-chunks", Usage: "token accuracy only (e.g. part-of-speech tags)"},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() > 1 {
				return fmt.Errorf("eval: one prediction table at most, got %d", c.NArg())
			}
			if c.Bool("no-chunks") && c.IsSet("scheme") {
				return fmt.Errorf("eval: --scheme and --no-chunks exclude each other (--no-chunks scores tokens only)")
			}
			scheme, err := decode.ParseScheme(c.String("scheme"))
			if err != nil {
				return err
			}
			ev := decode.NewEvaluator(decode.EvalOptions{Scheme: scheme, NoChunks: c.Bool("no-chunks")})
			in := c.Args().First()
			if in == "" {
				in = "-"
			}
			if err := evalFiles(c, in); err != nil {
				return err
			}
			err = withInput(in, func(r io.Reader, name string) error {
				rr, err := pipeline.OpenRecordReader(r, name, pipeline.ReaderOptions{})
				if err != nil {
					return err
				}
				defer rr.Release()
				return decode.EvaluateReader(rr, name, ev)
			})
			if err != nil {
				return err
			}
			if path := c.String("arrow"); path != "" {
				if err := writeScores(path, in, ev.Result()); err != nil {
					return err
				}
			}
			if c.Bool("json") {
				return ev.WriteJSON(c.App.Writer)
			}
			return ev.WriteConlleval(c.App.Writer)
		},
	}
}

// writeScores writes the overall scores as a one-row Arrow IPC file, the
// scores table (schemas.ScoresSchema); source names the predictions scored.
func writeScores(path, source string, s decode.Scores) error {
	return withOutput(path, func(w io.Writer, _ string) error {
		return tables.WriteScores(w, s.Row(), map[string]string{schemas.KeySource: source}, pipeline.WriterOptions{})
	})
}
