package main

import (
	"bytes"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/dualcrf/dualcrf/crf"
	"github.com/dualcrf/dualcrf/featurize"
	"github.com/dualcrf/dualcrf/pipeline"
	"github.com/dualcrf/dualcrf/schemas"
)

func inspectCommand() *cli.Command {
	return &cli.Command{
		Name:      "inspect",
		Usage:     "summarise a feature table or a model: sentences, tokens, attributes, labels, schema version",
		ArgsUsage: "FILE|-",
		Description: `   dualcrf inspect train.arrow
   dualcrf inspect model.arrow`,
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return fmt.Errorf("inspect: want one file (or -), got %d arguments", c.NArg())
			}
			path := c.Args().First()
			out := c.App.Writer
			open, err := reopenable(path)
			if err != nil {
				return err
			}
			var m *crf.Model
			var name string
			err = open(func(r io.Reader, n string) error {
				var err error
				name = n
				m, err = pipeline.ReadModel(r, n)
				return err
			})
			if err == nil {
				printModel(out, name, m)
				return nil
			}
			return open(func(r io.Reader, name string) error {
				s, err := featurize.InspectTable(r, name, featurize.ReadOptions{})
				if err != nil {
					return err
				}
				fmt.Fprintf(out, "feature table %s (format version %s)\n", name, s.Version)
				fmt.Fprintf(out, "sentences   %d\ntokens      %d (longest sentence %d)\nattributes  %d (%d occurrences, %d tokens with real values)\n",
					s.Sentences, s.Tokens, s.MaxLen, s.Attributes, s.AttrOccurrences, s.RealValued)
				fmt.Fprintf(out, "columns     %s\nlabels      %d (%d tokens unlabelled)\n", strings.Join(s.Columns, " "), len(s.Labels), s.Unlabelled)
				idx := make([]int, len(s.Labels))
				for i := range idx {
					idx[i] = i
				}
				sort.SliceStable(idx, func(a, b int) bool { return s.LabelCounts[idx[a]] > s.LabelCounts[idx[b]] })
				for _, i := range idx {
					fmt.Fprintf(out, "  %-12s %d\n", s.Labels[i], s.LabelCounts[i])
				}
				for _, k := range []string{schemas.KeyTemplates, schemas.KeyMinCount, schemas.KeySource} {
					if v, ok := s.Metadata[k]; ok {
						fmt.Fprintf(out, "%s:\n  %s\n", k, strings.ReplaceAll(strings.TrimSpace(v), "\n", "\n  "))
					}
				}
				return nil
			})
		},
	}
}

// printModel summarises model m read from the input name.
func printModel(out io.Writer, name string, m *crf.Model) {
	fmt.Fprintf(out, "model %s (format version %s)\n", name, m.Meta[schemas.KeyVersion])
	fmt.Fprintf(out, "attributes  %d\nlabels      %d  %s\nweights     %d (bias/start/end: %v)\n",
		m.Layout.NumAttrs, m.Layout.NumLabels, strings.Join(m.LabelNames, " "), m.Layout.Dim(), !m.Layout.NoBias)
	for _, k := range []string{schemas.KeyLambda, schemas.KeyN, schemas.KeySolver, schemas.KeyFeatureSpace, schemas.KeyTraining} {
		fmt.Fprintf(out, "%-23s %s\n", k, m.Meta[k])
	}
}

// reopenable returns a function that runs fn on the input at path as often
// as needed; standard input ("-") is read into memory once for that.
func reopenable(path string) (func(fn func(io.Reader, string) error) error, error) {
	if path != "-" {
		return func(fn func(io.Reader, string) error) error { return withInput(path, fn) }, nil
	}
	var data []byte
	var name string
	err := withInput(path, func(r io.Reader, n string) error {
		var err error
		data, err = io.ReadAll(r)
		name = n
		if err != nil {
			return fmt.Errorf("read %s: %w", n, err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return func(fn func(io.Reader, string) error) error { return fn(bytes.NewReader(data), name) }, nil
}
