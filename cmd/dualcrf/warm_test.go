package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
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
	// does, at every digit the log prints, with its model's bytes (the
	// warm start's facts included).
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
	sameFile(t, filepath.Join(dir, "whole.model"), filepath.Join(dir, "resumed.model"))
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
		{[]string{"--warm-start", "old.duals", "--resume", "ck"}, "ck is not a checkpoint directory"}, // the run ended: its snapshots are gone
		{[]string{"--warm-start", "old.duals", "--solver", "lbfgs"}, "not used by --solver lbfgs (only by --solver sdca)"},
		{[]string{"--keep-duals", "k.duals", "--solver", "lbfgs"}, "not used by --solver lbfgs (only by --solver sdca)"},
		{[]string{"--keep-duals", "new.arrow"}, "--keep-duals"},
		{[]string{"--warm-start", "bad.duals"}, "bad.duals: not a usable kept-duals file: the duals' checksum does not match"},
	} {
		log, err := run(append(append([]string{"train", "-q", "-o", "x.model"}, tc.args...), "new.arrow")...)
		if err == nil || !strings.Contains(log, tc.want) {
			t.Errorf("%v: %v, want an error with %q:\n%s", tc.args, err, tc.want, log)
		}
	}
}

// TestWarmStartResumeSameBytes: a warm-started run stopped by SIGTERM and
// resumed — with the same command and --resume, or without --warm-start —
// writes the uninterrupted run's model bytes (its warm_start facts kept
// in the snapshots) and kept duals; a resume that names other kept duals,
// or a cold run's checkpoint with --warm-start, is refused naming both.
func TestWarmStartResumeSameBytes(t *testing.T) {
	fx := makeComboFixtures(t)
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	args := func(out, ck string, extra ...string) []string {
		a := []string{"train", "-q", "--max-epochs", "4", "--gap-tol", "1e-9", "--warm-start", fx.kept, "--keep-duals", p(out + ".duals"),
			"-o", p(out + ".arrow")}
		if ck != "" {
			a = append(a, "--checkpoint", p(ck))
		}
		return append(append(a, extra...), fx.table)
	}
	count := newTermAfter(-1)
	if r := runIn(count, args("whole", "")...); r.code != 0 {
		t.Fatalf("%v", r)
	}
	_, facts := modelTraining(t, p("whole.arrow"))
	if w, ok := facts["warm_start"].(map[string]any); !ok || w["kept"] != 70.0 || w["added"] != 30.0 {
		t.Fatalf("the uninterrupted run's facts: %v", facts)
	}
	for _, c := range []struct {
		name, out string
		resume    []string // the resume's command line
	}{
		{"same-command", "a", args("a", "ck-a", "--resume", p("ck-a"))},
		{"without-warm-start", "b", []string{"train", "-q", "--max-epochs", "4", "--gap-tol", "1e-9", "--keep-duals", p("b.duals"),
			"--resume", p("ck-b"), "-o", p("b.arrow"), fx.table}},
	} {
		t.Run(c.name, func(t *testing.T) {
			name := c.out
			stop := runIn(newTermAfter(count.calls/2), args(name, "ck-"+name)...)
			if stop.code != 143 {
				t.Fatalf("want exit 143: %v", stop)
			}
			if r := runIn(context.Background(), c.resume...); r.code != 0 {
				t.Fatalf("%v", r)
			}
			sameFile(t, p("whole.arrow"), p(name+".arrow"))
			sameFile(t, p("whole.duals"), p(name+".duals"))
		})
	}
	// Refusals, before any work: the resume names other kept duals; a cold
	// run's snapshot resumed with --warm-start.
	stop := runIn(newTermAfter(count.calls/2), args("c", "ck-c")...)
	if stop.code != 143 {
		t.Fatalf("want exit 143: %v", stop)
	}
	other := p("other.duals")
	b, _ := os.ReadFile(fx.kept)
	os.WriteFile(other, b, 0o644)
	r := runIn(context.Background(), "train", "-q", "--warm-start", other, "--resume", p("ck-c"), "-o", p("c.arrow"), fx.table)
	if r.code != 1 || !strings.Contains(string(r.stderr), `--warm-start "`+other+`": the run in --resume started from `+fx.kept) {
		t.Fatalf("other kept duals: %v", r)
	}
	cold := runIn(newTermAfter(count.calls/2), "train", "-q", "--max-epochs", "4", "--gap-tol", "1e-9", "--checkpoint", p("ck-d"), "-o", p("d.arrow"), fx.table)
	if cold.code != 143 {
		t.Fatalf("want exit 143: %v", cold)
	}
	r = runIn(context.Background(), "train", "-q", "--warm-start", fx.kept, "--resume", p("ck-d"), "-o", p("d.arrow"), fx.table)
	if r.code != 1 || !strings.Contains(string(r.stderr), "the run in --resume started without kept duals: resume it without --warm-start") {
		t.Fatalf("a cold run's snapshot with --warm-start: %v", r)
	}
	for _, name := range []string{"c.arrow", "d.arrow"} {
		if _, err := os.Stat(p(name)); err == nil {
			t.Errorf("a refused resume wrote %s", name)
		}
	}
}

// TestWarmStartAutoStreamedStartsCold: with --duals auto, a run that does
// not fit in its memory budget streams its duals, where no warm start can
// begin: it starts cold, says so and why (naming what would let it start
// warm), and its model records it, instead of failing; kept duals it
// cannot read are still an error.
func TestWarmStartAutoStreamedStartsCold(t *testing.T) {
	fx := makeComboFixtures(t)
	table := demoFeatures(t)
	dir := t.TempDir()
	r := runIn(context.Background(), "train", "-q", "--max-epochs", "1", "--warm-start", fx.kept, "--memory-budget", "84MiB",
		"-o", filepath.Join(dir, "m.arrow"), table)
	if r.code != 0 || streamBlocks(r.stderr) < 2 ||
		!strings.Contains(string(r.stderr), "starting cold, not from "+fx.kept+": the duals are streamed (the run does not fit in memory)") ||
		!strings.Contains(string(r.stderr), "give --duals PATH (memory-mapped) or a larger --memory-budget to start warm") {
		t.Fatalf("%v", r)
	}
	_, facts := modelTraining(t, filepath.Join(dir, "m.arrow"))
	if w, ok := facts["warm_start"].(map[string]any); !ok || !strings.Contains(fmt.Sprint(w["cold"]), "streamed") {
		t.Fatalf("facts %v", facts)
	}
	r = runIn(context.Background(), "train", "-q", "--max-epochs", "1", "--warm-start", filepath.Join(dir, "none.duals"), "--memory-budget", "84MiB",
		"-o", filepath.Join(dir, "n.arrow"), table)
	if r.code != 1 || !strings.Contains(string(r.stderr), "none.duals") {
		t.Fatalf("missing kept duals: %v", r)
	}
}

// TestJobHingeAndStreamedStagesGrow: a job whose train stages use the
// hinge loss and streamed duals in many blocks (with snapshots every
// epoch; one stage keeping its duals as its options ask) runs day after
// day as its corpora grow: the job adds --keep-duals and --warm-start only
// where train accepts them and says why the streamed stage starts cold;
// the stage that keeps its duals keeps them (it panicked, leaving no
// manifest).
func TestJobHingeAndStreamedStagesGrow(t *testing.T) {
	full, err := os.ReadFile("testdata/train150.txt")
	if err != nil {
		t.Fatal(err)
	}
	sents := strings.SplitAfter(strings.TrimSpace(string(full))+"\n", "\n\n")
	demo := readCorpusText(t, "demodata/train.txt.gz")
	dir := t.TempDir()
	write := func(name, text string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("job.yaml", `name: grow
stages:
  - name: features
    run: featurize
    inputs: [corpus.txt]
    options: {template: chunking}
    output: out/train.arrow
  - name: hinge
    run: train
    inputs: [out/train.arrow]
    options: {loss: hinge, max-epochs: 3, quiet: true}
    output: out/hinge.arrow
  - name: big-features
    run: featurize
    inputs: [big.txt]
    options: {template: chunking, min-count: 3}
    output: out/big.arrow
  - name: streamed
    run: train
    inputs: [out/big.arrow]
    options: {duals: stream, memory-budget: 84MiB, checkpoint-every: 1, max-epochs: 1, quiet: true}
    output: out/streamed.arrow
  - name: kept
    run: train
    inputs: [out/big.arrow]
    options: {duals: stream, memory-budget: 84MiB, checkpoint-every: 1, max-epochs: 1, quiet: true, keep-duals: out/kept.duals}
    output: out/kept.arrow
`)
	manifest := filepath.Join(dir, ".dualcrf-job/grow/manifest.json")
	for day, frac := range []float64{0.7, 1} {
		write("corpus.txt", strings.Join(sents[:int(frac*150)], ""))
		write("big.txt", strings.Join(demo[:int(frac*float64(len(demo)))], ""))
		r := runIn(context.Background(), "run", filepath.Join(dir, "job.yaml"))
		noPanic(t, r)
		if r.code != 0 {
			t.Fatalf("day %d: %v", day+1, r)
		}
		m := readManifest(t, manifest)
		if got := stageStatuses(m); got != "ran ran ran ran ran" {
			t.Fatalf("day %d: %s", day+1, got)
		}
		for _, st := range m.Stages {
			if slices.ContainsFunc(st.Args, func(a string) bool { return strings.HasPrefix(a, "--warm-start") }) {
				t.Errorf("day %d: stage %s got %v", day+1, st.Name, st.Args)
			}
		}
		if w := m.Stages[1].WarmStart; w != nil {
			t.Errorf("day %d: the hinge stage has a warm start report %+v", day+1, w)
		}
		if w := m.Stages[3].WarmStart; w == nil || w.Start != "cold" || !strings.Contains(w.Reason, "train cannot start warm with its options: --warm-start") {
			t.Errorf("day %d: the streamed stage's report %+v", day+1, w)
		}
		if !strings.Contains(string(r.stderr), "in 1") && streamBlocks(r.stderr) < 5 {
			t.Errorf("day %d: the streamed stages' duals are not in many blocks:\n%s", day+1, r.stderr)
		}
		if k, err := duals.OpenKept(filepath.Join(dir, "out/kept.duals")); err != nil || len(k.Keys) != int(frac*float64(len(demo))) {
			t.Errorf("day %d: kept duals: %v", day+1, err)
		} else {
			k.Close()
		}
	}
}

// readCorpusText returns the sentences (each with its blank line) of a
// gzipped CoNLL text in the package's directory.
func readCorpusText(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return strings.SplitAfter(strings.TrimSpace(string(b))+"\n", "\n\n")
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
