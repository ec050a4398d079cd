package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/parquet/file"

	"github.com/dualcrf/dualcrf/schemas"
	"github.com/dualcrf/dualcrf/stage"
)

// evalReport is the part of `dualcrf eval --json` the tests check.
type evalReport struct {
	Sentences     int     `json:"sentences"`
	Tokens        int     `json:"tokens"`
	CorrectTokens int     `json:"correct_tokens"`
	Accuracy      float64 `json:"accuracy"`
	Labels        []struct {
		Label     string `json:"label"`
		Gold      int    `json:"gold"`
		Predicted int    `json:"predicted"`
		Correct   int    `json:"correct"`
	} `json:"labels"`
	Chunks *struct {
		Gold      int     `json:"gold"`
		Predicted int     `json:"predicted"`
		Correct   int     `json:"correct"`
		Precision float64 `json:"precision"`
		Recall    float64 `json:"recall"`
		F1        float64 `json:"f1"`
	} `json:"chunks"`
}

// parseEval decodes eval --json output and checks it against the gold
// corpus it scores: counts from the text, and figures consistent with them.
func parseEval(t *testing.T, out []byte, gold corpus) evalReport {
	t.Helper()
	var e evalReport
	if err := json.Unmarshal(out, &e); err != nil {
		t.Fatalf("eval --json: %v\n%s", err, out)
	}
	if e.Sentences != gold.sentences || e.Tokens != gold.tokens {
		t.Errorf("eval: %d sentences, %d tokens; the file has %d, %d", e.Sentences, e.Tokens, gold.sentences, gold.tokens)
	}
	if got := float64(e.CorrectTokens) / float64(e.Tokens); math.Abs(got-e.Accuracy) > 1e-12 {
		t.Errorf("eval: accuracy %v, but correct/tokens = %v", e.Accuracy, got)
	}
	predicted := 0
	for _, l := range e.Labels {
		if l.Gold != gold.labelCount[l.Label] {
			t.Errorf("eval: label %s has %d gold tokens; the file has %d", l.Label, l.Gold, gold.labelCount[l.Label])
		}
		predicted += l.Predicted
	}
	if predicted != gold.tokens {
		t.Errorf("eval: %d predicted labels over all labels, want one per token (%d)", predicted, gold.tokens)
	}
	if e.Chunks == nil {
		t.Fatalf("eval: no chunk scores for chunk labels")
	}
	c := e.Chunks
	if c.Gold != gold.chunks {
		t.Errorf("eval: %d gold chunks; conlleval's rules find %d in the file", c.Gold, gold.chunks)
	}
	// Every score is a fraction in [0, 1], like the accuracy.
	if p := float64(c.Correct) / float64(c.Predicted); math.Abs(p-c.Precision) > 1e-12 {
		t.Errorf("eval: precision %v, want %d/%d = %v", c.Precision, c.Correct, c.Predicted, p)
	}
	if r := float64(c.Correct) / float64(c.Gold); math.Abs(r-c.Recall) > 1e-12 {
		t.Errorf("eval: recall %v, want %d/%d = %v", c.Recall, c.Correct, c.Gold, r)
	}
	if f := 2 * c.Precision * c.Recall / (c.Precision + c.Recall); math.Abs(f-c.F1) > 1e-12 || c.F1 > 1 {
		t.Errorf("eval: F1 %v, want the harmonic mean of %v and %v = %v", c.F1, c.Precision, c.Recall, f)
	}
	return e
}

// TestFeaturizeEmbeddedCounts featurizes the embedded CoNLL-2000 training
// slice and checks the reported and inspected counts against the text.
func TestFeaturizeEmbeddedCounts(t *testing.T) {
	src := abs(t, "demodata/train.txt.gz")
	want := readCorpus(t, src)
	if want.sentences != 1000 || want.tokens != 23719 {
		t.Fatalf("demodata/train.txt.gz has %d sentences, %d tokens; SOURCES.md documents 1000, 23719", want.sentences, want.tokens)
	}
	dir := t.TempDir()
	r := mustRun(t, dir, "featurize", "-o", "train.arrow", src)
	line := fmt.Sprintf("featurize: %d sentences, %d tokens,", want.sentences, want.tokens)
	if !bytes.Contains(r.stderr, []byte(line)) {
		t.Errorf("featurize stderr lacks %q:\n%s", line, r.stderr)
	}
	if len(r.stdout) != 0 {
		t.Errorf("featurize -o wrote %d bytes to stdout", len(r.stdout))
	}
	ins := string(mustRun(t, dir, "inspect", "train.arrow").stdout)
	for _, s := range []string{
		"feature table train.arrow (format version 1)",
		fmt.Sprintf("sentences   %d\n", want.sentences),
		fmt.Sprintf("tokens      %d ", want.tokens),
		fmt.Sprintf("labels      %d (0 tokens unlabelled)", len(want.labelCount)),
	} {
		if !strings.Contains(ins, s) {
			t.Errorf("inspect lacks %q:\n%s", s, ins)
		}
	}
	for label, n := range want.labelCount {
		if !regexp.MustCompile(`(?m)^  ` + regexp.QuoteMeta(label) + ` +` + fmt.Sprint(n) + `$`).MatchString(ins) {
			t.Errorf("inspect: label %s should count %d tokens:\n%s", label, n, ins)
		}
	}
}

// TestPipes runs the README pipeline through real pipes:
//
//	featurize train | train -o model -
//	featurize --model model test | decode -m model | eval [--json]
func TestPipes(t *testing.T) {
	f := fixtures(t)
	trainC, testC := readCorpus(t, f.trainText), readCorpus(t, f.testText)
	dir := t.TempDir()
	res := mustShellPipe(t, dir, "",
		[]string{"featurize", f.trainText},
		[]string{"train", "--gap-tol", "1e-2", "--max-epochs", "50", "-o", "model.arrow", "-"})
	want := fmt.Sprintf("train: %d sentences, %d tokens,", trainC.sentences, trainC.tokens)
	if !bytes.Contains(res[1].stderr, []byte(want)) {
		t.Errorf("train stderr lacks %q:\n%s", want, res[1].stderr)
	}
	if !regexp.MustCompile(`train: stopped \(gap\) after \d+ epochs`).Match(res[1].stderr) {
		t.Errorf("train did not stop on the gap certificate:\n%s", res[1].stderr)
	}
	// The same seed gives the same weights, through a pipe or from a file
	// (the metadata differ: source name and training seconds).
	piped, err := stage.ReadModel(context.Background(), stage.File(filepath.Join(dir, "model.arrow")))
	if err != nil {
		t.Fatal(err)
	}
	fromFile, err := stage.ReadModel(context.Background(), stage.File(f.model))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(piped.Weights, fromFile.Weights) || !slices.Equal(piped.AttrNames, fromFile.AttrNames) {
		t.Errorf("model trained through a pipe differs from the one trained on a file")
	}

	stages := [][]string{
		{"featurize", "--model", "model.arrow", f.testText},
		{"decode", "-m", "model.arrow"},
		{"eval", "--json"},
	}
	res = mustShellPipe(t, dir, "", stages...)
	e := parseEval(t, res[2].stdout, testC)
	// A chunker trained on 150 sentences tags far better than chance; the
	// bound only guards against a scrambled label mapping.
	if e.Accuracy < 0.8 {
		t.Errorf("token accuracy %.4f on the test slice; a trained chunker reaches > 0.8", e.Accuracy)
	}

	// The text report carries the same counts.
	stages[2] = []string{"eval"}
	res = mustShellPipe(t, dir, "", stages...)
	head := fmt.Sprintf("processed %d tokens with %d phrases; found: %d phrases; correct: %d.",
		testC.tokens, testC.chunks, e.Chunks.Predicted, e.Chunks.Correct)
	if !bytes.HasPrefix(res[2].stdout, []byte(head)) {
		t.Errorf("eval report starts %q, want %q", firstLine(res[2].stdout), head)
	}
	if acc := fmt.Sprintf("accuracy: %6.2f%%", 100*e.Accuracy); !bytes.Contains(res[2].stdout, []byte(acc)) {
		t.Errorf("eval report lacks %q:\n%s", acc, res[2].stdout)
	}
}

func firstLine(b []byte) string {
	s, _, _ := strings.Cut(string(b), "\n")
	return s
}

// TestDecodeTextCoNLL checks decode --text --format conll: every input line
// comes back with one predicted label appended, sentence breaks kept.
func TestDecodeTextCoNLL(t *testing.T) {
	f := fixtures(t)
	testC := readCorpus(t, f.testText)
	labels := modelLabels(t, f.model)
	r := mustRun(t, t.TempDir(), "decode", "-m", f.model, "--text", f.testText, "--format", "conll")
	got := strings.Split(strings.TrimRight(string(r.stdout), "\n"), "\n\n")
	if len(got) != testC.sentences {
		t.Fatalf("decode --format conll: %d sentences, the input has %d", len(got), testC.sentences)
	}
	for i, block := range got {
		lines := strings.Split(block, "\n")
		if len(lines) != len(testC.lines[i]) {
			t.Fatalf("sentence %d: %d lines, the input has %d", i, len(lines), len(testC.lines[i]))
		}
		for j, line := range lines {
			in := strings.Join(strings.Fields(testC.lines[i][j]), " ")
			pred, ok := strings.CutPrefix(line, in+" ")
			if !ok || !labels[pred] {
				t.Fatalf("sentence %d line %d: %q; want %q followed by a model label", i, j, line, in)
			}
		}
	}
}

// modelLabels reads the label names that inspect reports for a model.
func modelLabels(t *testing.T, model string) map[string]bool {
	t.Helper()
	out := string(mustRun(t, t.TempDir(), "inspect", model).stdout)
	m := regexp.MustCompile(`(?m)^labels +(\d+) +(.*)$`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("inspect %s: no labels line:\n%s", model, out)
	}
	set := map[string]bool{}
	for _, l := range strings.Fields(m[2]) {
		set[l] = true
	}
	if fmt.Sprint(len(set)) != m[1] {
		t.Fatalf("inspect %s: %s labels announced, %d listed", model, m[1], len(set))
	}
	return set
}

// TestDecodeParquet checks that --format parquet writes a complete Parquet
// file with one row per token and the prediction column.
func TestDecodeParquet(t *testing.T) {
	f := fixtures(t)
	testC := readCorpus(t, f.testText)
	dir := t.TempDir()
	mustRun(t, dir, "decode", "-m", f.model, "--format", "parquet", "-o", "pred.parquet", f.test)
	path := filepath.Join(dir, "pred.parquet")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) < 8 || string(b[:4]) != "PAR1" || string(b[len(b)-4:]) != "PAR1" {
		t.Fatalf("pred.parquet (%d bytes) does not start and end with PAR1", len(b))
	}
	pf, err := file.OpenParquetFile(path, false)
	if err != nil {
		t.Fatal(err)
	}
	defer pf.Close()
	if n := pf.NumRows(); n != int64(testC.tokens) {
		t.Errorf("pred.parquet has %d rows, the test slice %d tokens", n, testC.tokens)
	}
	for _, col := range []string{"sentence", "gold", "pred"} {
		if pf.MetaData().Schema.ColumnIndexByName(col) < 0 {
			t.Errorf("pred.parquet has no %q column", col)
		}
	}
}

// TestIPCFileZstd writes every stage's output as a zstd-compressed Arrow
// IPC file and checks the next stage reads it and scores as the streams do.
func TestIPCFileZstd(t *testing.T) {
	f := fixtures(t)
	trainC, testC := readCorpus(t, f.trainText), readCorpus(t, f.testText)
	dir := t.TempDir()
	z := []string{"--ipc", "file", "--compression", "zstd"}
	mustRun(t, dir, append(append([]string{"featurize", "-o", "train.arrow"}, z...), f.trainText)...)
	checkArrowFile(t, filepath.Join(dir, "train.arrow"))
	plain, _ := os.Stat(f.train)
	packed, _ := os.Stat(filepath.Join(dir, "train.arrow"))
	if packed.Size() >= plain.Size() {
		t.Errorf("zstd feature table is %d bytes, the uncompressed stream %d", packed.Size(), plain.Size())
	}
	r := mustRun(t, dir, "train", "-q", "--max-epochs", "3", "-o", "model.arrow", "train.arrow")
	if want := fmt.Sprintf("train: %d sentences, %d tokens,", trainC.sentences, trainC.tokens); !bytes.Contains(r.stderr, []byte(want)) {
		t.Errorf("train of the zstd file: stderr lacks %q:\n%s", want, r.stderr)
	}
	mustRun(t, dir, append(append([]string{"featurize", "--model", f.model, "-o", "test.arrow"}, z...), f.testText)...)
	mustRun(t, dir, append(append([]string{"decode", "-m", f.model, "-o", "pred.arrow"}, z...), "test.arrow")...)
	checkArrowFile(t, filepath.Join(dir, "pred.arrow"))
	fromFile := parseEval(t, mustRun(t, dir, "eval", "--json", "pred.arrow").stdout, testC)
	fromStream := parseEval(t, mustRun(t, dir, "eval", "--json", f.pred).stdout, testC)
	if fromFile.CorrectTokens != fromStream.CorrectTokens || fromFile.Chunks.Correct != fromStream.Chunks.Correct {
		t.Errorf("zstd file path scores %d tokens / %d chunks correct, the stream path %d / %d",
			fromFile.CorrectTokens, fromFile.Chunks.Correct, fromStream.CorrectTokens, fromStream.Chunks.Correct)
	}
	// eval --arrow writes the scores as an IPC file the inspect-free reader accepts.
	mustRun(t, dir, "eval", "--arrow", "scores.arrow", "pred.arrow")
	checkArrowFile(t, filepath.Join(dir, "scores.arrow"))
}

// checkArrowFile checks the Arrow IPC file magic at both ends.
func checkArrowFile(t *testing.T, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) < 12 || string(b[:6]) != "ARROW1" || string(b[len(b)-6:]) != "ARROW1" {
		t.Errorf("%s is not an Arrow IPC file (no ARROW1 magic at both ends)", path)
	}
}

// TestInspect checks inspect of a feature table (from a file and from
// stdin) and of a model against the training text.
func TestInspect(t *testing.T) {
	f := fixtures(t)
	c := readCorpus(t, f.trainText)
	dir := t.TempDir()
	for _, args := range [][]string{{"inspect", f.train}, {"inspect", "-"}} {
		stdin := ""
		if args[1] == "-" {
			stdin = f.train
		}
		r := runBinary(t, dir, stdin, args...)
		if r.code != 0 {
			t.Fatalf("%v", r)
		}
		for _, s := range []string{
			"(format version 1)",
			fmt.Sprintf("sentences   %d\n", c.sentences),
			fmt.Sprintf("tokens      %d ", c.tokens),
			fmt.Sprintf("labels      %d (0 tokens unlabelled)", len(c.labelCount)),
			"dualcrf.templates:",
		} {
			if !bytes.Contains(r.stdout, []byte(s)) {
				t.Errorf("%v: stdout lacks %q:\n%s", args, s, r.stdout)
			}
		}
	}
	out := string(mustRun(t, dir, "inspect", f.model).stdout)
	for _, s := range []string{
		"model " + f.model + " (format version " + schemas.ModelVersion + ")",
		fmt.Sprintf("dualcrf.n               %d\n", c.sentences),
		fmt.Sprintf("dualcrf.lambda          %v\n", 1/float64(c.sentences)),
		"dualcrf.solver          sdca",
	} {
		if !strings.Contains(out, s) {
			t.Errorf("inspect model lacks %q:\n%s", s, out)
		}
	}
	// A model on standard input is recognised as well.
	r := runBinary(t, dir, f.model, "inspect", "-")
	if r.code != 0 || !bytes.HasPrefix(r.stdout, []byte("model <stdin> (format version "+schemas.ModelVersion+")\n")) {
		t.Errorf("inspect - < model: %v\nstdout:\n%s", r, r.stdout)
	}
	if got := modelLabels(t, f.model); len(got) != len(c.labelCount) {
		t.Errorf("model has %d labels, the training text %d", len(got), len(c.labelCount))
	}
}

// TestDemoEmbedded runs the demo on the embedded slice and checks that it
// shows each stage's command and ends with a conlleval report of the
// embedded test slice.
func TestDemoEmbedded(t *testing.T) {
	testC := readCorpus(t, abs(t, "demodata/test.txt.gz"))
	dir := t.TempDir()
	r := mustRun(t, dir, "demo", "--embedded", "--gap-tol", "1e-2", "--dir", "out")
	out := string(r.stdout)
	last := -1
	for _, stage := range []string{"featurize", "featurize --vocab", "train", "decode", "eval"} {
		i := strings.Index(out[last+1:], "\n$ dualcrf "+stage+" ")
		if i < 0 {
			t.Fatalf("demo output lacks a `$ dualcrf %s …` line after byte %d:\n%s", stage, last, out)
		}
		last += 1 + i
	}
	report := fmt.Sprintf("processed %d tokens with %d phrases;", testC.tokens, testC.chunks)
	if !strings.Contains(out[last:], report) {
		t.Errorf("demo output after `$ dualcrf eval` lacks %q:\n%s", report, out[last:])
	}
	if !regexp.MustCompile(`accuracy: +\d+\.\d\d%; precision: +\d+\.\d\d%; recall: +\d+\.\d\d%; FB1: +\d+\.\d\d`).MatchString(out) {
		t.Errorf("demo output lacks conlleval's accuracy line:\n%s", out)
	}
	for _, name := range []string{"train.arrow", "test.arrow", "model.arrow", "log.arrow", "pred.arrow"} {
		if _, err := os.Stat(filepath.Join(dir, "out", name)); err != nil {
			t.Errorf("demo --dir out: %v", err)
		}
	}
}

// TestDemoSaysItRemoves: without --dir the demo works in a temporary
// directory, says so at the start, and at the end says that it removed it
// (and how to keep the files); the directory is gone.
func TestDemoSaysItRemoves(t *testing.T) {
	dir := t.TempDir()
	r := mustRun(t, dir, "demo", "--embedded", "--gap-tol", "0.5")
	out := string(r.stdout)
	m := regexp.MustCompile(`files in (\S+), removed at the end \(--dir DIR keeps them\)`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("the demo does not say where its files go and that they are removed:\n%s", out)
	}
	if !strings.HasSuffix(out, "\n# removed "+m[1]+" and the tables, model and log in it (dualcrf demo --dir DIR keeps them)\n") {
		t.Errorf("the demo does not end saying it removed %s:\n%s", m[1], out)
	}
	if _, err := os.Stat(m[1]); !os.IsNotExist(err) {
		t.Errorf("%s is still there: %v", m[1], err)
	}
}
