package main

import (
	"io"

	"github.com/urfave/cli/v2"
)

// newApp builds the command-line interface; stdout and stderr are where the
// stages write tables and messages.
func newApp(stdout, stderr io.Writer) *cli.App {
	return &cli.App{
		Name:  "dualcrf",
		Usage: "train conditional random fields with SDCA-GAP, as Unix-pipeline stages over Arrow tables",
		Description: `Stages read a file or - (standard input) and write Arrow IPC to standard output or -o FILE,
so they chain with pipes:

   dualcrf featurize --template chunking train.txt.gz -o train.arrow
   dualcrf train --lambda 1/n -o model.arrow train.arrow
   dualcrf featurize --model model.arrow test.txt.gz | dualcrf decode -m model.arrow | dualcrf eval`,
		Writer:                 stdout,
		ErrWriter:              stderr,
		HideHelpCommand:        true,
		UseShortOptionHandling: true,
		ExitErrHandler:         func(*cli.Context, error) {}, // main reports errors and picks the status
		Commands: []*cli.Command{
			featurizeCommand(),
			inspectCommand(),
			trainCommand(),
			decodeCommand(),
			evalCommand(),
			demoCommand(),
		},
	}
}
