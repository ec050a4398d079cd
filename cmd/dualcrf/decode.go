package main

import (
	"fmt"
	"io"
	"math"

	"github.com/urfave/cli/v2"

	"github.com/dualcrf/dualcrf/crf"
	"github.com/dualcrf/dualcrf/decode"
	"github.com/dualcrf/dualcrf/featurize"
	"github.com/dualcrf/dualcrf/pipeline"
	"github.com/dualcrf/dualcrf/schemas"
	"github.com/dualcrf/dualcrf/tables"
)

func decodeCommand() *cli.Command {
	return &cli.Command{
		Name:      "decode",
		Usage:     "label a feature table (or raw text) with a model: Viterbi into a prediction table",
		ArgsUsage: "[FEATURES|-]",
		Description: `Writes the input's text columns, the gold label when present and the predicted label
(--marginals adds its probability and the sentence's log-probability) as an Arrow IPC stream,
CoNLL text (--format conll) or Parquet (--format parquet).

Decode streams: it reads the input in chunks of whole sentences (--chunk-tokens, default 65,536
tokens), decodes one chunk while it reads the next and writes the one before, in input order, so
it holds at most three chunks at a time besides the model, whatever the input's size (with
CoNLL-2000's chunking model, a peak RSS of about 200 MB).

The input must fit the model: no shared attribute (a table featurized for another model or with
other templates) or no shared gold label is an error; more than half of the attribute occurrences
unknown to the model, or gold labels it cannot predict, are warnings with counts on stderr.

   dualcrf featurize --model model.arrow test.txt.gz | dualcrf decode -m model.arrow | dualcrf eval
   dualcrf decode -m model.arrow --text test.txt.gz --format conll`,
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "model", Aliases: []string{"m"}, Required: true, Usage: "model file"},
			&cli.StringFlag{Name: "text", Usage: "featurize this raw corpus with the model's own templates instead of reading a feature table"},
			&cli.StringFlag{Name: "format", Value: tables.PredictionArrow, Usage: "output: arrow, conll or parquet"},
			&cli.BoolFlag{Name: "marginals", Usage: "add each predicted label's marginal probability and the sentence log-probability"},
			workersFlag("decoding"),
			intIn(&cli.IntFlag{Name: "chunk-tokens", Value: tables.DefaultChunkTokens, Usage: "tokens per chunk read, decoded and written at a time (memory bound)"},
				1, math.MaxInt, ""),
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
	format := string(kind)
	if err := checkOutputFlags(c, format); err != nil {
		return err
	}
	modelPath := c.String("model")
	m, err := readModel(modelPath)
	if err != nil {
		return err
	}
	src, input, closeInput, err := openDecodeInput(c, m)
	if err != nil {
		return err
	}
	defer closeInput()
	md := map[string]string{schemas.KeySource: modelPath}
	opts := decode.Options{Marginals: c.Bool("marginals"), Workers: c.Int("workers")}
	return withOutput(c.String("output"), func(w io.Writer, _ string) error {
		pw, err := tables.NewPredictionWriter(w, m, tables.PredictionOptions{Format: format, IPC: wopts, Metadata: md})
		if err != nil {
			return err
		}
		cov, err := decode.Stream(c.Context, m, src, opts, pw.Write)
		if err == nil {
			if err = cov.Mismatch(input, modelPath); err != nil {
				err = fmt.Errorf("decode: %w", err)
			}
		}
		if err != nil {
			pw.Abort()
			return err
		}
		if err := pw.Close(); err != nil {
			return err
		}
		for _, msg := range cov.Warnings(modelPath) {
			logf("decode: warning: %s", msg)
		}
		return nil
	})
}

// openDecodeInput opens decode's input as a source of chunks: the raw
// corpus of --text, featurized with the model's templates, vocabulary and
// input settings, or the feature table given as argument (standard input
// by default). It returns the input's name for messages and a function
// that closes it.
func openDecodeInput(c *cli.Context, m *crf.Model) (decode.Source, string, func(), error) {
	chunk := c.Int("chunk-tokens")
	if text := c.String("text"); text != "" {
		if c.NArg() > 0 {
			return nil, "", nil, fmt.Errorf("decode: give either --text or a feature table, not both")
		}
		opts, err := textOptions(c, m)
		if err != nil {
			return nil, "", nil, err
		}
		tr, err := featurize.NewTextReader(pipeline.Source{Path: text}, opts, chunk)
		if err != nil {
			return nil, "", nil, err
		}
		return tr, tr.Metadata()[schemas.KeySource], func() { tr.Close() }, nil
	}
	path := c.Args().First()
	if c.NArg() > 1 {
		return nil, "", nil, fmt.Errorf("decode: one feature table at most, got %d", c.NArg())
	}
	in, name, err := pipeline.OpenInput(path)
	if err != nil {
		return nil, "", nil, err
	}
	rr, err := pipeline.OpenRecordReader(in, name, pipeline.ReaderOptions{})
	if err != nil {
		in.Close()
		return nil, "", nil, err
	}
	closeAll := func() {
		rr.Release()
		in.Close()
	}
	tr, err := tables.NewFeatureReader(rr, name, tables.FeatureReadOptions{ChunkTokens: chunk})
	if err != nil {
		closeAll()
		return nil, "", nil, err
	}
	mt, tt := m.Meta[schemas.KeyTemplates], tr.Metadata()[schemas.KeyTemplates]
	if mt != "" && tt != "" && mt != tt {
		closeAll()
		return nil, "", nil, fmt.Errorf("decode: the feature table %s was made with other templates than model %s; featurize it with --model %s",
			name, c.String("model"), c.String("model"))
	}
	return tr, name, closeAll, nil
}

// textOptions are the featurization settings a model records, for decode
// --text, with --input-format and --no-labels applied.
func textOptions(c *cli.Context, m *crf.Model) (featurize.RunOptions, error) {
	s, err := settingsFrom(m.Meta, c.String("model"))
	if err != nil {
		return featurize.RunOptions{}, err
	}
	vocab, err := featurize.NewVocabulary(m.AttrNames)
	if err != nil {
		return featurize.RunOptions{}, err
	}
	in := s.input
	if c.IsSet("input-format") {
		in.Format = c.String("input-format")
	}
	if c.Bool("no-labels") {
		in.LabelColumn = -1
	}
	return featurize.RunOptions{Input: in, Templates: s.templates, MinCount: s.minCount, Vocab: vocab, Labels: m.LabelNames}, nil
}

// checkOutputFlags refuses output flags that the output format does not
// use, rather than ignore them: CoNLL text has no column for the marginals,
// and only Arrow IPC has an IPC format and body compression.
func checkOutputFlags(c *cli.Context, format string) error {
	if format == tables.PredictionCoNLL && c.Bool("marginals") {
		return fmt.Errorf("decode: --marginals applies to --format arrow or parquet, not conll (CoNLL text has no column for them)")
	}
	for _, name := range []string{"ipc", "compression"} {
		if format != tables.PredictionArrow && c.IsSet(name) {
			return fmt.Errorf("decode: --%s applies to --format arrow, not %s", name, format)
		}
	}
	return nil
}
