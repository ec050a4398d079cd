package featurize

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/dualcrf/dualcrf/arrowio"
	"github.com/dualcrf/dualcrf/pipeline"
)

// TestTableNoSentences: a token table without rows — Parquet, an Arrow
// IPC file or stream, with no record batch or an empty one, a directory of
// them, standard input — is the error "NAME: no sentences", as a text
// corpus without sentences is; featurize used to end in a nil pointer
// panic writing the feature table's footer.
func TestTableNoSentences(t *testing.T) {
	dir := t.TempDir()
	lake := filepath.Join(dir, "lake")
	if err := os.Mkdir(lake, 0o755); err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, c := range []struct {
		name    string
		format  arrowio.Format
		batches [][]tok
	}{
		{"none.parquet", arrowio.FormatParquet, nil},
		{"empty.parquet", arrowio.FormatParquet, [][]tok{{}}},
		{"none.arrow", arrowio.FormatFile, nil},
		{"empty.arrow", arrowio.FormatFile, [][]tok{{}}},
		{"none.arrows", arrowio.FormatStream, nil},
	} {
		data := tokenTable(t, c.format, c.batches...)
		p := filepath.Join(dir, c.name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(lake, c.name), data, 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	paths = append(paths, lake)
	stdin, err := os.ReadFile(paths[0])
	if err != nil {
		t.Fatal(err)
	}
	vocab := NewVocabBuilder().Build(1)
	for _, opts := range []RunOptions{{}, {Vocab: vocab, Writer: arrowio.WriterOptions{Format: arrowio.FormatStream}}} {
		for _, p := range append(paths, "-") {
			src := pipeline.Source{Path: p}
			want := p + ": no sentences"
			if p == "-" {
				src.Stdin, want = bytes.NewReader(stdin), pipeline.StdinName+": no sentences"
			}
			_, err := Run(t.Context(), src, io.Discard, opts)
			if err == nil || err.Error() != want {
				t.Errorf("%s (one pass: %v): %v, want %q", p, opts.Vocab != nil, err, want)
			}
		}
	}
}
