package main

import (
	"bytes"
	"fmt"
	"io"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/urfave/cli/v2"

	"github.com/dualcrf/dualcrf/decode"
	"github.com/dualcrf/dualcrf/featurize"
	"github.com/dualcrf/dualcrf/pipeline"
	"github.com/dualcrf/dualcrf/schemas"
)

func decodeCommand() *cli.Command {
	return &cli.Command{
		Name:      "decode",
		Usage:     "label a feature table (or raw text) with a model: Viterbi into a prediction table",
		ArgsUsage: "[FEATURES|-]",
		Description: `Writes the input's text columns, the gold label when present and the predicted label
(--marginals adds its probability and the sentence's log-probability) as an Arrow IPC stream,
CoNLL text (--format conll) or Parquet (--format parquet).

   dualcrf featurize --model model.arrow test.txt.gz | dualcrf decode -m model.arrow | dualcrf eval
   dualcrf decode -m model.arrow --text test.txt.gz --format conll`,
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "model", Aliases: []string{"m"}, Required: true, Usage: "model file"},
			&cli.StringFlag{Name: "text", Usage: "featurize this raw corpus with the model's own templates instead of reading a feature table"},
			&cli.StringFlag{Name: "format", Value: "arrow", Usage: "output: arrow, conll or parquet"},
			&cli.BoolFlag{Name: "marginals", Usage: "add each predicted label's marginal probability and the sentence log-probability"},
			workersFlag("decoding"),
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Value: "-", Usage: "output file (- = standard output)"},
			&cli.StringFlag{Name: "input-format", Usage: "with --text: corpus format (default: the model's)"},
			&cli.BoolFlag{Name: "no-labels", Usage: "with --text: the corpus has no label column"},
		}, writerFlags()...),
		Action: runDecode,
	}
}

func runDecode(c *cli.Context) error {
	if c.String("text") == "" {
		for _, name := range []string{"input-format", "no-labels"} {
			if c.IsSet(name) {
				return fmt.Errorf("decode: --%s applies to --text input only", name)
			}
		}
	}
	kind, wopts, err := decodeOutput(c)
	if err != nil {
		return err
	}
	if err := checkOutputFlags(c, string(kind)); err != nil {
		return err
	}
	format := string(kind)
	m, err := readModel(c.String("model"))
	if err != nil {
		return err
	}
	var t *featurize.Table
	if text := c.String("text"); text != "" {
		if c.NArg() > 0 {
			return fmt.Errorf("decode: give either --text or a feature table, not both")
		}
		if t, err = featurizeWithModel(c, m.Meta, m.AttrNames, m.LabelNames, text); err != nil {
			return err
		}
	} else {
		in := c.Args().First()
		if c.NArg() > 1 {
			return fmt.Errorf("decode: one feature table at most, got %d", c.NArg())
		}
		if in == "" {
			in = "-"
		}
		if t, err = readTable(in, false); err != nil {
			return err
		}
		mt, tt := m.Meta[schemas.KeyTemplates], t.Metadata[schemas.KeyTemplates]
		if mt != "" && tt != "" && mt != tt {
			return fmt.Errorf("decode: the feature table %s was made with other templates than model %s; featurize it with --model %s",
				in, c.String("model"), c.String("model"))
		}
	}
	d := decode.Apply(t.Data, decode.Remap(m, t.Data), m.Layout.NumAttrs, m.AttrNames)
	p, err := decode.Decode(c.Context, m, d, decode.Options{Marginals: c.Bool("marginals"), Workers: c.Int("workers")})
	if err != nil {
		return err
	}
	t.Data = d
	md := map[string]string{schemas.KeySource: c.String("model")}
	return withOutput(c.String("output"), func(w io.Writer, _ string) error {
		switch format {
		case "conll":
			return decode.WriteCoNLL(w, t, m, p)
		case "arrow":
			var rw pipeline.RecordWriter
			_, err := decode.PredictionBatches(t, m, p, md, func(rec arrow.RecordBatch) error {
				if rw == nil {
					var err error
					if rw, err = pipeline.NewRecordWriter(w, rec.Schema(), wopts); err != nil {
						return err
					}
				}
				return rw.Write(rec)
			})
			if err != nil {
				if rw != nil {
					rw.Abort()
				}
				return err
			}
			if rw == nil {
				return fmt.Errorf("decode: no sentences to write")
			}
			return rw.Close()
		case "parquet":
			var pw *pqarrow.FileWriter
			_, err := decode.PredictionBatches(t, m, p, md, func(rec arrow.RecordBatch) error {
				if pw == nil {
					props := parquet.NewWriterProperties(parquet.WithCompression(compress.Codecs.Zstd))
					var err error
					if pw, err = pqarrow.NewFileWriter(rec.Schema(), nopCloser{w}, props, pqarrow.DefaultWriterProps()); err != nil {
						return err
					}
				}
				return pw.WriteBuffered(rec)
			})
			if err == nil && pw == nil {
				err = fmt.Errorf("decode: no sentences to write")
			}
			if pw != nil {
				if cerr := pw.Close(); err == nil {
					err = cerr
				}
			}
			return err
		}
		return fmt.Errorf("decode: --format %q: want arrow, conll or parquet", format)
	})
}

// checkOutputFlags refuses output flags that the output format does not
// use, rather than ignore them: CoNLL text has no column for the marginals,
// and only Arrow IPC has an IPC format and body compression.
func checkOutputFlags(c *cli.Context, format string) error {
	if format == "conll" && c.Bool("marginals") {
		return fmt.Errorf("decode: --marginals applies to --format arrow or parquet, not conll (CoNLL text has no column for them)")
	}
	for _, name := range []string{"ipc", "compression"} {
		if format != "arrow" && c.IsSet(name) {
			return fmt.Errorf("decode: --%s applies to --format arrow, not %s", name, format)
		}
	}
	return nil
}

// nopCloser keeps the Parquet writer from closing the stage's output, which
// withOutput commits.
type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }

// featurizeWithModel featurizes a raw corpus with the templates, vocabulary
// and input settings a model records.
func featurizeWithModel(c *cli.Context, md map[string]string, attrs, labels []string, path string) (*featurize.Table, error) {
	s, err := settingsFrom(md, c.String("model"))
	if err != nil {
		return nil, err
	}
	vocab, err := featurize.NewVocabulary(attrs)
	if err != nil {
		return nil, err
	}
	in := s.input
	if c.IsSet("input-format") {
		in.Format = c.String("input-format")
	}
	if c.Bool("no-labels") {
		in.LabelColumn = -1
	}
	var buf bytes.Buffer
	if _, err := featurize.Run(c.Context, path, &buf, featurize.RunOptions{Input: in, Templates: s.templates,
		MinCount: s.minCount, Vocab: vocab, Labels: labels}); err != nil {
		return nil, err
	}
	return featurize.ReadTable(&buf, path, featurize.ReadOptions{})
}
