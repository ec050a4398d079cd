package featurize

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/klauspost/compress/zstd"

	"github.com/dualcrf/dualcrf/pipeline"
)

// zstdCompressed compresses data with zstd.
func zstdCompressed(t testing.TB, data []byte) []byte {
	t.Helper()
	enc, err := zstd.NewWriter(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer enc.Close()
	return enc.EncodeAll(data, nil)
}

// openFuzzSeeds returns corpora as the tool meets them: plain, gzip, zstd,
// several gzip members, compressed streams cut short or followed by junk.
func openFuzzSeeds(f *testing.F) [][]byte {
	text, err := os.ReadFile(filepath.Join("testdata", "readers", "chunk.conll"))
	if err != nil {
		f.Fatal(err)
	}
	gz, zs := gzipped(f, text), zstdCompressed(f, text)
	return [][]byte{
		text,
		[]byte("\uFEFFa B\r\nb C\n\n"),
		gz,
		zs,
		append(append([]byte{}, gz...), gzipped(f, []byte("second member\n"))...),
		append(append([]byte{}, zs...), zs...),
		gz[:len(gz)/2],
		zs[:len(zs)-5],
		append(append([]byte{}, gz...), "junk"...),
		gzipped(f, bytes.Repeat([]byte("a"), 100_000)), // one long line
		zstdCompressed(f, bytes.Repeat([]byte("\xff"), 1000)),
	}
}

// FuzzOpen: pipeline.OpenInput and the line reader, over any bytes (plain,
// gzip, zstd and corruptions of them), never panic, return valid UTF-8 lines
// within the line limit, and name the input in every error.
func FuzzOpen(f *testing.F) {
	for _, s := range openFuzzSeeds(f) {
		f.Add(s)
	}
	path := filepath.Join(f.TempDir(), "corpus")
	f.Fuzz(func(t *testing.T, data []byte) {
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		rc, name, err := pipeline.OpenInput(path)
		if err != nil {
			if !strings.HasPrefix(err.Error(), path+": ") {
				t.Fatalf("error %q does not name the input", err)
			}
			return
		}
		defer rc.Close()
		if name != path {
			t.Fatalf("name %q", name)
		}
		lr := newLineReader(rc, name)
		lr.maxLine = 4096
		total := 0
		for total < 8<<20 { // a bomb is bounded by the line limit, not here
			b, ok := lr.next()
			if !ok {
				break
			}
			if len(b) > lr.maxLine || !utf8.Valid(b) {
				t.Fatalf("line %d: %d bytes, valid UTF-8 %v", lr.line, len(b), utf8.Valid(b))
			}
			total += len(b) + 1
		}
		if err := lr.err; err != nil {
			if msg := err.Error(); !strings.HasPrefix(msg, path+":") && !strings.HasPrefix(msg, "read "+path+" ") {
				t.Fatalf("error %q does not name the input", msg)
			}
		}
	})
}
