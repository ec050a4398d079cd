package arrowio

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// withMetadata returns testSchema with the schema metadata kv (key, value,
// key, value, …).
func withMetadata(kv ...string) *arrow.Schema {
	s := testSchema()
	var keys, vals []string
	for i := 0; i+1 < len(kv); i += 2 {
		keys, vals = append(keys, kv[i]), append(vals, kv[i+1])
	}
	md := arrow.NewMetadata(keys, vals)
	return arrow.NewSchema(s.Fields(), &md)
}

// writeOne writes one batch of rows first.. with tags 0,1 of the names
// given, under schema s.
func writeOne(t *testing.T, mem memory.Allocator, s *arrow.Schema, opts WriterOptions, first int64) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := NewRecordWriter(&buf, s, opts)
	if err != nil {
		t.Fatal(err)
	}
	rec := testBatch(t, mem, s, first, []int32{0, 1}, []string{"A", "B"})
	defer rec.Release()
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// readStreams reads every batch, returning rows and the Stream index of
// each batch.
func readStreams(t *testing.T, rr interface {
	Next() bool
	Stream() int
}) []int {
	t.Helper()
	var streams []int
	for rr.Next() {
		streams = append(streams, rr.Stream())
	}
	return streams
}

// TestConcatenated: streams and files written back to back are read whole,
// from memory, a regular file and a pipe, with Stream telling the parts
// apart. On main the reader stopped at the first end-of-stream marker and
// reported success.
func TestConcatenated(t *testing.T) {
	md := []string{"dualcrf.format", "t", "dualcrf.version", "1"}
	for _, kinds := range [][]Format{
		{FormatStream, FormatStream},
		{FormatStream, FormatStream, FormatStream},
		{FormatFile, FormatFile},
		{FormatFile, FormatStream},
		{FormatStream, FormatFile},
		{FormatStream, FormatFile, FormatStream},
	} {
		var names []string
		for _, k := range kinds {
			names = append(names, string(k))
		}
		t.Run(strings.Join(names, "+"), func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			var data []byte
			var want []string
			var wantStreams []int
			for i, k := range kinds {
				// The source differs between parts; that is allowed.
				s := withMetadata(append(md, "dualcrf.source", names[i]+string(rune('a'+i)))...)
				data = append(data, writeOne(t, mem, s, WriterOptions{Format: k, Mem: mem}, int64(10*i))...)
				want = append(want, rowsOf(10*i)...)
				wantStreams = append(wantStreams, i)
			}
			perPart := ReaderOptions{Mem: mem, PerPartMetadata: []string{"dualcrf.source"}}
			path := filepath.Join(t.TempDir(), "cat.arrow")
			if err := os.WriteFile(path, data, 0o644); err != nil {
				t.Fatal(err)
			}
			for _, src := range []string{"memory", "file", "pipe"} {
				r, closeFn := openSource(t, src, path, data)
				rr, err := OpenRecordReader(r, "cat.arrow", perPart)
				if err != nil {
					t.Fatalf("%s: %v", src, err)
				}
				rows, err := readAll(rr)
				rr.Release()
				closeFn()
				if err != nil || !reflect.DeepEqual(rows, want) {
					t.Fatalf("%s: rows %v, %v; want %v", src, rows, err, want)
				}
				r, closeFn = openSource(t, src, path, data)
				rr, err = OpenRecordReader(r, "cat.arrow", perPart)
				if err != nil {
					t.Fatal(err)
				}
				sr, ok := rr.(interface {
					Next() bool
					Stream() int
				})
				if !ok {
					t.Fatalf("%s: the reader (%T) has no Stream method", src, rr)
				}
				streams := readStreams(t, sr)
				if err := rr.Err(); err != nil || !reflect.DeepEqual(streams, wantStreams) {
					t.Fatalf("%s: streams %v, %v; want %v", src, streams, err, wantStreams)
				}
				if sr.Stream() != len(kinds)-1 {
					t.Fatalf("%s: Stream after the end = %d", src, sr.Stream())
				}
				rr.Release()
				closeFn()
			}
		})
	}
}

func rowsOf(first int) []string {
	return []string{
		strings.Join([]string{strconv.Itoa(first), "A", "A"}, ":"),
		strings.Join([]string{strconv.Itoa(first + 1), "B", "B"}, ":"),
	}
}

// TestConcatenatedRefused: parts whose schemas differ, and bytes after the
// end of a stream or of a file that start no further part, are errors
// naming the part (formerly: a's rows only, no error, or for files the last
// footer read over the first file's bytes).
func TestConcatenatedRefused(t *testing.T) {
	mem := memory.DefaultAllocator
	md := []string{"dualcrf.format", "t", "dualcrf.version", "1"}
	base := withMetadata(md...)
	stream := writeOne(t, mem, base, WriterOptions{}, 0)
	file := writeOne(t, mem, base, WriterOptions{Format: FormatFile}, 0)
	otherVersion := writeOne(t, mem, withMetadata("dualcrf.format", "t", "dualcrf.version", "2"), WriterOptions{}, 0)
	otherTemplates := writeOne(t, mem, withMetadata(append(md, "dualcrf.templates", "U00:%x[0,0]")...), WriterOptions{}, 0)
	renamed := writeOne(t, mem, withRenamed(base), WriterOptions{}, 0)
	otherSource := writeOne(t, mem, withMetadata(append(md, "dualcrf.source", "b")...), WriterOptions{}, 0)
	cases := []struct {
		name string
		data []byte
		want string
	}{
		{"stream then garbage", cat(stream, []byte("hello\n")), "x.arrow: the bytes at offset " + strconv.Itoa(len(stream)) + ", after the end of the Arrow IPC stream, are not another Arrow IPC stream or file"},
		{"stream then zeros", cat(stream, make([]byte, 8)), "after the end of the Arrow IPC stream"},
		{"file then garbage", cat(file, []byte("x")), "after the end of the Arrow IPC file"},
		{"file then truncated file", cat(file, file[:len(file)-3]), "x.arrow: file 2 at byte " + strconv.Itoa(len(file)) + ": truncated or corrupt Arrow IPC file"},
		{"stream then truncated stream", cat(stream, stream[:len(stream)-8]), "x.arrow: stream 2 at byte " + strconv.Itoa(len(stream)) + ": read Arrow IPC stream"},
		{"two streams then garbage", cat(stream, stream, []byte{1}), "after the end of stream 2"},
		{"other version", cat(stream, otherVersion), `x.arrow: stream 2 at byte ` + strconv.Itoa(len(stream)) + ` does not match the first: schema metadata dualcrf.version is "2", stream 1's is "1"`},
		{"other templates", cat(stream, otherTemplates), "schema metadata has dualcrf.templates, which stream 1 lacks"},
		{"source not per part", cat(stream, otherSource), "schema metadata has dualcrf.source, which stream 1 lacks"},
		{"file then renamed column", cat(file, renamed), `x.arrow: stream 2 at byte ` + strconv.Itoa(len(file)) + ` does not match the first: column 1 is "m" int64`},
		{"renamed column", cat(stream, renamed), `column 1 is "m" int64, stream 1's is "n" int64`},
	}
	for _, c := range cases {
		for _, src := range []string{"memory", "file", "pipe"} {
			path := filepath.Join(t.TempDir(), "x.arrow")
			if err := os.WriteFile(path, c.data, 0o644); err != nil {
				t.Fatal(err)
			}
			r, closeFn := openSource(t, src, path, c.data)
			rr, err := OpenRecordReader(r, "x.arrow", ReaderOptions{})
			var rows []string
			if err == nil {
				rows, err = readAll(rr)
				rr.Release()
			}
			closeFn()
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%s from %s: rows %v, error %v\nwant %q", c.name, src, rows, err, c.want)
			}
		}
	}
}

func withRenamed(s *arrow.Schema) *arrow.Schema {
	f := s.Fields()
	f[0].Name = "m"
	md := s.Metadata()
	return arrow.NewSchema(f, &md)
}

func cat(parts ...[]byte) []byte {
	var out []byte
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}
