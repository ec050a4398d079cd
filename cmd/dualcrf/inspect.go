package main

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/dualcrf/dualcrf/featurize"
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
			if path != "-" {
				if m, err := readModel(path); err == nil {
					fmt.Fprintf(out, "model %s (format version %s)\n", path, m.Meta[schemas.KeyVersion])
					fmt.Fprintf(out, "attributes  %d\nlabels      %d  %s\nweights     %d (bias/start/end: %v)\n",
						m.Layout.NumAttrs, m.Layout.NumLabels, strings.Join(m.LabelNames, " "), m.Layout.Dim(), !m.Layout.NoBias)
					for _, k := range []string{schemas.KeyLambda, schemas.KeyN, schemas.KeySolver, schemas.KeyFeatureSpace, schemas.KeyTraining} {
						fmt.Fprintf(out, "%-23s %s\n", k, m.Meta[k])
					}
					return nil
				}
			}
			return withInput(path, func(r io.Reader, name string) error {
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
