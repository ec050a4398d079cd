package dualcrfbeam

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/dualcrf/dualcrf/tables"
)

// FuzzReadPredictionFile: any bytes given to eval as a prediction table
// (Parquet when they start with its magic, Arrow IPC otherwise) give
// sentences or an error, never a panic; errors name the file.
func FuzzReadPredictionFile(f *testing.F) {
	for _, seed := range fuzzSeeds(f) {
		f.Add(seed)
	}
	f.Add([]byte("PAR1"))
	f.Add([]byte("PAR1\x00\x00\x00\x00PAR1"))
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "pred.parquet")
		if err := os.WriteFile(path, data, 0o666); err != nil {
			t.Fatal(err)
		}
		_ = readPredictionFile(context.Background(), path, func(*tables.PredictedSentence) error { return nil })
	})
}

// fuzzSeeds are the prediction tables of the CLI's test data: a Parquet
// file made by decode, when the fixture exists.
func fuzzSeeds(f *testing.F) [][]byte {
	var out [][]byte
	for _, p := range []string{"testdata/pred.parquet"} {
		if b, err := os.ReadFile(p); err == nil {
			out = append(out, b)
		}
	}
	if len(out) == 0 {
		f.Fatal("no seed: testdata/pred.parquet is missing")
	}
	return out
}
