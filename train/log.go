package train

import (
	"fmt"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/dualcrf/dualcrf/schemas"
)

// LogTable builds the training log (schemas.LogSchema) from epoch records.
// The caller releases the record.
func LogTable(recs []EpochRecord, md map[string]string) (arrow.RecordBatch, error) {
	schema, err := schemas.LogSchema(md)
	if err != nil {
		return nil, err
	}
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	f := func(i int) *array.Float64Builder { return b.Field(i).(*array.Float64Builder) }
	opt := func(i int, v float64, ok bool) {
		if ok && !math.IsNaN(v) {
			f(i).Append(v)
		} else {
			f(i).AppendNull()
		}
	}
	for _, r := range recs {
		b.Field(0).(*array.Int32Builder).Append(int32(r.Epoch))
		b.Field(1).(*array.Int64Builder).Append(r.Steps)
		f(2).Append(r.Seconds)
		f(3).Append(r.Total)
		f(4).Append(r.CertSeconds)
		opt(5, r.Primal, r.Certified)
		opt(6, r.Dual, r.Certified)
		opt(7, r.Gap, r.Certified)
		opt(8, r.Residual, r.Certified)
		opt(9, r.GapEstimate, true)
		b.Field(10).(*array.Int64Builder).Append(r.LineSearch)
		acc, okA := r.Metrics[MetricAccuracy]
		f1, okF := r.Metrics[MetricF1]
		opt(11, acc, okA)
		opt(12, f1, okF)
	}
	return b.NewRecordBatch(), nil
}

// Held-out metric names understood by the log.
const (
	MetricAccuracy = "accuracy" // token accuracy in [0,1]
	MetricF1       = "f1"       // chunk F1 in [0,1]
)

// FormatRecord renders a record as the one-line human summary printed on
// stderr after each epoch.
func FormatRecord(r EpochRecord) string {
	s := fmt.Sprintf("epoch %3d  %7.3fs", r.Epoch, r.Seconds)
	if r.Certified {
		s += fmt.Sprintf("  primal %.10g  dual %.10g  gap %.4g", r.Primal, r.Dual, r.Gap)
	}
	if !math.IsNaN(r.GapEstimate) {
		s += fmt.Sprintf("  est %.4g", r.GapEstimate)
	}
	if r.LineSearch > 0 {
		s += fmt.Sprintf("  ls %d", r.LineSearch)
	}
	if v, ok := r.Metrics[MetricAccuracy]; ok {
		s += fmt.Sprintf("  acc %.2f%%", 100*v)
	}
	if v, ok := r.Metrics[MetricF1]; ok {
		s += fmt.Sprintf("  F1 %.2f", 100*v)
	}
	if r.CertSeconds > 0 {
		s += fmt.Sprintf("  (cert %.2fs)", r.CertSeconds)
	}
	return s
}
