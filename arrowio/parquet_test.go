package arrowio

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// writeParquet writes the rows of writeBatches as Parquet, with schema
// metadata.
func writeParquet(t testing.TB, mem memory.Allocator) []byte {
	t.Helper()
	md := arrow.NewMetadata([]string{"dualcrf.format", "dualcrf.note"}, []string{"test", "é\nx"})
	s := arrow.NewSchema(testSchema().Fields(), &md)
	var buf bytes.Buffer
	w, err := NewRecordWriter(&buf, s, WriterOptions{Format: FormatParquet, Mem: mem})
	if err != nil {
		t.Fatal(err)
	}
	for i, b := range []struct {
		tags  []int32
		names []string
	}{{[]int32{0, 1, 0}, []string{"NP", "VP"}}, {[]int32{2, 1}, []string{"NP", "VP", "PP"}}} {
		rec := testBatch(t, mem, s, int64(3*i), b.tags, b.names)
		err := w.Write(rec)
		rec.Release()
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestParquetRoundTrip: a Parquet table comes back with its rows, its
// dictionary columns as dictionaries and its schema metadata, whether read
// in place (a file, a bytes.Reader) or spooled from a pipe.
func TestParquetRoundTrip(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	data := writeParquet(t, mem)
	if !IsParquet(data) {
		t.Fatal("no PAR1 magic")
	}
	path := filepath.Join(t.TempDir(), "t.bin") // the name does not say Parquet
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	pr, pw := io.Pipe()
	go func() { _, err := pw.Write(data); pw.CloseWithError(err) }()
	for name, r := range map[string]io.Reader{"file": f, "bytes": bytes.NewReader(data), "pipe": pr} {
		rr, err := OpenRecordReader(r, "t.bin", ReaderOptions{Mem: mem})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got := rr.Schema().Field(1).Type.ID(); got != arrow.DICTIONARY {
			t.Errorf("%s: tag column read as %v, want a dictionary", name, got)
		}
		if v, _ := rr.Schema().Metadata().GetValue("dualcrf.note"); v != "é\nx" {
			t.Errorf("%s: metadata dualcrf.note = %q", name, v)
		}
		rows, err := readAll(rr)
		if v, _ := rr.Schema().Metadata().GetValue("dualcrf.format"); v != "test" {
			t.Errorf("%s: metadata lost: %v", name, rr.Schema().Metadata())
		}
		rr.Release()
		if err != nil || !reflect.DeepEqual(rows, wantRows) {
			t.Errorf("%s: rows %v, error %v; want %v", name, rows, err, wantRows)
		}
	}
	mem.AssertSize(t, 0)
}

// TestParquetCorrupt: truncated or damaged Parquet is an error naming the
// input, never a panic.
func TestParquetCorrupt(t *testing.T) {
	data := writeParquet(t, memory.DefaultAllocator)
	flip := bytes.Clone(data)
	for i := len(flip) / 3; i < len(flip)-8; i += 7 {
		flip[i] ^= 0x5a
	}
	cases := map[string][]byte{
		"magic only":    []byte("PAR1"),
		"cut in half":   data[:len(data)/2],
		"no tail magic": data[:len(data)-1],
		"bytes flipped": flip,
		"footer length": append(bytes.Clone(data[:len(data)-8]), 0xff, 0xff, 0xff, 0x7f, 'P', 'A', 'R', '1'),
	}
	for name, b := range cases {
		rr, err := OpenRecordReader(bytes.NewReader(b), "lake.parquet", ReaderOptions{})
		if err == nil {
			_, err = drain(rr)
			rr.Release()
		}
		if err == nil || !strings.HasPrefix(err.Error(), "lake.parquet: ") {
			t.Errorf("%s: error %v, want one naming lake.parquet", name, err)
		}
	}
}

// drain reads every batch of rr, counting rows.
func drain(rr array.RecordReader) (int64, error) {
	var n int64
	for rr.Next() {
		n += rr.RecordBatch().NumRows()
	}
	return n, rr.Err()
}

// FuzzOpenParquet: OpenRecordReader over damaged Parquet never panics and
// names the input in its errors.
func FuzzOpenParquet(f *testing.F) {
	data := writeParquet(f, memory.DefaultAllocator)
	f.Add(data)
	f.Add(data[:len(data)/2])
	f.Fuzz(func(t *testing.T, b []byte) {
		if !IsParquet(b) {
			b = append([]byte("PAR1"), b...)
		}
		rr, err := OpenRecordReader(bytes.NewReader(b), "fuzz", ReaderOptions{})
		if err == nil {
			_, err = drain(rr)
			rr.Release()
		}
		if err != nil && !strings.HasPrefix(err.Error(), "fuzz: ") {
			t.Fatalf("error %q does not name the input", err)
		}
	})
}

// TestConcatenatedParquetRefused: Parquet files concatenated on a pipe, or
// in one file, are refused naming the input and where the last file
// begins — the same file twice (formerly: half the rows, read without a
// word) and two different files (formerly: page-header errors) — while
// each file alone still reads.
func TestConcatenatedParquetRefused(t *testing.T) {
	mem := memory.DefaultAllocator
	a := writeParquet(t, mem)
	s := arrow.NewSchema(testSchema().Fields(), nil)
	var buf bytes.Buffer
	w, err := NewRecordWriter(&buf, s, WriterOptions{Format: FormatParquet})
	if err != nil {
		t.Fatal(err)
	}
	rec := testBatch(t, mem, s, 0, []int32{0}, []string{"X"})
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	rec.Release()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	b := buf.Bytes()
	for name, c := range map[string]struct {
		data []byte
		at   int
	}{
		"same file twice":     {append(bytes.Clone(a), a...), len(a)},
		"two different files": {append(bytes.Clone(a), b...), len(a)},
		"three files":         {append(append(bytes.Clone(b), a...), b...), len(a) + len(b)},
	} {
		for _, pipe := range []bool{false, true} {
			var r io.Reader = bytes.NewReader(c.data)
			if pipe {
				r = io.MultiReader(r) // no ReadAt: spooled, as a pipe is
			}
			rr, err := OpenRecordReader(r, stdinName, ReaderOptions{})
			if err == nil {
				rr.Release()
			}
			var ce *ConcatenatedParquetError
			if !errors.As(err, &ce) || ce.At != int64(c.at) || !strings.HasPrefix(err.Error(), stdinName+": concatenated Parquet files") {
				t.Errorf("%s (pipe %v): %v, want a concatenation at byte %d", name, pipe, err, c.at)
			}
		}
	}
	for _, one := range [][]byte{a, b} {
		rr, err := OpenRecordReader(io.MultiReader(bytes.NewReader(one)), stdinName, ReaderOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := drain(rr); err != nil {
			t.Error(err)
		}
		rr.Release()
	}
}

// stdinName is how package pipeline names standard input.
const stdinName = "<stdin>"
