package tables

import (
	"encoding/json"
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

// modelBatchRows is the number of rows per model record batch.
const modelBatchRows = 1 << 14

// maxModelLabels bounds the labels of a model read: a model of K labels
// holds K transition rows of K weights, so a file claiming a million labels
// would need 8 TB for them, and is refused before a row is read. (A linear
// chain's training and decoding time grows with K², so no model near the
// limit is practical anyway.)
const maxModelLabels = 1 << 14

// WriteModel writes m as an Arrow IPC file (schemas.ModelSchema: its zero
// weights left out) to out, with its checksum (schemas.ModelHash) in the
// metadata. opts chooses the IPC format (the file format when empty), the
// compression and the allocator (opts.Mem, memory.DefaultAllocator when
// nil). A model that fails m.Check (a non-finite weight, names that do not
// fit the layout) is refused.
func WriteModel(out io.Writer, m *crf.Model, opts arrowio.WriterOptions) error {
	if err := m.Check(); err != nil {
		return err
	}
	lay := m.Layout
	md := make(map[string]string, len(m.Meta)+5)
	for k, v := range m.Meta {
		md[k] = v
	}
	labels, err := json.Marshal(m.LabelNames)
	if err != nil {
		return err
	}
	md[schemas.KeyLabels] = string(labels)
	md[schemas.KeyBias] = fmt.Sprint(!lay.NoBias)
	md[schemas.KeyFormat], md[schemas.KeyVersion] = schemas.ModelFormat, schemas.ModelVersion
	delete(md, schemas.KeyChecksum)
	sum := schemas.NewModelHash(md)
	_ = modelRows(m, func(r storedRow) error {
		sum.Row(r.kind, r.name, r.whole)
		return nil
	})
	md[schemas.KeyChecksum] = sum.Sum()
	schema, err := schemas.ModelSchema(md)
	if err != nil {
		return err
	}
	if opts.Format == "" {
		opts.Format = arrowio.FormatFile
	}
	mem := opts.Mem
	if mem == nil {
		mem = memory.DefaultAllocator
	}
	w, err := arrowio.NewRecordWriter(out, schema, opts)
	if err != nil {
		return err
	}
	defer w.Abort()
	b := array.NewRecordBuilder(mem, schema)
	defer b.Release()
	kind := b.Field(0).(*array.StringBuilder)
	name := b.Field(1).(*array.StringBuilder)
	ll := b.Field(2).(*array.ListBuilder)
	lv := ll.ValueBuilder().(*array.Int32Builder)
	wl := b.Field(3).(*array.ListBuilder)
	wv := wl.ValueBuilder().(*array.Float64Builder)
	rows := 0
	flush := func() error {
		if rows == 0 {
			return nil
		}
		rec := b.NewRecordBatch()
		defer rec.Release()
		rows = 0
		return w.Write(rec)
	}
	err = modelRows(m, func(r storedRow) error {
		kind.Append(r.kind)
		name.Append(r.name)
		if r.labels == nil {
			ll.AppendNull()
		} else {
			ll.Append(true)
			lv.AppendValues(r.labels, nil)
		}
		wl.Append(true)
		wv.AppendValues(r.weights, nil)
		if rows++; rows == modelBatchRows {
			return flush()
		}
		return nil
	})
	if err != nil {
		return err
	}
	if err := flush(); err != nil {
		return err
	}
	return w.Close()
}

// storedRow is one row of a model file as WriteModel stores it: its kind
// and name, the labels of the weights stored (nil: all K) and those
// weights, and the row's K weights as a reader gets them back (whole: the
// weights left out are +0) — what the checksum covers.
type storedRow struct {
	kind, name string
	labels     []int32
	weights    []float64
	whole      []float64
}

// modelRows calls fn with every row of m that the file stores, in file
// order: the attributes with a non-zero weight, the transitions (named by
// the previous label), then bias, start and end. A row keeps its non-zero
// weights with their labels, or all K weights (labels nil) when that is no
// larger: 3·(non-zero) ≥ 2·K (a label and a weight take 12 bytes, a weight
// alone 8). The slices fn gets are reused by the next call.
func modelRows(m *crf.Model, fn func(storedRow) error) error {
	lay := m.Layout
	K := lay.NumLabels
	var labels []int32
	weights, whole := make([]float64, 0, K), make([]float64, K)
	row := func(kind, name string, ws []float64) error {
		labels, weights = labels[:0], weights[:0]
		for y, w := range ws {
			if w != 0 {
				labels = append(labels, int32(y))
				weights = append(weights, w)
			}
		}
		if kind == schemas.KindAttr && len(labels) == 0 {
			return nil
		}
		if 3*len(labels) >= 2*K {
			return fn(storedRow{kind: kind, name: name, weights: ws, whole: ws})
		}
		clear(whole)
		for k, y := range labels {
			whole[y] = weights[k]
		}
		if labels == nil {
			labels = []int32{} // stored, and empty: not the null of a whole row
		}
		return fn(storedRow{kind: kind, name: name, labels: labels, weights: weights, whole: whole})
	}
	for a, n := range m.AttrNames {
		off := lay.Row(int32(a))
		if err := row(schemas.KindAttr, n, m.Weights[off:off+K]); err != nil {
			return err
		}
	}
	for y, n := range m.LabelNames {
		off := lay.Trans() + y*K
		if err := row(schemas.KindTrans, n, m.Weights[off:off+K]); err != nil {
			return err
		}
	}
	if lay.NoBias {
		return nil
	}
	for _, kv := range []struct {
		k   string
		off int
	}{{schemas.KindBias, lay.Bias()}, {schemas.KindStart, lay.Start()}, {schemas.KindEnd, lay.End()}} {
		if err := row(kv.k, "", m.Weights[kv.off:kv.off+K]); err != nil {
			return err
		}
	}
	return nil
}

// ReadModel reads a model file written by WriteModel; name is used in
// errors. Anything that is not an intact dualcrf model is refused with a
// message naming the file and saying why: another table or format version,
// damaged Arrow data, rows out of order, a weight that is not a finite
// number (named by its row and label) or contents that do not match the
// checksum. opts.Mem allocates the Arrow buffers read (memory.DefaultAllocator
// when nil); every buffer is released before ReadModel returns.
func ReadModel(r io.Reader, name string, opts arrowio.ReaderOptions) (m *crf.Model, err error) {
	defer func() {
		if p := recover(); p != nil {
			m, err = nil, fmt.Errorf("%s: corrupt model: %v", name, p)
		}
	}()
	rr, err := OpenRecordReader(r, name, opts)
	if err != nil {
		return nil, err
	}
	defer rr.Release()
	mr, err := newModelReader(rr.Schema(), name)
	if err != nil {
		return nil, err
	}
	if rows, ok := arrowio.NumRows(rr); ok && rows < int64(mr.K) {
		return nil, fmt.Errorf("%s: model has %d rows, fewer than the %d transition rows of its %d labels", name, rows, mr.K, mr.K)
	}
	for batch := 0; rr.Next(); batch++ {
		if err := mr.addBatch(rr.RecordBatch(), batch); err != nil {
			return nil, err
		}
	}
	if err := rr.Err(); err != nil {
		return nil, err // the reader's errors name the input already
	}
	return mr.model()
}

// modelReader checks and collects the rows of a model file.
type modelReader struct {
	name           string
	m              *crf.Model
	K              int
	dense          bool      // a version 2 model: every row whole, in a fixed-size list
	ki, ni, li, wi int       // column indices (li: the labels of version 3)
	whole          []float64 // a version 3 row made whole
	hash           *schemas.ModelHash
	row            int // rows read
	rank           int // kindRank of the last row read
	nTrans         int // transition rows read
	attrSeen       map[string]int
	attrW          []float64
	trans          []float64
	extra          [3][]float64 // bias, start, end
}

// kindRank orders the kinds of rows in a model file.
var kindRank = map[string]int{schemas.KindAttr: 0, schemas.KindTrans: 1, schemas.KindBias: 2, schemas.KindStart: 3, schemas.KindEnd: 4}

func newModelReader(schema *arrow.Schema, name string) (*modelReader, error) {
	if err := schemas.ValidateModelSchema(schema); err != nil {
		return nil, fmt.Errorf("%s: not a dualcrf model: %w", name, err)
	}
	md := schemas.MetadataMap(schema)
	mr := &modelReader{name: name, m: &crf.Model{Meta: md}, hash: schemas.NewModelHash(md),
		attrSeen: make(map[string]int), dense: md[schemas.KeyVersion] == schemas.ModelVersionDense}
	wt, _ := schema.Field(schema.FieldIndices(schemas.ModelWeights)[0]).Type.(*arrow.FixedSizeListType)
	if mr.dense && wt.Len() > maxModelLabels {
		return nil, fmt.Errorf("%s: model has %d weights per row: more labels than the %d a model may have (its transition rows alone would take %d bytes)",
			name, wt.Len(), maxModelLabels, 8*int64(wt.Len())*int64(wt.Len()))
	}
	labels, err := schemas.ParseLabels(md[schemas.KeyLabels])
	if err != nil {
		return nil, fmt.Errorf("%s: model metadata %s: %w", name, schemas.KeyLabels, err)
	}
	mr.m.LabelNames = labels
	mr.K = len(mr.m.LabelNames)
	switch {
	case mr.K > maxModelLabels:
		return nil, fmt.Errorf("%s: model has %d labels: more than the %d a model may have (its transition rows alone would take %d bytes)",
			name, mr.K, maxModelLabels, 8*int64(mr.K)*int64(mr.K))
	case mr.dense && int(wt.Len()) != mr.K:
		return nil, fmt.Errorf("%s: model has %d labels but %d weights per row", name, mr.K, wt.Len())
	}
	mr.ki = schema.FieldIndices(schemas.ModelKind)[0]
	mr.ni = schema.FieldIndices(schemas.ModelName)[0]
	mr.wi = schema.FieldIndices(schemas.ModelWeights)[0]
	if !mr.dense {
		mr.li = schema.FieldIndices(schemas.ModelLabels)[0]
		mr.whole = make([]float64, mr.K)
	}
	return mr, nil
}

// addBatch checks one record batch and collects its rows.
func (mr *modelReader) addBatch(rec arrow.RecordBatch, batch int) error {
	if err := arrowio.ValidateBatch(rec); err != nil {
		return fmt.Errorf("%s: batch %d: %w", mr.name, batch, err)
	}
	kinds := rec.Column(mr.ki).(*array.String)
	names := rec.Column(mr.ni).(*array.String)
	if !mr.dense {
		return mr.addSparse(rec, batch, kinds, names)
	}
	wl := rec.Column(mr.wi).(*array.FixedSizeList)
	wv := wl.ListValues().(*array.Float64)
	if wv.NullN() > 0 {
		return fmt.Errorf("%s: batch %d: %d null weights", mr.name, batch, wv.NullN())
	}
	vals := wv.Float64Values()
	for j := 0; j < int(rec.NumRows()); j++ {
		if kinds.IsNull(j) || names.IsNull(j) || wl.IsNull(j) {
			return fmt.Errorf("%s: row %d: null kind, name or weights", mr.name, mr.row)
		}
		off := (wl.Offset() + j) * mr.K
		if err := mr.addRow(kinds.Value(j), names.Value(j), vals[off:off+mr.K]); err != nil {
			return err
		}
	}
	return nil
}

// addSparse checks the rows of a version 3 batch (columns kinds and names
// already taken), makes each whole and collects it.
func (mr *modelReader) addSparse(rec arrow.RecordBatch, batch int, kinds, names *array.String) error {
	ll := rec.Column(mr.li).(*array.List)
	wl := rec.Column(mr.wi).(*array.List)
	lv := ll.ListValues().(*array.Int32)
	wv := wl.ListValues().(*array.Float64)
	if wv.NullN() > 0 || lv.NullN() > 0 {
		return fmt.Errorf("%s: batch %d: %d null weights, %d null labels", mr.name, batch, wv.NullN(), lv.NullN())
	}
	vals, labs := wv.Float64Values(), lv.Int32Values()
	for j := 0; j < int(rec.NumRows()); j++ {
		row := mr.row
		if kinds.IsNull(j) || names.IsNull(j) || wl.IsNull(j) {
			return fmt.Errorf("%s: row %d: null kind, name or weights", mr.name, row)
		}
		kind, name := kinds.Value(j), names.Value(j)
		where := func() string { return fmt.Sprintf("%s: row %d (%s %q)", mr.name, row, kind, name) }
		w0, w1 := wl.ValueOffsets(j)
		if w0 < 0 || w1 < w0 || w1 > int64(len(vals)) {
			return fmt.Errorf("%s: weights out of their column's range", where())
		}
		ws := vals[w0:w1]
		if ll.IsNull(j) {
			if len(ws) != mr.K {
				return fmt.Errorf("%s: %d weights and no labels; a row without labels holds all %d", where(), len(ws), mr.K)
			}
		} else {
			l0, l1 := ll.ValueOffsets(j)
			if l0 < 0 || l1 < l0 || l1 > int64(len(labs)) {
				return fmt.Errorf("%s: labels out of their column's range", where())
			}
			ls := labs[l0:l1]
			if len(ls) != len(ws) {
				return fmt.Errorf("%s: %d labels for %d weights", where(), len(ls), len(ws))
			}
			clear(mr.whole)
			for k, y := range ls {
				if y < 0 || int(y) >= mr.K || (k > 0 && y <= ls[k-1]) {
					return fmt.Errorf("%s: labels %v: want increasing label ids in [0,%d)", where(), ls, mr.K)
				}
				mr.whole[y] = ws[k]
			}
			ws = mr.whole
		}
		if err := mr.addRow(kind, name, ws); err != nil {
			return err
		}
	}
	return nil
}

// addRow checks one row (its place, its name, its weights) and keeps it.
func (mr *modelReader) addRow(kind, name string, ws []float64) error {
	row := mr.row
	mr.row++
	where := func() string { return fmt.Sprintf("%s: row %d (%s %q)", mr.name, row, kind, name) }
	rank, ok := kindRank[kind]
	switch {
	case !ok:
		return fmt.Errorf("%s: row %d: unknown kind %q", mr.name, row, kind)
	case rank < mr.rank || (rank == mr.rank && rank >= 2):
		return fmt.Errorf("%s: out of order (rows go attr…, trans…, bias, start, end)", where())
	case rank == 1 && (mr.nTrans >= mr.K || name != mr.m.LabelNames[mr.nTrans]):
		return fmt.Errorf("%s: want the transitions from the %d labels in order", where(), mr.K)
	case rank >= 2 && name != "":
		return fmt.Errorf("%s: a %s row has no name", where(), kind)
	}
	mr.rank = rank
	for y, w := range ws {
		if math.IsNaN(w) || math.IsInf(w, 0) {
			return fmt.Errorf("%s: weight for label %q is %v, want a finite number", where(), mr.m.LabelNames[y], w)
		}
	}
	mr.hash.Row(kind, name, ws)
	switch rank {
	case 0:
		if prev, dup := mr.attrSeen[name]; dup {
			return fmt.Errorf("%s: the attribute of row %d again", where(), prev)
		}
		name = strings.Clone(name) // Value aliases the batch's buffer
		mr.attrSeen[name] = row
		mr.m.AttrNames = append(mr.m.AttrNames, name)
		mr.attrW = append(mr.attrW, ws...)
	case 1:
		mr.nTrans++
		mr.trans = append(mr.trans, ws...)
	default:
		mr.extra[rank-2] = append([]float64(nil), ws...)
	}
	return nil
}

// model checks what was read as a whole (the transitions complete, bias,
// start and end all or none as the metadata says, the checksum) and
// returns the model.
func (mr *modelReader) model() (*crf.Model, error) {
	m, name, K := mr.m, mr.name, mr.K
	if mr.nTrans != K {
		return nil, fmt.Errorf("%s: model has %d transition rows, want %d", name, mr.nTrans, K)
	}
	noBias := mr.extra[0] == nil && mr.extra[1] == nil && mr.extra[2] == nil
	if !noBias && (mr.extra[0] == nil || mr.extra[1] == nil || mr.extra[2] == nil) {
		return nil, fmt.Errorf("%s: model has only some of the bias, start and end rows", name)
	}
	if want := fmt.Sprint(!noBias); m.Meta[schemas.KeyBias] != want {
		return nil, fmt.Errorf("%s: model metadata %s is %q, but its rows say %s", name, schemas.KeyBias, m.Meta[schemas.KeyBias], want)
	}
	if got := mr.hash.Sum(); got != m.Meta[schemas.KeyChecksum] {
		return nil, fmt.Errorf("%s: checksum mismatch: the file was changed or is corrupt (metadata %s is %q, the contents give %s)",
			name, schemas.KeyChecksum, m.Meta[schemas.KeyChecksum], got)
	}
	m.Layout = crf.Layout{NumAttrs: len(m.AttrNames), NumLabels: K, NoBias: noBias}
	m.Weights = append(mr.attrW, mr.trans...)
	if !noBias {
		m.Weights = append(append(append(m.Weights, mr.extra[0]...), mr.extra[1]...), mr.extra[2]...)
	}
	if err := m.Check(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return m, nil
}
