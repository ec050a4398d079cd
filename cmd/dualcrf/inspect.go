package main

import (
	"fmt"
	"io"

	"github.com/urfave/cli/v2"

	"github.com/dualcrf/dualcrf/pipeline"
	"github.com/dualcrf/dualcrf/stage"
)

func inspectCommand() *cli.Command {
	return &cli.Command{
		Name:      "inspect",
		Usage:     "check and summarise any table dualcrf writes: feature table, model, prediction table, training log, scores, weights table",
		ArgsUsage: "FILE|-",
		Description: `Reads the whole table, checking it as the stage that reads it would (a model's checksum and
weights, every row of a table), and prints a summary: its kind and format version, then counts,
labels and metadata. Exits 1 with the reason when the table is damaged or not dualcrf's.

   dualcrf inspect train.arrow
   dualcrf inspect model.arrow`,
		Flags: inspectFlags().cliFlags(),
		Action: inspectFlags().checkedAction(func(c *cli.Context) error {
			if c.NArg() != 1 {
				return fmt.Errorf("inspect: want one file (or -), got %d arguments", c.NArg())
			}
			summary, err := stage.Inspect(c.Context, stageInput(c, c.Args().First()))
			if err == nil {
				err = c.Context.Err() // a signal came: print nothing
			}
			if err != nil {
				return err
			}
			if _, err := io.WriteString(c.App.Writer, summary); err != nil {
				return fmt.Errorf("inspect: write the summary to standard output: %w", err)
			}
			return nil
		}),
	}
}

// inspectFlags is inspect's flag table: the files it names (it has no
// flags).
func inspectFlags() optionFlags[struct{}] {
	return optionFlags[struct{}]{
		{catInput, argFiles("FILE", pipeline.RoleInput, true), nil, nil},
		{catOutput, stdoutFile("summary"), nil, nil},
	}
}
