package main

// Regression tests of the readers and the units (error messages, units,
// write errors) through the binary.

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/dualcrf/dualcrf/arrowio"
	"github.com/dualcrf/dualcrf/crf"
	"github.com/dualcrf/dualcrf/schemas"
	"github.com/dualcrf/dualcrf/tables"
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
	rr, err := tables.OpenRecordReader(f, path, arrowio.ReaderOptions{})
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
// like its accuracy, and the log states the unit.
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
// fractions.
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
	rr, err := tables.OpenRecordReader(file, scores, arrowio.ReaderOptions{})
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

// TestInspectEveryTable: inspect reads and summarises every table the tool
// writes.
func TestInspectEveryTable(t *testing.T) {
	f := fixtures(t)
	dir := t.TempDir()
	mustRun(t, dir, "train", "-q", "--max-epochs", "2", "--log", "log.arrow", "-o", "model.arrow", f.train)
	mustRun(t, dir, "eval", "--arrow", "scores.arrow", f.pred)
	for _, c := range []struct {
		path string
		want []string
	}{
		{f.train, []string{"feature table " + f.train + " (format version " + schemas.FeatureVersion + ")", "sentences   150\n"}},
		{f.model, []string{"model " + f.model + " (format version " + schemas.ModelVersion + ")", schemas.KeyChecksum + " ", "(verified)"}},
		{f.pred, []string{"prediction table " + f.pred + " (format version " + schemas.PredictionVersion + ")", "sentences   50\n", "token accuracy 0."}},
		{"log.arrow", []string{"training log log.arrow (format version " + schemas.LogVersion + ")", "epochs      3 rows\n", "valid_f1"}},
		{"scores.arrow", []string{"scores table scores.arrow (format version " + schemas.ScoresVersion + ")", "scheme      conlleval\n", "f1          0."}},
	} {
		out := string(mustRun(t, dir, "inspect", c.path).stdout)
		for _, s := range c.want {
			if !strings.Contains(out, s) {
				t.Errorf("inspect %s lacks %q:\n%s", c.path, s, out)
			}
		}
	}
}

// TestInspectWriteError: inspect fails when its summary cannot be written
// (it once exited 0 on /dev/full).
func TestInspectWriteError(t *testing.T) {
	f := fixtures(t)
	full, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
	if err != nil {
		t.Fatalf("this test needs /dev/full: %v", err)
	}
	defer full.Close()
	for _, path := range []string{f.model, f.train, f.pred} {
		cmd := command(t.TempDir(), "inspect", path)
		var errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = full, &errb
		r := result{args: cmd.Args[1:]}
		finish(&r, cmd, cmd.Run())
		r.stderr = errb.Bytes()
		if r.code != 1 || !bytes.Contains(r.stderr, []byte("no space left on device")) {
			t.Errorf("inspect %s > /dev/full: %v\nwant exit 1 and the write error", path, r)
		}
	}
}

// TestNonFiniteModelRefused: decode, featurize --model and inspect refuse
// a model with a NaN weight, naming the file, the row and the value (issue
// 10, defect 10: they decoded with it).
func TestNonFiniteModelRefused(t *testing.T) {
	f := fixtures(t)
	data, err := os.ReadFile(f.model)
	if err != nil {
		t.Fatal(err)
	}
	m := readModelFile(t, f.model)
	// A weight of an attribute row whose 8 bytes occur once in the file.
	K := m.Layout.NumLabels
	at, row := -1, -1
	for i := 0; i < m.Layout.NumAttrs*K && at < 0; i++ {
		var b [8]byte
		binary.LittleEndian.PutUint64(b[:], math.Float64bits(m.Weights[i]))
		if bytes.Count(data, b[:]) == 1 {
			at, row = bytes.Index(data, b[:]), i/K
		}
	}
	if at < 0 {
		t.Fatal("no weight with a unique bit pattern in the model")
	}
	binary.LittleEndian.PutUint64(data[at:], math.Float64bits(math.NaN()))
	dir := t.TempDir()
	bad := filepath.Join(dir, "nan-model.arrow")
	if err := os.WriteFile(bad, data, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"decode", "-m", bad, "-o", "pred.arrow", f.test},
		{"featurize", "--model", bad, "-o", "test.arrow", f.testText},
		{"inspect", bad},
	} {
		r := runBinary(t, dir, "", args...)
		for _, s := range []string{bad, fmt.Sprintf("attr %q", m.AttrNames[row]), "NaN"} {
			if r.code != 1 || !bytes.Contains(r.stderr, []byte(s)) {
				t.Errorf("%v\nwant exit 1 and a message with %q", r, s)
			}
		}
	}
}

// readModelFile reads the model at path.
func readModelFile(t *testing.T, path string) *crf.Model {
	t.Helper()
	file, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	m, err := tables.ReadModel(file, path, arrowio.ReaderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return m
}
