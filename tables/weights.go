package tables

import (
	"fmt"
	"io"
	"iter"
	"math"
	"slices"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/dualcrf/dualcrf/arrowio"
	"github.com/dualcrf/dualcrf/schemas"
)

// WeightRow is one row of the weights table (schemas.WeightsSchema): one
// weight of a model. Empty FromLabel, Attribute and Template are written as
// nulls.
type WeightRow struct {
	Kind      string // schemas.KindAttr, KindTrans, KindBias, KindStart or KindEnd
	Label     string // the label the weight scores (a transition's next label)
	FromLabel string // a transition's previous label
	Attribute string // an attr weight's attribute
	Template  string // the template that made Attribute, when known
	Weight    float64
}

// WriteWeights writes rows as a weights table with the free metadata md,
// in batches of DefaultBatchTokens rows, in the format opts asks for (the
// Arrow IPC file format by default).
func WriteWeights(w io.Writer, rows []WeightRow, md map[string]string, opts arrowio.WriterOptions) error {
	return WriteWeightRows(w, slices.Values(rows), md, opts)
}

// WriteWeightRows is WriteWeights on rows as they come: it holds one batch
// of them at a time, so a model's weights table is written in the memory
// of a batch, whatever the model's size.
func WriteWeightRows(w io.Writer, rows iter.Seq[WeightRow], md map[string]string, opts arrowio.WriterOptions) error {
	schema, err := schemas.WeightsSchema(md)
	if err != nil {
		return err
	}
	mem := opts.Mem
	if mem == nil {
		mem = memory.DefaultAllocator
	}
	if opts.Format == "" {
		opts.Format = arrowio.FormatFile
	}
	rw, err := arrowio.NewRecordWriter(w, schema, opts)
	if err != nil {
		return err
	}
	b := array.NewRecordBuilder(mem, schema)
	defer b.Release()
	str := func(i int, s string, nullable bool) {
		fb := b.Field(i).(*array.StringBuilder)
		if s == "" && nullable {
			fb.AppendNull()
		} else {
			fb.Append(s)
		}
	}
	n, batches := 0, 0
	flush := func() error {
		rec := b.NewRecordBatch()
		err := rw.Write(rec)
		rec.Release()
		n = 0
		batches++
		return err
	}
	for r := range rows {
		str(0, r.Kind, false)
		str(1, r.Label, false)
		str(2, r.FromLabel, true)
		str(3, r.Attribute, r.Kind != schemas.KindAttr)
		str(4, r.Template, true)
		b.Field(5).(*array.Float64Builder).Append(r.Weight)
		if n++; n == DefaultBatchTokens {
			if err := flush(); err != nil {
				rw.Abort()
				return err
			}
		}
	}
	if n > 0 || batches == 0 { // the rows left, or an empty batch for an empty table
		if err := flush(); err != nil {
			rw.Abort()
			return err
		}
	}
	return rw.Close()
}

// ReadWeights reads a weights table written by WriteWeights; name is used
// in errors. A damaged table, or a row with an unknown kind, an empty
// label, a column null or not null against its kind, or a weight that is
// not a finite number, is refused naming the row. The record batches come
// from rr, with its allocator.
func ReadWeights(rr array.RecordReader, name string) ([]WeightRow, error) {
	var rows []WeightRow
	err := EachWeightRow(rr, name, func(r WeightRow) error {
		rows = append(rows, r)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return rows, nil
}

// EachWeightRow reads a weights table as ReadWeights does, calling fn with
// each row as it is read instead of holding them all. A row's strings may
// alias the batch's buffers: fn clones what it keeps.
func EachWeightRow(rr array.RecordReader, name string, fn func(WeightRow) error) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%s: corrupt weights table: %v", name, p)
		}
	}()
	if err := schemas.ValidateWeightsSchema(rr.Schema()); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	row := 0
	idx := func(col string) int { return rr.Schema().FieldIndices(col)[0] }
	cols := []int{idx(schemas.ColKind), idx(schemas.ColLabel), idx(schemas.ColFromLabel), idx(schemas.ColAttribute), idx(schemas.ColTemplate)}
	wcol := idx(schemas.ColWeight)
	for batch := 0; rr.Next(); batch++ {
		rec := rr.RecordBatch()
		if err := arrowio.ValidateBatch(rec); err != nil {
			return fmt.Errorf("%s: batch %d: %w", name, batch, err)
		}
		var str [5]*array.String
		for i, c := range cols {
			s, ok := rec.Column(c).(*array.String)
			if !ok {
				return fmt.Errorf("%s: batch %d: column %s is %s, want string", name, batch, rec.ColumnName(c), rec.Column(c).DataType())
			}
			str[i] = s
		}
		w, ok := rec.Column(wcol).(*array.Float64)
		if !ok {
			return fmt.Errorf("%s: batch %d: column %s is %s, want float64", name, batch, schemas.ColWeight, rec.Column(wcol).DataType())
		}
		for i := range int(rec.NumRows()) {
			if str[0].IsNull(i) || str[1].IsNull(i) || w.IsNull(i) {
				return fmt.Errorf("%s: row %d: kind, label and weight may not be null", name, row)
			}
			r := WeightRow{Kind: str[0].Value(i), Label: str[1].Value(i), FromLabel: str[2].Value(i),
				Attribute: str[3].Value(i), Template: str[4].Value(i), Weight: w.Value(i)}
			switch {
			case r.Kind != schemas.KindAttr && r.Kind != schemas.KindTrans && r.Kind != schemas.KindBias &&
				r.Kind != schemas.KindStart && r.Kind != schemas.KindEnd:
				return fmt.Errorf("%s: row %d: kind %q, want attr, trans, bias, start or end", name, row, r.Kind)
			case r.Label == "":
				return fmt.Errorf("%s: row %d: empty label", name, row)
			case str[2].IsNull(i) != (r.Kind != schemas.KindTrans):
				return fmt.Errorf("%s: row %d: a %s row with from_label %q (null: %v); only trans rows have one", name, row, r.Kind, r.FromLabel, str[2].IsNull(i))
			case str[3].IsNull(i) != (r.Kind != schemas.KindAttr):
				return fmt.Errorf("%s: row %d: a %s row with attribute %q (null: %v); only attr rows have one", name, row, r.Kind, r.Attribute, str[3].IsNull(i))
			case math.IsNaN(r.Weight) || math.IsInf(r.Weight, 0):
				return fmt.Errorf("%s: row %d: weight %v, want a finite number", name, row, r.Weight)
			}
			if err := fn(r); err != nil {
				return err
			}
			row++
		}
	}
	return rr.Err()
}
