package main

import (
	"embed"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/dualcrf/dualcrf/pipeline"
	"github.com/dualcrf/dualcrf/train"
)

// demoData is a real slice of CoNLL-2000 (the first 1,000 training and 300
// test sentences), used when the full corpus is not at hand.
//
//go:embed demodata/*.txt.gz
var demoData embed.FS

func demoCommand() *cli.Command {
	return &cli.Command{
		Name:  "demo",
		Usage: "run featurize → train → decode → eval on CoNLL-2000, printing each stage's command",
		Description: `Uses CoNLL-2000 from $DUALCRF_DATA/conll2000 when set, else from data/conll2000 (where
go run ./scripts/getdata puts it), else a 1,000-sentence slice embedded in the binary. Files go to --dir (default: a temporary directory, removed after).

   dualcrf demo
   dualcrf demo --dir out --gap-tol 1e-4`,
		Flags:  demoFlags().cliFlags(),
		Action: demoFlags().checkedAction(runDemo),
	}
}

// demoFlags is demo's flag table: its flags and the directory it writes.
func demoFlags() optionFlags[struct{}] {
	return optionFlags[struct{}]{
		{catInput, &cli.BoolFlag{Name: "embedded", Usage: "use the embedded slice even when the full corpus is present"}, nil, nil},
		{catStopping, positiveFloatString(&cli.StringFlag{Name: "gap-tol", Value: strconv.FormatFloat(train.DefaultGapTol, 'g', -1, 64),
			Usage: "certified gap to train to (> 0)"}, ""), nil, nil},
		{catOutput, fileOf(pipeline.RoleDir, &cli.StringFlag{Name: "dir", DefaultText: "a temporary directory, removed after", Usage: "keep the tables and the model in this directory"}), nil, nil},
	}
}

// demoCorpus returns the training and test files to use, writing the
// embedded slice into dir when the full corpus is absent.
func demoCorpus(dir string, embedded bool) (train, test, what string, err error) {
	roots := []string{os.Getenv("DUALCRF_DATA")}
	if roots[0] == "" {
		roots = []string{"data"}
	}
	for _, root := range roots {
		if embedded {
			break
		}
		train = filepath.Join(root, "conll2000", "train.txt.gz")
		test = filepath.Join(root, "conll2000", "test.txt.gz")
		if _, e1 := os.Stat(train); e1 == nil {
			if _, e2 := os.Stat(test); e2 == nil {
				return train, test, "CoNLL-2000 from " + root, nil
			}
		}
	}
	for _, name := range []string{"train.txt.gz", "test.txt.gz"} {
		b, err := fs.ReadFile(demoData, "demodata/"+name)
		if err != nil {
			return "", "", "", err
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			return "", "", "", err
		}
	}
	return filepath.Join(dir, "train.txt.gz"), filepath.Join(dir, "test.txt.gz"),
		"the embedded CoNLL-2000 slice (1,000 training / 300 test sentences)", nil
}

func runDemo(c *cli.Context) error {
	if c.NArg() > 0 {
		return fmt.Errorf("demo: takes no arguments, got %q", c.Args().First())
	}
	out := c.App.Writer
	dir, where := c.String("dir"), ""
	if dir == "" {
		tmp, err := os.MkdirTemp("", "dualcrf-demo-")
		if err != nil {
			return err
		}
		defer func() {
			if err := os.RemoveAll(tmp); err != nil {
				fmt.Fprintf(c.App.ErrWriter, "demo: removing %s: %v\n", tmp, err)
				return
			}
			fmt.Fprintf(out, "\n# removed %s and the tables, model and log in it (dualcrf demo --dir DIR keeps them)\n", tmp)
		}()
		dir, where = tmp, ", removed at the end (--dir DIR keeps them)"
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("demo: --dir: %w", err)
	}
	train, test, what, err := demoCorpus(dir, c.Bool("embedded"))
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "# dualcrf demo on %s; files in %s%s\n", what, dir, where)
	f := func(name string) string { return filepath.Join(dir, name) }
	steps := [][]string{
		{"featurize", "--template", "chunking", "--min-count", "3", "-o", f("train.arrow"), train},
		{"featurize", "--vocab", f("train.arrow"), "-o", f("test.arrow"), test},
		{"train", "--lambda", "1/n", "--sampler", "gap", "--gap-tol", c.String("gap-tol"), "--log", f("log.arrow"), "-o", f("model.arrow"), f("train.arrow")},
		{"decode", "-m", f("model.arrow"), "-o", f("pred.arrow"), f("test.arrow")},
		{"eval", f("pred.arrow")},
	}
	for _, args := range steps {
		fmt.Fprintf(out, "\n$ dualcrf %s\n", strings.Join(args, " "))
		app := newApp(c.App.Reader, out, c.App.ErrWriter)
		if err := app.RunContext(c.Context, append([]string{"dualcrf"}, args...)); err != nil {
			return fmt.Errorf("demo: dualcrf %s: %w", args[0], err)
		}
	}
	return nil
}
