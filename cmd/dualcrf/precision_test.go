package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDualPrecision: --dual-precision float64, float32 and bfloat16 train
// (the log says which); a float64 run's checkpoint resumes only with
// --dual-precision float64 — as a snapshot written before the precision
// could be chosen does, whose settings record none — and resumed so, it
// gives the uninterrupted run's model bytes; a --duals file of the other
// precision is refused naming the file and the flag; float64 kept duals
// start a float32 run warm; the flag is refused
// with another solver, with the hinge loss (BCFW keeps float64 duals) and
// for an unknown value.
func TestDualPrecision(t *testing.T) {
	f := fixtures(t)
	dir := t.TempDir()
	common := []string{"train", "--gap-tol", "1e-9", "--keep-checkpoints"}
	for _, p := range []string{"float64", "float32", "bfloat16"} {
		r := runBinary(t, dir, "", append(common, "--max-epochs", "2", "--dual-precision", p, "-o", p+".arrow", f.train)...)
		if r.code != 0 || !strings.Contains(string(r.stderr), "(μ, "+p+")") {
			t.Fatalf("--dual-precision %s: %v", p, r)
		}
	}
	full := runBinary(t, dir, "", append(common, "-q", "--max-epochs", "4", "--dual-precision", "float64", "-o", "full.arrow", f.train)...)
	if full.code != 0 {
		t.Fatalf("uninterrupted float64 run: %v", full)
	}
	ck := filepath.Join(dir, "ck")
	if r := runBinary(t, dir, "", append(common, "-q", "--max-epochs", "2", "--dual-precision", "float64", "--checkpoint", ck, "-o", "first.arrow", f.train)...); r.code != 0 {
		t.Fatalf("float64 run with checkpoints: %v", r)
	}
	state, err := os.ReadFile(filepath.Join(ck, "ckpt-000002", "state.json"))
	if err != nil || strings.Contains(string(state), "dual_precision") {
		t.Fatalf("a float64 snapshot records a precision (snapshots written before it could be chosen record none): %v %.200s", err, state)
	}
	r := runBinary(t, dir, "", append(common, "-q", "--max-epochs", "4", "--resume", ck, "-o", "refused.arrow", f.train)...)
	if r.code == 0 || !strings.Contains(string(r.stderr), "--dual-precision float64") || !strings.Contains(string(r.stderr), "--dual-precision float32") {
		t.Fatalf("float64 snapshot resumed with the default precision: %v", r)
	}
	if _, err := os.Stat(filepath.Join(dir, "refused.arrow")); err == nil {
		t.Fatal("the refused resume wrote a model")
	}
	r = runBinary(t, dir, "", append(common, "-q", "--max-epochs", "4", "--dual-precision", "float64", "--resume", ck, "-o", "resumed.arrow", f.train)...)
	if r.code != 0 {
		t.Fatalf("float64 snapshot resumed with --dual-precision float64: %v", r)
	}
	sameFile(t, filepath.Join(dir, "full.arrow"), filepath.Join(dir, "resumed.arrow"))

	duals := filepath.Join(dir, "duals.bin")
	if r := runBinary(t, dir, "", "train", "-q", "--max-epochs", "1", "--dual-precision", "float64", "--duals", duals, "-o", "d.arrow", f.train); r.code != 0 {
		t.Fatalf("--duals file: %v", r)
	}
	r = runBinary(t, dir, "", "train", "-q", "--max-epochs", "1", "--duals", duals, "-o", "d32.arrow", f.train)
	if r.code == 0 || !strings.Contains(string(r.stderr), duals) || !strings.Contains(string(r.stderr), "holds float64 duals") ||
		!strings.Contains(string(r.stderr), "--dual-precision float64") {
		t.Fatalf("a float64 duals file for a float32 run: %v", r)
	}
	if r := runBinary(t, dir, "", "train", "-q", "--max-epochs", "1", "--dual-precision", "float64", "--duals", duals, "-o", "d2.arrow", f.train); r.code != 0 {
		t.Fatalf("the float64 duals file reused by a float64 run: %v", r)
	}
	// Kept float64 duals (as every version before kept them) start a
	// float32 run warm: converted as they are read.
	kept := filepath.Join(dir, "kept64.duals")
	if r := runBinary(t, dir, "", "train", "-q", "--max-epochs", "2", "--dual-precision", "float64", "--keep-duals", kept, "-o", "k.arrow", f.train); r.code != 0 {
		t.Fatalf("--keep-duals at float64: %v", r)
	}
	r = runBinary(t, dir, "", "train", "--max-epochs", "1", "--warm-start", kept, "-o", "w.arrow", f.train)
	if r.code != 0 || !strings.Contains(string(r.stderr), "warm start from "+kept) || !strings.Contains(string(r.stderr), "(μ, float32)") ||
		strings.Contains(string(r.stderr), "starting cold") {
		t.Fatalf("a float32 run warm from float64 kept duals: %v", r)
	}
	for _, args := range [][]string{
		{"--solver", "lbfgs", "--dual-precision", "float64"},
		{"--loss", "hinge", "--dual-precision", "float32"},
		{"--dual-precision", "float16"},
	} {
		r := runBinary(t, dir, "", append(append([]string{"train", "-o", "x.arrow"}, args...), f.train)...)
		if r.code == 0 || !strings.Contains(string(r.stderr), "--dual-precision") {
			t.Errorf("%v: %v", args, r)
		}
	}
}
