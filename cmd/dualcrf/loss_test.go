package main

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/dualcrf/dualcrf/arrowio"
)

// copyFile copies src to dst.
func copyFile(t *testing.T, src, dst string) {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// refusedIntact runs the binary in dir for each case, wanting exit 1 with
// the message and every file of dir as it was.
func refusedIntact(t *testing.T, dir string, cases [][]string, wants []string) {
	t.Helper()
	before := map[string][32]byte{}
	names := dirEntries(t, dir)
	for _, n := range names {
		if st, err := os.Stat(filepath.Join(dir, n)); err == nil && st.Mode().IsRegular() {
			before[n] = digest(t, filepath.Join(dir, n))
		}
	}
	for i, args := range cases {
		r := runBinary(t, dir, "", args...)
		noPanic(t, r)
		if r.code != 1 || !strings.Contains(string(r.stderr), wants[i]) {
			t.Errorf("%v\nwant exit 1 and %q", r, wants[i])
		}
		for n, h := range before {
			if digest(t, filepath.Join(dir, n)) != h {
				t.Fatalf("%v\nchanged %s", r, n)
			}
		}
		if got := dirEntries(t, dir); !reflect.DeepEqual(got, names) {
			t.Fatalf("%v\nthe directory holds %v, was %v", r, got, names)
		}
	}
}

// TestStreamDualsNotInput: train's streamed duals file (--duals
// stream:PATH, or duals.stream in the checkpoint directory) is an output
// like any other: naming an input, through any path, or another output is
// refused before anything is written (formerly the input was replaced by
// the duals file and train exited 0).
func TestStreamDualsNotInput(t *testing.T) {
	f := fixtures(t)
	dir := t.TempDir()
	copyFile(t, f.train, filepath.Join(dir, "in.arrow"))
	copyFile(t, f.test, filepath.Join(dir, "v.arrow"))
	if err := os.Symlink("in.arrow", filepath.Join(dir, "link.arrow")); err != nil {
		t.Fatal(err)
	}
	train := []string{"train", "-q", "--memory-budget", "96MiB", "--max-epochs", "1"}
	with := func(args ...string) []string { return append(append([]string(nil), train...), args...) }
	refusedIntact(t, dir, [][]string{
		with("--duals", "stream:in.arrow", "-o", "m.arrow", "in.arrow"),
		with("--valid", "v.arrow", "--duals", "stream:v.arrow", "-o", "m.arrow", "in.arrow"),
		with("--duals", "stream:link.arrow", "-o", "m.arrow", "in.arrow"),
		with("--duals", "stream:./in.arrow", "-o", "m.arrow", "link.arrow"),
		with("--duals", "stream:m.arrow", "-o", "m.arrow", "in.arrow"),
		with("--checkpoint", "ck", "--duals", "stream", "-o", "ck/duals.stream", "in.arrow"),
		with("--checkpoint", "ck", "-o", "ck/LOCK", "in.arrow"),
	}, []string{
		"train: output --duals in.arrow is the same file as input in.arrow: refusing to overwrite an input",
		"train: output --duals v.arrow is the same file as input --valid v.arrow: refusing to overwrite an input",
		"train: output --duals link.arrow is the same file as input in.arrow",
		"train: output --duals ./in.arrow is the same file as input link.arrow",
		"train: outputs --duals m.arrow and -o m.arrow are the same file",
		"train: output -o ck/duals.stream is inside --checkpoint ck, a directory the run writes and clears",
		"train: output -o ck/LOCK is inside --checkpoint ck, a directory the run writes and clears",
	})
}

// TestFeaturizeIntoInputDirectory: featurize's output inside the
// directory it reads is refused, whatever names the directory (formerly
// the output was read back: 1000 sentences, then 2000).
func TestFeaturizeIntoInputDirectory(t *testing.T) {
	dir := t.TempDir()
	copyFile(t, "testdata/cases/940-featurize-token-table-lake/lake/split=train/part-0.parquet", filepath.Join(dir, "lk/part-0.parquet"))
	if err := os.Symlink("lk", filepath.Join(dir, "lk2")); err != nil {
		t.Fatal(err)
	}
	refusedIntact(t, filepath.Join(dir, "lk"), nil, nil) // records the directory
	refusedIntact(t, dir, [][]string{
		{"featurize", "-o", "lk/features.parquet", "lk"},
		{"featurize", "-o", "lk2/features.arrow", "lk"},
		{"featurize", "-o", "lk/sub/f.arrow", "lk2/"},
		{"featurize", "-o", "lk/.hidden.arrow", "lk"},
	}, []string{
		"featurize: output -o lk/features.parquet is inside input directory lk: refusing to write into a directory that is read",
		"featurize: output -o lk2/features.arrow is inside input directory lk",
		"featurize: output -o lk/sub/f.arrow is inside input directory lk2/",
		"featurize: output -o lk/.hidden.arrow is inside input directory lk",
	})
	for range 2 {
		if r := runBinary(t, dir, "", "featurize", "-o", "f.arrow", "lk"); r.code != 0 || !strings.Contains(string(r.stderr), "150 sentences") {
			t.Fatalf("%v", r)
		}
	}
}

// writeEmptyTokens writes a token table without rows (Parquet) at path.
func writeEmptyTokens(t *testing.T, path string) {
	t.Helper()
	s := arrow.NewSchema([]arrow.Field{
		{Name: "sentence", Type: arrow.PrimitiveTypes.Int64},
		{Name: "position", Type: arrow.PrimitiveTypes.Int32},
		{Name: "word", Type: arrow.BinaryTypes.String},
		{Name: "chunk", Type: arrow.BinaryTypes.String, Nullable: true},
	}, nil)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	out, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	w, err := arrowio.NewRecordWriter(out, s, arrowio.WriterOptions{Format: arrowio.FormatParquet})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestJobNoRows: a job featurizing a lake without rows fails naming the
// stage and "no sentences", and writes its failed manifest (formerly
// featurize panicked: exit 2, no manifest).
func TestJobNoRows(t *testing.T) {
	dir := t.TempDir()
	writeEmptyTokens(t, filepath.Join(dir, "lk/part-0.parquet"))
	job := "name: empty\nstages:\n  - {run: featurize, inputs: [lk], output: out/f.arrow}\n"
	if err := os.WriteFile(filepath.Join(dir, "job.yaml"), []byte(job), 0o644); err != nil {
		t.Fatal(err)
	}
	r := runBinary(t, dir, "", "run", "job.yaml")
	noPanic(t, r)
	if want := "dualcrf: stage featurize (featurize) failed: lk: no sentences\n"; r.code != 1 || !strings.HasSuffix(string(r.stderr), want) {
		t.Fatalf("%v\nwant exit 1 and %q", r, want)
	}
	if m := readManifest(t, filepath.Join(dir, ".dualcrf-job/empty/manifest.failed.json")); m.Status != "failed" || m.FailedAt != "featurize" {
		t.Errorf("failed manifest: %+v", m)
	}
	if _, err := os.Stat(filepath.Join(dir, "out/f.arrow")); !os.IsNotExist(err) {
		t.Errorf("output: %v", err)
	}
}
