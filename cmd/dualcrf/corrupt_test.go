package main

// The corruption test: every file type the tool writes is damaged at random
// (bytes flipped, the file truncated, a range of another file of the same
// type pasted in) and run through every stage that reads that type, in
// process, so that a panic is caught and counted. A stage must either refuse
// the file (exit status 1, a message naming the file) or succeed; a model
// must moreover be refused unless it reads as the model it was (its
// checksum), so a stage that accepts a corrupted model must write exactly
// what it writes with the intact one.
//
// The default run damages each file type 100 times; -corrupt.n sets the
// number (the long run: go test ./cmd/dualcrf -run TestCorruption
// -corrupt.n 1000 -v), -corrupt.seed the random seed and -corrupt.keep a
// directory where the files behind failures are kept.

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
	"time"
)

var (
	corruptN    = flag.Int("corrupt.n", 100, "TestCorruption: corruptions per file type (each run through every stage reading that type)")
	corruptSeed = flag.Uint64("corrupt.seed", 1, "TestCorruption: random seed")
	corruptKeep = flag.String("corrupt.keep", "", "TestCorruption: keep the corrupted files behind failures in this directory")
)

// inProcess runs the CLI in this process with args (without the program
// name) and returns its exit status as main would pick it, what it wrote on
// the app's writers, and the value of a panic (nil when none).
func inProcess(args ...string) (code int, stdout, stderr []byte, panicked any) {
	var out, errb bytes.Buffer
	func() {
		defer func() {
			if p := recover(); p != nil {
				panicked = fmt.Sprintf("%v\n%s", p, debug.Stack())
			}
		}()
		err := newApp(nil, &out, &errb).RunContext(context.Background(), append([]string{"dualcrf"}, args...))
		code = exitCode(err, nil, &errb)
	}()
	return code, out.Bytes(), errb.Bytes(), panicked
}

// corruptStage is a stage that reads a file of some type: args returns its
// command line for the file at path, writing any output file into out.
type corruptStage struct {
	name string
	args func(path, out string) []string
}

// corruptType is a file type the tool writes: a good file, another file of
// the same type (the source of splices) and the stages that read it.
type corruptType struct {
	name        string
	good, other string
	// identical: a stage that accepts a damaged file must write what it
	// writes with the intact one (models, which carry a checksum).
	identical bool
	stages    []corruptStage
}

// corruptFixtures writes the files of every type into dir with the CLI and
// returns the types. The corpus is small (40 training sentences, attributes
// seen twice) so that damage falls often in metadata, dictionaries and
// footers, not only in weights.
func corruptFixtures(t *testing.T, dir string) []corruptType {
	t.Helper()
	p := func(name string) string { return filepath.Join(dir, name) }
	writeFirstSentences(t, "testdata/train150.txt", p("train.txt"), 40)
	test := abs(t, "testdata/test50.txt")
	steps := [][]string{
		{"featurize", "--min-count", "2", "-o", p("feat.arrow"), p("train.txt")},
		{"featurize", "--min-count", "2", "-o", p("feat-other.arrow"), test},
		{"featurize", "--min-count", "2", "--ipc", "file", "-o", p("feat.file.arrow"), p("train.txt")},
		{"featurize", "--min-count", "2", "--ipc", "file", "-o", p("feat-other.file.arrow"), test},
		{"featurize", "--min-count", "2", "--compression", "zstd", "-o", p("feat.zstd.arrow"), p("train.txt")},
		{"featurize", "--min-count", "2", "--compression", "zstd", "-o", p("feat-other.zstd.arrow"), test},
		{"featurize", "--min-count", "2", "--ipc", "file", "--compression", "zstd", "-o", p("feat.file.zstd.arrow"), p("train.txt")},
		{"featurize", "--min-count", "2", "--ipc", "file", "--compression", "zstd", "-o", p("feat-other.file.zstd.arrow"), test},
		{"train", "-q", "--gap-tol", "1e-2", "--log", p("log.arrow"), "-o", p("model.arrow"), p("feat.arrow")},
		{"train", "-q", "--max-epochs", "3", "--no-bias", "--log", p("log-other.arrow"), "-o", p("model-other.arrow"), p("feat.arrow")},
		{"featurize", "--model", p("model.arrow"), "-o", p("test.arrow"), test},
		{"decode", "-m", p("model.arrow"), "-o", p("pred.arrow"), p("test.arrow")},
		{"decode", "-m", p("model.arrow"), "--marginals", "-o", p("pred-other.arrow"), p("test.arrow")},
		{"eval", "--arrow", p("scores.arrow"), p("pred.arrow")},
		{"eval", "--no-chunks", "--arrow", p("scores-other.arrow"), p("pred.arrow")},
		{"decode", "-m", p("model.arrow"), "--nbest", "3", "--chunk-confidence", "--constraints", "bio", "-o", p("pred-nbest.arrow"), p("test.arrow")},
		{"decode", "-m", p("model.arrow"), "--nbest", "2", "--chunk-confidence", "--marginals", "-o", p("pred-nbest-other.arrow"), p("test.arrow")},
		// The same kinds as Parquet.
		{"featurize", "--min-count", "2", "-o", p("feat.parquet"), p("train.txt")},
		{"featurize", "--min-count", "2", "-o", p("feat-other.parquet"), test},
		{"train", "-q", "--gap-tol", "1e-2", "--log", p("log.parquet"), "-o", p("model.parquet"), p("feat.arrow")},
		{"train", "-q", "--max-epochs", "3", "--no-bias", "--log", p("log-other.parquet"), "-o", p("model-other.parquet"), p("feat.arrow")},
		{"decode", "-m", p("model.arrow"), "-o", p("pred.parquet"), p("test.arrow")},
		{"decode", "-m", p("model.arrow"), "--marginals", "-o", p("pred-other.parquet"), p("test.arrow")},
		{"eval", "--arrow", p("scores.parquet"), p("pred.arrow")},
		{"eval", "--no-chunks", "--arrow", p("scores-other.parquet"), p("pred.arrow")},
		// Weights tables (explain -o), both formats.
		{"explain", "-o", p("weights.arrow"), p("model.arrow")},
		{"explain", "-o", p("weights-other.arrow"), p("model-other.arrow")},
		{"explain", "-o", p("weights.parquet"), p("model.arrow")},
		{"explain", "-o", p("weights-other.parquet"), p("model-other.arrow")},
	}
	for _, args := range steps {
		if code, _, stderr, pv := inProcess(args...); code != 0 || pv != nil {
			t.Fatalf("dualcrf %s: exit %d, panic %v\n%s", strings.Join(args, " "), code, pv, stderr)
		}
	}
	inspect := corruptStage{"inspect", func(f, _ string) []string { return []string{"inspect", f} }}
	featureStages := []corruptStage{
		{"train", func(f, o string) []string { return []string{"train", "-q", "--max-epochs", "1", "-o", o, f} }},
		{"decode", func(f, o string) []string { return []string{"decode", "-m", p("model.arrow"), "-o", o, f} }},
		{"featurize --vocab", func(f, o string) []string { return []string{"featurize", "--vocab", f, "-o", o, test} }},
		inspect,
	}
	var types []corruptType
	for _, v := range []string{"", ".file", ".zstd", ".file.zstd"} {
		types = append(types, corruptType{
			name: "feature table" + strings.ReplaceAll(v, ".", " "),
			good: p("feat" + v + ".arrow"), other: p("feat-other" + v + ".arrow"),
			stages: featureStages,
		})
	}
	modelStages := []corruptStage{
		{"decode -m", func(f, o string) []string { return []string{"decode", "-m", f, "-o", o, p("test.arrow")} }},
		{"featurize --model", func(f, o string) []string { return []string{"featurize", "--model", f, "-o", o, test} }},
		{"decode --text -m", func(f, o string) []string { return []string{"decode", "--text", test, "-m", f, "-o", o} }},
		{"explain", func(f, o string) []string { return []string{"explain", "--top", "3", "-o", o, f} }},
		inspect,
	}
	// export refuses a model with bias weights: it reads the --no-bias one.
	noBiasStages := []corruptStage{
		{"export", func(f, o string) []string { return []string{"export", "--format", "crfsuite", "-o", o, f} }},
		{"explain -o .parquet", func(f, o string) []string { return []string{"explain", "--format", "parquet", "-o", o, f} }},
	}
	predStages := []corruptStage{
		{"eval", func(f, _ string) []string { return []string{"eval", f} }},
		inspect,
	}
	types = append(types, corruptType{name: "prediction table n-best", good: p("pred-nbest.arrow"), other: p("pred-nbest-other.arrow"),
		stages: append(predStages, corruptStage{"eval --calibration", func(f, _ string) []string { return []string{"eval", "--calibration", f} }})})
	for _, ext := range []string{".arrow", ".parquet"} {
		kind := ""
		if ext == ".parquet" {
			kind = " parquet"
			types = append(types, corruptType{name: "feature table parquet", good: p("feat.parquet"), other: p("feat-other.parquet"), stages: featureStages})
		}
		types = append(types,
			corruptType{name: "model" + kind, good: p("model" + ext), other: p("model-other" + ext), identical: true, stages: modelStages},
			corruptType{name: "model no-bias" + kind, good: p("model-other" + ext), other: p("model" + ext), identical: true, stages: noBiasStages},
			corruptType{name: "prediction table" + kind, good: p("pred" + ext), other: p("pred-other" + ext), stages: predStages},
			corruptType{name: "training log" + kind, good: p("log" + ext), other: p("log-other" + ext), stages: []corruptStage{inspect}},
			corruptType{name: "scores table" + kind, good: p("scores" + ext), other: p("scores-other" + ext), stages: []corruptStage{inspect}},
			corruptType{name: "weights table" + kind, good: p("weights" + ext), other: p("weights-other" + ext), stages: []corruptStage{inspect}},
		)
	}
	// Parquet token tables, read by featurize: one from a data lake and
	// the lake's training part.
	return append(types, corruptType{name: "token table parquet",
		good:  abs(t, "testdata/cases/941-featurize-token-table-stdin/tokens.parquet"),
		other: abs(t, "testdata/cases/940-featurize-token-table-lake/lake/split=train/part-0.parquet"),
		stages: []corruptStage{
			{"featurize", func(f, o string) []string { return []string{"featurize", "--template", "chunking", "-o", o, f} }},
			{"featurize --model", func(f, o string) []string { return []string{"featurize", "--model", p("model.arrow"), "-o", o, f} }},
		}})
}

// writeFirstSentences copies the first n blank-line-separated sentences of
// the text file src to dst.
func writeFirstSentences(t *testing.T, src, dst string, n int) {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	sents := strings.SplitAfter(string(b), "\n\n")
	if len(sents) < n {
		t.Fatalf("%s has %d sentences, want %d", src, len(sents), n)
	}
	if err := os.WriteFile(dst, []byte(strings.Join(sents[:n], "")), 0o644); err != nil {
		t.Fatal(err)
	}
}

// corruption is one way of damaging a file.
type corruption struct {
	kind string // "flip", "truncate" or "splice"
	desc string // what was done, to reproduce it
	data []byte
}

// nearEnds picks an offset in [0, n): half the time uniformly, otherwise
// within 4 KiB of either end, where schemas, dictionaries and footers are.
func nearEnds(r *rand.Rand, n int) int {
	if n <= 0 {
		return 0
	}
	w := min(n, 4096)
	switch r.IntN(4) {
	case 0:
		return r.IntN(w)
	case 1:
		return n - 1 - r.IntN(w)
	}
	return r.IntN(n)
}

// corrupt damages a copy of good: i selects the kind (flip, truncate, splice
// in turn), r the details; other is the splice source.
func corrupt(r *rand.Rand, i int, good, other []byte) corruption {
	data := append([]byte(nil), good...)
	switch i % 3 {
	case 0:
		var at []string
		for k := 1 + r.IntN(4); k > 0; k-- {
			pos := nearEnds(r, len(data))
			x := byte(1 + r.IntN(255))
			data[pos] ^= x
			at = append(at, fmt.Sprintf("%d^%#02x", pos, x))
		}
		return corruption{"flip", "flip " + strings.Join(at, " "), data}
	case 1:
		n := nearEnds(r, len(data))
		return corruption{"truncate", fmt.Sprintf("truncate to %d of %d bytes", n, len(data)), data[:n]}
	}
	l2 := 1 + r.IntN(min(len(other), 4096))
	a := r.IntN(len(other) - l2 + 1)
	b := a // the same offset in both: headers land on headers
	if r.IntN(3) > 0 || b > len(data) {
		b = nearEnds(r, len(data))
	}
	l1 := l2
	if r.IntN(2) == 0 {
		l1 = r.IntN(min(len(data)-b, 4096) + 1)
	}
	l1 = min(l1, len(data)-b)
	out := append(append(append([]byte(nil), data[:b]...), other[a:a+l2]...), data[b+l1:]...)
	return corruption{"splice", fmt.Sprintf("splice other[%d:%d] over [%d:%d]", a, a+l2, b, b+l1), out}
}

// corruptTally counts what the runs of one stage on one file type gave:
// refused (exit 1 naming the file), accepted (exit 0; for a model, with
// the intact model's output), panics, and bad (any other outcome).
type corruptTally struct {
	runs, refused, accepted, panics, bad int
}

// TestCorruption damages every file type the tool writes and runs each
// damaged file through every stage that reads it: no panic, every refusal
// exit status 1 with a message naming the file, and no damaged model
// accepted unless it reads as the intact one.
func TestCorruption(t *testing.T) {
	dir := t.TempDir()
	types := corruptFixtures(t, dir)
	victims := filepath.Join(dir, "victims")
	if err := os.MkdirAll(victims, 0o755); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	tallies := map[string]*corruptTally{}
	var order []string
	for ti, ct := range types {
		good, err := os.ReadFile(ct.good)
		if err != nil {
			t.Fatal(err)
		}
		other, err := os.ReadFile(ct.other)
		if err != nil {
			t.Fatal(err)
		}
		// The damaged file takes the intact one's name, so that outputs
		// naming their input compare equal.
		victim := filepath.Join(victims, filepath.Base(ct.good))
		baseline := corruptBaseline(t, ct, victim, good)
		for i := 0; i < *corruptN; i++ {
			r := rand.New(rand.NewPCG(*corruptSeed, uint64(ti)<<32|uint64(i)))
			c := corrupt(r, i, good, other)
			if err := os.WriteFile(victim, c.data, 0o644); err != nil {
				t.Fatal(err)
			}
			for si, st := range ct.stages {
				key := ct.name + "\t" + c.kind + "\t" + st.name
				if tallies[key] == nil {
					tallies[key] = new(corruptTally)
					order = append(order, key)
				}
				if problem := runCorrupted(t, ct, st, victim, baseline[si], tallies[key]); problem != "" {
					t.Errorf("%s, %s #%d (%s), %s: %s", ct.name, c.kind, i, c.desc, st.name, problem)
					keepCorrupt(t, ct, i, c)
				}
			}
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d corruptions per file type, seed %d, %.1fs\n", *corruptN, *corruptSeed, time.Since(start).Seconds())
	fmt.Fprintf(&b, "%-28s %-9s %-18s %5s %7s %8s %6s %4s\n", "file type", "damage", "stage", "runs", "refused", "accepted", "panics", "bad")
	for _, key := range order {
		f := strings.Split(key, "\t")
		tl := tallies[key]
		fmt.Fprintf(&b, "%-28s %-9s %-18s %5d %7d %8d %6d %4d\n", f[0], f[1], f[2], tl.runs, tl.refused, tl.accepted, tl.panics, tl.bad)
	}
	t.Log("\n" + b.String())
}

// corruptBaseline runs every stage of ct on the intact file (written at
// victim) and returns what each wrote.
func corruptBaseline(t *testing.T, ct corruptType, victim string, good []byte) [][]byte {
	t.Helper()
	if err := os.WriteFile(victim, good, 0o644); err != nil {
		t.Fatal(err)
	}
	baseline := make([][]byte, len(ct.stages))
	for si, st := range ct.stages {
		out := filepath.Join(filepath.Dir(victim), "out")
		code, stdout, stderr, pv := inProcess(st.args(victim, out)...)
		if code != 0 || pv != nil {
			t.Errorf("%s, %s on the intact file: exit %d, panic %v\n%s", ct.name, st.name, code, pv, stderr)
		}
		baseline[si] = stageOutput(t, stdout, out)
		_ = os.Remove(out)
	}
	return baseline
}

// runCorrupted runs stage st on the damaged file victim, counts the outcome
// in tl and describes it when it is a failure of the test.
func runCorrupted(t *testing.T, ct corruptType, st corruptStage, victim string, baseline []byte, tl *corruptTally) string {
	t.Helper()
	tl.runs++
	out := filepath.Join(filepath.Dir(victim), "out")
	defer os.Remove(out)
	code, stdout, stderr, pv := inProcess(st.args(victim, out)...)
	switch {
	case pv != nil:
		tl.panics++
		return fmt.Sprintf("panic: %v", pv)
	case code == 0 && ct.identical && !bytes.Equal(stageOutput(t, stdout, out), baseline):
		tl.bad++
		return "accepted, and its output differs from the intact file's: " + firstDiff(stageOutput(t, stdout, out), baseline)
	case code == 0:
		tl.accepted++
	case code != 1 || !bytes.Contains(stderr, []byte(victim)):
		tl.bad++
		return fmt.Sprintf("exit %d, a message not naming %s: %s", code, victim, stderr)
	default:
		tl.refused++
	}
	return ""
}

// stageOutput is what a stage wrote: its standard output, then its output
// file when there is one.
func stageOutput(t *testing.T, stdout []byte, out string) []byte {
	t.Helper()
	b, err := os.ReadFile(out)
	if errors.Is(err, os.ErrNotExist) {
		return stdout
	}
	if err != nil {
		t.Fatal(err)
	}
	return append(append([]byte(nil), stdout...), b...)
}

// firstDiff describes the first line where got and want differ.
func firstDiff(got, want []byte) string {
	g, w := bytes.Split(got, []byte("\n")), bytes.Split(want, []byte("\n"))
	for i := 0; i < min(len(g), len(w)); i++ {
		if !bytes.Equal(g[i], w[i]) {
			return fmt.Sprintf("line %d is %.200q, was %.200q", i+1, g[i], w[i])
		}
	}
	return fmt.Sprintf("%d lines, were %d", len(g), len(w))
}

// keepCorrupt saves a damaged file behind a failure in -corrupt.keep.
func keepCorrupt(t *testing.T, ct corruptType, i int, c corruption) {
	if *corruptKeep == "" {
		return
	}
	name := fmt.Sprintf("%s-%s-%d%s", strings.ReplaceAll(ct.name, " ", "_"), c.kind, i, filepath.Ext(ct.good))
	if err := os.MkdirAll(*corruptKeep, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(*corruptKeep, name), c.data, 0o644); err != nil {
		t.Fatal(err)
	}
}
