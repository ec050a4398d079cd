package main

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestTrainHinge runs the --loss hinge commands docs/training.md shows:
// BCFW with gap sampling and refreshes, with the uniform sampler and with
// --hamming count, a plot and a log, then decodes and scores with the
// models; the models' facts name their Hamming loss.
func TestTrainHinge(t *testing.T) {
	f := fixtures(t)
	dir := t.TempDir()
	r := mustRun(t, dir, "train", "--loss", "hinge", "--lambda", "0.1/n", "--gap-tol", "1e-2", "--refresh-every", "5",
		"--plot", "hinge.svg", "--log", "hinge-log.arrow", "-o", "hinge.arrow", f.train)
	if s := string(r.stderr); !strings.Contains(s, "stopped (gap)") || !strings.Contains(s, "gap ") {
		t.Fatalf("stderr:\n%s", s)
	}
	mustRun(t, dir, "train", "-q", "--loss", "hinge", "--sampler", "uniform", "--gap-tol", "1e-2", "-o", "uniform.arrow", f.train)
	mustRun(t, dir, "train", "-q", "--loss", "hinge", "--hamming", "count", "--gap-tol", "1e-2", "-o", "count.arrow", f.train)
	for _, name := range []string{"hinge.svg", "hinge-log.arrow", "uniform.arrow", "count.arrow"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	mustRun(t, dir, "decode", "-m", "hinge.arrow", "-o", "pred.arrow", f.test)
	r = mustRun(t, dir, "eval", "pred.arrow")
	if !strings.Contains(string(r.stdout), "FB1") {
		t.Fatalf("eval:\n%s", r.stdout)
	}
	r = mustRun(t, dir, "inspect", "hinge.arrow")
	if s := string(r.stdout); !strings.Contains(s, "bcfw") || !strings.Contains(s, "hinge") || !strings.Contains(s, "mean") {
		t.Fatalf("inspect:\n%s", s)
	}
	mustRun(t, dir, "decode", "-m", "count.arrow", "-o", "pred-count.arrow", f.test)
	if r = mustRun(t, dir, "eval", "pred-count.arrow"); !strings.Contains(string(r.stdout), "FB1") {
		t.Fatalf("eval:\n%s", r.stdout)
	}
	r = mustRun(t, dir, "inspect", "count.arrow")
	if s := string(r.stdout); !strings.Contains(s, "count") {
		t.Fatalf("inspect:\n%s", s)
	}
}

// TestTrainHingeResume: a hinge run stopped after 3 epochs with
// --checkpoint and resumed with --resume to 6 gives the weights of a run
// of 6 epochs bit for bit.
func TestTrainHingeResume(t *testing.T) {
	f := fixtures(t)
	dir := t.TempDir()
	args := []string{"train", "-q", "--loss", "hinge", "--gap-tol", "1e-9"}
	mustRun(t, dir, append(args, "--max-epochs", "6", "-o", "full.arrow", f.train)...)
	mustRun(t, dir, append(args, "--max-epochs", "3", "--checkpoint", "ck", "--keep-checkpoints", "-o", "part.arrow", f.train)...)
	mustRun(t, dir, append(args, "--max-epochs", "6", "--resume", "ck", "--keep-checkpoints", "-o", "resumed.arrow", f.train)...)
	full, resumed := readModelFile(t, filepath.Join(dir, "full.arrow")), readModelFile(t, filepath.Join(dir, "resumed.arrow"))
	for j, w := range full.Weights {
		if math.Float64bits(w) != math.Float64bits(resumed.Weights[j]) {
			t.Fatalf("weight %d: %.17g uninterrupted, %.17g resumed", j, w, resumed.Weights[j])
		}
	}
	r := runInProcess(t, dir, "", "train", "-q", "--resume", "ck", "--max-epochs", "6", "-o", "sdca.arrow", f.train)
	if r.code == 0 || !strings.Contains(string(r.stderr), "solver") {
		t.Fatalf("SDCA resuming a hinge snapshot: %v", r)
	}
	r = runInProcess(t, dir, "", append(args, "--hamming", "count", "--resume", "ck", "--max-epochs", "6", "-o", "count.arrow", f.train)...)
	if s := string(r.stderr); r.code == 0 || !strings.Contains(s, "--hamming mean") || !strings.Contains(s, "--hamming count") {
		t.Fatalf("--hamming count resuming a --hamming mean snapshot: %v", r)
	}
}

// TestSolverBCFW: --solver bcfw is --loss hinge, one mapping of the loss
// to its method: the same flags give the same model bytes, and a resume of
// one continues the other's snapshots.
func TestSolverBCFW(t *testing.T) {
	f := fixtures(t)
	dir := t.TempDir()
	args := []string{"train", "-q", "--seed", "5", "--hamming", "count", "--max-epochs", "3", "--gap-tol", "1e-9"}
	mustRun(t, dir, append(args, "--loss", "hinge", "-o", "loss.arrow", f.train)...)
	mustRun(t, dir, append(args, "--solver", "bcfw", "-o", "solver.arrow", f.train)...)
	mustRun(t, dir, append(args, "--solver", "bcfw", "--loss", "hinge", "-o", "both.arrow", f.train)...)
	a, err := os.ReadFile(filepath.Join(dir, "loss.arrow"))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"solver.arrow", "both.arrow"} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a, b) {
			t.Errorf("%s differs from --loss hinge's model", name)
		}
	}
	mustRun(t, dir, append(args, "--max-epochs", "2", "--loss", "hinge", "--checkpoint", "ck", "--keep-checkpoints", "-o", "part.arrow", f.train)...)
	mustRun(t, dir, append(args, "--solver", "bcfw", "--resume", "ck", "-o", "resumed.arrow", f.train)...)
	b, err := os.ReadFile(filepath.Join(dir, "resumed.arrow"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a, b) {
		t.Errorf("--solver bcfw resuming --loss hinge's snapshot differs from the uninterrupted run")
	}
}
