package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/urfave/cli/v2"
)

// newApp builds the command-line interface; stdin is what "-" reads, and
// stdout and stderr are where the stages write tables and messages.
func newApp(stdin io.Reader, stdout, stderr io.Writer) *cli.App {
	commands := []*cli.Command{
		featurizeCommand(),
		inspectCommand(),
		trainCommand(),
		decodeCommand(),
		evalCommand(),
		explainCommand(),
		exportCommand(),
		demoCommand(),
		synthCommand(),
		runCommand(),
		plotCommand(),
	}
	for _, c := range commands {
		c.OnUsageError = usageError
		c.CustomHelpTemplate = stageHelpTemplate()
	}
	return &cli.App{
		Name:    "dualcrf",
		Usage:   "train conditional random fields with SDCA-GAP, as Unix-pipeline stages over Arrow tables",
		Version: buildVersion(),
		Description: `Stages read a file or - (standard input) and write Arrow IPC to standard output or -o FILE,
so they chain with pipes:

   dualcrf featurize --template chunking --min-count 3 -o train.arrow train.txt.gz
   dualcrf train --lambda 1/n -o model.arrow train.arrow
   dualcrf featurize --model model.arrow test.txt.gz | dualcrf decode -m model.arrow | dualcrf eval`,
		Reader:                 stdin,
		Writer:                 stdout,
		ErrWriter:              stderr,
		HideHelpCommand:        true,
		UseShortOptionHandling: true,
		ExitErrHandler:         func(*cli.Context, error) {}, // main reports errors and picks the status
		OnUsageError:           usageError,
		Before:                 flagsAfterArguments,
		Action:                 unknownStage,
		Commands:               commands,
	}
}

// usageError reports a command-line mistake as an error only: urfave/cli
// would print the help on standard output, which in a pipeline is the
// next stage's input.
func usageError(c *cli.Context, err error, _ bool) error {
	name := c.Command.HelpName
	if name == "" {
		name = c.App.Name
	}
	return fmt.Errorf("%w (see %s --help)", err, name)
}

// unknownStage runs when no stage was named: it shows the help (also for
// `dualcrf help [STAGE]`), or rejects a word that names no stage.
func unknownStage(c *cli.Context) error {
	name := c.Args().First()
	if name == "help" {
		name = c.Args().Get(1)
	}
	switch {
	case name == "":
		return cli.ShowAppHelp(c)
	case c.Args().First() == "help" && c.App.Command(name) != nil:
		return cli.ShowCommandHelp(c, name)
	}
	var names []string
	for _, cmd := range c.App.Commands {
		names = append(names, cmd.Name)
	}
	return fmt.Errorf("unknown stage %q (want one of %s; see %s --help)", name, strings.Join(names, ", "), c.App.Name)
}

// flagsAfterArguments rejects a stage flag written after the stage's first
// argument (`dualcrf train in.arrow -o model.arrow`): urfave/cli stops
// reading flags there, so the flag would be taken for a file name or
// reported as missing. An unknown flag anywhere is reported first, as
// unknown: its value would otherwise pass for the first argument and the
// next flag be blamed for coming after it.
func flagsAfterArguments(c *cli.Context) error {
	args := c.Args().Slice()
	if len(args) == 0 {
		return nil
	}
	stage := c.App.Command(args[0])
	if stage == nil {
		return nil
	}
	valued := map[string]bool{"help": false, "h": false} // flag name → takes a value
	for _, f := range stage.Flags {
		_, isBool := f.(*cli.BoolFlag)
		for _, n := range f.Names() {
			valued[n] = !isBool
		}
	}
	first := ""
	for i := 1; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return nil
		}
		if len(a) < 2 || a[0] != '-' {
			if first == "" {
				first = a
			}
			continue
		}
		name, _, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		takesValue, known := valued[name]
		if !known && a[1] != '-' {
			takesValue, known = shortCluster(name, valued)
		}
		switch {
		case !known:
			return unknownFlag(c, stage, name)
		case first != "":
			return fmt.Errorf("%s: flag %s comes after the argument %q; put flags before arguments (see %s %s --help)",
				stage.Name, a, first, c.App.Name, stage.Name)
		case takesValue && !hasValue:
			i++ // skip the flag's value
		}
	}
	return nil
}

// shortCluster reads -abc as the one-letter flags a, b and c (short-option
// handling); known is false unless every letter is a flag, and takesValue
// is the last letter's.
func shortCluster(name string, valued map[string]bool) (takesValue, known bool) {
	if name == "" {
		return false, false
	}
	for _, r := range name {
		v, ok := valued[string(r)]
		if !ok {
			return false, false
		}
		takesValue = v
	}
	return takesValue, true
}

// unknownFlag reports a flag the stage does not define, in urfave/cli's
// words, with the closest flag name when one is close.
func unknownFlag(c *cli.Context, stage *cli.Command, name string) error {
	hint := ""
	if s := closestFlag(stage, name); s != "" {
		hint = "; did you mean --" + s + "?"
	}
	return fmt.Errorf("%s: flag provided but not defined: -%s%s (see %s %s --help)",
		stage.Name, name, hint, c.App.Name, stage.Name)
}

// closestFlag returns the visible flag name of stage nearest to name: one
// that is a prefix of it or that it is a prefix of (at least three letters
// shared), else the one at the smallest edit distance when that distance is
// at most 2 or a third of name's length; "" when none is close.
func closestFlag(stage *cli.Command, name string) string {
	best, bestDist := "", max(2, len(name)/3)+1
	for _, f := range stage.VisibleFlags() {
		for _, n := range f.Names() {
			if len(n) < 2 {
				continue
			}
			d := editDistance(name, n)
			if len(n) >= 3 && len(name) >= 3 && (strings.HasPrefix(name, n) || strings.HasPrefix(n, name)) {
				d = 0
			}
			if d < bestDist {
				best, bestDist = n, d
			}
		}
	}
	return best
}

// editDistance is the Levenshtein distance between a and b, in bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			sub := prev[j-1]
			if a[i-1] != b[j-1] {
				sub++
			}
			cur[j] = min(sub, prev[j]+1, cur[j-1]+1)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
