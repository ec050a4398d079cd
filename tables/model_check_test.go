package tables

// Regression tests of the model reader against damaged and tampered files
// and its fuzz target.

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/dualcrf/dualcrf/arrowio"
	"github.com/dualcrf/dualcrf/crf"
)

// markWeight is a weight value that appears once in a marked model's file.
const markWeight = 1234.5678

// markedModel returns a small model whose attribute "w[0]=marked" (row 3)
// has markWeight for label "I-NP", and its file.
func markedModel(t testing.TB) (*crf.Model, []byte) {
	t.Helper()
	lay := crf.Layout{NumAttrs: 6, NumLabels: 3}
	m := &crf.Model{Layout: lay, Weights: make([]float64, lay.Dim()),
		LabelNames: []string{"B-NP", "I-NP", "O"}, Meta: map[string]string{"dualcrf.lambda": "0.01"}}
	for i := range m.Weights {
		m.Weights[i] = float64(i%7) - 3.25
	}
	for a := 0; a < lay.NumAttrs; a++ {
		m.AttrNames = append(m.AttrNames, fmt.Sprintf("w[0]=a%d", a))
	}
	m.AttrNames[3] = "w[0]=marked"
	m.Weights[lay.Row(3)+1] = markWeight
	var buf bytes.Buffer
	if err := WriteModel(&buf, m, arrowio.WriterOptions{}); err != nil {
		t.Fatal(err)
	}
	return m, buf.Bytes()
}

// patchWeight replaces the one occurrence of old's bytes in data by new's.
func patchWeight(t *testing.T, data []byte, old, new float64) []byte {
	t.Helper()
	var o, n [8]byte
	binary.LittleEndian.PutUint64(o[:], math.Float64bits(old))
	binary.LittleEndian.PutUint64(n[:], math.Float64bits(new))
	if c := bytes.Count(data, o[:]); c != 1 {
		t.Fatalf("weight %v occurs %d times in the file, want once", old, c)
	}
	return bytes.Replace(data, o[:], n[:], 1)
}

// TestReadModelRefusesNonFinite: a model file whose weight was made NaN or
// infinite is refused with a message naming the file, the row (kind and
// name), the label and the value.
func TestReadModelRefusesNonFinite(t *testing.T) {
	_, data := markedModel(t)
	for _, bad := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		_, err := ReadModel(bytes.NewReader(patchWeight(t, data, markWeight, bad)), "model.arrow", arrowio.ReaderOptions{})
		if err == nil {
			t.Fatalf("a model with a weight %v was accepted", bad)
		}
		for _, want := range []string{"model.arrow", `attr "w[0]=marked"`, `"I-NP"`, fmt.Sprint(bad)} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("weight %v: error %q lacks %q", bad, err, want)
			}
		}
	}
}

// TestReadModelChecksum: any change to a model's weights or metadata is
// refused as a checksum mismatch.
func TestReadModelChecksum(t *testing.T) {
	m, data := markedModel(t)
	got, err := ReadModel(bytes.NewReader(data), "model.arrow", arrowio.ReaderOptions{})
	if err != nil {
		t.Fatalf("intact model: %v", err)
	}
	if fmt.Sprint(got.Weights) != fmt.Sprint(m.Weights) {
		t.Fatalf("intact model read back differs")
	}
	changed := map[string][]byte{
		"a weight": patchWeight(t, data, markWeight, markWeight+1e-9),
		"λ":        bytes.Replace(data, []byte("0.01"), []byte("0.02"), -1),
		"a name":   bytes.Replace(data, []byte("w[0]=marked"), []byte("w[0]=market"), -1),
	}
	for what, b := range changed {
		if bytes.Equal(b, data) {
			t.Fatalf("%s: nothing changed", what)
		}
		_, err := ReadModel(bytes.NewReader(b), "model.arrow", arrowio.ReaderOptions{})
		if err == nil || !strings.Contains(err.Error(), "model.arrow: checksum mismatch: the file was changed or is corrupt") {
			t.Errorf("%s changed: error %v, want a checksum mismatch", what, err)
		}
	}
}

// TestReadModelVersion1: a model of format version 1 (no checksum) is
// refused with a message saying why and what to do.
func TestReadModelVersion1(t *testing.T) {
	md := arrow.NewMetadata(
		[]string{"dualcrf.bias", "dualcrf.format", "dualcrf.labels", "dualcrf.version"},
		[]string{"false", "model", `["A","B"]`, "1"})
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "kind", Type: arrow.BinaryTypes.String},
		{Name: "name", Type: arrow.BinaryTypes.String},
		{Name: "weights", Type: arrow.FixedSizeListOf(2, arrow.PrimitiveTypes.Float64)},
	}, &md)
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	for _, row := range []struct{ kind, name string }{{"attr", "x"}, {"trans", "A"}, {"trans", "B"}} {
		b.Field(0).(*array.StringBuilder).Append(row.kind)
		b.Field(1).(*array.StringBuilder).Append(row.name)
		b.Field(2).(*array.FixedSizeListBuilder).Append(true)
		b.Field(2).(*array.FixedSizeListBuilder).ValueBuilder().(*array.Float64Builder).AppendValues([]float64{0.5, -0.5}, nil)
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	var buf bytes.Buffer
	w, err := ipc.NewFileWriter(&buf, ipc.WithSchema(schema))
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	_, err = ReadModel(bytes.NewReader(buf.Bytes()), "old.arrow", arrowio.ReaderOptions{})
	if err == nil || !strings.Contains(err.Error(), "old.arrow") || !strings.Contains(err.Error(), "version 1 carries no checksum") ||
		!strings.Contains(err.Error(), "retrain") {
		t.Fatalf("a version 1 model: error %v, want a refusal saying it has no checksum", err)
	}
}

// TestReadModelCorrupt damages a model file at random, mostly near its ends
// where schema, dictionaries and footer are: ReadModel must return an error
// naming the file or the intact model, and never panic.
func TestReadModelCorrupt(t *testing.T) {
	m, data := markedModel(t)
	rng := rand.New(rand.NewPCG(3, 4))
	for i := 0; i < 2000; i++ {
		b := append([]byte(nil), data...)
		for k := 1 + rng.IntN(3); k > 0; k-- {
			pos := rng.IntN(len(b))
			if rng.IntN(2) == 0 {
				pos = rng.IntN(min(len(b), 1024))
			}
			b[pos] ^= byte(1 + rng.IntN(255))
		}
		if rng.IntN(4) == 0 {
			b = b[:rng.IntN(len(b))]
		}
		checkModelRead(t, b, m)
	}
}

// checkModelRead reads a model from data, which must give an error naming
// "fuzz.arrow" or, when want is not nil, a model equal to want; a panic is
// reported as such.
func checkModelRead(t *testing.T, data []byte, want *crf.Model) {
	t.Helper()
	var got *crf.Model
	var err error
	func() {
		defer func() {
			if p := recover(); p != nil {
				t.Fatalf("ReadModel panicked on %d bytes: %v", len(data), p)
			}
		}()
		got, err = ReadModel(bytes.NewReader(data), "fuzz.arrow", arrowio.ReaderOptions{})
	}()
	if err != nil {
		if !strings.HasPrefix(err.Error(), "fuzz.arrow") {
			t.Fatalf("error %q does not start with the file name", err)
		}
		return
	}
	if cerr := got.Check(); cerr != nil {
		t.Fatalf("accepted a model that fails Check: %v", cerr)
	}
	if want != nil && (fmt.Sprint(got.Weights) != fmt.Sprint(want.Weights) ||
		fmt.Sprint(got.AttrNames) != fmt.Sprint(want.AttrNames) || fmt.Sprint(got.LabelNames) != fmt.Sprint(want.LabelNames)) {
		t.Fatalf("accepted a damaged model that differs from the intact one")
	}
}

// FuzzReadModel feeds arbitrary bytes, seeded with model files written by
// WriteModel (dense and sparse rows) and one of version 2, to ReadModel: an error naming the file or a model that passes
// Check, never a panic.
func FuzzReadModel(f *testing.F) {
	_, data := markedModel(f)
	f.Add(data)
	lay := crf.Layout{NumAttrs: 2, NumLabels: 2, NoBias: true}
	m := &crf.Model{Layout: lay, Weights: []float64{1, 2, 3, 4, 5, 6, 7, 8}, AttrNames: []string{"x", "y"},
		LabelNames: []string{"A", "B"}, Meta: map[string]string{}}
	for _, opts := range []arrowio.WriterOptions{{}, {Format: arrowio.FormatStream}, {Compression: arrowio.CompressZstd}} {
		var buf bytes.Buffer
		if err := WriteModel(&buf, m, opts); err != nil {
			f.Fatal(err)
		}
		f.Add(buf.Bytes())
	}
	// A sparse model (rows stored by their labels, all-zero attributes left
	// out) and a dense one of version 2.
	sm := sparseModel(f, false)
	var sparse, dense bytes.Buffer
	if err := WriteModel(&sparse, sm, arrowio.WriterOptions{}); err != nil {
		f.Fatal(err)
	}
	f.Add(sparse.Bytes())
	writeDenseModel(f, &dense, sm)
	f.Add(dense.Bytes())
	f.Fuzz(func(t *testing.T, data []byte) {
		checkModelRead(t, data, nil)
	})
}
