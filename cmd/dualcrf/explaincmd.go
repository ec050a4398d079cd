package main

import (
	"fmt"
	"io"
	"math"

	"github.com/urfave/cli/v2"

	"github.com/dualcrf/dualcrf/arrowio"
	"github.com/dualcrf/dualcrf/pipeline"
	"github.com/dualcrf/dualcrf/schemas"
	"github.com/dualcrf/dualcrf/stage"
	"github.com/dualcrf/dualcrf/tables"
)

// explainText is explain's --format for text (pipeline's CoNLL-text kind:
// the text output of a stage, named .txt).
const explainText = "text"

func explainCommand() *cli.Command {
	return &cli.Command{
		Name:      "explain",
		Usage:     "show what a model learnt: the top attributes per label, the transitions, the label weights; or its weights as a table",
		ArgsUsage: "MODEL|-",
		Description: `Prints, for people, a summary of the model's weights, the attributes with the largest positive and
the most negative weights for every label (--top N of each), the transition matrix (rows: previous
label, columns: next label) and the label bias, start and end weights when the model has them.
With -o FILE.parquet or FILE.arrow (or --format parquet|arrow) it writes instead the weights
table, one row per weight, for SQL: kind (attr, trans, bias, start, end), label, from_label (a
transition's previous label), attribute, template (the feature template that made the attribute)
and weight; zero attribute weights are left out.

   dualcrf explain --top 5 model.arrow
   dualcrf explain -o weights.parquet model.arrow`,
		Flags:  explainFlags().cliFlags(),
		Action: explainFlags().checkedAction(runExplain),
	}
}

// explainFlags is explain's flag table: its flags and the files it names.
func explainFlags() optionFlags[struct{}] {
	return optionFlags[struct{}]{
		{catInput, argFiles("MODEL", pipeline.RoleInput, true), nil, nil},
		{catOutput, intIn(&cli.IntFlag{Name: "top", Value: stage.DefaultExplainTop, Usage: "attributes shown per label with the largest positive weights, and as many with the most negative"},
			1, math.MaxInt, ""), nil, nil},
		{catOutput, &cli.StringFlag{Name: "format", Usage: "text, arrow (an Arrow IPC file) or parquet (default: from -o's extension, else text)"}, nil, nil},
		{catOutput, fileOf(pipeline.RoleOutput, &cli.StringFlag{Name: "output", Aliases: []string{"o"}, Value: "-", Usage: "the file to write (- for standard output)"}).std(), nil, nil},
	}
}

// runExplain reads the model and writes its explanation or weights table.
func runExplain(c *cli.Context) error {
	if c.NArg() != 1 {
		return fmt.Errorf("explain: want one model file (or -), got %d arguments", c.NArg())
	}
	in, out := c.Args().First(), c.String("output")
	req := pipeline.OutputRequest{Flag: "-o", Path: out, PathGiven: c.IsSet("output"),
		Kinds: []pipeline.Kind{pipeline.KindCoNLL, pipeline.KindArrow, pipeline.KindParquet}, IPC: arrowio.FormatFile, TextName: explainText}
	if c.IsSet("format") {
		req.KindFlag = "--format"
		switch f := c.String("format"); f {
		case explainText:
			req.Kind = pipeline.KindCoNLL
		case string(pipeline.KindArrow), string(pipeline.KindParquet):
			req.Kind = pipeline.Kind(f)
		default:
			return fmt.Errorf("explain: --format %q: want text, arrow or parquet", f)
		}
	}
	of, err := std(c).ResolveOutput(req)
	if err != nil {
		return fmt.Errorf("explain: %w", err)
	}
	o := stage.ExplainOptions{Top: c.Int("top")}
	if err := o.Check(); err != nil {
		return err
	}
	m, err := stage.ReadModel(c.Context, stageInput(c, in))
	if err != nil {
		return err
	}
	return withOutput(c, out, func(w io.Writer, name string) error {
		switch of.Kind {
		case pipeline.KindCoNLL:
			return stage.Explain(w, m, inputName(in), o)
		case pipeline.KindParquet:
			return tables.WriteWeightRows(w, stage.WeightRowSeq(m), map[string]string{schemas.KeySource: inputName(in)},
				arrowio.WriterOptions{Format: arrowio.FormatParquet})
		}
		return tables.WriteWeightRows(w, stage.WeightRowSeq(m), map[string]string{schemas.KeySource: inputName(in)},
			arrowio.WriterOptions{Format: of.IPC})
	})
}
