package pipeline

import (
	"bytes"
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
