package main

// Regression tests of the readers and the units of issue 10 (defects 10,
// 22 and 23) through the binary.

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/dualcrf/dualcrf/pipeline"
	"github.com/dualcrf/dualcrf/schemas"
)

// readColumn reads the float64 column name of the Arrow file at path (NaN
// for nulls) and returns it with the column's field.
func readColumn(t *testing.T, path, name string) ([]float64, arrow.Field) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rr, err := pipeline.OpenRecordReader(f, path, pipeline.ReaderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer rr.Release()
	idx := rr.Schema().FieldIndices(name)
	if len(idx) != 1 {
		t.Fatalf("%s has no column %q", path, name)
	}
	var out []float64
	for rr.Next() {
		col := rr.RecordBatch().Column(idx[0]).(*array.Float64)
		for i := 0; i < col.Len(); i++ {
			v := math.NaN()
			if col.IsValid(i) {
				v = col.Value(i)
			}
			out = append(out, v)
		}
	}
	if err := rr.Err(); err != nil {
		t.Fatal(err)
	}
	return out, rr.Schema().Field(idx[0])
}

// TestLogScoresAreFractions: the training log's held-out F1 is a fraction
// like its accuracy, and the log states the unit (issue 10, defect 22).
func TestLogScoresAreFractions(t *testing.T) {
	f := fixtures(t)
	dir := t.TempDir()
	log := filepath.Join(dir, "log.arrow")
	mustRun(t, dir, "train", "-q", "--max-epochs", "3", "--valid", f.test, "--log", log, "-o", "model.arrow", f.train)
	pred := filepath.Join(dir, "pred.arrow")
	mustRun(t, dir, "decode", "-m", "model.arrow", "-o", pred, f.test)
	var e evalReport
	if err := json.Unmarshal(mustRun(t, dir, "eval", "--json", pred).stdout, &e); err != nil {
		t.Fatal(err)
	}
	for _, col := range []string{"valid_accuracy", "valid_f1"} {
		vals, field := readColumn(t, log, col)
		last := vals[len(vals)-1]
		if !(last > 0 && last <= 1) {
			t.Errorf("log %s of the last epoch is %v, want a fraction in (0, 1]", col, last)
		}
		if u, _ := field.Metadata.GetValue(schemas.KeyUnit); u != schemas.UnitFraction {
			t.Errorf("log column %s states unit %q, want %q", col, u, schemas.UnitFraction)
		}
	}
	// The last epoch's held-out F1 is that of the model written, which eval
	// reports as a fraction too.
	if f1, _ := readColumn(t, log, "valid_f1"); math.Abs(f1[len(f1)-1]-e.Chunks.F1) > 0.01 {
		t.Errorf("log valid_f1 %v, eval --json f1 %v of the same model: want the same unit", f1[len(f1)-1], e.Chunks.F1)
	}
}

// TestEvalArrowScoresTable: eval --arrow writes a scores table that says
// what it is (dualcrf.format, dualcrf.version), with the JSON's figures as
// fractions (issue 10, defects 22 and 23).
func TestEvalArrowScoresTable(t *testing.T) {
	f := fixtures(t)
	dir := t.TempDir()
	scores := filepath.Join(dir, "scores.arrow")
	var e evalReport
	if err := json.Unmarshal(mustRun(t, dir, "eval", "--json", "--arrow", scores, f.pred).stdout, &e); err != nil {
		t.Fatal(err)
	}
	file, err := os.Open(scores)
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	rr, err := pipeline.OpenRecordReader(file, scores, pipeline.ReaderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	md := schemas.MetadataMap(rr.Schema())
	rr.Release()
	if md[schemas.KeyFormat] != "scores" || md[schemas.KeyVersion] == "" {
		t.Errorf("scores table metadata %v lacks %s=scores and a %s", md, schemas.KeyFormat, schemas.KeyVersion)
	}
	for col, want := range map[string]float64{"accuracy": e.Accuracy, "precision": e.Chunks.Precision, "recall": e.Chunks.Recall, "f1": e.Chunks.F1} {
		got, _ := readColumn(t, scores, col)
		if len(got) != 1 || got[0] != want || !(want > 0 && want <= 1) {
			t.Errorf("scores table %s = %v, eval --json %v: want the same fraction", col, got, want)
		}
	}
}
