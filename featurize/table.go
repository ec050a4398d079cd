package featurize

// The feature table (schema in package schemas): one row per token, sentences
// contiguous, record batches cut on sentence boundaries. Attribute and label
// names travel as Arrow dictionaries, so a table needs no side file.
//
// Labels met while writing that are not among TableOptions.LabelNames (say a
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
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/dualcrf/dualcrf/crf"
	"github.com/dualcrf/dualcrf/pipeline"
	"github.com/dualcrf/dualcrf/schemas"
)

// DefaultBatchTokens is the default number of tokens per record batch.
const DefaultBatchTokens = 65536

// TableOptions configure a TableWriter.
type TableOptions struct {
	// Columns names the pass-through text columns, in the order of
	// Sentence.Tokens' cells (a Reader's Columns()); nil writes none.
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
	Writer pipeline.WriterOptions
	// Mem allocates Arrow buffers; memory.DefaultAllocator when nil. It is
	// also the IPC writer's allocator unless Writer.Mem is set.
	Mem memory.Allocator
}

// Summary describes a feature table, for `dualcrf inspect`.
type Summary struct {
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
}

// TableWriter writes sentences as a feature table. Call Close to finish the
// table, or Abort to give it up without the end-of-stream marker (so a reader
// downstream sees a truncated table, never a short complete one).
type TableWriter struct {
	schema      *arrow.Schema
	cols        tableColumns
	out         pipeline.RecordWriter
	mem         memory.Allocator
	fileFormat  bool
	batchTokens int
	ncols       int

	attrDict   arrow.Array // the attribute names, one array for the whole table
	labelIndex map[string]int32
	labelDict  arrow.Array // label names as of the last batch built

	b       tableBuilders
	rows    int                 // rows in the batch being built
	batches int                 // batches built
	pending []arrow.RecordBatch // file format: batches held until Close

	sum    Summary
	err    error
	closed bool
}

// tableColumns holds the column indices of a feature-table schema.
type tableColumns struct {
	sentence, position, label, attrs, values int
	text                                     []int
}

func tableColumnIndices(s *arrow.Schema) tableColumns {
	idx := func(name string) int { return s.FieldIndices(name)[0] }
	c := tableColumns{
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

// tableBuilders build the columns of one record batch.
type tableBuilders struct {
	sentence *array.Int64Builder
	position *array.Int32Builder
	text     []*array.StringBuilder
	label    *array.Int32Builder // label dictionary indices
	attrs    *array.ListBuilder  // list<int32>, retyped to list<dictionary> when built
	attrIDs  *array.Int32Builder
	values   *array.ListBuilder
	valueB   *array.Float64Builder
}

// NewTableWriter starts a feature table on w. Nothing is written before the
// first batch is complete or Close is called.
func NewTableWriter(w io.Writer, opts TableOptions) (*TableWriter, error) {
	schema, err := schemas.FeatureSchema(opts.Columns, opts.Metadata)
	if err != nil {
		return nil, err
	}
	if err := tableCheckNames(opts.AttrNames, "attribute", true); err != nil {
		return nil, err
	}
	if err := tableCheckNames(opts.LabelNames, "label", false); err != nil {
		return nil, err
	}
	format, err := pipeline.ParseFormat(string(opts.Writer.Format))
	if err != nil {
		return nil, err
	}
	mem := opts.Mem
	if mem == nil {
		mem = memory.DefaultAllocator
	}
	wopts := opts.Writer
	if wopts.Mem == nil {
		wopts.Mem = mem
	}
	out, err := pipeline.NewRecordWriter(w, schema, wopts)
	if err != nil {
		return nil, err
	}
	tw := &TableWriter{
		schema:      schema,
		cols:        tableColumnIndices(schema),
		out:         out,
		mem:         mem,
		fileFormat:  format == pipeline.FormatFile,
		batchTokens: opts.BatchTokens,
		ncols:       len(opts.Columns),
		attrDict:    tableStringArray(mem, opts.AttrNames),
		labelIndex:  make(map[string]int32, len(opts.LabelNames)),
		sum: Summary{
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
	tw.b = newTableBuilders(mem, schema, tw.cols)
	return tw, nil
}

// tableCheckNames rejects duplicate names (and empty ones unless allowEmpty).
func tableCheckNames(names []string, what string, allowEmpty bool) error {
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

func tableStringArray(mem memory.Allocator, values []string) arrow.Array {
	b := array.NewStringBuilder(mem)
	defer b.Release()
	b.AppendValues(values, nil)
	return b.NewArray()
}

func newTableBuilders(mem memory.Allocator, s *arrow.Schema, c tableColumns) tableBuilders {
	b := tableBuilders{
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

func (b *tableBuilders) release() {
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
func (w *TableWriter) addLabel(l string) int32 {
	id := int32(len(w.sum.Labels))
	w.labelIndex[l] = id
	w.sum.Labels = append(w.sum.Labels, l)
	w.sum.LabelCounts = append(w.sum.LabelCounts, 0)
	return id
}

// Write appends sentence s. attrs[t] holds the attribute ids (into
// AttrNames) of token t; values is nil when every value is 1, else values[t]
// is nil or parallel to attrs[t] (a token whose values are all 1 is stored
// with a null values list). Token texts come from s.Tokens
// (one cell per column of TableOptions.Columns) and labels from s.Labels
// ("" or a nil Labels means no label). A sentence that fails the checks is
// not written and leaves the writer usable.
func (w *TableWriter) Write(s *Sentence, attrs [][]int32, values [][]float64) error {
	switch {
	case w.err != nil:
		return w.err
	case w.closed:
		return errors.New("feature table: write after close")
	}
	if err := w.check(s, attrs, values); err != nil {
		return err
	}
	w.appendSentence(s, attrs, values)
	if w.rows >= w.batchTokens {
		return w.flush()
	}
	return nil
}

// check validates one sentence against the writer's options.
func (w *TableWriter) check(s *Sentence, attrs [][]int32, values [][]float64) error {
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
func (w *TableWriter) appendSentence(s *Sentence, attrs [][]int32, values [][]float64) {
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
		if values == nil || tableAllOnes(values[t]) {
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

func (w *TableWriter) appendLabel(s *Sentence, t int) {
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
func (w *TableWriter) flush() error {
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
func (w *TableWriter) buildRecord() arrow.RecordBatch {
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
func (w *TableWriter) currentLabelDict() arrow.Array {
	if w.labelDict == nil || w.labelDict.Len() != len(w.sum.Labels) {
		if w.labelDict != nil {
			w.labelDict.Release()
		}
		w.labelDict = tableStringArray(w.mem, w.sum.Labels)
	}
	return w.labelDict
}

// buildAttrs turns the list<int32> builder's output into the schema's
// list<dictionary<int32, utf8>> sharing the attribute-name dictionary.
func (w *TableWriter) buildAttrs() arrow.Array {
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
func (w *TableWriter) Summary() Summary {
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
func (w *TableWriter) Close() error {
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
func (w *TableWriter) writePending() error {
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
func (w *TableWriter) Abort() {
	if w.closed {
		return
	}
	w.closed = true
	w.out.Abort()
	w.release()
}

func (w *TableWriter) release() {
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

// ReadOptions configure ReadTable.
type ReadOptions struct {
	// SkipText leaves Table.Text nil (the columns are still named).
	SkipText bool
	// Mem allocates the Arrow buffers read; memory.DefaultAllocator when nil.
	Mem memory.Allocator
}

// Table is a feature table read into memory.
type Table struct {
	Data     *crf.Dataset      // attributes, values and labels in flat arrays
	Columns  []string          // pass-through text columns
	Text     [][]string        // Text[c][token], nil with ReadOptions.SkipText
	Metadata map[string]string // schema metadata
}

// ReadTable reads a whole feature table (IPC stream or file) from r; name is
// used in errors. It validates the schema and every row: sentences numbered
// 0,1,2,… in row order with positions 0..T-1, attribute and label ids within
// their dictionaries, one finite value per attribute. An empty table (no
// rows) is not an error: it gives a Dataset with no sentence, still carrying
// the attribute and label names when the writer sent them. Every Arrow batch
// is released before ReadTable returns.
func ReadTable(r io.Reader, name string, opts ReadOptions) (*Table, error) {
	tr, rr, err := tableOpen(r, name, opts, false)
	if err != nil {
		return nil, err
	}
	defer rr.Release()
	if err := tr.readAll(rr); err != nil {
		return nil, err
	}
	return tr.table(), nil
}

// InspectTable reads a feature table as a stream and summarises it without
// keeping its rows, so it works on tables larger than memory. It checks the
// rows as ReadTable does.
func InspectTable(r io.Reader, name string, opts ReadOptions) (Summary, error) {
	tr, rr, err := tableOpen(r, name, opts, true)
	if err != nil {
		return Summary{}, err
	}
	defer rr.Release()
	if err := tr.readAll(rr); err != nil {
		return Summary{}, err
	}
	return tr.sum, nil
}

// Inspect summarises a table read by ReadTable.
func Inspect(t *Table) Summary {
	d := t.Data
	s := Summary{
		Version:         t.Metadata[schemas.KeyVersion],
		Columns:         append([]string(nil), t.Columns...),
		Sentences:       d.Len(),
		Tokens:          d.NumTokens(),
		Attributes:      d.NumAttrs,
		AttrOccurrences: len(d.Attrs),
		Labels:          append([]string(nil), d.LabelNames...),
		LabelCounts:     make([]int, d.NumLabels),
		Metadata:        t.Metadata,
	}
	for i := 0; i < d.Len(); i++ {
		s.MaxLen = max(s.MaxLen, d.SentStart[i+1]-d.SentStart[i])
	}
	for _, l := range d.Labels {
		if l < 0 {
			s.Unlabelled++
		} else {
			s.LabelCounts[l]++
		}
	}
	if d.Values != nil {
		for tok := 0; tok < d.NumTokens(); tok++ {
			if !tableAllOnes(d.Values[d.AttrStart[tok]:d.AttrStart[tok+1]]) {
				s.RealValued++
			}
		}
	}
	return s
}

// tableAllOnes reports whether every value is 1 (true for none).
func tableAllOnes(values []float64) bool {
	for _, v := range values {
		if v != 1 {
			return false
		}
	}
	return true
}

// tableOpen opens the IPC input and checks its schema.
func tableOpen(r io.Reader, name string, opts ReadOptions, summaryOnly bool) (*tableReader, array.RecordReader, error) {
	rr, err := pipeline.OpenRecordReader(r, name, pipeline.ReaderOptions{Mem: opts.Mem})
	if err != nil {
		return nil, nil, err
	}
	schema := rr.Schema()
	if err := schemas.ValidateFeatureSchema(schema); err != nil {
		rr.Release()
		return nil, nil, fmt.Errorf("%s: %w", name, err)
	}
	return newTableReader(schema, name, opts.SkipText || summaryOnly, summaryOnly), rr, nil
}

// tableReader turns record batches into flat arrays, checking every row.
type tableReader struct {
	name        string
	cols        tableColumns
	skipText    bool
	summaryOnly bool // count only, keep no rows

	attrNames, labelNames []string
	attrIndex, labelIndex map[string]int32
	attrSrc, labelSrc     arrow.ArrayData // dictionaries the maps below were made from
	attrMap, labelMap     []int32         // dictionary index → id

	sentStart, attrStart []int
	attrs                []int32
	values               []float64 // nil while every value read is 1
	labels               []int32
	text                 [][]string

	lastSentence int64 // -1 before the first row
	lastPos      int32
	sum          Summary
}

func newTableReader(s *arrow.Schema, name string, skipText, summaryOnly bool) *tableReader {
	tr := &tableReader{
		name:         name,
		cols:         tableColumnIndices(s),
		skipText:     skipText,
		summaryOnly:  summaryOnly,
		attrIndex:    make(map[string]int32),
		labelIndex:   make(map[string]int32),
		attrStart:    []int{0},
		lastSentence: -1,
		sum: Summary{
			Version:  schemas.MetadataMap(s)[schemas.KeyVersion],
			Columns:  schemas.FeatureTextColumns(s),
			Metadata: schemas.MetadataMap(s),
		},
	}
	if !skipText {
		tr.text = make([][]string, len(tr.cols.text))
	}
	return tr
}

// readAll reads every batch of rr. Concatenated tables (pipeline.Streamer)
// number their sentences from 0 each: a new stream starts a new sentence.
func (tr *tableReader) readAll(rr array.RecordReader) error {
	stream := 0
	for batch := 0; rr.Next(); batch++ {
		if s := pipeline.StreamOf(rr); s != stream {
			stream, tr.lastSentence = s, -1
		}
		if err := tr.addBatch(rr.RecordBatch(), batch); err != nil {
			return err
		}
	}
	if err := rr.Err(); err != nil {
		return err
	}
	tr.sum.Attributes = len(tr.attrNames)
	tr.sum.Labels = tr.labelNames
	return nil
}

// tableBatch is a typed view of one record batch.
type tableBatch struct {
	sent              []int64
	pos               []int32
	label             *array.Dictionary
	labelIdx          []int32
	attrs             *array.List
	attrChild         *array.Dictionary
	attrIdx           []int32
	values            *array.List
	valueChild        *array.Float64
	labelMap, attrMap []int32
}

// addBatch checks and appends one record batch. A batch whose buffers are
// inconsistent makes arrow-go panic on access; that becomes an error too.
func (tr *tableReader) addBatch(rec arrow.RecordBatch, batch int) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%s: batch %d: corrupt record batch: %v", tr.name, batch, p)
		}
	}()
	b, err := tr.view(rec)
	if err != nil {
		return fmt.Errorf("%s: batch %d: %w", tr.name, batch, err)
	}
	for i := range b.sent {
		if err := tr.addRow(&b, i); err != nil {
			return fmt.Errorf("%s: batch %d row %d (sentence %d position %d): %w",
				tr.name, batch, i, b.sent[i], b.pos[i], err)
		}
	}
	if !tr.skipText {
		tr.addText(rec)
	}
	return nil
}

// view checks the batch's arrays and maps its dictionaries to ids.
func (tr *tableReader) view(rec arrow.RecordBatch) (tableBatch, error) {
	for i, col := range rec.Columns() {
		if v, ok := col.(interface{ ValidateFull() error }); ok {
			if err := v.ValidateFull(); err != nil {
				return tableBatch{}, fmt.Errorf("column %q: %w", rec.ColumnName(i), err)
			}
		}
	}
	for _, c := range []int{tr.cols.sentence, tr.cols.position} {
		if n := rec.Column(c).NullN(); n > 0 {
			return tableBatch{}, fmt.Errorf("column %q has %d nulls", rec.ColumnName(c), n)
		}
	}
	b := tableBatch{
		sent:   rec.Column(tr.cols.sentence).(*array.Int64).Int64Values(),
		pos:    rec.Column(tr.cols.position).(*array.Int32).Int32Values(),
		label:  rec.Column(tr.cols.label).(*array.Dictionary),
		attrs:  rec.Column(tr.cols.attrs).(*array.List),
		values: rec.Column(tr.cols.values).(*array.List),
	}
	b.labelIdx = b.label.Indices().(*array.Int32).Int32Values()
	b.attrChild = b.attrs.ListValues().(*array.Dictionary)
	b.attrIdx = b.attrChild.Indices().(*array.Int32).Int32Values()
	b.valueChild = b.values.ListValues().(*array.Float64)
	var err error
	if b.labelMap, err = tr.mapLabels(b.label.Dictionary()); err != nil {
		return tableBatch{}, err
	}
	if b.attrMap, err = tr.mapAttrs(b.attrChild.Dictionary()); err != nil {
		return tableBatch{}, err
	}
	return b, nil
}

// mapLabels maps a label dictionary to label ids, reusing the last map
// while the dictionary is unchanged. New names get new ids in order, so a
// dictionary that grows by deltas keeps its ids.
func (tr *tableReader) mapLabels(dict arrow.Array) ([]int32, error) {
	if dict.Data() == tr.labelSrc {
		return tr.labelMap, nil
	}
	m, err := tableMapDict(dict, &tr.labelNames, tr.labelIndex, "label")
	if err != nil {
		return nil, err
	}
	for len(tr.sum.LabelCounts) < len(tr.labelNames) {
		tr.sum.LabelCounts = append(tr.sum.LabelCounts, 0)
	}
	tr.labelSrc, tr.labelMap = dict.Data(), m
	return m, nil
}

// mapAttrs maps an attribute dictionary to attribute ids, like mapLabels.
func (tr *tableReader) mapAttrs(dict arrow.Array) ([]int32, error) {
	if dict.Data() == tr.attrSrc {
		return tr.attrMap, nil
	}
	m, err := tableMapDict(dict, &tr.attrNames, tr.attrIndex, "attribute")
	if err != nil {
		return nil, err
	}
	tr.attrSrc, tr.attrMap = dict.Data(), m
	return m, nil
}

// tableMapDict maps each entry of a utf8 dictionary to the id of its name,
// adding names not seen before. Labels may not be null or empty.
func tableMapDict(dict arrow.Array, names *[]string, index map[string]int32, what string) ([]int32, error) {
	str, ok := dict.(*array.String)
	if !ok {
		return nil, fmt.Errorf("%s dictionary has type %s, want utf8", what, dict.DataType())
	}
	m := make([]int32, str.Len())
	for i := range m {
		if str.IsNull(i) || (what == "label" && str.Value(i) == "") {
			return nil, fmt.Errorf("%s dictionary entry %d is null or empty", what, i)
		}
		v := str.Value(i)
		id, ok := index[v]
		if !ok {
			v = strings.Clone(v) // Value aliases the Arrow buffer
			id = int32(len(*names))
			*names = append(*names, v)
			index[v] = id
		}
		m[i] = id
	}
	return m, nil
}

// addRow checks row i of b and appends it.
func (tr *tableReader) addRow(b *tableBatch, i int) error {
	if err := tr.checkOrder(b.sent[i], b.pos[i]); err != nil {
		return err
	}
	label, err := tr.rowLabel(b, i)
	if err != nil {
		return err
	}
	lo, hi, err := tr.rowAttrs(b, i)
	if err != nil {
		return err
	}
	vals, err := tr.rowValues(b, i, lo, hi)
	if err != nil {
		return err
	}
	tr.sum.Tokens++
	tr.sum.AttrOccurrences += int(hi - lo)
	if label < 0 {
		tr.sum.Unlabelled++
	} else {
		tr.sum.LabelCounts[label]++
	}
	if vals != nil {
		tr.sum.RealValued++
	}
	if tr.summaryOnly {
		return nil
	}
	tr.labels = append(tr.labels, label)
	if vals != nil && tr.values == nil {
		tr.values = tableOnes(nil, len(tr.attrs))
	}
	if vals != nil {
		tr.values = append(tr.values, vals...)
	} else if tr.values != nil {
		tr.values = tableOnes(tr.values, int(hi-lo))
	}
	for _, k := range b.attrIdx[lo:hi] {
		tr.attrs = append(tr.attrs, b.attrMap[k])
	}
	tr.attrStart = append(tr.attrStart, len(tr.attrs))
	return nil
}

// tableOnes appends n ones to dst.
func tableOnes(dst []float64, n int) []float64 {
	for ; n > 0; n-- {
		dst = append(dst, 1)
	}
	return dst
}

// checkOrder checks that a row continues the current sentence or starts the
// next one, and counts sentences.
func (tr *tableReader) checkOrder(s int64, p int32) error {
	switch {
	case p == 0 && s == tr.lastSentence+1:
		tr.sum.Sentences++
		if !tr.summaryOnly {
			tr.sentStart = append(tr.sentStart, len(tr.labels))
		}
	case tr.lastSentence < 0:
		return fmt.Errorf("the table must start at sentence 0 position 0 (sentences are numbered 0,1,2,… in row order)")
	case p == 0:
		return fmt.Errorf("sentence %d follows sentence %d (sentences are numbered 0,1,2,… in row order)", s, tr.lastSentence)
	case s != tr.lastSentence || p != tr.lastPos+1:
		return fmt.Errorf("row follows sentence %d position %d (a sentence's rows are contiguous with positions 0,1,2,…)",
			tr.lastSentence, tr.lastPos)
	}
	tr.lastSentence, tr.lastPos = s, p
	tr.sum.MaxLen = max(tr.sum.MaxLen, int(p)+1)
	return nil
}

// rowLabel returns the label id of row i, -1 when null.
func (tr *tableReader) rowLabel(b *tableBatch, i int) (int32, error) {
	if b.label.IsNull(i) {
		return -1, nil
	}
	k := b.labelIdx[i]
	if k < 0 || int(k) >= len(b.labelMap) {
		return 0, fmt.Errorf("label index %d out of range [0,%d)", k, len(b.labelMap))
	}
	return b.labelMap[k], nil
}

// rowAttrs returns the range of row i's attributes in b.attrIdx, checked.
// A null attrs list counts as an empty one.
func (tr *tableReader) rowAttrs(b *tableBatch, i int) (lo, hi int64, err error) {
	if b.attrs.IsNull(i) {
		return 0, 0, nil
	}
	lo, hi = b.attrs.ValueOffsets(i)
	for j := lo; j < hi; j++ {
		if b.attrChild.NullN() > 0 && b.attrChild.IsNull(int(j)) {
			return 0, 0, fmt.Errorf("attribute %d is null", j-lo)
		}
		if k := b.attrIdx[j]; k < 0 || int(k) >= len(b.attrMap) {
			return 0, 0, fmt.Errorf("attribute index %d out of range [0,%d)", k, len(b.attrMap))
		}
	}
	return lo, hi, nil
}

// rowValues returns row i's values, nil when they are null or all 1;
// alo:ahi is the row's range of attributes.
func (tr *tableReader) rowValues(b *tableBatch, i int, alo, ahi int64) ([]float64, error) {
	if b.values.IsNull(i) {
		return nil, nil
	}
	lo, hi := b.values.ValueOffsets(i)
	if hi-lo != ahi-alo {
		return nil, fmt.Errorf("%d values for %d attributes", hi-lo, ahi-alo)
	}
	child := b.valueChild
	vals := child.Float64Values()[lo:hi]
	for j, v := range vals {
		if child.NullN() > 0 && child.IsNull(int(lo)+j) {
			return nil, fmt.Errorf("value %d is null", j)
		}
		if math.IsNaN(v) || math.IsInf(v, 0) {
			name := tr.attrNames[b.attrMap[b.attrIdx[alo+int64(j)]]]
			return nil, fmt.Errorf("value of attribute %q is %v, want a finite number", name, v)
		}
	}
	if tableAllOnes(vals) {
		return nil, nil
	}
	return vals, nil
}

// addText copies the batch's text columns (Arrow strings alias its buffers).
func (tr *tableReader) addText(rec arrow.RecordBatch) {
	for c, col := range tr.cols.text {
		arr := rec.Column(col).(*array.String)
		for i := 0; i < arr.Len(); i++ {
			v := ""
			if arr.IsValid(i) {
				v = strings.Clone(arr.Value(i))
			}
			tr.text[c] = append(tr.text[c], v)
		}
	}
}

// table returns what was read.
func (tr *tableReader) table() *Table {
	d := &crf.Dataset{
		NumAttrs:   len(tr.attrNames),
		NumLabels:  len(tr.labelNames),
		AttrNames:  tr.attrNames,
		LabelNames: tr.labelNames,
		SentStart:  append(tr.sentStart, len(tr.labels)),
		AttrStart:  tr.attrStart,
		Attrs:      tr.attrs,
		Values:     tr.values,
		Labels:     tr.labels,
	}
	return &Table{Data: d, Columns: tr.sum.Columns, Text: tr.text, Metadata: tr.sum.Metadata}
}
