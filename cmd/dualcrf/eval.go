package main

import (
	"fmt"
	"io"
	"slices"

	"github.com/urfave/cli/v2"

	"github.com/dualcrf/dualcrf/arrowio"
	"github.com/dualcrf/dualcrf/decode"
	"github.com/dualcrf/dualcrf/pipeline"
	"github.com/dualcrf/dualcrf/schemas"
	"github.com/dualcrf/dualcrf/stage"
	"github.com/dualcrf/dualcrf/tables"
)

func evalCommand() *cli.Command {
	return &cli.Command{
		Name:      "eval",
		Usage:     "score a prediction table: token accuracy, per-label and conlleval chunk precision/recall/F1",
		ArgsUsage: "[PREDICTIONS|-]",
		Description: `Prints conlleval's report on standard output (--json for machines; --arrow FILE writes the
overall figures as a one-row Arrow table, the scores table; Parquet when FILE ends .parquet). Precision, recall, F1 and accuracy are
fractions in [0, 1] in --json and --arrow; the report prints them as percentages, as conlleval does.
Labels without chunk prefixes (no O, B-, I-, E-, S- on any label, e.g. part-of-speech tags) are
scored by token accuracy only, with a note saying so (as --no-chunks; --scheme forces chunk scores).
Exits non-zero when there are no gold labels.

   dualcrf decode -m model.arrow test.arrow | dualcrf eval
   dualcrf eval --json predictions.arrow`,
		Flags:  evalFlags().cliFlags(),
		Action: evalFlags().checkedAction(runEval),
	}
}

// evalFlags is eval's flag table: its flags and the files it names.
func evalFlags() optionFlags[struct{}] {
	return slices.Concat(optionFlags[struct{}]{
		{catInput, argFiles("PREDICTIONS", pipeline.RoleInput, true).orStdin(), nil, nil},
	}, plain[struct{}](catScoring,
		&cli.StringFlag{Name: "scheme", Value: decode.SchemeConlleval.String(), Usage: "chunk rules: conlleval (the 2004 script's), auto (adds IOBES), iob1, iob2, iobes"},
		&cli.BoolFlag{Name: "no-chunks", Usage: "token accuracy only (e.g. part-of-speech tags)"},
		&cli.BoolFlag{Name: "calibration", Usage: "add a reliability table of the predicted chunks' confidence (needs decode --chunk-confidence): bins, precision, ECE"},
	), optionFlags[struct{}]{
		{catOutput, stdoutFile("report"), nil, nil},
		{catOutput, &cli.BoolFlag{Name: "json", Usage: "write the scores as JSON"}, nil, nil},
		{catOutput, fileOf(pipeline.RoleOutput, &cli.StringFlag{Name: "arrow", Aliases: []string{"scores"}, Usage: "also write the overall scores as a one-row table: an Arrow IPC file, or Parquet when the name ends .parquet"}), nil, nil},
	})
}

// runEval scores the predictions and prints the report (or JSON), writing
// the scores table too with --arrow.
func runEval(c *cli.Context) error {
	if c.NArg() > 1 {
		return fmt.Errorf("eval: one prediction table at most, got %d", c.NArg())
	}
	if c.Bool("no-chunks") && c.IsSet("scheme") {
		return fmt.Errorf("eval: --scheme and --no-chunks exclude each other (--no-chunks scores tokens only)")
	}
	// Without --scheme, a tag set without chunk prefixes (POS tags) is
	// scored by token accuracy, saying why.
	scheme, err := decode.ParseScheme(c.String("scheme"))
	if err != nil {
		return err
	}
	if c.Bool("no-chunks") && c.Bool("calibration") {
		return fmt.Errorf("eval: --calibration and --no-chunks exclude each other (--calibration scores chunk confidence)")
	}
	o := stage.EvalOptions{Scheme: scheme, NoChunks: c.Bool("no-chunks"), AutoNoChunks: !c.IsSet("scheme"), Calibration: c.Bool("calibration")}
	in := c.Args().First()
	if in == "" {
		in = "-"
	}
	scoresFormat, err := evalFormat(c)
	if err != nil {
		return err
	}
	ev, err := stage.Eval(c.Context, stageInput(c, in), o)
	if err == nil {
		err = c.Context.Err() // a signal came: write nothing
	}
	if err != nil {
		return err
	}
	if path := c.String("arrow"); path != "" {
		err := withOutput(c, path, func(w io.Writer, _ string) error {
			return tables.WriteScores(w, ev.Result().Row(), map[string]string{schemas.KeySource: in}, arrowio.WriterOptions{Format: scoresFormat})
		})
		if err != nil {
			return err
		}
	}
	if c.Bool("json") {
		return ev.WriteJSON(c.App.Writer)
	}
	return ev.WriteConlleval(c.App.Writer)
}
