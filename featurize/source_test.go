package featurize

import (
	"bytes"
	"context"
	"io"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/dualcrf/dualcrf/crf/crftest"
	"github.com/dualcrf/dualcrf/pipeline"
	"github.com/dualcrf/dualcrf/tables"
)

// TestRunFromReader featurizes a corpus handed over as standard input that
// is no file — a reader with ReadAt, read in place, and a bare stream,
// spooled for the second pass — gzip-compressed or not: the same table as
// from the file, and the same bytes from both readers.
func TestRunFromReader(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	path := textCorpus(t, rng, 120, 40, []string{"B-NP", "I-NP", "O"})
	plain, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	chunking, err := Builtin("chunking")
	if err != nil {
		t.Fatal(err)
	}
	opts := RunOptions{Templates: chunking, MinCount: 2}
	ctx := context.Background()
	var fromFile bytes.Buffer
	if _, err := Run(ctx, pipeline.Source{Path: path}, &fromFile, opts); err != nil {
		t.Fatal(err)
	}
	want, err := tables.ReadFeatureTable(&fromFile, "file", tables.FeatureReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, data := range [][]byte{plain, gzipped(t, plain)} {
		var outs [2]bytes.Buffer
		readers := []io.Reader{bytes.NewReader(data), struct{ io.Reader }{bytes.NewReader(data)}}
		for i, r := range readers {
			sum, err := Run(ctx, pipeline.Source{Path: "-", Stdin: r}, &outs[i], opts)
			if err != nil {
				t.Fatalf("reader %d: %v", i, err)
			}
			if sum.Sentences != want.Data.Len() || sum.Metadata["dualcrf.source"] != pipeline.StdinName {
				t.Errorf("reader %d: %d sentences from %q, want %d from %q", i, sum.Sentences, sum.Metadata["dualcrf.source"], want.Data.Len(), pipeline.StdinName)
			}
		}
		if !bytes.Equal(outs[0].Bytes(), outs[1].Bytes()) {
			t.Errorf("a reader read in place and a stream made different tables")
		}
		got, err := tables.ReadFeatureTable(&outs[0], "stdin", tables.FeatureReadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if err := crftest.CompareDatasets(got.Data, want.Data); err != nil {
			t.Error(err)
		}
	}
}
