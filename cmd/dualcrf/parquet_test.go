package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestParquetEverywhere: every table the tool writes can be Parquet (by
// -o's name or --output-format), every stage reads Parquet chosen by its
// bytes (the inputs here are renamed .bin), from a file or a pipe, and the
// scores are those of the Arrow path. On main featurize, train and eval
// wrote only Arrow IPC and every reader refused Parquet.
func TestParquetEverywhere(t *testing.T) {
	f := fixtures(t)
	dir := t.TempDir()
	rename := func(from, to string) {
		if err := os.Rename(filepath.Join(dir, from), filepath.Join(dir, to)); err != nil {
			t.Fatal(err)
		}
	}
	mustRun(t, dir, "featurize", "-o", "train.parquet", f.trainText)
	rename("train.parquet", "train.bin")
	mustRun(t, dir, "train", "-q", "--gap-tol", "1e-2", "-o", "model.parquet", "--log", "log.parquet", "train.bin")
	rename("model.parquet", "model.bin")
	mustRun(t, dir, "featurize", "--model", "model.bin", "--output-format", "parquet", "-o", "test.bin", f.testText)
	mustRun(t, dir, "decode", "-m", "model.bin", "-o", "pred.parquet", "test.bin")
	rename("pred.parquet", "pred.bin")
	got := mustRun(t, dir, "eval", "--scores", "scores.parquet", "pred.bin")
	want := mustRun(t, dir, "eval", f.pred)
	if !bytes.Equal(got.stdout, want.stdout) {
		t.Errorf("scores from the Parquet path:\n%s\nfrom the Arrow fixtures:\n%s", got.stdout, want.stdout)
	}
	for _, name := range []string{"train.bin", "model.bin", "log.parquet", "test.bin", "pred.bin", "scores.parquet"} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.HasPrefix(b, []byte("PAR1")) {
			t.Errorf("%s is not Parquet", name)
		}
		// inspect reads every table, and verifies the model's checksum.
		r := mustRun(t, dir, "inspect", name)
		if len(r.stdout) == 0 {
			t.Errorf("inspect %s printed nothing", name)
		}
	}

	// Parquet on a pipe: spooled by the reader.
	res := shellPipe(t, dir, "",
		[]string{"featurize", "--output-format", "parquet", "--min-count", "1", f.trainText},
		[]string{"train", "-q", "--gap-tol", "1e-2", "-o", "piped.arrow", "-"})
	for _, r := range res {
		if r.code != 0 {
			t.Fatalf("%v", r)
		}
	}
	res = shellPipe(t, dir, filepath.Join(dir, "test.bin"),
		[]string{"decode", "-m", "model.bin", "--format", "parquet", "-"},
		[]string{"eval", "-"})
	if res[1].code != 0 || !bytes.Equal(res[1].stdout, want.stdout) {
		t.Errorf("decode | eval over Parquet pipes: %v\n%s", res[1], res[1].stdout)
	}
}
