package tables

// Tests of the sparse model file (format version 3) and of the dense
// version 2 it replaces.

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/dualcrf/dualcrf/arrowio"
	"github.com/dualcrf/dualcrf/crf"
	"github.com/dualcrf/dualcrf/schemas"
)

// sparseModel returns a model of K labels whose weights are mostly zero:
// attribute rows all zero (left out of the file), with one weight, with
// a few (stored sparsely) and with most (stored whole); a transition row
// all zero, and -0 weights, which the file stores as +0.
func sparseModel(t testing.TB, noBias bool) *crf.Model {
	t.Helper()
	const A, K = 40, 6
	lay := crf.Layout{NumAttrs: A, NumLabels: K, NoBias: noBias}
	m := &crf.Model{Layout: lay, Weights: make([]float64, lay.Dim()), Meta: map[string]string{schemas.KeyLambda: "0.5"}}
	for y := range K {
		m.LabelNames = append(m.LabelNames, fmt.Sprint("L", y))
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for a := range A {
		m.AttrNames = append(m.AttrNames, fmt.Sprintf("w[0]=x%d", a))
		row := m.Weights[lay.Row(int32(a)) : lay.Row(int32(a))+K]
		switch a % 4 {
		case 0: // all zero
		case 1:
			row[rng.IntN(K)] = rng.NormFloat64()
		case 2:
			for range 3 {
				row[rng.IntN(K)] = rng.NormFloat64()
			}
		case 3:
			for y := range row {
				row[y] = rng.NormFloat64()
			}
			row[1] = 0
		}
	}
	// −0 in a row stored whole (kept) and in one stored by labels (+0).
	m.Weights[lay.Row(7)+1] = math.Copysign(0, -1)
	for y := range K {
		if j := lay.Row(9) + y; m.Weights[j] == 0 {
			m.Weights[j] = math.Copysign(0, -1)
			break
		}
	}
	for j := lay.Trans() + K; j < lay.Dim(); j++ { // the first transition row stays zero
		if rng.IntN(3) > 0 {
			m.Weights[j] = rng.NormFloat64()
		}
	}
	return m
}

// withoutZeroRows returns m as a reader gets it back from a sparse file:
// the attributes whose weights are all zero left out, −0 as +0 in the rows
// stored by their labels.
func withoutZeroRows(m *crf.Model) *crf.Model {
	lay := m.Layout
	K := lay.NumLabels
	out := &crf.Model{LabelNames: m.LabelNames}
	for a, n := range m.AttrNames {
		row := m.Weights[lay.Row(int32(a)) : lay.Row(int32(a))+K]
		if nonZero(row) > 0 {
			out.AttrNames = append(out.AttrNames, n)
			out.Weights = append(out.Weights, row...)
		}
	}
	out.Weights = append(out.Weights, m.Weights[lay.Trans():]...)
	for off := 0; off < len(out.Weights); off += K {
		if row := out.Weights[off : off+K]; 3*nonZero(row) < 2*K {
			for y, w := range row {
				if w == 0 {
					row[y] = 0
				}
			}
		}
	}
	out.Layout = crf.Layout{NumAttrs: len(out.AttrNames), NumLabels: K, NoBias: lay.NoBias}
	return out
}

func nonZero(ws []float64) int {
	n := 0
	for _, w := range ws {
		if w != 0 {
			n++
		}
	}
	return n
}

// sameModel fails unless got has want's names and weights bit for bit.
func sameModel(t *testing.T, what string, got, want *crf.Model) {
	t.Helper()
	if fmt.Sprint(got.AttrNames) != fmt.Sprint(want.AttrNames) || fmt.Sprint(got.LabelNames) != fmt.Sprint(want.LabelNames) ||
		got.Layout != want.Layout || len(got.Weights) != len(want.Weights) {
		t.Fatalf("%s: read back %d attributes, layout %+v; want %d, %+v", what, len(got.AttrNames), got.Layout, len(want.AttrNames), want.Layout)
	}
	for j := range got.Weights {
		if math.Float64bits(got.Weights[j]) != math.Float64bits(want.Weights[j]) {
			t.Fatalf("%s: weight %d is %v, want %v", what, j, got.Weights[j], want.Weights[j])
		}
	}
}

// TestSparseModelRoundTrip writes models with many zero weights in every
// format (IPC file and stream, compressed or not, Parquet) and reads them
// back: the attributes with a non-zero weight and every weight bit for bit
// (zeros as +0), rows stored whole or by their labels as the size rule
// says, and the file smaller than the dense one.
func TestSparseModelRoundTrip(t *testing.T) {
	for _, noBias := range []bool{false, true} {
		m := sparseModel(t, noBias)
		want := withoutZeroRows(m)
		for _, opts := range []arrowio.WriterOptions{{}, {Format: arrowio.FormatStream}, {Compression: arrowio.CompressZstd},
			{Format: arrowio.FormatParquet}} {
			what := fmt.Sprintf("no-bias %v, %+v", noBias, opts)
			var buf bytes.Buffer
			if err := WriteModel(&buf, m, opts); err != nil {
				t.Fatal(err)
			}
			got, err := ReadModel(bytes.NewReader(buf.Bytes()), "m", arrowio.ReaderOptions{})
			if err != nil {
				t.Fatalf("%s: %v", what, err)
			}
			sameModel(t, what, got, want)
			if got.Meta[schemas.KeyVersion] != schemas.ModelVersion {
				t.Fatalf("%s: version %q", what, got.Meta[schemas.KeyVersion])
			}
		}
	}
	// The rows as stored: labels null exactly for rows whose non-zero
	// weights are at least 2/3 of K.
	m := sparseModel(t, false)
	K := m.Layout.NumLabels
	var buf bytes.Buffer
	if err := WriteModel(&buf, m, arrowio.WriterOptions{}); err != nil {
		t.Fatal(err)
	}
	rr, err := OpenRecordReader(bytes.NewReader(buf.Bytes()), "m", arrowio.ReaderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer rr.Release()
	rows, stored := 0, 0
	for rr.Next() {
		rec := rr.RecordBatch()
		labels := rec.Column(2).(*array.List)
		weights := rec.Column(3).(*array.List)
		for j := range int(rec.NumRows()) {
			w0, w1 := weights.ValueOffsets(j)
			n := int(w1 - w0)
			if whole := labels.IsNull(j); whole != (n == K) || (!whole && 3*n >= 2*K) {
				t.Fatalf("row %d: %d weights stored, labels null %v", rows, n, whole)
			}
			rows++
			stored += n
		}
	}
	if want := 3*m.Layout.NumAttrs/4 + K + 3; rows != want {
		t.Fatalf("%d rows, want %d (the all-zero attributes left out)", rows, want)
	}
	if stored >= m.Layout.Dim()/2 {
		t.Fatalf("%d weights stored of %d", stored, m.Layout.Dim())
	}
	var dense bytes.Buffer
	writeDenseModel(t, &dense, m)
	if buf.Len() >= dense.Len() {
		t.Fatalf("sparse file %d bytes, dense %d", buf.Len(), dense.Len())
	}
}

// writeDenseModel writes m in the dense format of version 2, as earlier
// builds wrote it: every row whole, every attribute.
func writeDenseModel(t testing.TB, w *bytes.Buffer, m *crf.Model) {
	t.Helper()
	lay := m.Layout
	K := lay.NumLabels
	md := map[string]string{schemas.KeyLabels: jsonLabels(m.LabelNames), schemas.KeyBias: fmt.Sprint(!lay.NoBias)}
	for k, v := range m.Meta {
		md[k] = v
	}
	md[schemas.KeyFormat], md[schemas.KeyVersion] = schemas.ModelFormat, schemas.ModelVersionDense
	type row struct {
		kind, name string
		ws         []float64
	}
	var rows []row
	for a, n := range m.AttrNames {
		rows = append(rows, row{schemas.KindAttr, n, m.Weights[lay.Row(int32(a)) : lay.Row(int32(a))+K]})
	}
	for y, n := range m.LabelNames {
		rows = append(rows, row{schemas.KindTrans, n, m.Weights[lay.Trans()+y*K : lay.Trans()+y*K+K]})
	}
	if !lay.NoBias {
		rows = append(rows, row{schemas.KindBias, "", m.Weights[lay.Bias() : lay.Bias()+K]},
			row{schemas.KindStart, "", m.Weights[lay.Start() : lay.Start()+K]}, row{schemas.KindEnd, "", m.Weights[lay.End() : lay.End()+K]})
	}
	sum := schemas.NewModelHash(md)
	for _, r := range rows {
		sum.Row(r.kind, r.name, r.ws)
	}
	md[schemas.KeyChecksum] = sum.Sum()
	s, err := schemas.ModelDenseSchema(K, md)
	if err != nil {
		t.Fatal(err)
	}
	rw, err := arrowio.NewRecordWriter(w, s, arrowio.WriterOptions{Format: arrowio.FormatFile})
	if err != nil {
		t.Fatal(err)
	}
	b := array.NewRecordBuilder(memory.DefaultAllocator, s)
	defer b.Release()
	for _, r := range rows {
		b.Field(0).(*array.StringBuilder).Append(r.kind)
		b.Field(1).(*array.StringBuilder).Append(r.name)
		b.Field(2).(*array.FixedSizeListBuilder).Append(true)
		b.Field(2).(*array.FixedSizeListBuilder).ValueBuilder().(*array.Float64Builder).AppendValues(r.ws, nil)
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	if err := rw.Write(rec); err != nil {
		t.Fatal(err)
	}
	if err := rw.Close(); err != nil {
		t.Fatal(err)
	}
}

func jsonLabels(labels []string) string {
	q := make([]string, len(labels))
	for i, l := range labels {
		q[i] = fmt.Sprintf("%q", l)
	}
	return "[" + strings.Join(q, ",") + "]"
}

// TestReadDenseModels reads models of format version 2: the files an
// earlier build wrote (testdata/model: IPC, full feature space with bias;
// Parquet, CRFsuite's observed space without) and one written here, whole;
// each reads, keeps every attribute, and written again (version 3) reads
// back with the same weights.
func TestReadDenseModels(t *testing.T) {
	m := sparseModel(t, false)
	var dense bytes.Buffer
	writeDenseModel(t, &dense, m)
	got, err := ReadModel(bytes.NewReader(dense.Bytes()), "dense.arrow", arrowio.ReaderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sameModel(t, "dense", got, m) // every attribute, −0 kept
	if got.Meta[schemas.KeyVersion] != schemas.ModelVersionDense {
		t.Fatalf("dense model: version %q", got.Meta[schemas.KeyVersion])
	}
	for _, name := range []string{"model-v2.arrow", "model-v2.parquet"} {
		data, err := os.ReadFile(filepath.Join("testdata", "model", name))
		if err != nil {
			t.Fatal(err)
		}
		old, err := ReadModel(bytes.NewReader(data), name, arrowio.ReaderOptions{})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if old.Meta[schemas.KeyVersion] != schemas.ModelVersionDense || old.Layout.NumAttrs < 200 {
			t.Fatalf("%s: version %q, %d attributes", name, old.Meta[schemas.KeyVersion], old.Layout.NumAttrs)
		}
		var buf bytes.Buffer
		if err := WriteModel(&buf, old, arrowio.WriterOptions{}); err != nil {
			t.Fatal(err)
		}
		again, err := ReadModel(bytes.NewReader(buf.Bytes()), name, arrowio.ReaderOptions{})
		if err != nil {
			t.Fatal(err)
		}
		sameModel(t, name+" rewritten", again, withoutZeroRows(old))
	}
}

// TestReadSparseModelRefusals: rows whose labels do not describe their
// weights — out of range, not increasing, as many labels as weights, a
// row without labels not holding all K — and null labels or weights
// inside a list are refused naming the file and row.
func TestReadSparseModelRefusals(t *testing.T) {
	const K = 3
	type row struct {
		kind, name string
		labels     []int32 // nil: null
		weights    []float64
	}
	trans := []row{{"trans", "A", []int32{}, nil}, {"trans", "B", []int32{}, nil}, {"trans", "C", nil, []float64{1, 2, 3}}}
	for _, tc := range []struct {
		name string
		rows []row
		want string
	}{
		{"out of range", []row{{"attr", "x", []int32{3}, []float64{1}}}, "labels [3]: want increasing label ids in [0,3)"},
		{"negative", []row{{"attr", "x", []int32{-1}, []float64{1}}}, "labels [-1]"},
		{"not increasing", []row{{"attr", "x", []int32{1, 1}, []float64{1, 2}}}, "labels [1 1]"},
		{"decreasing", []row{{"attr", "x", []int32{2, 0}, []float64{1, 2}}}, "labels [2 0]"},
		{"lengths", []row{{"attr", "x", []int32{0, 1}, []float64{1}}}, "2 labels for 1 weights"},
		{"whole row short", []row{{"attr", "x", nil, []float64{1, 2}}}, "2 weights and no labels; a row without labels holds all 3"},
		{"good", []row{{"attr", "x", []int32{0, 2}, []float64{1, 2}}}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rows := append(tc.rows, trans...)
			md := map[string]string{schemas.KeyLabels: `["A","B","C"]`, schemas.KeyBias: "false"}
			full := map[string]string{schemas.KeyFormat: schemas.ModelFormat, schemas.KeyVersion: schemas.ModelVersion}
			for k, v := range md {
				full[k] = v
			}
			sum := schemas.NewModelHash(full)
			for _, r := range rows {
				whole := make([]float64, K)
				if r.labels == nil {
					copy(whole, r.weights)
				} else {
					for k, y := range r.labels {
						if y >= 0 && y < K && k < len(r.weights) {
							whole[y] = r.weights[k]
						}
					}
				}
				sum.Row(r.kind, r.name, whole)
			}
			md[schemas.KeyChecksum] = sum.Sum()
			s, err := schemas.ModelSchema(md)
			if err != nil {
				t.Fatal(err)
			}
			b := array.NewRecordBuilder(memory.DefaultAllocator, s)
			defer b.Release()
			for _, r := range rows {
				b.Field(0).(*array.StringBuilder).Append(r.kind)
				b.Field(1).(*array.StringBuilder).Append(r.name)
				if r.labels == nil {
					b.Field(2).(*array.ListBuilder).AppendNull()
				} else {
					b.Field(2).(*array.ListBuilder).Append(true)
					b.Field(2).(*array.ListBuilder).ValueBuilder().(*array.Int32Builder).AppendValues(r.labels, nil)
				}
				b.Field(3).(*array.ListBuilder).Append(true)
				b.Field(3).(*array.ListBuilder).ValueBuilder().(*array.Float64Builder).AppendValues(r.weights, nil)
			}
			data := modelRecordBytes(t, s, b)
			_, err = ReadModel(bytes.NewReader(data), "bad.arrow", arrowio.ReaderOptions{})
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.HasPrefix(err.Error(), `bad.arrow: row 0 (attr "x")`) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one naming row 0 and %q", err, tc.want)
			}
		})
	}
}

// modelRecordBytes writes b's record as an IPC file with schema s.
func modelRecordBytes(t *testing.T, s *arrow.Schema, b *array.RecordBuilder) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := arrowio.NewRecordWriter(&buf, s, arrowio.WriterOptions{Format: arrowio.FormatFile})
	if err != nil {
		t.Fatal(err)
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestReadSparseModelCorrupt damages a sparse model file at random, as
// TestReadModelCorrupt does the dense one: an error naming the file or the
// intact model, never a panic.
func TestReadSparseModelCorrupt(t *testing.T) {
	m := sparseModel(t, false)
	var buf bytes.Buffer
	if err := WriteModel(&buf, m, arrowio.WriterOptions{}); err != nil {
		t.Fatal(err)
	}
	data := buf.Bytes()
	want := withoutZeroRows(m)
	rng := rand.New(rand.NewPCG(5, 6))
	for i := 0; i < 2000; i++ {
		b := append([]byte(nil), data...)
		for k := 1 + rng.IntN(3); k > 0; k-- {
			b[rng.IntN(len(b))] ^= byte(1 + rng.IntN(255))
		}
		if rng.IntN(4) == 0 {
			b = b[:rng.IntN(len(b))]
		}
		checkModelRead(t, b, want)
	}
}
