package main

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dualcrf/dualcrf/internal/fifotest"
)

// TestTrainStateFilesNotLost: train's state files — the kept duals
// (--keep-duals), the warm start's duals (--warm-start), the duals file
// (--duals PATH, stream:PATH) — are compared with its inputs and outputs
// by the files they are, as every output is, and a run that would lose one
// is refused before anything is written (formerly each of these runs
// exited 0, one file destroyed: the kept duals replaced by the model or
// the log, the kept duals a warm start read replaced by the model, the
// training table or the held-out table replaced by the kept duals, the
// duals file by the kept duals).
func TestTrainStateFilesNotLost(t *testing.T) {
	f := fixtures(t)
	made := t.TempDir()
	train := []string{"train", "-q", "--max-epochs", "2"}
	with := func(args ...string) []string { return append(append([]string(nil), train...), args...) }
	// The kept duals of an earlier run, for the warm starts.
	copyFile(t, f.train, filepath.Join(made, "in.arrow"))
	if r := runBinary(t, made, "", with("--keep-duals", "k.duals", "-o", "m0.arrow", "in.arrow")...); r.code != 0 {
		t.Fatalf("%v", r)
	}
	setup := func(t *testing.T) string {
		dir := t.TempDir()
		copyFile(t, f.train, filepath.Join(dir, "in.arrow"))
		copyFile(t, f.test, filepath.Join(dir, "v.arrow"))
		copyFile(t, filepath.Join(made, "k.duals"), filepath.Join(dir, "k.duals"))
		return dir
	}
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"keep-duals is the model", with("--keep-duals", "F", "-o", "F", "in.arrow"),
			"train: outputs -o F and --keep-duals F are the same file: one would overwrite the other"},
		{"keep-duals is the log", with("--keep-duals", "L", "--log", "L", "-o", "m.arrow", "in.arrow"),
			"train: outputs --keep-duals L and --log L are the same file"},
		{"the model over the warm start", with("--warm-start", "k.duals", "-o", "k.duals", "in.arrow"),
			"train: output -o k.duals is the same file as input --warm-start k.duals: refusing to overwrite an input"},
		{"keep-duals is the input by its absolute path", with("--keep-duals", "{dir}/in.arrow", "-o", "m.arrow", "in.arrow"),
			"train: output --keep-duals {dir}/in.arrow is the same file as input in.arrow: refusing to overwrite an input"},
		{"keep-duals is the held-out table", with("--valid", "v.arrow", "--keep-duals", "v.arrow", "-o", "m.arrow", "in.arrow"),
			"train: output --keep-duals v.arrow is the same file as input --valid v.arrow"},
		{"keep-duals is the streamed duals", with("--duals", "stream:S", "--memory-budget", "96MiB", "--keep-duals", "S", "-o", "m.arrow", "in.arrow"),
			"train: outputs --duals S and --keep-duals S are the same file"},
		{"keep-duals is the duals file", with("--duals", "D", "--keep-duals", "D", "-o", "m.arrow", "in.arrow"),
			"train: outputs --duals D and --keep-duals D are the same file"},
		{"the duals file over the warm start", with("--duals", "k.duals", "--warm-start", "k.duals", "-o", "m.arrow", "in.arrow"),
			"train: output --duals k.duals is the same file as input --warm-start k.duals"},
		{"keep-duals to standard output", with("--keep-duals", "-", "-o", "m.arrow", "in.arrow"),
			"train: --keep-duals -: standard output is not accepted here: give a file name"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := setup(t)
			args := make([]string, len(c.args))
			for i, a := range c.args {
				args[i] = strings.ReplaceAll(a, "{dir}", dir)
			}
			refusedIntact(t, dir, [][]string{args}, []string{strings.ReplaceAll(c.want, "{dir}", dir)})
		})
	}
	// A warm start that keeps its duals in the file it started from
	// replaces them: the state is read, then written anew.
	dir := setup(t)
	if r := runBinary(t, dir, "", with("--warm-start", "k.duals", "--keep-duals", "k.duals", "-o", "m1.arrow", "in.arrow")...); r.code != 0 {
		t.Fatalf("%v", r)
	}
}

// TestKeepDualsKeepsTheFile: --keep-duals writes a FIFO and a device in
// place (streaming), through a symbolic link leaves the link, and keeps
// an existing file's mode (formerly each was replaced by a new regular
// file with mode 644).
func TestKeepDualsKeepsTheFile(t *testing.T) {
	f := fixtures(t)
	dir := t.TempDir()
	copyFile(t, f.train, filepath.Join(dir, "in.arrow"))
	train := func(kept string) result {
		t.Helper()
		return runBinary(t, dir, "", "train", "-q", "--max-epochs", "2", "--keep-duals", kept, "-o", "m.arrow", "in.arrow")
	}

	// A file of mode 0600 keeps it.
	private := filepath.Join(dir, "private.duals")
	if err := os.WriteFile(private, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	if r := train("private.duals"); r.code != 0 {
		t.Fatalf("%v", r)
	}
	st, err := os.Stat(private)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("kept duals over a mode-0600 file: mode %v, %v; want 0600", st.Mode(), err)
	}
	if b, _ := os.ReadFile(private); !bytes.HasPrefix(b, []byte("DCRFKEPT")) {
		t.Errorf("kept duals not written over the file: %.20q", b)
	}

	// A link to the null device: the device is written, the link stays.
	if err := os.Symlink(os.DevNull, filepath.Join(dir, "null")); err != nil {
		t.Fatal(err)
	}
	if r := train("null"); r.code != 0 {
		t.Fatalf("%v", r)
	}
	if st, err := os.Lstat(filepath.Join(dir, "null")); err != nil || st.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link to %s was replaced: %v, %v", os.DevNull, st.Mode(), err)
	}
	if st, err := os.Stat(os.DevNull); err != nil || st.Mode()&os.ModeCharDevice == 0 {
		t.Fatalf("%s is no longer a device: %v, %v", os.DevNull, st.Mode(), err)
	}

	// A FIFO: its reader gets the kept duals; it stays a FIFO.
	fifo := filepath.Join(dir, "duals.fifo")
	fifotest.Make(t, fifo)
	got := make(chan []byte, 1)
	go func() {
		r, err := os.Open(fifo) // blocks until train opens it to write
		if err != nil {
			got <- nil
			return
		}
		defer r.Close()
		b, _ := io.ReadAll(r)
		got <- b
	}()
	r := train("duals.fifo")
	if r.code != 0 {
		// Unblock the reader: open the FIFO for writing ourselves.
		if w, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			w.Close()
		}
		t.Fatalf("%v", r)
	}
	select {
	case b := <-got:
		if !bytes.HasPrefix(b, []byte("DCRFKEPT")) || !bytes.HasSuffix(b, []byte("DCRFEND\x00")) {
			t.Errorf("the FIFO's reader got %d bytes, not a kept-duals file", len(b))
		}
	case <-time.After(time.Minute):
		t.Fatal("the FIFO's reader got nothing")
	}
	if st, err := os.Lstat(fifo); err != nil || st.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("%s is no longer a FIFO: %v, %v", fifo, st.Mode(), err)
	}
	if names := dirEntries(t, dir); strings.Contains(strings.Join(names, " "), ".tmp") {
		t.Errorf("temporary files left: %v", names)
	}
}

// TestExportStdoutName: export -o - names standard output in its summary
// (formerly "<stdin>").
func TestExportStdoutName(t *testing.T) {
	f := fixtures(t)
	dir := t.TempDir()
	mustRun(t, dir, "train", "-q", "--max-epochs", "2", "--no-bias", "-o", "m.arrow", f.train)
	r := runInProcess(t, dir, "", "export", "--format", "crfsuite", "-o", "-", "m.arrow")
	if r.code != 0 || len(r.stdout) == 0 {
		t.Fatalf("%v", r)
	}
	if s := string(r.stderr); !strings.Contains(s, "\nexport: <stdout>: ") || strings.Contains(s, "stdin") {
		t.Errorf("export -o - says %q; want it to name <stdout>", s)
	}
}

// TestMemoryBudgetUnits: --memory-budget takes the units people write,
// decimal (kB, MB, GB, TB; K, M, G, T) and binary (KiB, MiB, GiB, TiB),
// case aside; a size it cannot read names the units, and one too large
// for an int64 of bytes says so (formerly 1kB and 125MB were refused as
// "want a positive size such as 8GiB", and so was an overflow).
func TestMemoryBudgetUnits(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int64
		err  string
	}{
		{"1kB", 1000, ""}, {"125MB", 125_000_000, ""}, {"8GiB", 8 << 30, ""}, {"64K", 64_000, ""},
		{"1.5 G", 1_500_000_000, ""}, {"2tb", 2e12, ""}, {"512MiB", 512 << 20, ""}, {"1000000", 1e6, ""}, {"100B", 100, ""},
		{"1e30GiB", 0, "too large"}, {"9.3e18", 0, "too large"},
		{"abc", 0, "KiB, MiB, GiB, TiB (powers of 1024)"}, {"12XB", 0, "B, kB, MB, GB, TB (powers of 1000"},
		{"0", 0, "want a positive size"}, {"-1MB", 0, "want a positive size"}, {"0.5", 0, "at least one byte"},
		{"NaN", 0, "want a size such as"}, {"Inf", 0, "want a size such as"},
	} {
		got, err := parseBytes(c.in)
		switch {
		case c.err == "" && (err != nil || got != c.want):
			t.Errorf("parseBytes(%q) = %d, %v; want %d", c.in, got, err, c.want)
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("parseBytes(%q) = %d, %v; want an error saying %q", c.in, got, err, c.err)
		}
	}
	f := fixtures(t)
	dir := t.TempDir()
	r := runInProcess(t, dir, "", "train", "--memory-budget", "1kB", "--duals", "memory", "-o", "m.arrow", f.train)
	if r.code != 1 || !strings.Contains(string(r.stderr), "more than the --memory-budget") {
		t.Errorf("--memory-budget 1kB: %v\nwant the run refused as needing more than the budget", r)
	}
	r = runInProcess(t, dir, "", "train", "--memory-budget", "1e30GiB", "-o", "m.arrow", f.train)
	if r.code != 1 || !strings.Contains(string(r.stderr), `--memory-budget "1e30GiB": too large`) {
		t.Errorf("--memory-budget 1e30GiB: %v\nwant it refused as too large", r)
	}
}

// TestExportModuleBesideIsChecked: the Python module export writes beside
// -o when --features-py is not given is one of its outputs for the file
// check too: it may not be the model it reads.
func TestExportModuleBesideIsChecked(t *testing.T) {
	f := fixtures(t)
	dir := t.TempDir()
	copyFile(t, f.model, filepath.Join(dir, "m_features.py"))
	refusedIntact(t, dir, [][]string{{"export", "--format", "crfsuite", "-o", "m.crfsuite", "m_features.py"}},
		[]string{"export: output --features-py m_features.py is the same file as input m_features.py: refusing to overwrite an input"})
}
