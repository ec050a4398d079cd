package tables

import (
	"io"

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
	for start := 0; start == 0 || start < len(rows); start += DefaultBatchTokens {
		for _, r := range rows[start:min(start+DefaultBatchTokens, len(rows))] {
			str(0, r.Kind, false)
			str(1, r.Label, false)
			str(2, r.FromLabel, true)
			str(3, r.Attribute, r.Kind != schemas.KindAttr)
			str(4, r.Template, true)
			b.Field(5).(*array.Float64Builder).Append(r.Weight)
		}
		rec := b.NewRecordBatch()
		err := rw.Write(rec)
		rec.Release()
		if err != nil {
			rw.Abort()
			return err
		}
	}
	return rw.Close()
}
