package main

import (
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dualcrf/dualcrf/crf"
	"github.com/dualcrf/dualcrf/crfsuite"
)

// TestExportMemoryBound: export refuses, before building the file, a
// model whose CRFsuite file needs more memory than the budget given or,
// without one, than the machine has (saying which); it says nothing when
// the machine's memory cannot be read.
func TestExportMemoryBound(t *testing.T) {
	lay := crf.Layout{NumAttrs: 2000, NumLabels: 5, NoBias: true}
	m := &crf.Model{Layout: lay, Weights: make([]float64, lay.Dim())}
	for i := range m.Weights {
		m.Weights[i] = 0.5
	}
	for range lay.NumAttrs {
		m.AttrNames = append(m.AttrNames, "attr")
	}
	m.LabelNames = []string{"A", "B", "C", "D", "E"}
	need := crfsuite.SizeOf(m).Memory
	machine := func(b int64) func() (int64, error) { return func() (int64, error) { return b, nil } }
	if err := checkExportMemory(m, "m.arrow", 0, machine(need)); err == nil ||
		!strings.Contains(err.Error(), "of memory this machine has (physical memory, or the cgroup's limit) allows") {
		t.Fatalf("over the machine's memory: %v", err)
	}
	if err := checkExportMemory(m, "m.arrow", need, machine(1<<40)); err == nil || !strings.Contains(err.Error(), "more than the --memory-budget") {
		t.Fatalf("over the budget: %v", err)
	}
	if err := checkExportMemory(m, "m.arrow", 0, machine(1<<40)); err != nil {
		t.Fatalf("within the machine's memory: %v", err)
	}
	if err := checkExportMemory(m, "m.arrow", 0, func() (int64, error) { return 0, errors.New("unknown") }); err != nil {
		t.Fatalf("the machine's memory unknown: %v", err)
	}
}

// TestForcedMarginalsEvaluate: forced labels with marginals (a forced
// token's confidence is 1) make a prediction table eval reads, with
// --calibration too; decode wrote confidences of 1.0000000000000284, which
// eval refused as no probability.
func TestForcedMarginalsEvaluate(t *testing.T) {
	f := fixtures(t)
	dir := t.TempDir()
	n := 0
	rewriteLines(t, f.testText, filepath.Join(dir, "forced.txt"), func(fl []string) []string {
		n++
		force := "_"
		if n%3 == 0 {
			force = fl[len(fl)-1]
		}
		return append(fl[:len(fl)-1:len(fl)-1], force, fl[len(fl)-1])
	})
	for _, flags := range [][]string{{"--marginals"}, {"--marginals", "--chunk-confidence", "--constraints", "bio", "--nbest", "2"}} {
		args := append([]string{"decode", "-m", f.model, "--text", "forced.txt", "--columns", "word,pos,force", "--force-column", "force",
			"-o", "pred.arrow"}, flags...)
		mustRun(t, dir, args...)
		eval := []string{"eval", "pred.arrow"}
		if slices.Contains(flags, "--chunk-confidence") {
			eval = []string{"eval", "--calibration", "pred.arrow"}
		}
		if r := mustRun(t, dir, eval...); !strings.Contains(string(r.stdout), "accuracy:") {
			t.Fatalf("eval: %s", r.stdout)
		}
	}
}
