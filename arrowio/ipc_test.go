package arrowio

import (
	"bytes"
	"fmt"
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

// testSchema has a plain column, a dictionary column and a list of
// dictionary column, the shapes the feature table uses.
func testSchema() *arrow.Schema {
	dict := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}
	return arrow.NewSchema([]arrow.Field{
		{Name: "n", Type: arrow.PrimitiveTypes.Int64},
		{Name: "tag", Type: dict, Nullable: true},
		{Name: "bag", Type: arrow.ListOf(dict)},
	}, nil)
}

// testBatch builds a batch of rows: n = first..first+len(tags)-1, tag and a
// one-element bag from tags (a dictionary with the names given).
func testBatch(t testing.TB, mem memory.Allocator, s *arrow.Schema, first int64, tags []int32, names []string) arrow.RecordBatch {
	t.Helper()
	sb := array.NewStringBuilder(mem)
	defer sb.Release()
	sb.AppendValues(names, nil)
	dict := sb.NewArray()
	defer dict.Release()

	nb := array.NewInt64Builder(mem)
	defer nb.Release()
	ib := array.NewInt32Builder(mem)
	defer ib.Release()
	for i, tag := range tags {
		nb.Append(first + int64(i))
		ib.Append(tag)
	}
	n := nb.NewArray()
	defer n.Release()
	idx := ib.NewArray()
	defer idx.Release()
	tag := array.NewDictionaryArray(s.Field(1).Type, idx, dict)
	defer tag.Release()

	lt := s.Field(2).Type.(*arrow.ListType)
	child := array.NewDictionaryArray(lt.Elem(), idx, dict)
	defer child.Release()
	off := make([]int32, len(tags)+1)
	for i := range off {
		off[i] = int32(i)
	}
	offBuf := memory.NewBufferBytes(arrow.Int32Traits.CastToBytes(off))
	data := array.NewData(lt, len(tags), []*memory.Buffer{nil, offBuf}, []arrow.ArrayData{child.Data()}, 0, 0)
	defer data.Release()
	bag := array.NewListData(data)
	defer bag.Release()
	return array.NewRecordBatch(s, []arrow.Array{n, tag, bag}, int64(len(tags)))
}

// readAll reads every batch, returning rows as "n:tag:bag" strings.
func readAll(rr array.RecordReader) ([]string, error) {
	var rows []string
	for rr.Next() {
		rec := rr.RecordBatch()
		n := rec.Column(0).(*array.Int64)
		tag := rec.Column(1).(*array.Dictionary)
		tags := tag.Dictionary().(*array.String)
		bag := rec.Column(2).(*array.List)
		bagDict := bag.ListValues().(*array.Dictionary)
		bagNames := bagDict.Dictionary().(*array.String)
		for i := 0; i < int(rec.NumRows()); i++ {
			lo, hi := bag.ValueOffsets(i)
			var items []string
			for j := lo; j < hi; j++ {
				items = append(items, bagNames.Value(bagDict.GetValueIndex(int(j))))
			}
			rows = append(rows, fmt.Sprintf("%d:%s:%s", n.Value(i), tags.Value(tag.GetValueIndex(i)), strings.Join(items, ",")))
		}
	}
	return rows, rr.Err()
}

// writeBatches writes batches of growing dictionaries: the second batch
// adds a name. The file format cannot, so it gets the full dictionary in
// both batches.
func writeBatches(t *testing.T, mem memory.Allocator, opts WriterOptions) []byte {
	t.Helper()
	s := testSchema()
	var buf bytes.Buffer
	w, err := NewRecordWriter(&buf, s, opts)
	if err != nil {
		t.Fatal(err)
	}
	first := []string{"NP", "VP"}
	if opts.Format == FormatFile {
		first = []string{"NP", "VP", "PP"}
	}
	for i, b := range []struct {
		tags  []int32
		names []string
	}{{[]int32{0, 1, 0}, first}, {[]int32{2, 1}, []string{"NP", "VP", "PP"}}} {
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

var wantRows = []string{"0:NP:NP", "1:VP:VP", "2:NP:NP", "3:PP:PP", "4:VP:VP"}

// TestRecordRoundTrip writes a dictionary and a list of dictionary in both
// formats and all compressions, and reads them back from memory, from a
// regular file and from a pipe.
func TestRecordRoundTrip(t *testing.T) {
	for _, format := range []Format{FormatStream, FormatFile} {
		for _, comp := range []Compression{CompressNone, CompressZstd, CompressLZ4} {
			t.Run(string(format)+"/"+string(comp), func(t *testing.T) {
				mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
				defer mem.AssertSize(t, 0)
				data := writeBatches(t, mem, WriterOptions{Format: format, Compression: comp, Mem: mem})
				if got := bytes.HasPrefix(data, []byte("ARROW1")); got != (format == FormatFile) {
					t.Fatalf("file magic present: %v", got)
				}
				path := filepath.Join(t.TempDir(), "t.arrow")
				if err := os.WriteFile(path, data, 0o644); err != nil {
					t.Fatal(err)
				}
				for _, src := range []string{"memory", "file", "pipe"} {
					r, closeFn := openSource(t, src, path, data)
					rr, err := OpenRecordReader(r, "t.arrow", ReaderOptions{Mem: mem})
					if err != nil {
						t.Fatalf("%s: %v", src, err)
					}
					rows, err := readAll(rr)
					rr.Release()
					closeFn()
					if err != nil || !reflect.DeepEqual(rows, wantRows) {
						t.Fatalf("%s: rows %v, %v; want %v", src, rows, err, wantRows)
					}
				}
			})
		}
	}
}

// openSource gives data as a bytes.Reader, a regular *os.File or a pipe.
func openSource(t *testing.T, src, path string, data []byte) (io.Reader, func()) {
	t.Helper()
	switch src {
	case "file":
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		return f, func() { f.Close() }
	case "pipe":
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		go func() {
			w.Write(data)
			w.Close()
		}()
		return r, func() { r.Close() }
	}
	return bytes.NewReader(data), func() {}
}

// streamMessages lists the messages of an IPC stream as "schema",
// "dict(delta=…,rows=…)" and "batch".
func streamMessages(t *testing.T, data []byte) []string {
	t.Helper()
	mr := newMessageReader(bytes.NewReader(data))
	defer mr.Release()
	var out []string
	for {
		msg, err := mr.Message()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, describe(t, msg.Type().String(), mr))
	}
}

func describe(t *testing.T, kind string, mr *messageReader) string {
	if kind != "DictionaryBatch" {
		return kind
	}
	// Re-read the metadata the reader holds: isDelta and the row count.
	meta := mr.lastMeta
	m, err := fbRoot(meta)
	if err != nil {
		t.Fatal(err)
	}
	h, _, _ := m.table(2)
	delta, _ := h.scalar(2, 1)
	data, _, _ := h.table(1)
	rows, _ := data.scalar(0, 8)
	return fmt.Sprintf("dict(delta=%v,rows=%d)", delta == 1, rows)
}

// TestStreamDictionaryDelta: a dictionary that grows by appending goes out
// as a delta holding only the new entries; an unchanged one is not resent.
func TestStreamDictionaryDelta(t *testing.T) {
	data := writeBatches(t, memory.DefaultAllocator, WriterOptions{})
	got := streamMessages(t, data)
	want := []string{"Schema", "dict(delta=false,rows=2)", "dict(delta=false,rows=2)", "RecordBatch",
		"dict(delta=true,rows=1)", "dict(delta=true,rows=1)", "RecordBatch"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("messages\n got %v\nwant %v", got, want)
	}
}

// TestFileDictionaryChange: the file format cannot change a dictionary;
// the failed output gets no footer, so it does not read as a whole file.
func TestFileDictionaryChange(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	s := testSchema()
	var buf bytes.Buffer
	w, err := NewRecordWriter(&buf, s, WriterOptions{Format: FormatFile, Mem: mem})
	if err != nil {
		t.Fatal(err)
	}
	rec := testBatch(t, mem, s, 0, []int32{0}, []string{"NP"})
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	rec.Release()
	rec = testBatch(t, mem, s, 1, []int32{1}, []string{"NP", "VP"})
	defer rec.Release()
	if err := w.Write(rec); err == nil || !strings.Contains(err.Error(), "Dictionary replacement") {
		t.Fatalf("growing dictionary in file format: %v", err)
	}
	size := buf.Len()
	if err := w.Close(); err == nil {
		t.Fatal("Close after a failed Write returned nil")
	}
	if buf.Len() != size {
		t.Fatalf("Close after failure wrote %d more bytes", buf.Len()-size)
	}
	if _, err := OpenRecordReader(bytes.NewReader(buf.Bytes()), "f", ReaderOptions{}); err == nil {
		t.Fatal("failed file output opened without error")
	}
}

// TestAbort: an aborted stream has no end marker and reads as truncated.
func TestAbort(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	s := testSchema()
	var buf bytes.Buffer
	w, err := NewRecordWriter(&buf, s, WriterOptions{Mem: mem})
	if err != nil {
		t.Fatal(err)
	}
	rec := testBatch(t, mem, s, 0, []int32{0}, []string{"NP"})
	defer rec.Release()
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	w.Abort()
	w.Abort()
	rr, err := OpenRecordReader(bytes.NewReader(buf.Bytes()), "aborted", ReaderOptions{Mem: mem})
	if err != nil {
		t.Fatal(err)
	}
	defer rr.Release()
	rows, err := readAll(rr)
	if len(rows) != 1 || err == nil || !strings.Contains(err.Error(), "aborted: ") || !strings.Contains(err.Error(), "end-of-stream marker") {
		t.Fatalf("rows %v, error %v", rows, err)
	}
}

func TestOpenRecordReaderErrors(t *testing.T) {
	stream := writeBatches(t, memory.DefaultAllocator, WriterOptions{})
	file := writeBatches(t, memory.DefaultAllocator, WriterOptions{Format: FormatFile})
	cases := []struct {
		name string
		data []byte
		want string
	}{
		{"text", []byte("B-NP I-NP O\n"), "model.bin: not an Arrow IPC stream or file"},
		{"empty", nil, "model.bin: empty input: not an Arrow IPC stream or file"},
		{"parquet magic only", []byte("PAR1\x15\x04"), "model.bin: truncated Parquet file"},
		{"stream cut at a message boundary", stream[:len(stream)-8], "end-of-stream marker"},
		{"stream cut inside a message", stream[:len(stream)-20], "truncated stream: input ends inside a message body"},
		{"stream cut in the schema", stream[:40], "model.bin: read Arrow IPC stream"},
		{"file without footer", file[:len(file)-30], "model.bin: truncated or corrupt Arrow IPC file"},
		{"file magic only", []byte("ARROW1\x00\x00"), "model.bin: truncated or corrupt Arrow IPC file"},
	}
	for _, c := range cases {
		rr, err := OpenRecordReader(bytes.NewReader(c.data), "model.bin", ReaderOptions{})
		if err == nil {
			_, err = readAll(rr)
			rr.Release()
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.name, err, c.want)
		}
	}
}

func TestParseOptions(t *testing.T) {
	for in, want := range map[string]Format{"": FormatStream, "stream": FormatStream, "file": FormatFile} {
		if got, err := ParseFormat(in); err != nil || got != want {
			t.Errorf("ParseFormat(%q) = %q, %v", in, got, err)
		}
	}
	for in, want := range map[string]Compression{"": CompressNone, "none": CompressNone, "zstd": CompressZstd, "lz4": CompressLZ4} {
		if got, err := ParseCompression(in); err != nil || got != want {
			t.Errorf("ParseCompression(%q) = %q, %v", in, got, err)
		}
	}
	if _, err := ParseFormat("feather"); err == nil || !strings.Contains(err.Error(), `"feather"`) {
		t.Errorf("ParseFormat(feather): %v", err)
	}
	if _, err := ParseCompression("gzip"); err == nil || !strings.Contains(err.Error(), `"gzip"`) {
		t.Errorf("ParseCompression(gzip): %v", err)
	}
	if _, err := NewRecordWriter(io.Discard, testSchema(), WriterOptions{Compression: "snappy"}); err == nil {
		t.Error("NewRecordWriter accepted snappy")
	}
}
