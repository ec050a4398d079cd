package pipeline

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/dualcrf/dualcrf/crf"
	"github.com/dualcrf/dualcrf/schemas"
)

// modelBatchRows is the number of rows per model record batch.
const modelBatchRows = 1 << 14

// WriteModel writes m as an Arrow IPC file (schemas.ModelSchema) to out.
func WriteModel(out io.Writer, m *crf.Model, opts WriterOptions) error {
	if err := m.Check(); err != nil {
		return err
	}
	lay := m.Layout
	K := lay.NumLabels
	md := make(map[string]string, len(m.Meta)+2)
	for k, v := range m.Meta {
		md[k] = v
	}
	labels, err := json.Marshal(m.LabelNames)
	if err != nil {
		return err
	}
	md[schemas.KeyLabels] = string(labels)
	md[schemas.KeyBias] = fmt.Sprint(!lay.NoBias)
	schema, err := schemas.ModelSchema(K, md)
	if err != nil {
		return err
	}
	if opts.Format == "" {
		opts.Format = FormatFile
	}
	mem := opts.Mem
	if mem == nil {
		mem = memory.DefaultAllocator
	}
	w, err := NewRecordWriter(out, schema, opts)
	if err != nil {
		return err
	}
	defer w.Abort()
	b := array.NewRecordBuilder(mem, schema)
	defer b.Release()
	kind := b.Field(0).(*array.StringBuilder)
	name := b.Field(1).(*array.StringBuilder)
	wl := b.Field(2).(*array.FixedSizeListBuilder)
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
	add := func(k, n string, ws []float64) error {
		kind.Append(k)
		name.Append(n)
		wl.Append(true)
		wv.AppendValues(ws, nil)
		if rows++; rows == modelBatchRows {
			return flush()
		}
		return nil
	}
	for a, n := range m.AttrNames {
		off := lay.Row(int32(a))
		if err := add(schemas.KindAttr, n, m.Weights[off:off+K]); err != nil {
			return err
		}
	}
	for y, n := range m.LabelNames {
		off := lay.Trans() + y*K
		if err := add(schemas.KindTrans, n, m.Weights[off:off+K]); err != nil {
			return err
		}
	}
	if !lay.NoBias {
		for _, kv := range []struct {
			k   string
			off int
		}{{schemas.KindBias, lay.Bias()}, {schemas.KindStart, lay.Start()}, {schemas.KindEnd, lay.End()}} {
			if err := add(kv.k, "", m.Weights[kv.off:kv.off+K]); err != nil {
				return err
			}
		}
	}
	if err := flush(); err != nil {
		return err
	}
	return w.Close()
}

// ReadModel reads a model file written by WriteModel; name is used in
// errors. Anything that is not a dualcrf model is refused with a message
// saying why.
func ReadModel(r io.Reader, name string) (*crf.Model, error) {
	rr, err := OpenRecordReader(r, name, ReaderOptions{})
	if err != nil {
		return nil, err
	}
	defer rr.Release()
	schema := rr.Schema()
	if err := schemas.ValidateModelSchema(schema); err != nil {
		return nil, fmt.Errorf("%s: not a dualcrf model: %w", name, err)
	}
	md := schemas.MetadataMap(schema)
	m := &crf.Model{Meta: md}
	if err := json.Unmarshal([]byte(md[schemas.KeyLabels]), &m.LabelNames); err != nil {
		return nil, fmt.Errorf("%s: model metadata %s: %w", name, schemas.KeyLabels, err)
	}
	K := len(m.LabelNames)
	wt := schema.Field(schema.FieldIndices(schemas.ModelWeights)[0]).Type.(*arrow.FixedSizeListType)
	if int(wt.Len()) != K || K < 1 {
		return nil, fmt.Errorf("%s: model has %d labels but %d weights per row", name, K, wt.Len())
	}
	ki := schema.FieldIndices(schemas.ModelKind)[0]
	ni := schema.FieldIndices(schemas.ModelName)[0]
	wi := schema.FieldIndices(schemas.ModelWeights)[0]
	var trans, bias, start, end []float64
	var attrW []float64
	row := 0
	for rr.Next() {
		rec := rr.RecordBatch()
		kinds := rec.Column(ki).(*array.String)
		names := rec.Column(ni).(*array.String)
		wl := rec.Column(wi).(*array.FixedSizeList)
		vals := wl.ListValues().(*array.Float64).Float64Values()
		for j := 0; j < int(rec.NumRows()); j, row = j+1, row+1 {
			if wl.IsNull(j) || kinds.IsNull(j) {
				return nil, fmt.Errorf("%s: row %d: null kind or weights", name, row)
			}
			off := (wl.Offset() + j) * K
			ws := vals[off : off+K]
			switch k := kinds.Value(j); k {
			case schemas.KindAttr:
				if trans != nil {
					return nil, fmt.Errorf("%s: row %d: attribute row after the transitions", name, row)
				}
				m.AttrNames = append(m.AttrNames, names.Value(j))
				attrW = append(attrW, ws...)
			case schemas.KindTrans:
				trans = append(trans, ws...)
			case schemas.KindBias:
				bias = append([]float64(nil), ws...)
			case schemas.KindStart:
				start = append([]float64(nil), ws...)
			case schemas.KindEnd:
				end = append([]float64(nil), ws...)
			default:
				return nil, fmt.Errorf("%s: row %d: unknown kind %q", name, row, k)
			}
		}
	}
	if err := rr.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if len(trans) != K*K {
		return nil, fmt.Errorf("%s: model has %d transition rows, want %d", name, len(trans)/K, K)
	}
	noBias := bias == nil && start == nil && end == nil
	if !noBias && (bias == nil || start == nil || end == nil) {
		return nil, fmt.Errorf("%s: model has only some of the bias, start and end rows", name)
	}
	m.Layout = crf.Layout{NumAttrs: len(m.AttrNames), NumLabels: K, NoBias: noBias}
	m.Weights = append(attrW, trans...)
	if !noBias {
		m.Weights = append(append(append(m.Weights, bias...), start...), end...)
	}
	return m, m.Check()
}
