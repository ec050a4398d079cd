package featurize

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/dualcrf/dualcrf/arrowio"
	"github.com/dualcrf/dualcrf/option"
	"github.com/dualcrf/dualcrf/pipeline"
	"github.com/dualcrf/dualcrf/progress"
	"github.com/dualcrf/dualcrf/schemas"
	"github.com/dualcrf/dualcrf/tables"
)

// KeyInput is the feature-table metadata key holding the InputOptions (JSON)
// the table was read with, so a model can featurize new text the same way.
const KeyInput = "dualcrf.input"

// KeyColumns is the feature-table metadata key holding the names of the
// input's token columns (a JSON array), so that a model knows the layout
// of the text it was trained on: text to tag with more columns than that
// is likely running text read as CoNLL columns.
const KeyColumns = "dualcrf.columns"

// columnsJSON is the KeyColumns value of columns.
func columnsJSON(columns []string) string {
	if columns == nil {
		columns = []string{}
	}
	b, err := json.Marshal(columns)
	if err != nil {
		panic(err) // strings always marshal
	}
	return string(b)
}

// ParseColumns parses a KeyColumns value.
func ParseColumns(text string) ([]string, error) {
	var cols []string
	if err := json.Unmarshal([]byte(text), &cols); err != nil {
		return nil, fmt.Errorf("want a JSON array of column names: %w", err)
	}
	return cols, nil
}

// checkColumns warns through opts.Warn when a CoNLL input (r) has more
// token columns than the text the model was trained on
// (opts.TrainedColumns): a line of words separated by spaces is one token
// whose columns are the words, which is what running text read as CoNLL
// columns looks like.
func checkColumns(r Reader, display string, opts RunOptions) {
	if opts.Warn == nil || opts.TrainedColumns == nil || opts.Input.Columns != nil {
		return // the columns are named (--columns): the layout is the user's
	}
	if _, ok := r.(*ConllReader); !ok {
		return
	}
	cols := r.Columns()
	if len(cols) <= len(opts.TrainedColumns) {
		return
	}
	format := "InputOptions.Format"
	if opts.OptionName != nil {
		format = opts.OptionName(format)
	}
	opts.Warn(fmt.Sprintf("%s: %d token columns (%s), but the model was trained on text of %d (%s): CoNLL text has one token a line, its columns separated by spaces; if this is running text, one sentence a line, read it with %s plain (or one token a line: %s tokens)",
		display, len(cols), strings.Join(cols, " "), len(opts.TrainedColumns), strings.Join(opts.TrainedColumns, " "), format, format))
}

// InputOptions say how to read a corpus.
type InputOptions struct {
	// Format is conll (the default), conllu, ptb-mrg, ptb-pos, crfsuite,
	// ocr, plain (running text, one sentence a line, tokenized by package
	// tokenize) or tokens (one token a line, a blank line after each
	// sentence); plain and tokens have no labels and one column, "word".
	// A path ending in .zip is read as the NLTK Penn Treebank archive.
	Format string `json:"format"`
	// Columns names the token columns of a CoNLL file (see ConllOptions).
	Columns []string `json:"columns,omitempty"`
	// LabelColumn is the 1-based CoNLL label column; 0 means the last
	// column (the default) and -1 unlabelled text.
	LabelColumn int `json:"label_column"`
	// KeepDocstart keeps CoNLL -DOCSTART- lines as tokens.
	KeepDocstart bool `json:"keep_docstart,omitempty"`
	// XPOS labels CoNLL-U words with XPOS instead of UPOS.
	XPOS bool `json:"xpos,omitempty"`

	// TextFlags names the flags given (e.g. "--keep-docstart",
	// "--input-format ocr") that only a text corpus reads: a token table
	// input refuses them, naming the first, rather than ignore them. It
	// is not recorded in tables.
	TextFlags []string `json:"-"`

	// Folds selects the folds of an OCR input (ParseFolds: "0-8", "9",
	// "0,2,4-6"); "" reads all. It selects data rather than saying how to
	// read it, so it is not recorded in tables either.
	Folds string `json:"-"`

	// MaxLineBytes caps the length of a line of the input, and
	// MaxSentenceTokens the tokens of a sentence (0: DefaultMaxLineBytes,
	// DefaultMaxSentenceTokens); more is an error naming the file and
	// line, so that no input takes unbounded memory. They are not recorded
	// in tables: they bound a run, not the meaning of its input.
	MaxLineBytes      int `json:"-"`
	MaxSentenceTokens int `json:"-"`

	// Token tables (Parquet, Arrow IPC; see TableReader): the sentence id
	// and position columns ("": the first of the default names found),
	// the label column by name (LabelName) or 1-based index (LabelColumn),
	// the text columns (Columns; default every string column but those),
	// and whether hive partition keys become columns.
	SentenceColumn string `json:"sentence_column,omitempty"`
	PositionColumn string `json:"position_column,omitempty"`
	LabelName      string `json:"label_name,omitempty"`
	Partitions     bool   `json:"partitions,omitempty"`

	// FormatGiven says Format was chosen by the user (a flag), not taken
	// from a model or the default: a text format is then read as text even
	// when the input's first bytes look like a table's ("PAR1", "ARROW1").
	FormatGiven bool `json:"-"`
	// ColumnMap reads more token-table columns under other names: each
	// entry is {name, source}, the table column source read as the text
	// column name (--column pos=pred). Need lists the columns the
	// templates require as they write them (Run and TextReader set it):
	// without ColumnMap, a prediction table's pred column is read as the
	// one of them that its other columns lack, when exactly one is
	// missing. Neither is recorded in tables: they are about one input.
	ColumnMap [][2]string `json:"-"`
	Need      []string    `json:"-"`
}

// Formats lists the corpus formats OpenReader understands.
func Formats() []string {
	return []string{"conll", "conllu", "ptb-mrg", "ptb-pos", "crfsuite", "ocr", FormatPlain, FormatTokens, FormatTable}
}

// OpenReader opens src with pipeline.Source.Open as a Reader of the format
// in opts; a file named *.zip with a ptb- format is read as the NLTK Penn
// Treebank archive. A directory, and an input whose bytes are Parquet or
// Arrow IPC, is read as a token table (TableReader) whatever the format —
// unless the user gave a text format (FormatGiven), which then wins.
// The closer closes the input (never standard input).
func OpenReader(src pipeline.Source, opts InputOptions) (Reader, io.Closer, error) {
	if !src.IsStdin() {
		if st, err := os.Stat(src.Path); err == nil && st.IsDir() {
			if err := refuseTextFlags(src.Path, opts); err != nil {
				return nil, nil, err
			}
			tr, err := newTableReader(src.Path, nil, opts)
			if err != nil {
				return nil, nil, err
			}
			tr.ctx = src.Ctx
			return tr, tr, nil
		}
	}
	format := opts.Format
	if format == "" {
		format = "conll"
	}
	if strings.HasPrefix(format, "ptb-") && !src.IsStdin() && strings.HasSuffix(src.Path, ".zip") {
		tf, err := ParseTreebankFormat(strings.TrimPrefix(format, "ptb-"))
		if err != nil {
			return nil, nil, err
		}
		z, err := OpenTreebankZip(src.Path, tf)
		if err != nil {
			return nil, nil, err
		}
		z.limits = opts
		return z, z, nil
	}
	rc, name, err := src.Open()
	if err != nil {
		return nil, nil, err
	}
	r, err := newInputReader(rc, name, opts)
	if err != nil {
		rc.Close()
		return nil, nil, err
	}
	return r, rc, nil
}

// newInputReader returns a TableReader when r's bytes are a table, else
// the reader of opts.Format.
func newInputReader(r io.Reader, name string, opts InputOptions) (Reader, error) {
	r, isTable := peekTable(r)
	if isTable && (!textGiven(opts) || wholeTable(r)) {
		// A text format given for a real table is refused there, naming
		// the flag (refuseTextFlags); text that only starts like a table
		// ("PAR1 NN B-NP") is read as the text format says.
		return newTableReaderOn(r, name, opts), nil
	}
	if opts.Format == FormatTable {
		return nil, fmt.Errorf("%s: %w", name, &option.Error{Msg: "not a Parquet or Arrow IPC table ({InputOptions.Format} table)"})
	}
	if opts.LabelName != "" {
		return nil, fmt.Errorf("%s: %w", name, &option.Error{
			Msg: fmt.Sprintf("{InputOptions.LabelName} %q names a table column; in a text corpus the label column is a 1-based number", opts.LabelName)})
	}
	return newFormatReader(r, name, opts)
}

// textGiven reports whether the user chose a text format in opts, which
// then wins over an input's bytes that look like a table.
func textGiven(opts InputOptions) bool {
	return opts.FormatGiven && opts.Format != "" && opts.Format != FormatTable
}

// newFormatReader returns the reader of opts.Format (conll when empty) of
// the decompressed input r, with the limits of opts.
func newFormatReader(r io.Reader, name string, opts InputOptions) (Reader, error) {
	var lr interface{ lineSource() *lineReader }
	if opts.Folds != "" && opts.Format != "ocr" {
		return nil, fmt.Errorf("folds %q: only the ocr input format has folds", opts.Folds)
	}
	switch opts.Format {
	case "conll", "":
		co := ConllOptions{Columns: opts.Columns, LabelColumn: opts.LabelColumn - 1, KeepDocstart: opts.KeepDocstart}
		switch {
		case opts.LabelColumn == 0:
			co.LabelColumn = LabelLast
		case opts.LabelColumn < 0:
			co.LabelColumn = LabelNone
		}
		lr = NewConllReader(r, name, co)
	case "conllu":
		lr = newConlluReader(r, name, ConlluOptions{XPOSLabel: opts.XPOS})
	case "ptb-mrg":
		lr = newTreebankReader(r, name, TreebankMRG)
	case "ptb-pos":
		lr = newTreebankReader(r, name, TreebankPOS)
	case "crfsuite":
		lr = NewCRFsuiteReader(r, name)
	case FormatPlain:
		lr = newPlainReader(r, name)
	case FormatTokens:
		lr = newTokensReader(r, name)
	case "ocr":
		folds, err := ParseFolds(opts.Folds)
		if err != nil {
			return nil, err
		}
		lr = newOCRReader(r, name, folds)
	default:
		return nil, fmt.Errorf("unknown input format %q (want one of %s)", opts.Format, strings.Join(Formats(), ", "))
	}
	lr.lineSource().setLimits(opts)
	return lr.(Reader), nil
}

// RunOptions configure Run.
type RunOptions struct {
	Input     InputOptions
	Templates *TemplateSet // nil: the input's own attributes (@input)
	MinCount  int          // attributes seen fewer times are dropped (≤ 1 keeps all)
	// Vocab, when set, is the fixed attribute vocabulary (featurizing test
	// data with the training vocabulary: unknown attributes are dropped);
	// otherwise the vocabulary is learnt from the input.
	Vocab *Vocabulary
	// Labels are the known labels in id order (the training labels); labels
	// met in the input are appended, keeping their tokens' gold label (a
	// model cannot predict them, so eval counts those tokens as errors).
	// With Vocab set, the returned summary's Coverage counts them.
	Labels []string
	// Writer chooses the IPC format and compression of the output.
	Writer arrowio.WriterOptions
	// BatchTokens is the record-batch size in tokens (0: the default).
	BatchTokens int
	// Progress, when set, shows the input bytes read (every pass) with
	// their rate and ETA; nil: nothing.
	Progress *progress.Reporter
	// TrainedColumns, when set, are the token columns of the text the
	// model was trained on (KeyColumns): a CoNLL input with more columns
	// gets a warning through Warn, as running text read as columns.
	TrainedColumns []string
	// Warn receives warnings; nil: none are made. Learning a vocabulary,
	// Run warns of labels seen rarely next to a near-identical frequent
	// one (B-PERS among B-PER), each a likely typo.
	Warn func(msg string)
	// Note receives what the input's reader left out of it ("-DOCSTART-"
	// lines); nil: nothing is said.
	Note func(msg string)
	// OptionName, when set, names an option (by its Go field, as
	// option.Error does) in the warnings; nil: its Go name.
	OptionName func(field string) string
	// TemplatesFor, when set and Templates is nil, chooses the templates
	// from the input's columns at its first sentence (DefaultTemplates);
	// Chosen, when set, is told which set and columns. Only with a
	// vocabulary to learn.
	TemplatesFor func(columns []string) (*TemplateSet, string, error)
	Chosen       func(name string, columns []string)
	// MemoryBudget, when positive, bounds the memory of the vocabulary
	// learnt, in bytes: it holds every distinct attribute of the input
	// until MinCount prunes them at its end, so its size follows the
	// corpus and the templates; past the budget the first pass stops with
	// a *SyntaxError at the line it reached. MachineMemory says the budget
	// is the machine's memory, not one given. 0: no bound.
	MemoryBudget  int64
	MachineMemory bool
}

// DefaultTemplates chooses the built-in template set for an input of
// these token columns: chunking when it has a part-of-speech column (pos
// or tag) besides the words, ner (words, spelling, context) when it has
// words only. It fails, listing the built-in sets, when the columns have
// no words (word, form or token, or a first column).
func DefaultTemplates(columns []string) (*TemplateSet, string, error) {
	name := ""
	switch {
	case len(missingColumns([]string{"w"}, columns)) > 0:
		return nil, "", &option.Error{Msg: fmt.Sprintf("no built-in template set fits the input's columns [%s] (they have no word column: word, form or token); choose one with {RunOptions.Templates} (%s) or write a template file (docs/own-data.md)",
			strings.Join(columns, " "), strings.Join(BuiltinNames(), ", "))}
	case len(missingColumns([]string{"pos"}, columns)) == 0:
		name = "chunking"
	default:
		name = "ner"
	}
	set, err := Builtin(name)
	return set, name, err
}

// Run featurizes the corpus src reads (a file, or standard input) into a
// feature table written to out. Learning a vocabulary (or writing the IPC file
// format, whose dictionaries must be complete up front) takes two passes
// over the input; an input that can be read only once (standard input from
// a pipe, a FIFO, a process substitution, a device) is then copied to an
// unnamed temporary file as the first pass reads it, and the second pass
// reads that. Reads of such an input end when ctx does, with ctx's error.
func Run(ctx context.Context, in pipeline.Source, out io.Writer, opts RunOptions) (tables.FeatureSummary, error) {
	opts.Input.Need = opts.Templates.requiredColumns()
	fixed := opts.Vocab != nil
	opts = withFormatVocabulary(opts)
	twoPass := opts.Vocab == nil || opts.Writer.Format == arrowio.FormatFile
	display := in.Name()
	src, err := openSource(ctx, in, display, opts.Input, twoPass)
	if err != nil {
		return tables.FeatureSummary{}, err
	}
	defer src.Close()
	passes := 1
	if twoPass {
		passes = 2
	}
	defer src.track(opts.Progress, in, passes).End()
	sum, err := run(ctx, src, display, out, opts, twoPass, fixed)
	if err != nil && ctx.Err() != nil {
		return tables.FeatureSummary{}, ctx.Err()
	}
	return sum, err
}

// run is Run on an opened source.
func run(ctx context.Context, src *source, display string, out io.Writer, opts RunOptions, twoPass, fixed bool) (tables.FeatureSummary, error) {
	set := opts.Templates
	if set == nil && (opts.TemplatesFor == nil || !twoPass) {
		set = &TemplateSet{}
	}
	vocab, labels := opts.Vocab, append([]string(nil), opts.Labels...)
	if twoPass {
		var err error
		if vocab, labels, set, err = firstPass(ctx, src, display, opts, set); err != nil {
			return tables.FeatureSummary{}, err
		}
	}
	inputJSON, err := json.Marshal(opts.Input)
	if err != nil {
		return tables.FeatureSummary{}, err
	}
	md := map[string]string{
		schemas.KeyTemplates: set.String(),
		schemas.KeyMinCount:  strconv.Itoa(opts.MinCount),
		schemas.KeySource:    display,
		KeyInput:             string(inputJSON),
	}
	var tw *tables.FeatureWriter
	var ids [][]int32
	var vals [][]float64
	var cov *tables.Coverage // with a fixed vocabulary: what it does not cover
	if fixed {
		cov = &tables.Coverage{}
	}
	knownLabel := make(map[string]bool, len(opts.Labels))
	for _, l := range opts.Labels {
		knownLabel[l] = true
	}
	stats, err := scanStats(ctx, src, display, opts, !twoPass, set, func(columns []string, s *Sentence, feats [][]Feature) error {
		if tw == nil {
			md[KeyColumns] = columnsJSON(columns)
			var err error
			tw, err = tables.NewFeatureWriter(out, tables.FeatureOptions{Columns: columns, AttrNames: vocab.Names(), LabelNames: labels,
				Metadata: md, BatchTokens: opts.BatchTokens, Writer: opts.Writer})
			if err != nil {
				return err
			}
		}
		var dropped int
		ids, vals, dropped = toIDs(vocab, feats, ids, vals)
		if cov != nil {
			addCoverage(cov, s, feats, dropped, knownLabel)
		}
		return tw.Write(&tables.FeatureSentence{Tokens: s.Tokens, Labels: s.Labels, Attrs: ids, Values: vals, Line: s.Line})
	})
	if err != nil {
		if tw != nil {
			tw.Abort()
		}
		return tables.FeatureSummary{}, err
	}
	if tw == nil { // every reader refuses an input without sentences; this keeps a new one from a nil writer
		return tables.FeatureSummary{}, readerNoSentences(display)
	}
	if err := tw.Close(); err != nil {
		return tables.FeatureSummary{}, err
	}
	noteStats(stats, display, opts)
	sum := tw.Summary()
	sum.Coverage = cov
	return sum, nil
}

// withFormatVocabulary gives opts the fixed vocabulary and labels of an
// input format that has them (ocr: the 128 pixels, the letters a–z), unless
// opts.Vocab is already set: every table of such a format then has the
// same attribute and label ids, whichever part of the data it holds.
func withFormatVocabulary(opts RunOptions) RunOptions {
	if opts.Vocab != nil || opts.Input.Format != "ocr" {
		return opts
	}
	names := OCRAttrNames()
	v := &Vocabulary{names: names, ids: make(map[string]int32, len(names))}
	for i, n := range names {
		v.ids[n] = int32(i)
	}
	opts.Vocab = v
	labels := append([]string(nil), opts.Labels...)
	have := make(map[string]bool, len(labels))
	for _, l := range labels {
		have[l] = true
	}
	for _, l := range OCRLabels() {
		if !have[l] {
			labels = append(labels, l)
		}
	}
	opts.Labels = labels
	return opts
}

// firstPass reads the whole input once for its labels (opts.Labels first,
// then the others as met) and, unless opts.Vocab is set, its vocabulary,
// then rewinds it; it returns the template set used (set, or the one
// opts.TemplatesFor chose when set is nil).
func firstPass(ctx context.Context, src *source, display string, opts RunOptions, set *TemplateSet) (*Vocabulary, []string, *TemplateSet, error) {
	vocab := opts.Vocab
	labels := append([]string(nil), opts.Labels...)
	vb := NewVocabBuilder()
	counts := newLabelCounts()
	known := make(map[string]bool, len(labels))
	for _, l := range labels {
		known[l] = true
	}
	nextCheck := vocabCheckEvery
	set, _, err := scanChoose(ctx, src, display, opts, true, set, func(_ []string, s *Sentence, feats [][]Feature) error {
		if vocab == nil {
			vb.AddSentence(feats)
			counts.add(s)
			if opts.MemoryBudget > 0 && vb.Len() >= nextCheck {
				nextCheck = vb.Len() + vocabCheckEvery
				if err := checkVocabMemory(vb, display, s.Line, opts); err != nil {
					return err
				}
			}
		}
		for _, l := range s.Labels {
			if l != "" && !known[l] {
				known[l] = true
				labels = append(labels, l)
			}
		}
		return nil
	})
	if err != nil {
		return nil, nil, nil, err
	}
	if err := src.rewind(); err != nil {
		return nil, nil, nil, fmt.Errorf("read %s: %w", display, err)
	}
	if vocab == nil {
		vocab = vb.Build(opts.MinCount)
		if opts.Warn != nil {
			for _, w := range counts.suspectLabels(display) {
				opts.Warn(w)
			}
		}
	}
	return vocab, labels, set, nil
}

// vocabCheckEvery is how many new attributes the vocabulary learns
// between two checks of its memory.
const vocabCheckEvery = 1 << 16

// vocabRuntimeBytes is about what the process holds besides the
// vocabulary while it is learnt: the program, the runtime and a sentence.
const vocabRuntimeBytes = 32 << 20

// checkVocabMemory refuses the vocabulary vb, learnt up to line of the
// input display, when it needs more than opts.MemoryBudget.
func checkVocabMemory(vb *VocabBuilder, display string, line int, opts RunOptions) error {
	need := vocabRuntimeBytes + vb.MemoryBytes()
	if need <= opts.MemoryBudget {
		return nil
	}
	allowed := "the {RunOptions.MemoryBudget} " + byteSize(opts.MemoryBudget)
	if opts.MachineMemory {
		allowed = "the " + byteSize(opts.MemoryBudget) + " of memory this machine has (physical memory, or the cgroup's limit)"
	}
	return optionSyntaxError(display, line, "the attribute vocabulary has grown to %d distinct attributes, about %s in memory "+
		"(every attribute is kept until {RunOptions.MinCount} prunes them at the end of the input), more than %s allows; "+
		"try fewer or narrower templates ({RunOptions.Templates}), a part of the corpus, or {RunOptions.MemoryBudget} SIZE if more memory is available",
		vb.Len(), byteSize(need), allowed)
}

// byteSize formats a number of bytes for people.
func byteSize(b int64) string {
	switch {
	case b >= 1<<30:
		return fmt.Sprintf("%.2f GiB", float64(b)/(1<<30))
	case b >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20))
	}
	return fmt.Sprintf("%d B", b)
}

// addCoverage counts in c a sentence featurized with a fixed vocabulary:
// its features, of which dropped were unknown, and its labels, known ones
// marked in knownLabel.
func addCoverage(c *tables.Coverage, s *Sentence, feats [][]Feature, dropped int, knownLabel map[string]bool) {
	c.Tokens += len(feats)
	for _, fs := range feats {
		c.Attrs += len(fs)
	}
	c.UnknownAttrs += dropped
	for _, l := range s.Labels {
		if l != "" {
			c.AddLabel(l, knownLabel[l])
		}
	}
}

// toIDs maps each token's features to vocabulary ids and values (nil when
// all are 1), reusing the slices' storage; it also returns the number of
// features the vocabulary does not know, which are left out.
func toIDs(v *Vocabulary, feats [][]Feature, ids [][]int32, vals [][]float64) ([][]int32, [][]float64, int) {
	ids, vals = ids[:0], vals[:0]
	dropped := 0
	for t, fs := range feats {
		if t < cap(ids) {
			ids = ids[:t+1]
			vals = vals[:t+1]
		} else {
			ids = append(ids, nil)
			vals = append(vals, nil)
		}
		var vv []float64
		var n int
		ids[t], vv, n = v.AppendIDs(ids[t][:0], vals[t][:0], fs)
		dropped += n
		vals[t] = nil
		for _, x := range vv {
			if x != 1 {
				vals[t] = vv
				break
			}
		}
	}
	return ids, vals, dropped
}

// scan reads every sentence of the input, extracts its features and calls fn
// with the reader's columns; warn says whether to check the input's columns
// (checkColumns) at its first sentence.
func scan(ctx context.Context, src *source, display string, opts RunOptions, warn bool, set *TemplateSet, fn func([]string, *Sentence, [][]Feature) error) error {
	_, err := scanStats(ctx, src, display, opts, warn, set, fn)
	return err
}

// noteStats tells opts.Note what the last pass over the input display
// left out of it.
func noteStats(st readStats, display string, opts RunOptions) {
	if opts.Note == nil || st.docstarts == 0 {
		return
	}
	keep := "InputOptions.KeepDocstart"
	if opts.OptionName != nil {
		keep = opts.OptionName(keep)
	}
	lines := "lines"
	if st.docstarts == 1 {
		lines = "line"
	}
	opts.Note(fmt.Sprintf("%s: %d %s %s left out (document boundaries, not tokens; %s keeps them)", display, st.docstarts, ConllDocstart, lines, keep))
}

// readStats are what a pass over the input left out of it.
type readStats struct {
	docstarts int // CoNLL -DOCSTART- lines
}

// scanStats is scan, also returning what the pass left out.
func scanStats(ctx context.Context, src *source, display string, opts RunOptions, warn bool, set *TemplateSet, fn func([]string, *Sentence, [][]Feature) error) (readStats, error) {
	_, st, err := scanChoose(ctx, src, display, opts, warn, set, fn)
	return st, err
}

// scanChoose is scan, choosing the templates with opts.TemplatesFor when
// set is nil; it returns the set used and what the pass left out.
func scanChoose(ctx context.Context, src *source, display string, opts RunOptions, warn bool, set *TemplateSet, fn func([]string, *Sentence, [][]Feature) error) (*TemplateSet, readStats, error) {
	var st readStats
	r, c, err := src.open(display, opts.Input)
	if err != nil {
		return set, st, err
	}
	defer c.Close()
	var x *Extractor // compiled at the first sentence: readers learn their columns from it
	var feats [][]Feature
	n := 0
	for r.Scan() {
		if n++; n&1023 == 0 && ctx.Err() != nil {
			return set, st, ctx.Err()
		}
		if x == nil {
			if set == nil && opts.TemplatesFor != nil {
				var name string
				if set, name, err = opts.TemplatesFor(r.Columns()); err != nil {
					return set, st, fmt.Errorf("%s: %w", display, err)
				}
				if opts.Chosen != nil {
					opts.Chosen(name, r.Columns())
				}
			}
			if set == nil {
				set = &TemplateSet{}
			}
			if x, err = compileFor(set, r); err != nil {
				return set, st, fmt.Errorf("%s: %w", display, err)
			}
			x.Source = display
			if warn {
				checkColumns(r, display, opts)
				warn = false
			}
		}
		s := r.Sentence()
		if feats, err = x.Extract(s, feats); err != nil {
			return set, st, err
		}
		if err := fn(r.Columns(), s, feats); err != nil {
			return set, st, err
		}
	}
	if cr, ok := r.(*ConllReader); ok {
		st.docstarts = cr.Docstarts()
	}
	return set, st, r.Err()
}
