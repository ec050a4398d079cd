package tables

// The feature table (schema in package schemas): one row per token, sentences
// contiguous, record batches cut on sentence boundaries. Attribute and label
// names travel as Arrow dictionaries, so a table needs no side file.
//
// Labels met while writing that are not among FeatureOptions.LabelNames (say a
// test-set label unseen in training) are appended to the label dictionary.
// In the stream format the growth goes out as dictionary delta batches; the
// IPC file format allows no dictionary change, so in that format the writer
// keeps its batches in memory until Close and writes them all with the final
// label dictionary.

import (
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/dualcrf/dualcrf/arrowio"
	"github.com/dualcrf/dualcrf/schemas"
)

// DefaultBatchTokens is the default number of tokens per record batch.
const DefaultBatchTokens = 65536

// FeatureOptions configure a FeatureWriter.
type FeatureOptions struct {
	// Columns names the pass-through text columns, in the order of
	// FeatureSentence.Tokens' cells (a corpus reader's columns); nil writes
	// none.
	Columns []string
	// AttrNames is the attribute vocabulary: attribute id i is AttrNames[i].
	// Names must be distinct.
	AttrNames []string
	// LabelNames are the known labels, label id i being LabelNames[i]; a
	// label met in the data and not listed here gets the next id. Names must
	// be distinct and non-empty.
	LabelNames []string
	// Metadata holds free schema-metadata keys (schemas.KeyTemplates,
	// schemas.KeyMinCount, schemas.KeySource, …).
	Metadata map[string]string
	// BatchTokens is the number of tokens after which a record batch is cut
	// (at the end of the sentence that reaches it); DefaultBatchTokens when 0.
	BatchTokens int
	// Writer chooses the IPC format and compression.
	Writer arrowio.WriterOptions
	// Mem allocates Arrow buffers; memory.DefaultAllocator when nil. It is
	// also the IPC writer's allocator unless Writer.Mem is set.
	Mem memory.Allocator
}

// FeatureSummary describes a feature table, for `dualcrf inspect`.
type FeatureSummary struct {
	Version         string            // layout version (schemas.KeyVersion)
	Columns         []string          // pass-through text columns
	Sentences       int               // number of sentences
	Tokens          int               // number of tokens (rows)
	MaxLen          int               // tokens in the longest sentence
	Attributes      int               // size of the attribute vocabulary
	AttrOccurrences int               // attribute occurrences over all tokens
	RealValued      int               // tokens with a value other than 1
	Labels          []string          // label names by id
	LabelCounts     []int             // tokens per label id
	Unlabelled      int               // tokens without a label
	Metadata        map[string]string // schema metadata
	// Coverage, set by featurize.Run when it featurizes with a fixed
	// vocabulary, counts the attribute occurrences that vocabulary does not
	// know (left out) and the labels outside the known ones (kept, appended
	// to the label dictionary).
	Coverage *Coverage
}

// FeatureSentence is one sentence as a FeatureWriter takes it.
type FeatureSentence struct {
	// Tokens[t][c] is the text of token t in column c of
	// FeatureOptions.Columns (nil when the table has no text column).
	Tokens [][]string
	// Labels[t] is the gold label of token t, "" for none; nil when the
	// sentence has no labels at all.
	Labels []string
	// Attrs[t] holds the attribute ids (into FeatureOptions.AttrNames) of
	// token t; len(Attrs) is the sentence's length.
	Attrs [][]int32
	// Values is nil when every attribute value is 1; otherwise Values[t] is
	// nil (all 1) or parallel to Attrs[t].
	Values [][]float64
	// Line is the 1-based line of the sentence in its corpus, for errors (0:
	// not known).
	Line int
}

// FeatureWriter writes sentences as a feature table. Call Close to finish the
// table, or Abort to give it up without the end-of-stream marker (so a reader
// downstream sees a truncated table, never a short complete one).
type FeatureWriter struct {
	schema      *arrow.Schema
	cols        featureColumns
	out         arrowio.RecordWriter
	mem         memory.Allocator
	fileFormat  bool
	batchTokens int
	ncols       int

	attrDict   arrow.Array // the attribute names, one array for the whole table
	labelIndex map[string]int32
	labelDict  arrow.Array // label names as of the last batch built

	b       featureBuilders
	rows    int                 // rows in the batch being built
	batches int                 // batches built
	pending []arrow.RecordBatch // file format: batches held until Close

	sum    FeatureSummary
	err    error
	closed bool
}

// featureColumns holds the column indices of a feature-table schema.
type featureColumns struct {
	sentence, position, label, attrs, values int
	text                                     []int
}

func featureColumnIndices(s *arrow.Schema) featureColumns {
	idx := func(name string) int { return s.FieldIndices(name)[0] }
	c := featureColumns{
		sentence: idx(schemas.ColSentence),
		position: idx(schemas.ColPosition),
		label:    idx(schemas.ColLabel),
		attrs:    idx(schemas.ColAttrs),
		values:   idx(schemas.ColValues),
	}
	for _, name := range schemas.FeatureTextColumns(s) {
		c.text = append(c.text, idx(name))
	}
	return c
}

// featureBuilders build the columns of one record batch.
type featureBuilders struct {
	sentence *array.Int64Builder
	position *array.Int32Builder
	text     []*array.StringBuilder
	label    *array.Int32Builder // label dictionary indices
	attrs    *array.ListBuilder  // list<int32>, retyped to list<dictionary> when built
	attrIDs  *array.Int32Builder
	values   *array.ListBuilder
	valueB   *array.Float64Builder
}

// NewFeatureWriter starts a feature table on w. Nothing is written before the
// first batch is complete or Close is called.
func NewFeatureWriter(w io.Writer, opts FeatureOptions) (*FeatureWriter, error) {
	schema, err := schemas.FeatureSchema(opts.Columns, opts.Metadata)
	if err != nil {
		return nil, err
	}
	if err := checkNames(opts.AttrNames, "attribute", true); err != nil {
		return nil, err
	}
	if err := checkNames(opts.LabelNames, "label", false); err != nil {
		return nil, err
	}
	format := arrowio.FormatParquet
	if opts.Writer.Format != arrowio.FormatParquet {
		var err error
		if format, err = arrowio.ParseFormat(string(opts.Writer.Format)); err != nil {
			return nil, err
		}
	}
	mem := opts.Mem
	if mem == nil {
		mem = memory.DefaultAllocator
	}
	wopts := opts.Writer
	if wopts.Mem == nil {
		wopts.Mem = mem
	}
	out, err := arrowio.NewRecordWriter(w, schema, wopts)
	if err != nil {
		return nil, err
	}
	tw := &FeatureWriter{
		schema:      schema,
		cols:        featureColumnIndices(schema),
		out:         out,
		mem:         mem,
		fileFormat:  format == arrowio.FormatFile,
		batchTokens: opts.BatchTokens,
		ncols:       len(opts.Columns),
		attrDict:    stringArray(mem, opts.AttrNames),
		labelIndex:  make(map[string]int32, len(opts.LabelNames)),
		sum: FeatureSummary{
			Version:    schemas.FeatureVersion,
			Columns:    append([]string(nil), opts.Columns...),
			Attributes: len(opts.AttrNames),
			Metadata:   schemas.MetadataMap(schema),
		},
	}
	if tw.batchTokens <= 0 {
		tw.batchTokens = DefaultBatchTokens
	}
	for _, l := range opts.LabelNames {
		tw.addLabel(l)
	}
	tw.b = newFeatureBuilders(mem, schema, tw.cols)
	return tw, nil
}

// checkNames rejects duplicate names (and empty ones unless allowEmpty).
func checkNames(names []string, what string, allowEmpty bool) error {
	seen := make(map[string]int, len(names))
	for i, n := range names {
		if n == "" && !allowEmpty {
			return fmt.Errorf("feature table: %s %d has an empty name", what, i)
		}
		if j, ok := seen[n]; ok {
			return fmt.Errorf("feature table: %s name %q given twice (ids %d and %d)", what, n, j, i)
		}
		seen[n] = i
	}
	return nil
}

func stringArray(mem memory.Allocator, values []string) arrow.Array {
	b := array.NewStringBuilder(mem)
	defer b.Release()
	b.AppendValues(values, nil)
	return b.NewArray()
}

func newFeatureBuilders(mem memory.Allocator, s *arrow.Schema, c featureColumns) featureBuilders {
	b := featureBuilders{
		sentence: array.NewInt64Builder(mem),
		position: array.NewInt32Builder(mem),
		label:    array.NewInt32Builder(mem),
		attrs:    array.NewListBuilder(mem, arrow.PrimitiveTypes.Int32),
		values:   array.NewBuilder(mem, s.Field(c.values).Type).(*array.ListBuilder),
	}
	b.attrIDs = b.attrs.ValueBuilder().(*array.Int32Builder)
	b.valueB = b.values.ValueBuilder().(*array.Float64Builder)
	for range c.text {
		b.text = append(b.text, array.NewStringBuilder(mem))
	}
	return b
}

func (b *featureBuilders) release() {
	b.sentence.Release()
	b.position.Release()
	b.label.Release()
	b.attrs.Release()
	b.values.Release()
	for _, t := range b.text {
		t.Release()
	}
}

// addLabel gives label l the next id.
func (w *FeatureWriter) addLabel(l string) int32 {
	id := int32(len(w.sum.Labels))
	w.labelIndex[l] = id
	w.sum.Labels = append(w.sum.Labels, l)
	w.sum.LabelCounts = append(w.sum.LabelCounts, 0)
	return id
}

// Write appends sentence s (a token whose values are all 1 is stored with a
// null values list). A sentence that fails the checks is not written and
// leaves the writer usable.
func (w *FeatureWriter) Write(s *FeatureSentence) error {
	switch {
	case w.err != nil:
		return w.err
	case w.closed:
		return errors.New("feature table: write after close")
	}
	if err := w.check(s); err != nil {
		return err
	}
	w.appendSentence(s)
	if w.rows >= w.batchTokens {
		return w.flush()
	}
	return nil
}

// check validates one sentence against the writer's options.
func (w *FeatureWriter) check(s *FeatureSentence) error {
	attrs, values := s.Attrs, s.Values
	n := len(attrs)
	errorf := func(format string, args ...any) error {
		return fmt.Errorf("feature table: sentence %d (line %d): %s", w.sum.Sentences, s.Line, fmt.Sprintf(format, args...))
	}
	switch {
	case n == 0:
		return errorf("empty sentence")
	case w.ncols > 0 && len(s.Tokens) != n:
		return errorf("%d token rows for %d tokens", len(s.Tokens), n)
	case s.Labels != nil && len(s.Labels) != n:
		return errorf("%d labels for %d tokens", len(s.Labels), n)
	case values != nil && len(values) != n:
		return errorf("%d value lists for %d tokens", len(values), n)
	}
	for t := 0; t < n; t++ {
		if w.ncols > 0 && len(s.Tokens[t]) != w.ncols {
			return errorf("token %d has %d columns, want %d", t, len(s.Tokens[t]), w.ncols)
		}
		for _, a := range attrs[t] {
			if a < 0 || int(a) >= w.sum.Attributes {
				return errorf("token %d: attribute id %d out of range [0,%d)", t, a, w.sum.Attributes)
			}
		}
		if values == nil || values[t] == nil {
			continue
		}
		if len(values[t]) != len(attrs[t]) {
			return errorf("token %d: %d values for %d attributes", t, len(values[t]), len(attrs[t]))
		}
		for _, v := range values[t] {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return errorf("token %d: attribute value %v is not finite", t, v)
			}
		}
	}
	return nil
}

// appendSentence adds a checked sentence to the batch being built.
func (w *FeatureWriter) appendSentence(s *FeatureSentence) {
	attrs, values := s.Attrs, s.Values
	n := len(attrs)
	b := &w.b
	for t := 0; t < n; t++ {
		b.sentence.Append(int64(w.sum.Sentences))
		b.position.Append(int32(t))
		for c, tb := range b.text {
			tb.Append(s.Tokens[t][c])
		}
		w.appendLabel(s, t)
		b.attrs.Append(true)
		b.attrIDs.AppendValues(attrs[t], nil)
		w.sum.AttrOccurrences += len(attrs[t])
		if values == nil || allOnes(values[t]) {
			b.values.AppendNull()
		} else {
			b.values.Append(true)
			b.valueB.AppendValues(values[t], nil)
			w.sum.RealValued++
		}
	}
	w.rows += n
	w.sum.Sentences++
	w.sum.Tokens += n
	w.sum.MaxLen = max(w.sum.MaxLen, n)
}

func (w *FeatureWriter) appendLabel(s *FeatureSentence, t int) {
	if s.Labels == nil || s.Labels[t] == "" {
		w.b.label.AppendNull()
		w.sum.Unlabelled++
		return
	}
	id, ok := w.labelIndex[s.Labels[t]]
	if !ok {
		id = w.addLabel(s.Labels[t])
	}
	w.b.label.Append(id)
	w.sum.LabelCounts[id]++
}

// flush turns the rows built so far into a record batch and writes it (or,
// for the file format, keeps it for Close).
func (w *FeatureWriter) flush() error {
	rec := w.buildRecord()
	w.rows = 0
	w.batches++
	if w.fileFormat {
		w.pending = append(w.pending, rec)
		return nil
	}
	defer rec.Release()
	if err := w.out.Write(rec); err != nil {
		w.err = fmt.Errorf("write feature table batch %d: %w", w.batches-1, err)
		return w.err
	}
	return nil
}

// buildRecord builds a record batch from the builders, which it resets.
func (w *FeatureWriter) buildRecord() arrow.RecordBatch {
	cols := make([]arrow.Array, len(w.schema.Fields()))
	cols[w.cols.sentence] = w.b.sentence.NewArray()
	cols[w.cols.position] = w.b.position.NewArray()
	for i, c := range w.cols.text {
		cols[c] = w.b.text[i].NewArray()
	}
	indices := w.b.label.NewArray()
	cols[w.cols.label] = array.NewDictionaryArray(w.schema.Field(w.cols.label).Type, indices, w.currentLabelDict())
	indices.Release()
	cols[w.cols.attrs] = w.buildAttrs()
	cols[w.cols.values] = w.b.values.NewArray()
	rec := array.NewRecordBatch(w.schema, cols, int64(w.rows))
	for _, c := range cols {
		c.Release()
	}
	return rec
}

// currentLabelDict returns the label dictionary, rebuilt only when labels
// were added, so an unchanged dictionary is the same array and is not
// written again; a grown one extends the last and goes out as a delta.
func (w *FeatureWriter) currentLabelDict() arrow.Array {
	if w.labelDict == nil || w.labelDict.Len() != len(w.sum.Labels) {
		if w.labelDict != nil {
			w.labelDict.Release()
		}
		w.labelDict = stringArray(w.mem, w.sum.Labels)
	}
	return w.labelDict
}

// buildAttrs turns the list<int32> builder's output into the schema's
// list<dictionary<int32, utf8>> sharing the attribute-name dictionary.
func (w *FeatureWriter) buildAttrs() arrow.Array {
	lst := w.b.attrs.NewListArray()
	defer lst.Release()
	ids := lst.ListValues()
	listType := w.schema.Field(w.cols.attrs).Type.(*arrow.ListType)
	child := array.NewDataWithDictionary(listType.Elem(), ids.Len(), ids.Data().Buffers(),
		ids.NullN(), ids.Data().Offset(), w.attrDict.Data().(*array.Data))
	defer child.Release()
	data := array.NewData(listType, lst.Len(), lst.Data().Buffers(), []arrow.ArrayData{child},
		lst.NullN(), lst.Data().Offset())
	defer data.Release()
	return array.NewListData(data)
}

// Summary returns the counts of what was written so far.
func (w *FeatureWriter) Summary() FeatureSummary {
	s := w.sum
	s.Columns = append([]string(nil), s.Columns...)
	s.Labels = append([]string(nil), s.Labels...)
	s.LabelCounts = append([]int(nil), s.LabelCounts...)
	return s
}

// Close writes the last batch and the end of the table, and releases the
// writer's memory; it does not close w. A table of no sentence is written
// as one empty batch, so it still carries the attribute and label names.
// After a failed Write, Close writes nothing more and returns that error.
func (w *FeatureWriter) Close() error {
	if w.closed {
		return w.err
	}
	if w.err != nil {
		w.Abort()
		return w.err
	}
	if w.rows > 0 || w.batches == 0 {
		if err := w.flush(); err != nil {
			w.Abort()
			return err
		}
	}
	if err := w.writePending(); err != nil {
		w.err = err
		w.Abort()
		return err
	}
	w.closed = true
	defer w.release()
	if err := w.out.Close(); err != nil {
		w.err = fmt.Errorf("write feature table: %w", err)
	}
	return w.err
}

// writePending writes the batches held for the file format with the final
// label dictionary.
func (w *FeatureWriter) writePending() error {
	dict := w.currentLabelDict()
	for i, rec := range w.pending {
		cols := append([]arrow.Array(nil), rec.Columns()...)
		old := rec.Column(w.cols.label).(*array.Dictionary)
		label := array.NewDictionaryArray(old.DataType(), old.Indices(), dict)
		cols[w.cols.label] = label
		out := array.NewRecordBatch(w.schema, cols, rec.NumRows())
		label.Release()
		err := w.out.Write(out)
		out.Release()
		if err != nil {
			return fmt.Errorf("write feature table batch %d: %w", i, err)
		}
	}
	return nil
}

// Abort gives the table up: it releases the writer's memory without writing
// the end marker. Abort after Close does nothing.
func (w *FeatureWriter) Abort() {
	if w.closed {
		return
	}
	w.closed = true
	w.out.Abort()
	w.release()
}

func (w *FeatureWriter) release() {
	w.b.release()
	for _, rec := range w.pending {
		rec.Release()
	}
	w.pending = nil
	w.attrDict.Release()
	if w.labelDict != nil {
		w.labelDict.Release()
		w.labelDict = nil
	}
}

// allOnes reports whether every value is 1 (true for none).
func allOnes(values []float64) bool {
	for _, v := range values {
		if v != 1 {
			return false
		}
	}
	return true
}
