package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheckpointResume trains with checkpoints, resumes from them, and
// checks the resumed model equals an uninterrupted run's bytes; then the
// refusals: --resume on a directory that is not a checkpoint, a duals file
// of another dataset, and a checkpoint of another dataset.
func TestCheckpointResume(t *testing.T) {
	f := fixtures(t)
	dir := t.TempDir()
	ck := filepath.Join(dir, "ck")
	common := []string{"train", "-q", "--gap-tol", "1e-9"}
	full := run(t, dir, "", append(common, "--max-epochs", "4", "-o", "full.arrow", f.train)...)
	if full.code != 0 {
		t.Fatalf("uninterrupted run: %v", full)
	}
	first := run(t, dir, "", append(common, "--max-epochs", "2", "--checkpoint", ck, "-o", "first.arrow", f.train)...)
	if first.code != 0 {
		t.Fatalf("first half: %v", first)
	}
	second := run(t, dir, "", append(common, "--max-epochs", "4", "--resume", ck, "-o", "resumed.arrow", f.train)...)
	if second.code != 0 || !strings.Contains(string(second.stderr), "resuming from") {
		t.Fatalf("resume: %v", second)
	}
	a, _ := os.ReadFile(filepath.Join(dir, "full.arrow"))
	b, _ := os.ReadFile(filepath.Join(dir, "resumed.arrow"))
	if len(a) == 0 || string(a) != string(b) {
		t.Fatalf("resumed model (%d bytes) differs from the uninterrupted one (%d bytes)", len(b), len(a))
	}

	// Refusals leave no model behind.
	bad := t.TempDir()
	r := run(t, bad, "", "train", "--resume", filepath.Join(dir), "-o", "m.arrow", f.train)
	if r.code == 0 || !strings.Contains(string(r.stderr), "not a checkpoint directory") {
		t.Errorf("--resume on a plain directory: %v", r)
	}
	duals := filepath.Join(dir, "duals.bin")
	if r := run(t, dir, "", "train", "-q", "--max-epochs", "1", "--duals", duals, "-o", "d.arrow", f.train); r.code != 0 {
		t.Fatalf("--duals file: %v", r)
	}
	r = run(t, bad, "", "train", "--duals", duals, "-o", "m.arrow", f.test)
	if r.code == 0 || !strings.Contains(string(r.stderr), "duals.bin") {
		t.Errorf("duals file of another dataset: %v", r)
	}
	r = run(t, bad, "", "train", "--resume", ck, "-o", "m.arrow", f.test)
	if r.code == 0 || !strings.Contains(string(r.stderr), "another dataset") {
		t.Errorf("checkpoint of another dataset: %v", r)
	}
	if left := dirEntries(t, bad); len(left) > 0 {
		t.Errorf("refused runs left %v behind", left)
	}
}
