package main

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
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
