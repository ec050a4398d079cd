package main

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dualcrf/dualcrf/duals"
)

// warmJobFile is a job of featurize and train on a corpus that grows.
const warmJobFile = `name: grow
stages:
  - name: features
    run: featurize
    inputs: [corpus.txt]
    options: {template: chunking}
    output: out/train.arrow
  - run: train
    inputs: [out/train.arrow]
    options: {gap-tol: 1e-3, lambda: LAMBDA, quiet: true}
    output: out/model.arrow
`

// TestJobWarmStart: a job's train stage keeps its duals; when its corpus
// grows (a day with a new label among the added sentences) it starts from
// them by itself, and the manifest says how many sentences it kept and
// added; a changed λ starts cold and says why.
func TestJobWarmStart(t *testing.T) {
	fixtures(t)
	full, err := os.ReadFile("testdata/train150.txt")
	if err != nil {
		t.Fatal(err)
	}
	sents := strings.SplitAfter(strings.TrimSpace(string(full))+"\n", "\n\n")
	if len(sents) < 150 {
		t.Fatalf("train150.txt has %d sentences", len(sents))
	}
	dir := t.TempDir()
	write := func(name, text string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	manifest := filepath.Join(dir, ".dualcrf-job/grow/manifest.json")
	run := func(what string) string {
		t.Helper()
		cmd := command(dir, "run", "job.yaml")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("%s: %v\n%s", what, err, stderr.String())
		}
		return stderr.String()
	}
	write("job.yaml", strings.Replace(warmJobFile, "LAMBDA", "1/n", 1))
	write("corpus.txt", strings.Join(sents[:120], ""))
	run("first run")
	if w := readManifest(t, manifest).Stages[1].WarmStart; w == nil || w.Start != "cold" || w.Reason != "no kept duals (first run)" {
		t.Fatalf("first run: %+v", w)
	}
	// The added day renames NP chunks NP2: two labels the kept duals lack.
	added := strings.NewReplacer("B-NP\n", "B-NP2\n", "I-NP\n", "I-NP2\n").Replace(strings.Join(sents[120:150], ""))
	write("corpus.txt", strings.Join(sents[:120], "")+added)
	// The labels of the added sentences the first 120 do not have.
	labels := func(text string) map[string]bool {
		m := map[string]bool{}
		for _, line := range strings.Split(text, "\n") {
			if f := strings.Fields(line); len(f) > 0 {
				m[f[len(f)-1]] = true
			}
		}
		return m
	}
	old := labels(strings.Join(sents[:120], ""))
	var fresh []string
	for l := range labels(added) {
		if !old[l] {
			fresh = append(fresh, l)
		}
	}
	log := run("grown corpus")
	w := readManifest(t, manifest).Stages[1].WarmStart
	got := append([]string(nil), w.NewLabels...)
	slices.Sort(got)
	slices.Sort(fresh)
	if w == nil || w.Start != "warm" || w.Kept != 120 || w.Added != 30 || w.Dropped != 0 || !slices.Equal(got, fresh) || !slices.Contains(got, "B-NP2") {
		t.Fatalf("grown corpus: %+v, want new labels %v\n%s", w, fresh, log)
	}
	if !strings.Contains(log, "train: warm start from") || !strings.Contains(log, "120 sentences kept, 30 added, 0 dropped; new labels ") {
		t.Errorf("grown corpus: the log does not say so:\n%s", log)
	}
	write("job.yaml", strings.Replace(warmJobFile, "LAMBDA", "2/n", 1))
	log = run("λ changed")
	if w := readManifest(t, manifest).Stages[1].WarmStart; w == nil || w.Start != "cold" || !strings.Contains(w.Reason, "options changed") ||
		!strings.Contains(log, "starting cold") {
		t.Fatalf("λ changed: %+v\n%s", w, log)
	}
}

// TestTrainWarmStart: train --keep-duals, then --warm-start on a grown
// table (a warm start with counts in the log and the model), on a table
// featurized with other templates (cold, said), with λ changed (cold,
// said), and the refusals: streamed duals, --resume, another solver, a
// corrupted kept file (an error naming it).
func TestTrainWarmStart(t *testing.T) {
	fixtures(t)
	full, err := os.ReadFile("testdata/train150.txt")
	if err != nil {
		t.Fatal(err)
	}
	sents := strings.SplitAfter(strings.TrimSpace(string(full))+"\n", "\n\n")
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "old.txt"), []byte(strings.Join(sents[:100], "")), 0o644)
	os.WriteFile(filepath.Join(dir, "new.txt"), []byte(strings.Join(sents[:150], "")), 0o644)
	run := func(args ...string) (string, error) {
		t.Helper()
		cmd := command(dir, args...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		err := cmd.Run()
		return stderr.String(), err
	}
	must := func(args ...string) string {
		t.Helper()
		log, err := run(args...)
		if err != nil {
			t.Fatalf("%v: %v\n%s", args, err, log)
		}
		return log
	}
	must("featurize", "--template", "chunking", "-o", "old.arrow", "old.txt")
	must("featurize", "--template", "chunking", "-o", "new.arrow", "new.txt")
	must("featurize", "--template", "ner", "-o", "ner.arrow", "new.txt")
	must("train", "-q", "--gap-tol", "1e-3", "--keep-duals", "old.duals", "-o", "old.model", "old.arrow")
	// Memory-mapped duals, keeping today's for tomorrow.
	log := must("train", "-q", "--gap-tol", "1e-3", "--warm-start", "old.duals", "--keep-duals", "new.duals", "--duals", "mm.duals", "-o", "warm.model", "new.arrow")
	if k, err := duals.OpenKept(filepath.Join(dir, "new.duals")); err != nil || len(k.Keys) != 150 {
		t.Errorf("today's kept duals: %v", err)
	} else {
		k.Close()
	}
	if !strings.Contains(log, "train: warm start from old.duals: 100 sentences kept, 50 added, 0 dropped") || !strings.Contains(log, "; gap estimates recomputed every 2 epochs") {
		t.Errorf("warm start log:\n%s", log)
	}
	cmd := command(dir, "inspect", "warm.model")
	info, err := cmd.Output()
	if err != nil || !strings.Contains(string(info), `warm_start   {"from":"old.duals","kept":100,"added":50,"dropped":0,`) ||
		!strings.Contains(string(info), `,"refresh_every":2}`) {
		t.Errorf("the model does not record the warm start:\n%s", info)
	}
	// A warm run interrupted after 2 epochs and resumed (without the kept
	// duals: its own are in the snapshot) ends where the uninterrupted one
	// does, at every digit the log prints.
	stopped := func(log string) string {
		t.Helper()
		for _, l := range strings.Split(log, "\n") {
			if strings.HasPrefix(l, "train: stopped") {
				_, after, _ := strings.Cut(l, "wall): ")
				before, _, _ := strings.Cut(l, ",")
				return before + " " + after
			}
		}
		t.Fatalf("no stop line in\n%s", log)
		return ""
	}
	whole := stopped(must("train", "-q", "--gap-tol", "1e-5", "--warm-start", "old.duals", "-o", "whole.model", "new.arrow"))
	must("train", "-q", "--gap-tol", "1e-5", "--warm-start", "old.duals", "--checkpoint", "ck", "--keep-checkpoints", "--max-epochs", "2", "-o", "part.model", "new.arrow")
	if resumed := stopped(must("train", "-q", "--gap-tol", "1e-5", "--resume", "ck", "-o", "resumed.model", "new.arrow")); resumed != whole {
		t.Errorf("resumed warm run: %q, uninterrupted: %q", resumed, whole)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--warm-start", "old.duals", "ner.arrow"}, "starting cold, not from old.duals: its duals were trained on a table of other feature templates"},
		{[]string{"--warm-start", "old.duals", "--lambda", "0.01", "new.arrow"}, "its duals were trained with λ = 1/n, this run has λ = 0.01"},
	} {
		if log := must(append([]string{"train", "-q", "--gap-tol", "1e-2", "-o", "cold.model"}, tc.args...)...); !strings.Contains(log, tc.want) {
			t.Errorf("%v: want %q in\n%s", tc.args, tc.want, log)
		}
	}
	b, _ := os.ReadFile(filepath.Join(dir, "old.duals"))
	b[len(b)/2] ^= 1
	os.WriteFile(filepath.Join(dir, "bad.duals"), b, 0o644)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--warm-start", "old.duals", "--duals", "stream"}, "--warm-start"},
		{[]string{"--warm-start", "old.duals", "--resume", "ck"}, "--resume"},
		{[]string{"--warm-start", "old.duals", "--solver", "lbfgs"}, "applies to SDCA only"},
		{[]string{"--keep-duals", "k.duals", "--solver", "lbfgs"}, "applies to SDCA only"},
		{[]string{"--keep-duals", "new.arrow"}, "--keep-duals"},
		{[]string{"--warm-start", "bad.duals"}, "bad.duals: not a usable kept-duals file: the duals' checksum does not match"},
	} {
		log, err := run(append(append([]string{"train", "-q", "-o", "x.model"}, tc.args...), "new.arrow")...)
		if err == nil || !strings.Contains(log, tc.want) {
			t.Errorf("%v: %v, want an error with %q:\n%s", tc.args, err, tc.want, log)
		}
	}
}

// TestTrainWarmStartL1: the elastic net's duals are kept and warm-start a
// grown table with the same λ₁ (to the cold run's optimum, within the
// certified gaps); another λ₁, or none, starts cold and says why.
func TestTrainWarmStartL1(t *testing.T) {
	fixtures(t)
	full, err := os.ReadFile("testdata/train150.txt")
	if err != nil {
		t.Fatal(err)
	}
	sents := strings.SplitAfter(strings.TrimSpace(string(full))+"\n", "\n\n")
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "old.txt"), []byte(strings.Join(sents[:100], "")), 0o644)
	os.WriteFile(filepath.Join(dir, "new.txt"), []byte(strings.Join(sents[:150], "")), 0o644)
	must := func(args ...string) string {
		t.Helper()
		cmd := command(dir, args...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("%v: %v\n%s", args, err, stderr.String())
		}
		return stderr.String()
	}
	primal := func(log string) (p, gap float64) {
		t.Helper()
		for _, l := range strings.Split(log, "\n") {
			if _, after, ok := strings.Cut(l, "wall): primal "); ok {
				if _, err := fmt.Sscanf(after, "%g, certified gap %g", &p, &gap); err == nil {
					return p, gap
				}
			}
		}
		t.Fatalf("no stop line in\n%s", log)
		return 0, 0
	}
	must("featurize", "--template", "chunking", "-o", "old.arrow", "old.txt")
	must("featurize", "--template", "chunking", "-o", "new.arrow", "new.txt")
	l1 := []string{"train", "-q", "--gap-tol", "1e-3", "--l1", "0.1/n", "--lambda", "0.2/n"}
	must(append(l1, "--keep-duals", "old.duals", "-o", "old.model", "old.arrow")...)
	warm := must(append(l1, "--warm-start", "old.duals", "-o", "warm.model", "new.arrow")...)
	if !strings.Contains(warm, "train: warm start from old.duals: 100 sentences kept, 50 added, 0 dropped") {
		t.Errorf("warm start log:\n%s", warm)
	}
	cold := must(append(l1, "-o", "cold.model", "new.arrow")...)
	pw, gw := primal(warm)
	pc, gc := primal(cold)
	if gw > 1e-3 || gc > 1e-3 || math.Abs(pw-pc) > gw+gc {
		t.Errorf("warm P %.10g (gap %g), cold P %.10g (gap %g): not the same optimum", pw, gw, pc, gc)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--l1", "0.2/n", "--lambda", "0.2/n"}, "its duals were trained with λ₁ = 0.1/n, this run has λ₁ = 0.2/n"},
		{[]string{"--lambda", "0.2/n"}, "its duals were trained with λ₁ = 0.1/n, this run has λ₁ = 0"},
	} {
		args := append(append([]string{"train", "-q", "--gap-tol", "1e-2", "--warm-start", "old.duals", "-o", "c.model"}, tc.args...), "new.arrow")
		if log := must(args...); !strings.Contains(log, tc.want) {
			t.Errorf("%v: want %q in\n%s", tc.args, tc.want, log)
		}
	}
}
