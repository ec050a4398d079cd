package tables

import (
	"bytes"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/dualcrf/dualcrf/arrowio"
	"github.com/dualcrf/dualcrf/schemas"
)

// sampleLog is a log of three epochs: the initial point (certified), an
// uncertified epoch without estimate, and a certified one with held-out
// scores.
func sampleLog() []LogRow {
	nan := math.NaN()
	return []LogRow{
		{Epoch: 0, Seconds: 0.5, TotalSeconds: 0.5, CertSeconds: 0.25, Primal: 70, Dual: 1e-7, Gap: 70, IdentityResidual: 1e-11,
			GapEstimate: 100, ValidAccuracy: nan, ValidF1: nan, OracleCalls: 0, CertOracleCalls: 1000, Updates: 0},
		{Epoch: 1, Steps: 1000, Seconds: 0.75, TotalSeconds: 1.25, Primal: nan, Dual: nan, Gap: nan, IdentityResidual: nan,
			GapEstimate: nan, LineSearch: 3217, ValidAccuracy: nan, ValidF1: nan, OracleCalls: 1000, CertOracleCalls: 1000, Updates: 1000},
		{Epoch: 2, Steps: 2000, Seconds: 0.5, TotalSeconds: 1.75, CertSeconds: 0.5, Primal: 2, Dual: 1.5, Gap: 0.5,
			IdentityResidual: nan, GapEstimate: 0.4, LineSearch: 2545, ValidAccuracy: 0.9, ValidF1: 0.8,
			OracleCalls: -1, CertOracleCalls: -1, Updates: -1},
	}
}

// sameRows compares log rows with NaN equal to NaN.
func sameRows(a, b []LogRow) bool {
	key := func(rows []LogRow) []LogRow {
		out := append([]LogRow(nil), rows...)
		for i := range out {
			cells, _ := out[i].floats()
			for _, v := range cells {
				if v != nil && math.IsNaN(*v) {
					*v = -12345 // NaN never equals itself
				}
			}
		}
		return out
	}
	return reflect.DeepEqual(key(a), key(b))
}

// readLogBytes reads a training log with ReadLog, from mem.
func readLogBytes(t *testing.T, data []byte, mem memory.Allocator) (TrainingLog, error) {
	t.Helper()
	rr, err := OpenRecordReader(bytes.NewReader(data), "log.arrow", arrowio.ReaderOptions{Mem: mem})
	if err != nil {
		t.Fatal(err)
	}
	defer rr.Release()
	return ReadLog(rr, "log.arrow")
}

// TestLogRoundTrip: a log is an IPC file of the log's schema, with null
// where a row has NaN in a nullable column, and reads back as written;
// written and read from a checked allocator that ends empty.
func TestLogRoundTrip(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	want := sampleLog()
	var buf bytes.Buffer
	if err := WriteLog(&buf, want, map[string]string{schemas.KeySolver: "sdca"}, arrowio.WriterOptions{Mem: mem}); err != nil {
		t.Fatal(err)
	}
	data := buf.Bytes()
	if string(data[:6]) != "ARROW1" {
		t.Errorf("the log is not an IPC file")
	}
	rr, err := OpenRecordReader(bytes.NewReader(data), "log.arrow", arrowio.ReaderOptions{Mem: mem})
	if err != nil {
		t.Fatal(err)
	}
	if !rr.Next() {
		t.Fatal(rr.Err())
	}
	rec := rr.RecordBatch()
	nulls := map[string]int{}
	for i, f := range rec.Schema().Fields() {
		nulls[f.Name] = rec.Column(i).NullN()
	}
	rr.Release()
	if w := map[string]int{"primal": 1, "dual": 1, "gap": 1, "identity_residual": 2, "gap_estimate": 1, "valid_accuracy": 2,
		"valid_f1": 2, "epoch": 0, "seconds": 0, "cert_seconds": 0, "oracle_calls": 1, "cert_oracle_calls": 1,
		"updates": 1}; !reflect.DeepEqual(nulls, mergeCounts(w, nulls)) {
		t.Errorf("null counts %v, want %v", nulls, w)
	}
	got, err := readLogBytes(t, data, mem)
	if err != nil {
		t.Fatal(err)
	}
	if !sameRows(got.Rows, want) {
		t.Errorf("read back\n%+v\nwant\n%+v", got.Rows, want)
	}
	md := got.Metadata
	if md[schemas.KeyFormat] != schemas.LogFormat || md[schemas.KeyVersion] != schemas.LogVersion || md[schemas.KeySolver] != "sdca" {
		t.Errorf("metadata %v", md)
	}
}

// mergeCounts returns got with the entries of want put over it, so that a
// comparison checks only want's columns.
func mergeCounts(want, got map[string]int) map[string]int {
	out := map[string]int{}
	for k, v := range got {
		out[k] = v
	}
	for k, v := range want {
		out[k] = v
	}
	return out
}

// TestReadLogRefuses: epochs that do not increase, a null where the log has
// none, a NaN value and another kind of table are refused, naming the file
// and the row.
func TestReadLogRefuses(t *testing.T) {
	write := func(rows []LogRow, edit func(b *array.RecordBuilder)) []byte {
		rec, err := logRecord(nil, rows, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer rec.Release()
		if edit != nil {
			b := array.NewRecordBuilder(memory.DefaultAllocator, rec.Schema())
			defer b.Release()
			edit(b)
			rec.Release()
			rec = b.NewRecordBatch()
		}
		var buf bytes.Buffer
		if err := writeRecord(&buf, rec, arrowio.WriterOptions{}); err != nil {
			t.Fatal(err)
		}
		return buf.Bytes()
	}
	// row appends one row of the given epoch, with cell c set by set.
	row := func(b *array.RecordBuilder, epoch int32, c int, set func(array.Builder)) {
		for i := 0; i < logColumns; i++ {
			fb := b.Field(i)
			switch {
			case i == c:
				set(fb)
			case i == logEpoch:
				fb.(*array.Int32Builder).Append(epoch)
			case i == logSteps || i == logLineSearch || i == logOracleCalls || i == logCertOracleCalls || i == logUpdates:
				fb.(*array.Int64Builder).Append(1)
			default:
				fb.(*array.Float64Builder).Append(1)
			}
		}
	}
	back := sampleLog()
	back[2].Epoch = 1
	for _, c := range []struct {
		name string
		data []byte
		want string
	}{
		{"epochs", write(back, nil), "log.arrow: row 2: epoch 1 after epoch 1 (epochs increase from 0)"},
		{"negative", write([]LogRow{{Epoch: -1}}, nil), "log.arrow: row 0: epoch -1 after epoch -1"},
		{"null steps", write(nil, func(b *array.RecordBuilder) {
			row(b, 0, logSteps, func(fb array.Builder) { fb.AppendNull() })
		}), "log.arrow: row 0: steps is null"},
		{"null seconds", write(nil, func(b *array.RecordBuilder) {
			row(b, 0, logSeconds, func(fb array.Builder) { fb.AppendNull() })
		}), "log.arrow: row 0: seconds is null"},
		{"negative count", write(nil, func(b *array.RecordBuilder) {
			row(b, 0, logUpdates, func(fb array.Builder) { fb.(*array.Int64Builder).Append(-2) })
		}), "log.arrow: row 0: updates is -2, a negative count"},
		{"NaN gap", write(nil, func(b *array.RecordBuilder) {
			row(b, 0, -1, nil)
			row(b, 1, logGap, func(fb array.Builder) { fb.(*array.Float64Builder).Append(math.NaN()) })
		}), "log.arrow: row 1: gap is NaN"},
		{"scores table", func() []byte {
			var buf bytes.Buffer
			if err := WriteScores(&buf, sampleScores(true), nil, arrowio.WriterOptions{}); err != nil {
				t.Fatal(err)
			}
			return buf.Bytes()
		}(), `log.arrow: invalid training log schema: schema metadata dualcrf.format is "scores", want "training-log"`},
	} {
		if _, err := readLogBytes(t, c.data, nil); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.name, err, c.want)
		}
	}
}

// TestReadLogWithoutCounters: a log written before the oracle-call and
// update columns (version 2 without them) still reads, its counts null
// (-1); one missing a column that is not optional is refused.
func TestReadLogWithoutCounters(t *testing.T) {
	old := func(drop ...string) []byte {
		rec, err := logRecord(nil, sampleLog(), nil)
		if err != nil {
			t.Fatal(err)
		}
		defer rec.Release()
		var fields []arrow.Field
		var cols []arrow.Array
		for i, f := range rec.Schema().Fields() {
			if !slices.Contains(drop, f.Name) {
				fields, cols = append(fields, f), append(cols, rec.Column(i))
			}
		}
		md := rec.Schema().Metadata()
		rec = array.NewRecordBatch(arrow.NewSchema(fields, &md), cols, rec.NumRows())
		defer rec.Release()
		var buf bytes.Buffer
		if err := writeRecord(&buf, rec, arrowio.WriterOptions{}); err != nil {
			t.Fatal(err)
		}
		return buf.Bytes()
	}
	got, err := readLogBytes(t, old("oracle_calls", "cert_oracle_calls", "updates"), nil)
	if err != nil {
		t.Fatal(err)
	}
	want := sampleLog()
	for i := range want {
		want[i].OracleCalls, want[i].CertOracleCalls, want[i].Updates = -1, -1, -1
	}
	if !sameRows(got.Rows, want) {
		t.Errorf("read back\n%+v\nwant\n%+v", got.Rows, want)
	}
	if _, err := readLogBytes(t, old("line_search"), nil); err == nil || !strings.Contains(err.Error(), `missing column "line_search"`) {
		t.Errorf("a log without line_search: error %v", err)
	}
}

// FuzzReadLog feeds arbitrary bytes, seeded with training logs (with and
// without the counter columns, file and stream), to ReadLog: an error naming
// the file, or rows whose epochs increase and whose counts are -1 (null) or
// ≥ 0 — never a panic.
func FuzzReadLog(f *testing.F) {
	for _, opts := range []arrowio.WriterOptions{{}, {Format: arrowio.FormatStream}} {
		var buf bytes.Buffer
		if err := WriteLog(&buf, sampleLog(), map[string]string{schemas.KeySolver: "sag"}, opts); err != nil {
			f.Fatal(err)
		}
		f.Add(buf.Bytes())
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		rr, err := OpenRecordReader(bytes.NewReader(data), "log.arrow", arrowio.ReaderOptions{})
		if err != nil {
			return
		}
		defer rr.Release()
		log, err := ReadLog(rr, "log.arrow")
		if err != nil {
			if !strings.Contains(err.Error(), "log.arrow") {
				t.Fatalf("error %q does not name the file", err)
			}
			return
		}
		for i, r := range log.Rows {
			if i > 0 && r.Epoch <= log.Rows[i-1].Epoch {
				t.Fatalf("row %d: epoch %d after %d", i, r.Epoch, log.Rows[i-1].Epoch)
			}
			for _, c := range []int64{r.OracleCalls, r.CertOracleCalls, r.Updates} {
				if c < -1 {
					t.Fatalf("row %d: count %d", i, c)
				}
			}
		}
	})
}
