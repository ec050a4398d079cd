package arrowio_test

// Arrow input through package pipeline's OpenInput (hence an external test).

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/klauspost/compress/zstd"

	"github.com/dualcrf/dualcrf/arrowio"
	"github.com/dualcrf/dualcrf/pipeline"
)

// compressed returns data compressed with format ("gzip" or "zstd").
func compressed(t *testing.T, data []byte, format string) []byte {
	t.Helper()
	var buf bytes.Buffer
	var zw io.WriteCloser = gzip.NewWriter(&buf)
	if format == "zstd" {
		var err error
		if zw, err = zstd.NewWriter(&buf); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := zw.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestOpenInputArrow: an Arrow IPC stream or file compressed with gzip or
// zstd reads as the plain one, from a named file and from standard input
// (formerly, OpenInput undid gzip only).
func TestOpenInputArrow(t *testing.T) {
	dir := t.TempDir()
	read := func(src pipeline.Source) []string {
		t.Helper()
		rc, name, err := src.Open()
		if err != nil {
			t.Fatal(err)
		}
		defer rc.Close()
		rr, err := arrowio.OpenRecordReader(rc, name, arrowio.ReaderOptions{})
		if err != nil {
			t.Fatal(err)
		}
		defer rr.Release()
		rows, err := arrowio.ReadAll(rr)
		if err != nil {
			t.Fatal(err)
		}
		return rows
	}
	for _, ipcFormat := range []arrowio.Format{arrowio.FormatStream, arrowio.FormatFile} {
		data := arrowio.WriteBatches(t, memory.DefaultAllocator, arrowio.WriterOptions{Format: ipcFormat})
		for _, format := range []string{"gzip", "zstd"} {
			path := filepath.Join(dir, "t.arrow."+format)
			if err := os.WriteFile(path, compressed(t, data, format), 0o644); err != nil {
				t.Fatal(err)
			}
			if got := read(pipeline.Source{Path: path}); !slices.Equal(got, arrowio.WantRows) {
				t.Errorf("%s %s: rows %v, want %v", ipcFormat, format, got, arrowio.WantRows)
			}
			f, err := os.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			if got := read(pipeline.Source{Path: "-", Stdin: f}); !slices.Equal(got, arrowio.WantRows) {
				t.Errorf("%s %s on standard input: rows %v, want %v", ipcFormat, format, got, arrowio.WantRows)
			}
			f.Close()
		}
	}
}
