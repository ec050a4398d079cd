package tables

// Reading feature tables. FeatureReader streams a table as chunks of whole
// sentences, so a stage's memory does not grow with its input;
// ReadFeatureTable (the whole table as one chunk) and InspectFeatureTable
// (counts only) are built on it. Every row is checked: sentences numbered 0,1,2,… in row order with
// positions 0..T-1 (numbering restarts in each concatenated stream),
// attribute and label ids within their dictionaries, one finite value per
// attribute.

import (
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/dualcrf/dualcrf/arrowio"
	"github.com/dualcrf/dualcrf/crf"
	"github.com/dualcrf/dualcrf/schemas"
)

// DefaultChunkTokens is the default number of tokens after which a
// FeatureReader ends a chunk (at the next sentence boundary).
const DefaultChunkTokens = 65536

// FeatureReadOptions configure ReadFeatureTable, InspectFeatureTable and
// NewFeatureReader.
type FeatureReadOptions struct {
	// SkipText leaves FeatureTable.Text nil (the columns are still named).
	SkipText bool
	// Mem allocates the Arrow buffers read; memory.DefaultAllocator when nil.
	Mem memory.Allocator
	// ChunkTokens is the number of tokens after which a FeatureReader ends a
	// chunk, at the start of the next sentence, so a chunk holds at most
	// ChunkTokens−1 tokens plus one sentence. DefaultChunkTokens when ≤ 0;
	// ReadFeatureTable ignores it.
	ChunkTokens int
}

// FeatureTable is a feature table, or a chunk of one, read into memory.
type FeatureTable struct {
	Data     *crf.Dataset      // attributes, values and labels in flat arrays
	Columns  []string          // pass-through text columns
	Text     [][]string        // Text[c][token], nil with FeatureReadOptions.SkipText
	Metadata map[string]string // schema metadata
	// FirstSentence is the number of sentences of the input before this
	// chunk: sentence i of Data is sentence FirstSentence+i of the input.
	// It is 0 for a whole table.
	FirstSentence int
	// Lines holds, per sentence, the 1-based line of its first token in the
	// corpus it was featurized from, for messages; nil when not known (a
	// table read from Arrow).
	Lines []int
	// Dropped counts the attribute occurrences left out because the
	// vocabulary did not know them, when the chunk was featurized with a
	// fixed vocabulary (TextReader); 0 for a table read from Arrow, whose
	// writer dropped them already.
	Dropped int
}

// ReadFeatureTable reads a whole feature table (IPC stream or file, or
// concatenated streams) from r; name is used in errors. It validates the
// schema and every row (see FeatureReader). An empty table (no rows) is not an
// error: it gives a Dataset with no sentence, still carrying the attribute
// and label names when the writer sent them. Every Arrow batch is released
// before ReadFeatureTable returns.
func ReadFeatureTable(r io.Reader, name string, opts FeatureReadOptions) (*FeatureTable, error) {
	rr, err := OpenRecordReader(r, name, arrowio.ReaderOptions{Mem: opts.Mem})
	if err != nil {
		return nil, err
	}
	defer rr.Release()
	return ReadFeatureRecords(rr, name, opts)
}

// ReadFeatureRecords reads the whole feature table of rr into memory, as
// ReadFeatureTable does from bytes; name is used in errors. It does not take
// rr over: the caller releases it.
func ReadFeatureRecords(rr array.RecordReader, name string, opts FeatureReadOptions) (*FeatureTable, error) {
	tr, err := newFeatureReader(rr, name, opts, 0, false)
	if err != nil {
		return nil, err
	}
	if !tr.Next() {
		return nil, tr.Err()
	}
	return tr.Chunk(), nil
}

// InspectFeatureTable reads a feature table as a stream and summarises it without
// keeping its rows, so it works on tables larger than memory. It checks the
// rows as ReadFeatureTable does.
func InspectFeatureTable(r io.Reader, name string, opts FeatureReadOptions) (FeatureSummary, error) {
	rr, err := OpenRecordReader(r, name, arrowio.ReaderOptions{Mem: opts.Mem})
	if err != nil {
		return FeatureSummary{}, err
	}
	defer rr.Release()
	tr, err := newFeatureReader(rr, name, opts, 0, true)
	if err != nil {
		return FeatureSummary{}, err
	}
	for tr.Next() {
	}
	if err := tr.Err(); err != nil {
		return FeatureSummary{}, err
	}
	return tr.Summary(), nil
}

// Summary summarises a table read by ReadFeatureTable.
func (t *FeatureTable) Summary() FeatureSummary {
	d := t.Data
	s := FeatureSummary{
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
			if !allOnes(d.Values[d.AttrStart[tok]:d.AttrStart[tok+1]]) {
				s.RealValued++
			}
		}
	}
	return s
}

// FeatureReader reads a feature table in chunks of whole sentences, in the
// style of bufio.Scanner:
//
//	for tr.Next() { t := tr.Chunk(); … }
//	if err := tr.Err(); err != nil { … }
//
// A chunk ends at the first sentence that starts once it holds
// FeatureReadOptions.ChunkTokens tokens; a sentence split over record
// batches (as a foreign writer may cut them) is carried into the chunk
// whole. When the
// record reader exposes Stream() int (concatenated IPC streams), a change of
// stream ends the current sentence and the new stream numbers its sentences
// from 0 again; chunks number sentences on through the whole input
// (FeatureTable.FirstSentence).
//
// Attribute and label ids are the same in every chunk: names get ids in order
// of first appearance, so a dictionary that grows by delta batches, or is
// replaced, keeps the ids of the names it had. A chunk's Dataset names the
// attributes and labels met up to its end. Chunks hold no Arrow memory: each
// stays valid after Next and may be used on another goroutine while the
// reader goes on (the reader only appends to the name lists it shares).
// Memory in use is the chunk being filled, the record batch being read and
// the names; a chunk handed out is the caller's to drop.
type FeatureReader struct {
	rr          array.RecordReader
	name        string
	cols        featureColumns
	skipText    bool
	summaryOnly bool // count only, keep no rows
	chunkTokens int  // end a chunk after this many tokens; 0: the whole table in one chunk

	attrNames, labelNames []string
	attrIndex, labelIndex map[string]int32
	attrSrc, labelSrc     arrow.ArrayData // dictionaries the maps below were made from
	attrMap, labelMap     []int32         // dictionary index → id

	b       featureBatch // the batch being read, valid while inBatch
	inBatch bool
	batches int // batches read
	row     int // next row of b
	stream  int // stream of b

	lastSentence int64 // the input's number of the last sentence; -1 before a stream's first row
	lastPos      int32

	c      featureChunk  // the chunk being filled
	hint   [3]int        // sentences, tokens and attributes of the last chunk, the next one's initial capacity
	chunk  *FeatureTable // the chunk handed out by the last Next
	handed int           // chunks handed out
	done   bool
	err    error
	sum    FeatureSummary
}

// featureChunk holds the rows of the chunk being filled.
type featureChunk struct {
	first                int // sentences of the input before this chunk
	sentStart, attrStart []int
	attrs                []int32
	values               []float64 // nil while every value read is 1
	labels               []int32
	text                 [][]string
}

// NewFeatureReader reads the feature table of rr, whose schema it checks, in
// chunks of whole sentences; name is used in errors. It does not take rr
// over: release rr after the last call to Next.
func NewFeatureReader(rr array.RecordReader, name string, opts FeatureReadOptions) (*FeatureReader, error) {
	chunk := opts.ChunkTokens
	if chunk <= 0 {
		chunk = DefaultChunkTokens
	}
	return newFeatureReader(rr, name, opts, chunk, false)
}

func newFeatureReader(rr array.RecordReader, name string, opts FeatureReadOptions, chunkTokens int, summaryOnly bool) (*FeatureReader, error) {
	s := rr.Schema()
	if err := schemas.ValidateFeatureSchema(s); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	tr := &FeatureReader{
		rr:           rr,
		name:         name,
		cols:         featureColumnIndices(s),
		skipText:     opts.SkipText || summaryOnly,
		summaryOnly:  summaryOnly,
		chunkTokens:  chunkTokens,
		attrIndex:    make(map[string]int32),
		labelIndex:   make(map[string]int32),
		lastSentence: -1,
		sum: FeatureSummary{
			Version:  schemas.MetadataMap(s)[schemas.KeyVersion],
			Columns:  schemas.FeatureTextColumns(s),
			Metadata: schemas.MetadataMap(s),
		},
	}
	tr.c = tr.newChunk(0)
	return tr, nil
}

// Columns names the pass-through text columns.
func (tr *FeatureReader) Columns() []string { return tr.sum.Columns }

// Metadata returns the table's schema metadata.
func (tr *FeatureReader) Metadata() map[string]string { return tr.sum.Metadata }

// Summary returns the counts of the rows read so far (all of them once Next
// has returned false without error).
func (tr *FeatureReader) Summary() FeatureSummary {
	s := tr.sum
	s.Attributes = len(tr.attrNames)
	s.Labels = tr.labelNames[:len(tr.labelNames):len(tr.labelNames)]
	s.LabelCounts = append([]int(nil), s.LabelCounts...)
	return s
}

// Next reads the next chunk; it returns false at the end of the table or on
// error. A whole table read by ReadFeatureTable is one chunk, even when empty;
// otherwise every chunk holds at least one sentence.
func (tr *FeatureReader) Next() bool {
	tr.chunk = nil
	if tr.err != nil || tr.done {
		return false
	}
	full, err := tr.fill()
	if err != nil {
		tr.err = err
		return false
	}
	if !full {
		tr.done = true
		if len(tr.c.labels) == 0 && (tr.chunkTokens > 0 || tr.handed > 0) {
			return false
		}
	}
	tr.chunk = tr.cut()
	tr.handed++
	return true
}

// Chunk returns the chunk read by the last call to Next.
func (tr *FeatureReader) Chunk() *FeatureTable { return tr.chunk }

// Err returns the first error met, nil at a clean end of the table.
func (tr *FeatureReader) Err() error { return tr.err }

// fill reads rows into the chunk until the next row starts a sentence
// past the chunk's size (full) or the input ends. A batch whose buffers are
// inconsistent makes arrow-go panic on access; that becomes an error too.
func (tr *FeatureReader) fill() (full bool, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%s: %s: corrupt record batch: %v", tr.name, tr.batchName(), p)
		}
	}()
	for {
		if !tr.inBatch {
			ok, err := tr.nextBatch()
			if err != nil || !ok {
				return false, err
			}
		}
		b := &tr.b
		for ; tr.row < len(b.sent); tr.row++ {
			i := tr.row
			if b.pos[i] == 0 && tr.chunkTokens > 0 && len(tr.c.labels) >= tr.chunkTokens {
				return true, nil
			}
			if err := tr.addRow(b, i); err != nil {
				return false, fmt.Errorf("%s: %s row %d (sentence %d position %d): %w",
					tr.name, tr.batchName(), i, b.sent[i], b.pos[i], err)
			}
		}
		tr.inBatch = false
	}
}

// batchName names the current batch in errors: its index in the input, and
// the stream it belongs to after the first.
func (tr *FeatureReader) batchName() string {
	if tr.stream > 0 {
		return fmt.Sprintf("stream %d batch %d", tr.stream, tr.batches-1)
	}
	return fmt.Sprintf("batch %d", tr.batches-1)
}

// nextBatch reads the next record batch and checks its arrays; false at the
// end of the input.
func (tr *FeatureReader) nextBatch() (bool, error) {
	if !tr.rr.Next() {
		return false, tr.rr.Err()
	}
	tr.batches++
	if s, ok := tr.rr.(arrowio.Streamer); ok {
		if n := s.Stream(); n != tr.stream {
			tr.stream, tr.lastSentence = n, -1
		}
	}
	b, err := tr.view(tr.rr.RecordBatch())
	if err != nil {
		return false, fmt.Errorf("%s: %s: %w", tr.name, tr.batchName(), err)
	}
	tr.b, tr.inBatch, tr.row = b, true, 0
	return true, nil
}

// newChunk starts an empty chunk after `first` sentences. Its storage is
// allocated at its first row (see grow), so that a reader waiting to hand
// out a chunk holds no second one.
func (tr *FeatureReader) newChunk(first int) featureChunk {
	return featureChunk{first: first}
}

// grow allocates the storage of the chunk being filled, with room for as
// much as the last chunk held.
func (tr *FeatureReader) grow() {
	c := &tr.c
	ns, nt, na := tr.hint[0]+1, tr.hint[1]+1, tr.hint[2]+tr.hint[2]/8
	c.sentStart = make([]int, 0, ns)
	c.attrStart = make([]int, 1, nt+1)
	c.attrs = make([]int32, 0, na)
	c.labels = make([]int32, 0, nt)
	if !tr.skipText {
		c.text = make([][]string, len(tr.cols.text))
		for i := range c.text {
			c.text[i] = make([]string, 0, nt)
		}
	}
}

// cut hands out the chunk filled so far and starts the next one.
func (tr *FeatureReader) cut() *FeatureTable {
	if tr.c.attrStart == nil && !tr.summaryOnly {
		tr.grow() // an empty table
	}
	c := &tr.c
	na, nl := len(tr.attrNames), len(tr.labelNames)
	d := &crf.Dataset{
		NumAttrs:   na,
		NumLabels:  nl,
		AttrNames:  tr.attrNames[:na:na],
		LabelNames: tr.labelNames[:nl:nl],
		SentStart:  append(c.sentStart, len(c.labels)),
		AttrStart:  c.attrStart,
		Attrs:      c.attrs,
		Values:     c.values,
		Labels:     c.labels,
	}
	t := &FeatureTable{Data: d, Columns: tr.sum.Columns, Text: c.text, Metadata: tr.sum.Metadata, FirstSentence: c.first}
	tr.hint = [3]int{len(c.sentStart), len(c.labels), len(c.attrs)}
	tr.c = tr.newChunk(tr.sum.Sentences)
	return t
}

// featureBatch is a typed view of one record batch.
type featureBatch struct {
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
	text              []textColumn // the text columns, unless skipped
}

// textColumn is one text column of a batch, its bytes copied to Go memory
// once so that the tokens' strings outlive the batch.
type textColumn struct {
	arr  *array.String
	data string  // the column's bytes
	offs []int32 // the column's value offsets, offs[0] at data[0]
}

// fullValidator is an Arrow array that checks its buffers in full (every
// arrow-go array type does).
type fullValidator interface {
	ValidateFull() error
}

// view checks the batch's arrays and maps its dictionaries to ids.
func (tr *FeatureReader) view(rec arrow.RecordBatch) (featureBatch, error) {
	for i, col := range rec.Columns() {
		if v, ok := col.(fullValidator); ok {
			if err := v.ValidateFull(); err != nil {
				return featureBatch{}, fmt.Errorf("column %q: %w", rec.ColumnName(i), err)
			}
		}
	}
	for _, c := range []int{tr.cols.sentence, tr.cols.position} {
		if n := rec.Column(c).NullN(); n > 0 {
			return featureBatch{}, fmt.Errorf("column %q has %d nulls", rec.ColumnName(c), n)
		}
	}
	b := featureBatch{
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
		return featureBatch{}, err
	}
	if b.attrMap, err = tr.mapAttrs(b.attrChild.Dictionary()); err != nil {
		return featureBatch{}, err
	}
	if !tr.skipText && rec.NumRows() > 0 {
		for _, col := range tr.cols.text {
			arr := rec.Column(col).(*array.String)
			b.text = append(b.text, textColumn{arr: arr, data: string(arr.ValueBytes()), offs: arr.ValueOffsets()})
		}
	}
	return b, nil
}

// mapLabels maps a label dictionary to label ids, reusing the last map
// while the dictionary is unchanged. New names get new ids in order, so a
// dictionary that grows by deltas keeps its ids.
func (tr *FeatureReader) mapLabels(dict arrow.Array) ([]int32, error) {
	if dict.Data() == tr.labelSrc {
		return tr.labelMap, nil
	}
	m, err := mapDict(dict, &tr.labelNames, tr.labelIndex, "label")
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
func (tr *FeatureReader) mapAttrs(dict arrow.Array) ([]int32, error) {
	if dict.Data() == tr.attrSrc {
		return tr.attrMap, nil
	}
	m, err := mapDict(dict, &tr.attrNames, tr.attrIndex, "attribute")
	if err != nil {
		return nil, err
	}
	tr.attrSrc, tr.attrMap = dict.Data(), m
	return m, nil
}

// mapDict maps each entry of a utf8 dictionary to the id of its name,
// adding names not seen before. Labels may not be null or empty.
func mapDict(dict arrow.Array, names *[]string, index map[string]int32, what string) ([]int32, error) {
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

// addRow checks row i of b and appends it to the chunk.
func (tr *FeatureReader) addRow(b *featureBatch, i int) error {
	if tr.c.attrStart == nil && !tr.summaryOnly {
		tr.grow()
	}
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
	c := &tr.c
	c.labels = append(c.labels, label)
	if vals != nil && c.values == nil {
		c.values = appendOnes(make([]float64, 0, cap(c.attrs)), len(c.attrs))
	}
	if vals != nil {
		c.values = append(c.values, vals...)
	} else if c.values != nil {
		c.values = appendOnes(c.values, int(hi-lo))
	}
	for _, k := range b.attrIdx[lo:hi] {
		c.attrs = append(c.attrs, b.attrMap[k])
	}
	c.attrStart = append(c.attrStart, len(c.attrs))
	for j, col := range b.text {
		v := ""
		if col.arr.IsValid(i) {
			v = col.data[col.offs[i]-col.offs[0] : col.offs[i+1]-col.offs[0]]
		}
		c.text[j] = append(c.text[j], v)
	}
	return nil
}

// appendOnes appends n ones to dst.
func appendOnes(dst []float64, n int) []float64 {
	for ; n > 0; n-- {
		dst = append(dst, 1)
	}
	return dst
}

// checkOrder checks that a row continues the current sentence or starts the
// next one, and counts sentences.
func (tr *FeatureReader) checkOrder(s int64, p int32) error {
	switch {
	case p == 0 && s == tr.lastSentence+1:
		tr.sum.Sentences++
		if !tr.summaryOnly {
			tr.c.sentStart = append(tr.c.sentStart, len(tr.c.labels))
		}
	case tr.lastSentence < 0 && tr.stream > 0:
		return fmt.Errorf("stream %d must start at sentence 0 position 0 (each concatenated stream numbers its sentences 0,1,2,… in row order)", tr.stream)
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
func (tr *FeatureReader) rowLabel(b *featureBatch, i int) (int32, error) {
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
func (tr *FeatureReader) rowAttrs(b *featureBatch, i int) (lo, hi int64, err error) {
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
func (tr *FeatureReader) rowValues(b *featureBatch, i int, alo, ahi int64) ([]float64, error) {
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
	if allOnes(vals) {
		return nil, nil
	}
	return vals, nil
}
