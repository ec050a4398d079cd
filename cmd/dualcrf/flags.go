package main

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/dualcrf/dualcrf/option"
)

// Numeric flags are checked where they are defined: intIn and friends
// attach to a flag the range it accepts, so a value the user sets is
// refused, naming the flag and the range, before the stage starts. A zero
// either means zero or is refused; it never stands for a default. A flag
// left unset takes its Value, which is valid by construction.

// intIn makes f refuse values outside [lo, hi]; hi = math.MaxInt means no
// upper bound. note, when not empty, says what the values mean.
func intIn(f *cli.IntFlag, lo, hi int, note string) *cli.IntFlag {
	f.Action = func(c *cli.Context, v int) error {
		if v < lo || v > hi {
			return flagRangeError(c, f.Name, strconv.Itoa(v), intRange(lo, hi), note)
		}
		return nil
	}
	return f
}

// intRange describes [lo, hi] in words.
func intRange(lo, hi int) string {
	if hi == math.MaxInt {
		return fmt.Sprintf("an integer ≥ %d", lo)
	}
	return fmt.Sprintf("an integer from %d to %d", lo, hi)
}

// positiveFloat makes f refuse values that are not finite and > 0.
func positiveFloat(f *cli.Float64Flag, note string) *cli.Float64Flag {
	f.Action = func(c *cli.Context, v float64) error {
		return checkPositive(c, f.Name, strconv.FormatFloat(v, 'g', -1, 64), v, note)
	}
	return f
}

// positiveFloatString checks the text value s of a flag that holds a
// number passed on as text (demo's --gap-tol goes to train as written).
func positiveFloatString(f *cli.StringFlag, note string) *cli.StringFlag {
	f.Action = func(c *cli.Context, s string) error {
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			v = math.NaN()
		}
		return checkPositive(c, f.Name, strconv.Quote(s), v, note)
	}
	return f
}

// checkPositive refuses v unless it is finite and > 0; shown is v as the
// user wrote it.
func checkPositive(c *cli.Context, name, shown string, v float64, note string) error {
	if v > 0 && !math.IsInf(v, 1) {
		return nil
	}
	return flagRangeError(c, name, shown, "a positive finite number", note)
}

// workersFlag is the --workers flag of a stage that runs goroutines: unset
// means one per core; an explicit value must be at least 1.
func workersFlag(what string) *cli.IntFlag {
	return intIn(&cli.IntFlag{Name: "workers", DefaultText: "one per core", Usage: what + " goroutines, ≥ 1"},
		1, math.MaxInt, "unset: one per core")
}

// memoryBudgetFlag is the --memory-budget flag, the one definition every
// stage whose memory follows what it is asked shares (train, decode,
// export): use says what the stage does with the budget.
func memoryBudgetFlag(use string) *cli.StringFlag {
	return &cli.StringFlag{Name: "memory-budget", DefaultText: "physical memory",
		Usage: "memory the run may use, e.g. 8GiB or 500MB (KiB, MiB, GiB, TiB: powers of 1024; kB, MB, GB, TB: of 1000); " + use}
}

// memoryBudget reads --memory-budget (memoryBudgetFlag) in bytes; 0 when
// it is not given.
func memoryBudget(c *cli.Context) (int64, error) {
	b := c.String("memory-budget")
	if b == "" {
		return 0, nil
	}
	v, err := parseBytes(b)
	if err != nil {
		return 0, fmt.Errorf("--memory-budget %q: %w", b, err)
	}
	return v, nil
}

// flagRangeError is the message for a flag value out of its range: the
// stage, the flag as given, what it accepts and what the values mean.
func flagRangeError(c *cli.Context, name, value, want, note string) error {
	stage := c.App.Name
	if c.Command != nil && c.Command.Name != "" {
		stage = c.Command.Name
	}
	if note != "" {
		note = " (" + note + ")"
	}
	return fmt.Errorf("%s: --%s %s: want %s%s", stage, name, value, want, note)
}

// The flag categories, which group a stage's flags in its help, in the
// order the help shows them (categoryOrder).
const (
	catInput       = "input"
	catFeatures    = "features"
	catSolver      = "solver"
	catStopping    = "stopping"
	catDecoding    = "decoding"
	catScoring     = "scoring"
	catJob         = "job"
	catOutput      = "output"
	catCheckpoints = "checkpoints"
	catProgress    = "progress"
)

// categoryOrder returns the categories in the order of the help.
func categoryOrder() []string {
	return []string{catInput, catFeatures, catSolver, catStopping, catDecoding, catScoring, catJob, catOutput,
		catCheckpoints, catProgress}
}

// category puts each flag in the category name and returns them.
func category(name string, flags ...cli.Flag) []cli.Flag {
	for _, f := range flags {
		switch f := f.(type) {
		case *cli.StringFlag:
			f.Category = name
		case *fileFlag:
			f.Category = name
		case *cli.IntFlag:
			f.Category = name
		case *cli.Uint64Flag:
			f.Category = name
		case *cli.Float64Flag:
			f.Category = name
		case *cli.BoolFlag:
			f.Category = name
		case *cli.DurationFlag:
			f.Category = name
		case *cli.StringSliceFlag:
			f.Category = name
		default:
			panic(fmt.Sprintf("category: flag type %T", f))
		}
	}
	return flags
}

// flagGroups joins the flags of several categories.
func flagGroups(groups ...[]cli.Flag) []cli.Flag {
	var all []cli.Flag
	for _, g := range groups {
		all = append(all, g...)
	}
	return all
}

// stageHelpTemplate is the help of a stage: urfave/cli's, with the flags
// under their categories in categoryOrder (its own order is alphabetical)
// and long lines wrapped.
func stageHelpTemplate() string {
	var b strings.Builder
	b.WriteString(`NAME:
   {{template "helpNameTemplate" .}}

USAGE:
   {{template "usageTemplate" .}}{{if .Description}}

DESCRIPTION:
   {{template "descriptionTemplate" .}}{{end}}

OPTIONS:`)
	for _, name := range categoryOrder() {
		fmt.Fprintf(&b, `{{range .VisibleFlagCategories}}{{if eq .Name %q}}
   %s:{{range .Flags}}
     {{wrap .String 9}}{{end}}
{{end}}{{end}}`, name, name)
	}
	b.WriteString(`
   --help, -h  show help
`)
	return b.String()
}

// optionFlag is a row of a command's flag table: a flag's definition
// (name, default, meaning; for a flag that names a file, a fileFlag with
// the file's role) under its help category, the options it sets as the
// library's errors name them (stage.OptionError.Field), and how it sets
// them (nil: the stage reads the flag itself). A row may instead declare
// the files the command names by its arguments or its standard output (a
// fileArg), which is no flag.
type optionFlag[S any] struct {
	category string
	cli.Flag
	fields []string
	set    func(c *cli.Context, name string, s *S) error
}

// optionFlags are a command's flags with the options they set and the
// files they name: the one table that ties a flag to an option and a file
// to its role.
type optionFlags[S any] []optionFlag[S]

// cliFlags returns the flags, each in its category (the rows that
// declare arguments or standard output are no flags).
func (fs optionFlags[S]) cliFlags() []cli.Flag {
	var all []cli.Flag
	for _, f := range fs {
		if isFlag(f.Flag) {
			all = append(all, category(f.category, f.Flag)...)
		}
	}
	return all
}

// plainFlags returns the flags, in no category.
func (fs optionFlags[S]) plainFlags() []cli.Flag {
	var all []cli.Flag
	for _, f := range fs {
		if isFlag(f.Flag) {
			all = append(all, f.Flag)
		}
	}
	return all
}

// isFlag reports whether a row's flag is one (not a fileArg row).
func isFlag(f cli.Flag) bool {
	d, ok := f.(fileDecl)
	return !ok || d.isFlag()
}

// plain makes rows of flags that set no library option, in category cat.
func plain[S any](cat string, flags ...cli.Flag) optionFlags[S] {
	out := make(optionFlags[S], len(flags))
	for i, f := range flags {
		out[i] = optionFlag[S]{category: cat, Flag: f}
	}
	return out
}

// rendering returns run with its errors rendered in the command's words
// (render).
func (fs optionFlags[S]) rendering(run cli.ActionFunc) cli.ActionFunc {
	return func(c *cli.Context) error { return fs.render(c, run(c)) }
}

// flagOf returns the flag that sets the option field, or nil.
func (fs optionFlags[S]) flagOf(field string) cli.Flag {
	for _, f := range fs {
		if slices.Contains(f.fields, field) {
			return f.Flag
		}
	}
	return nil
}

// optionName names the option field by its flag ("--gap-tol"), or by
// the field itself when no flag sets it.
func (fs optionFlags[S]) optionName(field string) string {
	if f := fs.flagOf(field); f != nil {
		return "--" + f.Names()[0]
	}
	return field
}

// render rewrites the options' errors in err (each *option.Error in its
// chain, stage.OptionError among them) in the command's words: each option
// named by its flag, and the value shown as the user gave it. Other errors
// are returned as they are.
func (fs optionFlags[S]) render(c *cli.Context, err error) error {
	oes := optionErrors(err)
	if len(oes) == 0 {
		return err
	}
	msg := err.Error()
	for _, oe := range oes {
		msg = strings.Replace(msg, oe.Error(), oe.Format(fs.optionName), 1)
	}
	return &renderedError{msg: msg, err: err}
}

// optionErrors returns the *option.Error values in err's chain, outermost
// first.
func optionErrors(err error) []*option.Error {
	var all []*option.Error
	var walk func(error)
	walk = func(err error) {
		if err == nil {
			return
		}
		if oe, ok := err.(*option.Error); ok {
			all = append(all, oe)
		}
		switch u := err.(type) {
		case interface{ Unwrap() error }:
			walk(u.Unwrap())
		case interface{ Unwrap() []error }:
			for _, e := range u.Unwrap() {
				walk(e)
			}
		}
	}
	walk(err)
	return all
}

// renderedError is an error with its message rewritten in the command's
// words; it unwraps to the original.
type renderedError struct {
	msg string
	err error
}

func (e *renderedError) Error() string { return e.msg }
func (e *renderedError) Unwrap() error { return e.err }
