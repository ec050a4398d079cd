package tables

// The training log (schemas.LogSchema): one row per epoch.

import (
	"fmt"
	"io"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/dualcrf/dualcrf/arrowio"
	"github.com/dualcrf/dualcrf/schemas"
)

// LogRow is one row of the training log: one epoch. In the columns the log
// may leave null, NaN stands for null: the certificate's values of an
// epoch without a certificate pass, an estimate not computed, held-out
// scores without held-out data.
type LogRow struct {
	Epoch        int     // 0 for the initial point
	Steps        int64   // steps so far
	Seconds      float64 // training time of the epoch, certificate passes excluded
	TotalSeconds float64 // training time so far
	CertSeconds  float64 // time of the epoch's certificate pass

	Primal, Dual, Gap float64 // P(w), D(μ) and the certified gap; NaN: not certified
	IdentityResidual  float64 // residual of the gap identity; NaN: not certified or not computed
	GapEstimate       float64 // the sampler's running estimate; NaN: none

	LineSearch int64 // line-search evaluations in the epoch

	ValidAccuracy, ValidF1 float64 // held-out token accuracy and chunk F1, fractions in [0, 1]; NaN: none

	// Oracle calls so far (certificates excluded), oracle calls of the
	// certificate passes so far, and parameter updates so far; -1: null
	// (a log written before these columns, or a count not kept).
	OracleCalls, CertOracleCalls, Updates int64
}

// The columns of the training log, in schema order (schemas.LogSchema).
const (
	logEpoch = iota
	logSteps
	logSeconds
	logTotalSeconds
	logCertSeconds
	logPrimal
	logDual
	logGap
	logIdentityResidual
	logGapEstimate
	logLineSearch
	logValidAccuracy
	logValidF1
	logOracleCalls
	logCertOracleCalls
	logUpdates
	logColumns
)

// counts returns the optional int64 cells of r by column index.
func (r *LogRow) counts() map[int]*int64 {
	return map[int]*int64{logOracleCalls: &r.OracleCalls, logCertOracleCalls: &r.CertOracleCalls, logUpdates: &r.Updates}
}

// floats returns the float64 cells of r by column index; nullable says
// which may be null (NaN).
func (r *LogRow) floats() (cells [logColumns]*float64, nullable [logColumns]bool) {
	cells[logSeconds], cells[logTotalSeconds], cells[logCertSeconds] = &r.Seconds, &r.TotalSeconds, &r.CertSeconds
	cells[logPrimal], cells[logDual], cells[logGap] = &r.Primal, &r.Dual, &r.Gap
	cells[logIdentityResidual], cells[logGapEstimate] = &r.IdentityResidual, &r.GapEstimate
	cells[logValidAccuracy], cells[logValidF1] = &r.ValidAccuracy, &r.ValidF1
	for _, c := range []int{logPrimal, logDual, logGap, logIdentityResidual, logGapEstimate, logValidAccuracy, logValidF1} {
		nullable[c] = true
	}
	return cells, nullable
}

// logRecord returns rows as a training-log record batch
// (schemas.LogSchema, md in its metadata, buffers from mem or
// memory.DefaultAllocator when nil). A NaN in a nullable column is written
// as null. The caller releases the record.
func logRecord(mem memory.Allocator, rows []LogRow, md map[string]string) (arrow.RecordBatch, error) {
	schema, err := schemas.LogSchema(md)
	if err != nil {
		return nil, err
	}
	if mem == nil {
		mem = memory.DefaultAllocator
	}
	b := array.NewRecordBuilder(mem, schema)
	defer b.Release()
	for i := range rows {
		r := &rows[i]
		b.Field(logEpoch).(*array.Int32Builder).Append(int32(r.Epoch))
		b.Field(logSteps).(*array.Int64Builder).Append(r.Steps)
		b.Field(logLineSearch).(*array.Int64Builder).Append(r.LineSearch)
		for c, v := range r.counts() {
			if ib := b.Field(c).(*array.Int64Builder); *v < 0 {
				ib.AppendNull()
			} else {
				ib.Append(*v)
			}
		}
		cells, nullable := r.floats()
		for c, v := range cells {
			if v == nil {
				continue
			}
			fb := b.Field(c).(*array.Float64Builder)
			if nullable[c] && math.IsNaN(*v) {
				fb.AppendNull()
			} else {
				fb.Append(*v)
			}
		}
	}
	return b.NewRecordBatch(), nil
}

// WriteLog writes rows as a training log (see logRecord) to w, in the IPC
// file format unless opts says otherwise, with opts.Mem's buffers.
func WriteLog(w io.Writer, rows []LogRow, md map[string]string, opts arrowio.WriterOptions) error {
	rec, err := logRecord(opts.Mem, rows, md)
	if err != nil {
		return err
	}
	defer rec.Release()
	return writeRecord(w, rec, opts)
}

// TrainingLog is a training log read back.
type TrainingLog struct {
	Rows     []LogRow
	Metadata map[string]string // schema metadata: format, version, solver, …
}

// ReadLog reads the training log of rr; name is used in errors. The log is
// checked as it is read: its schema, every batch, epochs that increase from
// 0 on, no null where the log has none and no NaN (a log holds null for a
// value it lacks). Columns the log does not define are ignored. The record
// batches come from rr, with its allocator.
func ReadLog(rr array.RecordReader, name string) (log TrainingLog, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%s: corrupt training log: %v", name, p)
		}
	}()
	schema := rr.Schema()
	if err := schemas.ValidateLogSchema(schema); err != nil {
		return log, fmt.Errorf("%s: %w", name, err)
	}
	log.Metadata = schemas.MetadataMap(schema)
	var cols [logColumns]int
	for i, f := range schemas.LogFields() {
		cols[i] = -1 // an optional column the log lacks
		if idx := schema.FieldIndices(f.Name); len(idx) > 0 {
			cols[i] = idx[0]
		}
	}
	for batch := 0; rr.Next(); batch++ {
		rec := rr.RecordBatch()
		if err := arrowio.ValidateBatch(rec); err != nil {
			return log, fmt.Errorf("%s: batch %d: %w", name, batch, err)
		}
		for j := 0; j < int(rec.NumRows()); j++ {
			r, err := logRow(rec, cols, j)
			if err != nil {
				return log, fmt.Errorf("%s: row %d: %w", name, len(log.Rows), err)
			}
			last := -1
			if n := len(log.Rows); n > 0 {
				last = log.Rows[n-1].Epoch
			}
			if r.Epoch <= last {
				return log, fmt.Errorf("%s: row %d: epoch %d after epoch %d (epochs increase from 0)", name, len(log.Rows), r.Epoch, last)
			}
			log.Rows = append(log.Rows, r)
		}
	}
	return log, rr.Err()
}

// logRow reads row j of rec, whose columns are at cols.
func logRow(rec arrow.RecordBatch, cols [logColumns]int, j int) (LogRow, error) {
	var r LogRow
	fields := schemas.LogFields()
	for c, col := range cols {
		if col < 0 {
			continue
		}
		if a := rec.Column(col); a.IsNull(j) && !fields[c].Nullable {
			return r, fmt.Errorf("%s is null", fields[c].Name)
		}
	}
	r.Epoch = int(rec.Column(cols[logEpoch]).(*array.Int32).Value(j))
	r.Steps = rec.Column(cols[logSteps]).(*array.Int64).Value(j)
	r.LineSearch = rec.Column(cols[logLineSearch]).(*array.Int64).Value(j)
	for c, v := range r.counts() {
		*v = -1
		if col := cols[c]; col >= 0 && !rec.Column(col).IsNull(j) {
			if *v = rec.Column(col).(*array.Int64).Value(j); *v < 0 {
				return r, fmt.Errorf("%s is %d, a negative count", fields[c].Name, *v)
			}
		}
	}
	cells, _ := r.floats()
	for c, v := range cells {
		if v == nil {
			continue
		}
		a := rec.Column(cols[c]).(*array.Float64)
		if a.IsNull(j) {
			*v = math.NaN()
			continue
		}
		if *v = a.Value(j); math.IsNaN(*v) {
			return r, fmt.Errorf("%s is NaN (a log holds null for a value it lacks)", fields[c].Name)
		}
	}
	return r, nil
}
