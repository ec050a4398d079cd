package main

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/dualcrf/dualcrf/arrowio"
	"github.com/dualcrf/dualcrf/crf"
	"github.com/dualcrf/dualcrf/crfsuite"
	"github.com/dualcrf/dualcrf/featurize"
	"github.com/dualcrf/dualcrf/pipeline"
	"github.com/dualcrf/dualcrf/stage"
)

func featurizeCommand() *cli.Command {
	return &cli.Command{
		Name:      "featurize",
		Usage:     "turn CoNLL / CoNLL-U / Penn Treebank / CRFsuite / OCR text, or a token table, into a feature table",
		ArgsUsage: "[INPUT|-]",
		Description: `Reads INPUT (default: standard input; gzip and zstd are decompressed) and writes a feature
table: one row per token with its attributes, labels and text. A training table learns its
attribute vocabulary (with --min-count); test data takes the training vocabulary from --model
or --vocab, which also supply the templates, so no flag needs repeating. INPUT may also be a
token table — Parquet or Arrow IPC, told by its bytes, or a directory of them (hive key=value
partitions) — with one row per token (--sentence-column, --position-column, --label-column NAME).
-o x.parquet (or --output-format parquet) writes Parquet. --output-format crfsuite writes CRFsuite
attribute lines instead, every attribute the templates make, for crfsuite tag with the model
dualcrf export writes (--model adds the marker attributes of its bias, start and end weights).

   dualcrf featurize --template chunking --min-count 3 -o train.arrow train.txt.gz
   dualcrf featurize --model model.arrow test.txt.gz > test.arrow
   dualcrf featurize --model model.arrow --output-format crfsuite -o test.crfsuite.txt test.txt.gz
   dualcrf featurize -f ocr --folds 0-8 -o ocr-train.arrow letter.data.gz`,
		Flags:  featurizeFlags().cliFlags(),
		Action: featurizeFlags().checkedAction(featurizeFlags().rendering(runFeaturize)),
	}
}

// checkZip refuses a zip archive read in another format than the Penn
// Treebank's.
func checkZip(in string, opts stage.FeaturizeOptions) error {
	var format string
	switch {
	case opts.Input != nil:
		format = opts.Input.Format
	case opts.Like != nil:
		format = opts.Like.Input.Format
	}
	if !pipeline.IsStdin(in) && strings.HasSuffix(in, ".zip") && !strings.HasPrefix(format, "ptb-") {
		return fmt.Errorf("featurize: %s: a zip archive is read only as the NLTK Penn Treebank, with --input-format ptb-mrg or ptb-pos", in)
	}
	return nil
}

// runFeaturize featurizes the input into the output, then prints the
// summary and how much of the input the vocabulary covers.
func runFeaturize(c *cli.Context) error {
	if c.IsSet("format") {
		return fmt.Errorf("featurize: --format is --input-format (-f) here: it names the input's format (decode's --format names its output's)")
	}
	if c.NArg() > 1 {
		return fmt.Errorf("featurize: one input at most, got %d", c.NArg())
	}
	in := c.Args().First()
	if in == "" {
		in = "-"
	}
	kind, wopts, err := featurizeOutput(c)
	if err != nil {
		return err
	}
	opts, model, err := featurizeOptions(c)
	if err != nil {
		return err
	}
	if err := checkZip(in, opts); err != nil {
		return err
	}
	opts.Writer = wopts
	var log io.Writer
	var done func()
	opts.Progress, log, done = stageProgress(c)
	defer done()
	opts.Note = func(msg string) { fmt.Fprintf(log, "featurize: %s\n", msg) }
	opts.OptionName = featurizeFlags().optionName
	opts.Chosen = func(name string, columns []string) {
		opts.Note(fmt.Sprintf("template %s, chosen from the input's columns [%s], which have no part-of-speech column (--template chooses another)", name, strings.Join(columns, " ")))
	}
	if kind == pipeline.KindCRFsuite {
		return featurizeCRFsuite(c, in, opts, model, log)
	}
	return withOutput(c, c.String("output"), func(w io.Writer, name string) error {
		sum, err := stage.Featurize(c.Context, stageInput(c, in), w, opts)
		if err != nil {
			if opts.Like != nil {
				return explainMissingColumn(err, "featurize", opts.Like.Name+"'s templates", opts.Like.Name, inputName(in))
			}
			return explainMissingColumn(err, "featurize", "the templates", "", inputName(in))
		}
		fmt.Fprintf(log, "featurize: %d sentences, %d tokens, %d attributes, %d labels -> %s\n",
			sum.Sentences, sum.Tokens, sum.Attributes, len(sum.Labels), name)
		if sum.Coverage != nil {
			for _, w := range sum.Coverage.Warnings(opts.Like.Name) {
				fmt.Fprintf(log, "featurize: warning: %s\n", w)
			}
		}
		return nil
	})
}

// featurizeCRFsuite writes the input's attributes as CRFsuite attribute
// lines (--output-format crfsuite), with the markers of --model's bias,
// start and end weights.
func featurizeCRFsuite(c *cli.Context, in string, opts stage.FeaturizeOptions, model *crf.Model, log io.Writer) error {
	var mk featurize.Markers
	if model != nil {
		mk = featurize.Markers(crfsuite.MarkersOf(model))
	}
	return withOutput(c, c.String("output"), func(w io.Writer, name string) error {
		sum, err := stage.FeaturizeCRFsuite(c.Context, stageInput(c, in), w, opts, mk)
		if err != nil {
			if opts.Like != nil {
				return explainMissingColumn(err, "featurize", opts.Like.Name+"'s templates", opts.Like.Name, inputName(in))
			}
			return explainMissingColumn(err, "featurize", "the templates", "", inputName(in))
		}
		fmt.Fprintf(log, "featurize: %d sentences, %d tokens, %d attributes as CRFsuite attribute lines -> %s\n",
			sum.Sentences, sum.Tokens, sum.Attributes, name)
		switch {
		case model != nil:
		case c.IsSet("vocab"):
			opts.Note("the attributes of --vocab's templates, without marker attributes: a model's bias, start and end weights need them (give the model with --model)")
		default:
			opts.Note("the attributes of the templates, without marker attributes: to tag with a model dualcrf export wrote, give it with --model (its templates, and the markers of its bias, start and end weights)")
		}
		return nil
	})
}

// featurizeFlags are featurize's flags and the files it names, with the
// library options they set (as the libraries' errors name them:
// option.Error); the command reads them itself (featurizeOptions), and
// renders the errors with this table.
func featurizeFlags() optionFlags[struct{}] {
	return slices.Concat(optionFlags[struct{}]{
		{catInput, argFiles("INPUT", pipeline.RoleInput, true).orStdin(), nil, nil},
	}, inputOptionFlags(), limitFlags(), optionFlags[struct{}]{
		{catFeatures, fileOf(pipeline.RoleInput, &cli.StringFlag{Name: "template", Aliases: []string{"t"}, DefaultText: "by the input's format and columns: chunking with a pos column, ner for words only", Usage: "built-in set (" + strings.Join(featurize.BuiltinNames(), ", ") + ") or template file"}).split(templatePath),
			[]string{"RunOptions.Templates"}, nil},
		{catFeatures, intIn(&cli.IntFlag{Name: "min-count", Value: 1, Usage: "drop attributes seen fewer times in the input (per template and value); 0 and 1 keep all"},
			0, math.MaxInt, "0 and 1 keep every attribute"), []string{"RunOptions.MinCount"}, nil},
		{catFeatures, memoryBudgetFlag("the attribute vocabulary learnt (every distinct attribute until --min-count prunes them) is held to it: past it featurize stops at the line it reached"),
			[]string{"RunOptions.MemoryBudget", "FeaturizeOptions.MemoryBudget"}, nil},
	}, featurizeLikeFlags(), optionFlags[struct{}]{
		{catOutput, fileOf(pipeline.RoleOutput, &cli.StringFlag{Name: "output", Aliases: []string{"o"}, Value: "-", Usage: "output file (- = standard output); Parquet when the name ends .parquet"}).std(), nil, nil},
		{catOutput, &cli.StringFlag{Name: "output-format", DefaultText: "by -o's name, else arrow", Usage: "output: arrow (Arrow IPC, see --ipc), parquet, or crfsuite (CRFsuite attribute lines, text)"}, nil, nil},
	}, plain[struct{}](catOutput, writerFlags()...), plain[struct{}](catProgress, progressFlag()))
}

// featurizeLikeFlags featurize with the featurization of a model or of a
// training table (stage.FeaturizeOptions.Like).
func featurizeLikeFlags() optionFlags[struct{}] {
	return optionFlags[struct{}]{
		{catFeatures, fileOf(pipeline.RoleInput, &cli.StringFlag{Name: "model", Aliases: []string{"m"}, Usage: "featurize with this model's templates, vocabulary and labels"}).std(),
			[]string{"FeaturizeOptions.Like"}, nil},
		{catFeatures, fileOf(pipeline.RoleInput, &cli.StringFlag{Name: "vocab", Usage: "featurize with the templates, vocabulary and labels of this training feature table"}).std(),
			[]string{"FeaturizeOptions.Like"}, nil},
	}
}

// inputOptionFlags say how to read a corpus: featurize.InputOptions, and
// the tables.TokenColumns that featurize makes of them for a token table.
func inputOptionFlags() optionFlags[struct{}] {
	return optionFlags[struct{}]{
		{catInput, &cli.StringFlag{Name: "input-format", Aliases: []string{"f"}, DefaultText: "conll, or the model's", Usage: "input format: " + strings.Join(featurize.Formats(), ", ")},
			[]string{"InputOptions.Format"}, nil},
		{catInput, &cli.StringFlag{Name: "format", Hidden: true, Usage: "refused: the input's format is --input-format"}, nil, nil},
		{catInput, &cli.StringFlag{Name: "columns", DefaultText: "word,pos,chunk,…; a token table's string columns", Usage: "comma-separated names of the CoNLL token columns; of a token table, the text columns to read"},
			[]string{"InputOptions.Columns", "TokenColumns.Text"}, nil},
		{catInput, labelColumnFlag(), []string{"InputOptions.LabelColumn", "InputOptions.LabelName", "TokenColumns.Label", "TokenColumns.LabelAt"}, nil},
		{catInput, &cli.StringFlag{Name: "sentence-column", DefaultText: "sentence, sentence_id, sent_id or sid", Usage: "token table: the sentence id column"},
			[]string{"InputOptions.SentenceColumn", "TokenColumns.Sentence"}, nil},
		{catInput, &cli.StringFlag{Name: "position-column", DefaultText: "position, token_id, token_index or tid", Usage: "token table: the token position column (none: row order)"},
			[]string{"InputOptions.PositionColumn", "TokenColumns.Position"}, nil},
		{catInput, &cli.BoolFlag{Name: "partitions", Usage: "token table directory: its hive key=value directory names become text columns"},
			[]string{"InputOptions.Partitions"}, nil},
		{catInput, &cli.BoolFlag{Name: "no-labels", Usage: "the input has no label column (text to tag)"}, nil, nil},
		{catInput, &cli.BoolFlag{Name: "xpos", Usage: "CoNLL-U: label words with XPOS instead of UPOS"}, []string{"InputOptions.XPOS"}, nil},
		{catInput, &cli.BoolFlag{Name: "keep-docstart", Usage: "CoNLL: keep -DOCSTART- lines as tokens"}, []string{"InputOptions.KeepDocstart"}, nil},
		{catInput, &cli.StringFlag{Name: "folds", DefaultText: "all", Usage: "OCR: read only these folds, e.g. 0-8 (train) or 9 (test); comma-separated folds and ranges in 0-9"},
			[]string{"InputOptions.Folds"}, nil},
		{catInput, &cli.StringSliceFlag{Name: "column", Usage: "token table: read its column SOURCE as the text column NAME, given as NAME=SOURCE (repeatable; pos=pred reads a prediction table's predicted tags as pos). Default: a prediction table's pred column is read as the one column the templates need that the table lacks"},
			[]string{"InputOptions.ColumnMap", "TokenColumns.As"}, nil},
	}
}

// inputFlags are inputOptionFlags' flags.
func inputFlags() []cli.Flag { return inputOptionFlags().plainFlags() }

// parseColumnMap parses --column's NAME=SOURCE entries.
func parseColumnMap(c *cli.Context) ([][2]string, error) {
	var m [][2]string
	for _, v := range c.StringSlice("column") {
		name, src, ok := strings.Cut(v, "=")
		if !ok || name == "" || src == "" {
			return nil, fmt.Errorf("%s: --column %q: want NAME=SOURCE, e.g. pos=pred (the table column SOURCE read as the text column NAME)", c.Command.Name, v)
		}
		m = append(m, [2]string{name, src})
	}
	return m, nil
}

// writerFlags choose the Arrow IPC output.
func writerFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "ipc", Value: "stream", Usage: "Arrow IPC format: stream or file"},
		&cli.StringFlag{Name: "compression", Value: "none", Usage: "IPC body compression: none, zstd or lz4"},
	}
}

func writerOptions(c *cli.Context) (arrowio.WriterOptions, error) {
	f, err := arrowio.ParseFormat(c.String("ipc"))
	if err != nil {
		return arrowio.WriterOptions{}, err
	}
	comp, err := arrowio.ParseCompression(c.String("compression"))
	if err != nil {
		return arrowio.WriterOptions{}, err
	}
	return arrowio.WriterOptions{Format: f, Compression: comp}, nil
}

// applyInputFlags overrides in with the flags the user gave.
func applyInputFlags(c *cli.Context, in *featurize.InputOptions) {
	if c.IsSet("input-format") && c.String("input-format") != in.Format {
		// A model's or table's layout (columns, label column) is that of
		// its own format: another format starts from none.
		*in = featurize.InputOptions{Format: c.String("input-format"), MaxLineBytes: in.MaxLineBytes, MaxSentenceTokens: in.MaxSentenceTokens}
	}
	if c.IsSet("input-format") {
		in.FormatGiven = true
	}
	if c.IsSet("columns") {
		in.Columns = strings.Split(c.String("columns"), ",")
	}
	if c.IsSet("label-column") {
		v := c.String("label-column")
		if n, err := strconv.Atoi(v); err == nil {
			in.LabelColumn, in.LabelName = n, ""
		} else {
			in.LabelColumn, in.LabelName = 0, v
		}
	}
	if c.IsSet("sentence-column") {
		in.SentenceColumn = c.String("sentence-column")
	}
	if c.IsSet("position-column") {
		in.PositionColumn = c.String("position-column")
	}
	if c.IsSet("partitions") {
		in.Partitions = c.Bool("partitions")
	}
	if c.Bool("no-labels") {
		in.LabelColumn = -1
	}
	if c.IsSet("xpos") {
		in.XPOS = c.Bool("xpos")
	}
	if c.IsSet("keep-docstart") {
		in.KeepDocstart = c.Bool("keep-docstart")
	}
	if c.IsSet("folds") {
		in.Folds = c.String("folds")
	}
}

// checkInputFlags refuses input flags that contradict each other.
func checkInputFlags(c *cli.Context) error {
	if c.Bool("no-labels") && c.IsSet("label-column") {
		return fmt.Errorf("%s: --label-column and --no-labels exclude each other", c.Command.Name)
	}
	return nil
}

// checkFormatFlags refuses input flags that the input format does not
// read, rather than ignore them. With no format given, the input is CoNLL
// text or a token table (told by its bytes), so the flags of both apply.
func checkFormatFlags(c *cli.Context, format string) error {
	only := map[string][]string{"columns": {"conll", "table"}, "label-column": {"conll", "table"}, "no-labels": {"conll", "table", "plain", "tokens"},
		"keep-docstart": {"conll"}, "xpos": {"conllu"}, "folds": {"ocr"},
		"sentence-column": {"table"}, "position-column": {"table"}, "partitions": {"table"}, "column": {"conll", "table"}}
	for _, name := range []string{"columns", "label-column", "no-labels", "keep-docstart", "xpos", "folds", "sentence-column", "position-column", "partitions", "column"} {
		ok := only[name]
		if !c.IsSet(name) || slices.Contains(ok, format) || (format == "" && (slices.Contains(ok, "conll") || slices.Contains(ok, "table"))) {
			continue
		}
		if format == "" {
			return fmt.Errorf("%s: --%s applies to --input-format %s; without --input-format the input is read as CoNLL text or a token table", c.Command.Name, name, strings.Join(ok, " or "))
		}
		return fmt.Errorf("%s: --%s applies to --input-format %s, not to the input format %s", c.Command.Name, name, strings.Join(ok, " or "), format)
	}
	return nil
}

// textOnlyFlags names the flags given that only a text corpus reads (a
// token table input refuses them): --input-format of a text format other
// than conll (conll is also what an unnamed format means, and a table is
// read whatever it says), --keep-docstart, --xpos and --folds.
func textOnlyFlags(c *cli.Context, format string) []string {
	var flags []string
	if c.IsSet("input-format") && format != "conll" && format != featurize.FormatTable {
		flags = append(flags, "--input-format "+format)
	}
	for _, name := range []string{"keep-docstart", "xpos", "folds"} {
		if c.IsSet(name) {
			flags = append(flags, "--"+name)
		}
	}
	return flags
}

// labelColumnFlag is --label-column: a 1-based column number (CoNLL, or a
// table's column) or a token table's column name.
func labelColumnFlag() cli.Flag {
	f := &cli.StringFlag{Name: "label-column", DefaultText: "the last column; a token table's label, gold or last string column", Usage: "label column: 1-based number (CoNLL) or a token table's column name"}
	f.Action = func(c *cli.Context, v string) error {
		if n, err := strconv.Atoi(v); err == nil && n < 1 {
			return flagRangeError(c, f.Name, v, intRange(1, math.MaxInt), "columns count from 1; leave it unset for the last column, --no-labels for none")
		}
		if v == "" {
			return fmt.Errorf("%s: --label-column: want a column number or name", c.Command.Name)
		}
		return nil
	}
	return f
}

// featurizeOptions maps featurize's flags to the stage's options; it also
// returns --model's model (nil without it).
func featurizeOptions(c *cli.Context) (o stage.FeaturizeOptions, m *crf.Model, err error) {
	if o.Like, m, err = featurizeLike(c); err != nil {
		return o, m, err
	}
	if err := checkInputFlags(c); err != nil {
		return o, m, err
	}
	var in featurize.InputOptions
	if o.Like != nil {
		in = o.Like.Input
	}
	applyInputFlags(c, &in)
	if err := checkFormatFlags(c, in.Format); err != nil {
		return o, m, err
	}
	if in.ColumnMap, err = parseColumnMap(c); err != nil {
		return o, m, err
	}
	in.TextFlags = textOnlyFlags(c, in.Format)
	if _, err := featurize.ParseFolds(in.Folds); err != nil {
		return o, m, fmt.Errorf("featurize: --%w", err)
	}
	if o.Like == nil {
		o.MinCount = c.Int("min-count")
		if name := c.String("template"); name != "" {
			if o.Templates, err = featurize.LoadTemplates(name); err != nil {
				return o, m, err
			}
		}
	}
	if err := applyLimits(c, &in); err != nil {
		return o, m, err
	}
	o.Input = &in
	if o.MemoryBudget, err = memoryBudget(c); err != nil {
		return o, m, fmt.Errorf("featurize: %w", err)
	}
	return o, m, nil
}

// featurizeLike reads the featurization of --model or --vocab (nil when
// neither is given), refusing the flags they supply.
func featurizeLike(c *cli.Context) (*featurize.Featurization, *crf.Model, error) {
	if c.IsSet("model") && c.IsSet("vocab") {
		return nil, nil, fmt.Errorf("featurize: --model and --vocab exclude each other")
	}
	from := "--model"
	if c.IsSet("vocab") {
		from = "--vocab"
	} else if !c.IsSet("model") {
		return nil, nil, nil
	}
	for _, name := range []string{"template", "min-count"} {
		if c.IsSet(name) {
			return nil, nil, fmt.Errorf("featurize: --%s comes from %s, which records how its features were made; do not repeat it", name, from)
		}
	}
	if path := c.String("model"); path != "" {
		m, err := stage.ReadModel(c.Context, stageInput(c, path))
		if err != nil {
			return nil, nil, err
		}
		f, err := featurize.FromModel(m, path)
		return f, m, err
	}
	path := c.String("vocab")
	t, err := stage.ReadFeatureTable(c.Context, stageInput(c, path), true)
	if err != nil {
		return nil, nil, err
	}
	f, err := featurize.FromTable(t, path)
	return f, nil, err
}
