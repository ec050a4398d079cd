package main

import (
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/dualcrf/dualcrf/arrowio"
	"github.com/dualcrf/dualcrf/crf"
	"github.com/dualcrf/dualcrf/decode"
	"github.com/dualcrf/dualcrf/featurize"
	"github.com/dualcrf/dualcrf/pipeline"
	"github.com/dualcrf/dualcrf/stage"
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

--constraints bio (iob1, iobes) keeps to well-formed chunk tags, in Viterbi, n-best and the marginals;
--force-column NAME fixes the labels of the tokens whose cell in that text column is not "_";
--nbest K writes the K best labellings with their log-probabilities (a rank column; in CoNLL text
CRF++'s "# RANK P" blocks); --chunk-confidence adds each predicted chunk's marginal probability,
which eval --calibration checks (docs/decoding.md).

Decode streams: it reads the input in chunks of whole sentences (--chunk-tokens, default 65,536
tokens), decodes one chunk while it reads the next and writes the one before, in input order, so
it holds at most three chunks at a time besides the model, whatever the input's size (with
CoNLL-2000's chunking model, a peak RSS of about 200 MB). What each chunk needs (the lattices,
n-best lists and marginals of its longest sentences, its predictions) is estimated before it is
decoded and held to --memory-budget (default: the machine's memory): fewer goroutines when that
is enough, else a refusal saying what it needs and the --nbest or --chunk-tokens that fits.

The input must fit the model: no shared attribute (a table featurized for another model or with
other templates) or no shared gold label is an error; more than half of the attribute occurrences
unknown to the model, or gold labels it cannot predict, are warnings with counts on stderr.

--text reads a corpus with featurize's input flags (default: the model's format): --input-format
plain reads running text, one sentence a line, tokenized; a prediction table given to --text feeds
its pred column to the column the model's templates lack (or as --column NAME=pred says), so one
model's tags feed the next (docs/own-data.md).

   dualcrf featurize --model model.arrow test.txt.gz | dualcrf decode -m model.arrow | dualcrf eval
   dualcrf decode -m model.arrow --text test.txt.gz --format conll
   dualcrf decode -m pos.arrow --input-format plain --text raw.txt | dualcrf decode -m chunk.arrow --text -`,
		Flags:  decodeTable().cliFlags(),
		Action: decodeTable().checkedAction(decodeFlags().rendering(runDecode)),
	}
}

// decodeTable is decode's flag table: its flags, the library options they
// set and the files it names.
func decodeTable() optionFlags[struct{}] {
	return slices.Concat(optionFlags[struct{}]{
		{catInput, &fileArg{usage: "FEATURES", spec: pipeline.FileSpec{Role: pipeline.RoleInput, Std: true}, names: decodeInputs}, nil, nil},
		{catInput, fileOf(pipeline.RoleInput, &cli.StringFlag{Name: "model", Aliases: []string{"m"}, Required: true, Usage: "model file"}).std(), nil, nil},
		{catInput, fileOf(pipeline.RoleInput, &cli.StringFlag{Name: "text", Usage: "featurize this raw corpus (or a token or prediction table) with the model's own templates instead of reading a feature table"}).std(), nil, nil},
	}, decodeInputFlags(), optionFlags[struct{}]{
		{catDecoding, &cli.BoolFlag{Name: "marginals", Usage: "add each predicted label's marginal probability and the sentence log-probability"}, nil, nil},
	}, decodingFlags(), decodeMemoryFlags(), optionFlags[struct{}]{
		{catOutput, fileOf(pipeline.RoleOutput, &cli.StringFlag{Name: "output", Aliases: []string{"o"}, Value: "-", Usage: "output file (- = standard output)"}).std(), nil, nil},
	}, decodeOutputFlags(), plain[struct{}](catOutput, writerFlags()...), plain[struct{}](catProgress, progressFlag()))
}

// decodeInputs are the feature tables decode reads: its argument, else
// standard input unless --text names the input.
func decodeInputs(c *cli.Context) []string {
	if c.NArg() == 0 && c.String("text") == "" {
		return []string{"-"}
	}
	return c.Args().Slice()
}

// runDecode decodes the input (a feature table, or --text) with the model
// into the output.
func runDecode(c *cli.Context) error {
	if c.String("text") == "" {
		for _, f := range decodeInputFlags().plainFlags() {
			if name := f.Names()[0]; c.IsSet(name) {
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
	modelPath := c.String("model")
	m, err := stage.ReadModel(c.Context, stageInput(c, modelPath))
	if err != nil {
		return err
	}
	o := stage.DecodeOptions{Format: string(kind), IPC: wopts, Marginals: c.Bool("marginals"), Workers: c.Int("workers"),
		ChunkTokens: c.Int("chunk-tokens"), Text: c.String("text") != "", ModelName: modelPath, Log: c.App.ErrWriter,
		OptionName: decodeFlags().optionName, ForceColumn: c.String("force-column"), NBest: c.Int("nbest"),
		ChunkConfidence: c.Bool("chunk-confidence")}
	if o.MemoryBudget, err = memoryBudget(c); err != nil {
		return fmt.Errorf("decode: %w", err)
	}
	if o.Constraints, err = decode.ParseConstraints(c.String("constraints")); err != nil {
		return err
	}
	if o.Scheme, err = decode.ParseScheme(c.String("scheme")); err != nil {
		return err
	}
	if c.IsSet("scheme") && !o.ChunkConfidence {
		return fmt.Errorf("decode: --scheme applies to --chunk-confidence (the rules its chunks are read by)")
	}
	if o.Text {
		if o.Input, err = decodeInputOptions(c, m, modelPath); err != nil {
			return err
		}
	}
	path := c.Args().First()
	if o.Text {
		if c.NArg() > 0 {
			return fmt.Errorf("decode: give either --text or a feature table, not both")
		}
		path = c.String("text")
	} else if c.NArg() > 1 {
		return fmt.Errorf("decode: one feature table at most, got %d", c.NArg())
	}
	var done func()
	o.Progress, o.Log, done = stageProgress(c)
	defer done()
	// The output is created once the input is open (Opened): an input
	// that cannot be read leaves no file.
	var out *pipeline.Output
	w := &forwardWriter{}
	o.Opened = func() (err error) {
		out, err = std(c).CreateOutput(c.String("output"))
		w.w = out
		return err
	}
	_, err = stage.Decode(c.Context, m, stageInput(c, path), w, o)
	err = explainDecode(explainMissingColumn(err, "decode", "model "+modelPath+"'s templates", modelPath, inputName(path)), modelPath, path)
	if out == nil {
		return err
	}
	return finishOutput(c, out, err)
}

// explainDecode says how to make an input decode can read: a feature
// table featurized with the model (--model), or raw text with --text.
func explainDecode(err error, model, input string) error {
	var te *stage.TemplatesError
	if errors.As(err, &te) {
		return fmt.Errorf("decode: the feature table %s was made with other templates than model %s; featurize it with --model %s", te.Table, te.Model, te.Model)
	}
	if err == nil || !errors.Is(err, arrowio.ErrNotArrow) {
		return err
	}
	file := input
	if pipeline.IsStdin(input) {
		file = "FILE"
	}
	msg := strings.TrimSuffix(err.Error(), "; decode reads a feature table (or, with Text, a corpus)")
	return &renderedError{msg: fmt.Sprintf("%s; decode reads a feature table: featurize the text first "+
		"(dualcrf featurize --model %s %s | dualcrf decode -m %s), or decode raw text with --text %s", msg, model, file, model, file), err: err}
}

// forwardWriter writes to w, which is set once the output exists.
type forwardWriter struct{ w io.Writer }

func (f *forwardWriter) Write(p []byte) (int, error) { return f.w.Write(p) }

// checkOutputFlags refuses output flags that the output format does not
// use, rather than ignore them: CoNLL text has no column for the marginals,
// and only Arrow IPC has an IPC format and body compression.
func checkOutputFlags(c *cli.Context, format string) error {
	for _, name := range []string{"marginals", "chunk-confidence"} {
		if format == tables.PredictionCoNLL && c.Bool(name) {
			return fmt.Errorf("decode: --%s applies to --format arrow or parquet, not conll (CoNLL text has no column for them)", name)
		}
	}
	for _, name := range []string{"ipc", "compression"} {
		if format != tables.PredictionArrow && c.IsSet(name) {
			return fmt.Errorf("decode: --%s applies to --format arrow, not %s", name, format)
		}
	}
	return nil
}

// decodingFlags choose how decode labels: constraints, forced labels,
// n-best, chunk confidence.
func decodingFlags() optionFlags[struct{}] {
	return optionFlags[struct{}]{
		{catDecoding, &cli.StringFlag{Name: "constraints", Value: decode.NoConstraints.String(),
			Usage: "allow only well-formed chunk tag sequences: none, bio (IOB2: no I-X first, after O or after another type), iob1 or iobes; in Viterbi, n-best and the marginals"},
			[]string{"DecodeOptions.Constraints"}, nil},
		{catDecoding, &cli.StringFlag{Name: "force-column", Usage: "a text column of the input whose cells fix their tokens' labels (\"_\" or empty: free); partial annotation at prediction time"},
			[]string{"DecodeOptions.ForceColumn"}, nil},
		{catDecoding, intIn(&cli.IntFlag{Name: "nbest", Usage: "write the K best labellings of each sentence with their log-probabilities (a rank column; CoNLL: a \"# RANK P\" block per labelling)"},
			0, decode.MaxNBest, ""), []string{"DecodeOptions.NBest"}, nil},
		{catDecoding, &cli.BoolFlag{Name: "chunk-confidence", Usage: "add the marginal probability of each predicted chunk (span and type) to its tokens: a chunk_confidence column"},
			[]string{"DecodeOptions.ChunkConfidence"}, nil},
		{catDecoding, &cli.StringFlag{Name: "scheme", Value: decode.SchemeConlleval.String(), Usage: "with --chunk-confidence: the chunk rules, as eval's --scheme"},
			[]string{"DecodeOptions.Scheme"}, nil},
	}
}

// decodeMemoryFlags bound what decode holds at a time: its goroutines, its
// chunks and its memory.
func decodeMemoryFlags() optionFlags[struct{}] {
	return optionFlags[struct{}]{
		{catDecoding, workersFlag("decoding"), []string{"DecodeOptions.Workers"}, nil},
		{catDecoding, intIn(&cli.IntFlag{Name: "chunk-tokens", Value: tables.DefaultChunkTokens, Usage: "tokens per chunk read, decoded and written at a time (bounds the memory)"},
			1, math.MaxInt, ""), []string{"DecodeOptions.ChunkTokens"}, nil},
		{catDecoding, memoryBudgetFlag("what each chunk needs (the lattices, n-best lists and marginals of its longest sentences, its predictions) is estimated first: " +
			"a chunk over the budget is decoded on fewer goroutines, or refused saying what it needs and what would fit"),
			[]string{"DecodeOptions.MemoryBudget"}, nil},
	}
}

// decodeOutputFlags choose the prediction table decode writes.
func decodeOutputFlags() optionFlags[struct{}] {
	return optionFlags[struct{}]{
		{catOutput, &cli.StringFlag{Name: "format", Value: tables.PredictionArrow, Usage: "output: arrow, conll or parquet"},
			[]string{"PredictionOptions.Format", "DecodeOptions.Format"}, nil},
	}
}

// decodeFlags are the rows whose options the libraries' errors name in
// decode (option.Error): decode's table (--format, and featurize's input
// flags, which decode --text reads its corpus with), then the input
// limits and the featurization of a model, which are featurize's (decode
// has no flags for them: its errors name featurize's).
func decodeFlags() optionFlags[struct{}] {
	return slices.Concat(decodeTable(), limitFlags(), featurizeLikeFlags())
}

// decodeInputFlags are featurize's input flags, which decode --text takes
// to read its corpus (decode's --format names its output).
func decodeInputFlags() optionFlags[struct{}] {
	var rows optionFlags[struct{}]
	for _, f := range inputOptionFlags() {
		if f.Names()[0] == "format" {
			continue
		}
		if sf, ok := f.Flag.(*cli.StringFlag); ok && sf.Name == "input-format" {
			copied := *sf // inputOptionFlags makes new flags each call, but keep featurize's untouched all the same
			copied.DefaultText = "the model's"
			copied.Usage = "with --text: corpus format: " + strings.Join(featurize.Formats(), ", ") + " (plain: running text, one sentence a line)"
			f.Flag = &copied
		}
		rows = append(rows, f)
	}
	return rows
}

// decodeInputOptions says how decode --text reads its corpus: the model's
// input settings with the input flags applied.
func decodeInputOptions(c *cli.Context, m *crf.Model, modelPath string) (*featurize.InputOptions, error) {
	if err := checkInputFlags(c); err != nil {
		return nil, err
	}
	var in featurize.InputOptions
	if f, err := featurize.FromModel(m, modelPath); err == nil {
		in = f.Input
	}
	applyInputFlags(c, &in)
	if err := checkFormatFlags(c, in.Format); err != nil {
		return nil, err
	}
	if _, err := featurize.ParseFolds(in.Folds); err != nil {
		return nil, fmt.Errorf("decode: --%w", err)
	}
	var err error
	if in.ColumnMap, err = parseColumnMap(c); err != nil {
		return nil, err
	}
	return &in, nil
}
