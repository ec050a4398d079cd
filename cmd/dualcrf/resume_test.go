package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io/fs"
	"maps"
	mathrand "math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/dualcrf/dualcrf/arrowio"
	"github.com/dualcrf/dualcrf/crf"
	"github.com/dualcrf/dualcrf/schemas"
	"github.com/dualcrf/dualcrf/tables"
	"github.com/dualcrf/dualcrf/train"
)

// TestCheckpointResume trains with checkpoints, resumes from them, and
// checks the resumed model equals an uninterrupted run's bytes; then the
// refusals: --resume on a directory that is not a checkpoint, a duals file
// of another dataset, and a checkpoint of another dataset.
func TestCheckpointResume(t *testing.T) {
	f := fixtures(t)
	dir := t.TempDir()
	ck := filepath.Join(dir, "ck")
	common := []string{"train", "-q", "--gap-tol", "1e-9", "--keep-checkpoints"}
	full := runBinary(t, dir, "", append(common, "--max-epochs", "4", "-o", "full.arrow", f.train)...)
	if full.code != 0 {
		t.Fatalf("uninterrupted run: %v", full)
	}
	first := runBinary(t, dir, "", append(common, "--max-epochs", "2", "--checkpoint", ck, "-o", "first.arrow", f.train)...)
	if first.code != 0 {
		t.Fatalf("first half: %v", first)
	}
	second := runBinary(t, dir, "", append(common, "--max-epochs", "4", "--resume", ck, "-o", "resumed.arrow", f.train)...)
	if second.code != 0 || !strings.Contains(string(second.stderr), "resuming from") {
		t.Fatalf("resume: %v", second)
	}
	sameFile(t, filepath.Join(dir, "full.arrow"), filepath.Join(dir, "resumed.arrow"))

	// Refusals leave no model behind.
	bad := t.TempDir()
	plain := t.TempDir()
	r := runBinary(t, bad, "", "train", "--resume", plain, "-o", "m.arrow", f.train)
	if r.code == 0 || !strings.Contains(string(r.stderr), "not a checkpoint directory") {
		t.Errorf("--resume on a plain directory: %v", r)
	}
	duals := filepath.Join(dir, "duals.bin")
	if r := runBinary(t, dir, "", "train", "-q", "--max-epochs", "1", "--duals", duals, "-o", "d.arrow", f.train); r.code != 0 {
		t.Fatalf("--duals file: %v", r)
	}
	r = runBinary(t, bad, "", "train", "--duals", duals, "-o", "m.arrow", f.test)
	if r.code == 0 || !strings.Contains(string(r.stderr), "duals.bin") {
		t.Errorf("duals file of another dataset: %v", r)
	}
	r = runBinary(t, bad, "", "train", "--resume", ck, "-o", "m.arrow", f.test)
	if r.code == 0 || !strings.Contains(string(r.stderr), "another dataset") {
		t.Errorf("checkpoint of another dataset: %v", r)
	}
	if left := dirEntries(t, bad); len(left) > 0 {
		t.Errorf("refused runs left %v behind", left)
	}
}

// sameFile fails unless the two files hold the same (non-empty) bytes.
func sameFile(t *testing.T, a, b string) {
	t.Helper()
	x, errA := os.ReadFile(a)
	y, errB := os.ReadFile(b)
	if errA != nil || errB != nil || len(x) == 0 || !bytes.Equal(x, y) {
		t.Fatalf("%s (%d bytes, %v) and %s (%d bytes, %v) differ", a, len(x), errA, b, len(y), errB)
	}
}

var (
	demoOnce  sync.Once
	demoTable string
	demoErr   error
)

// demoFeatures returns a feature table of the embedded 1,000-sentence
// CoNLL-2000 slice (chunking templates, cut-off 3): enough sentences for a
// signal to land between steps of an epoch.
func demoFeatures(t *testing.T) string {
	t.Helper()
	demoOnce.Do(func() {
		demoTable = filepath.Join(binDir, "demo-train.arrow")
		cmd := command(binDir, "featurize", "--template", "chunking", "--min-count", "3", "-o", demoTable, abs(t, "demodata/train.txt.gz"))
		if out, err := cmd.CombinedOutput(); err != nil {
			demoErr = err
			t.Logf("%s", out)
		}
	})
	if demoErr != nil {
		t.Fatal(demoErr)
	}
	return demoTable
}

// modelTraining returns the training facts a model records.
func modelTraining(t *testing.T, path string) (*crf.Model, map[string]any) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m, err := tables.ReadModel(f, path, arrowio.ReaderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var facts map[string]any
	if err := json.Unmarshal([]byte(m.Meta[schemas.KeyTraining]), &facts); err != nil {
		t.Fatalf("%s: training facts %q: %v", path, m.Meta[schemas.KeyTraining], err)
	}
	return m, facts
}

// TestSignalsResumeToSameBytes sends SIGINT or SIGTERM (through the hidden
// test hook, so that it lands exactly) inside an epoch between two steps
// (the sequential SDCA: at most 256 steps later) or rounds (the rounds
// stop where their pipeline is empty: 256 rounds of 2 steps, fewer at a
// sentence drawn twice), inside a certificate pass and during a checkpoint
// write; each run exits 130 or 143 saying how to resume, and `--resume`
// ends with the model bytes of the uninterrupted run (defect 3) — for the
// rounds (the default) on another number of workers than the interrupted
// run's. Epochs are certified every second epoch, so the snapshots hold
// uncertified records (defect 1).
func TestSignalsResumeToSameBytes(t *testing.T) {
	table := demoFeatures(t)
	dir := t.TempDir()
	base := []string{"train", "-q", "--max-epochs", "3", "--gap-every", "2", "--gap-tol", "1e-9"}
	for _, sched := range []struct {
		name         string
		run, resume  []string // the interrupted run's workers, the resumed run's
		stepSnapshot string
		full         string
	}{
		{"sequential", []string{"--workers", "1"}, []string{"--workers", "1"}, "ckpt-000002-step256", "full1.arrow"},
		{"rounds", []string{"--workers", "2"}, []string{"--workers", "3"}, "ckpt-000002-step5", "full.arrow"},
	} {
		full := sched.full
		if r := runBinary(t, dir, "", append(append(base, sched.run...), "-o", full, table)...); r.code != 0 {
			t.Fatalf("uninterrupted: %v", r)
		}
		cases := []struct {
			hook     string
			code     int
			phase    string
			snapshot string
		}{
			{"epoch:2:2:INT", 130, "interrupted in epoch 2", sched.stepSnapshot},
			{"certificate:2:3:TERM", 143, "interrupted during the certificate pass of epoch 2", "ckpt-000002-cert"},
			{"checkpoint write:1:0:TERM", 143, "interrupted during a checkpoint write after epoch 1", "ckpt-000001"},
			{"certificate:0:1:INT", 130, "interrupted during the certificate pass of epoch 0", "ckpt-000000-cert"},
		}
		if sched.name != "sequential" {
			// The certificate and checkpoint write are the schedule's
			// business only in where the epoch stopped: the epoch's case.
			cases = cases[:1]
		}
		for _, c := range cases {
			t.Run(sched.name+"-"+strings.ReplaceAll(c.hook, " ", "-"), func(t *testing.T) {
				ck := filepath.Join(t.TempDir(), "ck")
				common := append(base, sched.run...)
				cmd := command(dir, append(common, "--checkpoint", ck, "-o", "m.arrow", table)...)
				withTestHook(t, cmd, c.hook)
				var stderr bytes.Buffer
				cmd.Stderr = &stderr
				r := result{args: cmd.Args}
				finish(&r, cmd, cmd.Run())
				r.stderr = stderr.Bytes()
				if r.code != c.code || !strings.Contains(string(r.stderr), c.phase) ||
					!strings.Contains(string(r.stderr), "--resume "+ck) || !strings.Contains(string(r.stderr), c.snapshot) {
					t.Fatalf("want exit %d, %q, snapshot %s and how to resume; got %v", c.code, c.phase, c.snapshot, r)
				}
				if _, err := os.Stat(filepath.Join(dir, "m.arrow")); err == nil {
					t.Fatal("an interrupted run wrote a model")
				}
				again := append(base, sched.resume...)
				res := runBinary(t, dir, "", append(again, "--checkpoint", ck, "--resume", ck, "-o", "resumed.arrow", table)...)
				if res.code != 0 {
					t.Fatalf("resume: %v", res)
				}
				sameFile(t, filepath.Join(dir, full), filepath.Join(dir, "resumed.arrow"))
			})
		}
	}
}

// TestStreamedSignalsResumeToSameBytes: a run on streamed duals in many
// blocks, with a working set across them, signalled (SIGTERM: a snapshot
// at the block boundary) or killed (SIGKILL: the last commit within the
// epoch is what is left) in the middle of an epoch, whose snapshot holds a
// non-empty working set (held.bin), ends after --resume with the
// uninterrupted run's model bytes; sequentially, and in rounds (whose
// second copy of the weights and slots need a little more memory) on two
// workers resumed on three: the rounds' trajectory depends on the seed and
// the round size only, and the block layout on the budget and the data
// (planned as for eight workers, not the run's).
func TestStreamedSignalsResumeToSameBytes(t *testing.T) {
	table := demoFeatures(t)
	dir := t.TempDir()
	for _, workers := range []string{"1", "2"} {
		budget := map[string]string{"1": "88MiB", "2": "104MiB"}[workers]
		resumeWorkers := map[string]string{"1": "1", "2": "3"}[workers]
		settings := []string{"train", "-q", "--duals", "stream", "--memory-budget", budget,
			"--max-epochs", "3", "--gap-every", "2", "--gap-tol", "1e-9"}
		common := append(append([]string(nil), settings...), "--workers", workers)
		again := append(append([]string(nil), settings...), "--workers", resumeWorkers)
		full := "full" + workers + ".arrow"
		if r := runBinary(t, dir, "", append(common, "-o", full, table)...); r.code != 0 {
			t.Fatalf("uninterrupted: %v", r)
		}
		for _, c := range []struct {
			hook string
			code int
		}{{"epoch:3:3:TERM", 143}, {"epoch:3:10:KILL", -1}} {
			t.Run(workers+"-"+strings.ReplaceAll(c.hook, ":", "-"), func(t *testing.T) {
				ck := filepath.Join(t.TempDir(), "ck")
				cmd := command(dir, append(common, "--checkpoint", ck, "-o", "m.arrow", table)...)
				withTestHook(t, cmd, c.hook)
				var stderr bytes.Buffer
				cmd.Stderr = &stderr
				r := result{args: cmd.Args}
				finish(&r, cmd, cmd.Run())
				r.stderr = stderr.Bytes()
				if r.code != c.code {
					t.Fatalf("want exit %d; got %v", c.code, r)
				}
				if _, err := os.Stat(filepath.Join(dir, "m.arrow")); err == nil {
					t.Fatal("an interrupted run wrote a model")
				}
				cur, err := os.ReadFile(filepath.Join(ck, "CURRENT"))
				if err != nil {
					t.Fatal(err)
				}
				snap := filepath.Join(ck, strings.TrimSpace(string(cur)))
				if !strings.Contains(snap, "step") {
					t.Fatalf("snapshot %s: want one within the last epoch", snap)
				}
				js, err := os.ReadFile(filepath.Join(snap, "state.json"))
				if err != nil {
					t.Fatal(err)
				}
				if !strings.Contains(string(js), `"held":[`) {
					t.Fatalf("snapshot %s holds no working set", snap)
				}
				if _, err := os.Stat(filepath.Join(snap, "held.bin")); err != nil {
					t.Fatal(err)
				}
				res := runBinary(t, dir, "", append(again, "--checkpoint", ck, "--resume", ck, "-o", "resumed.arrow", table)...)
				if res.code != 0 {
					t.Fatalf("resume on %s workers: %v", resumeWorkers, res)
				}
				sameFile(t, filepath.Join(dir, full), filepath.Join(dir, "resumed.arrow"))
			})
		}
	}
}

// TestResumeAtMaxEpochsKeepsCertificate resumes a checkpoint whose epoch is
// at or past --max-epochs: the model carries the run's real certificate and
// epoch count, not zeros (defect 2), and is the same model.
func TestResumeAtMaxEpochsKeepsCertificate(t *testing.T) {
	f := fixtures(t)
	dir := t.TempDir()
	ck := filepath.Join(dir, "ck")
	if r := runBinary(t, dir, "", "train", "-q", "--max-epochs", "3", "--gap-tol", "1e-9", "--checkpoint", ck, "--keep-checkpoints", "-o", "a.arrow", f.train); r.code != 0 {
		t.Fatal(r)
	}
	r := runBinary(t, dir, "", "train", "--max-epochs", "2", "--gap-tol", "1e-9", "--resume", ck, "-o", "b.arrow", f.train)
	if r.code != 0 || strings.Contains(string(r.stderr), "epoch   3") {
		t.Fatalf("resume past --max-epochs: %v", r)
	}
	_, a := modelTraining(t, filepath.Join(dir, "a.arrow"))
	_, b := modelTraining(t, filepath.Join(dir, "b.arrow"))
	if a["primal"] != b["primal"] || a["gap"] != b["gap"] || b["epochs"] != float64(3) || b["gap"] == float64(0) {
		t.Fatalf("resumed model's facts %v, the run's %v", b, a)
	}
	sameFile(t, filepath.Join(dir, "a.arrow"), filepath.Join(dir, "b.arrow"))
}

// TestResumeOfFinishedRun resumes the last checkpoint of a run that had
// reached its gap (as after a kill -9 before the model was committed): it
// writes the same model without training another epoch (defect 5). The
// lock holder cleans the temporary directories a kill leaves.
func TestResumeOfFinishedRun(t *testing.T) {
	f := fixtures(t)
	dir := t.TempDir()
	ck := filepath.Join(dir, "ck")
	args := []string{"train", "--gap-tol", "0.05", "--checkpoint", ck, "--keep-checkpoints"}
	if r := runBinary(t, dir, "", append(args, "-o", "a.arrow", f.train)...); r.code != 0 {
		t.Fatal(r)
	}
	stale := filepath.Join(ck, ".ckpt-000009.tmp-42")
	os.Mkdir(stale, 0o755)
	os.WriteFile(filepath.Join(stale, "duals.bin"), []byte("partial"), 0o644)
	r := runBinary(t, dir, "", append(args, "--resume", ck, "-o", "b.arrow", f.train)...)
	if r.code != 0 || strings.Contains(string(r.stderr), "\nepoch ") {
		t.Fatalf("resume of a finished run trained on: %v", r)
	}
	sameFile(t, filepath.Join(dir, "a.arrow"), filepath.Join(dir, "b.arrow"))
	if _, err := os.Stat(stale); err == nil {
		t.Errorf("%s was left behind", stale)
	}
}

// TestCheckpointLockAndPath: a second trainer on a locked checkpoint
// directory, and a checkpoint path that cannot be a directory, fail at
// once, before any epoch (defects 4 and 7).
func TestCheckpointLockAndPath(t *testing.T) {
	f := fixtures(t)
	dir := t.TempDir()
	ck := filepath.Join(dir, "ck")
	l, err := train.LockDir(ck)
	if err != nil {
		t.Fatal(err)
	}
	r := runBinary(t, dir, "", "train", "--checkpoint", ck, "-o", "m.arrow", f.train)
	l.Unlock()
	if r.code != 1 || !strings.Contains(string(r.stderr), "locked by another training run") || strings.Contains(string(r.stderr), "epoch") {
		t.Fatalf("second trainer: %v", r)
	}
	os.WriteFile(filepath.Join(dir, "file"), nil, 0o644)
	for _, every := range []string{"1", "0"} {
		r := runBinary(t, dir, "", "train", "--checkpoint", filepath.Join(dir, "file", "ck"), "--checkpoint-every", every, "-o", "m.arrow", f.train)
		if r.code != 1 || !strings.Contains(string(r.stderr), "checkpoint directory") || strings.Contains(string(r.stderr), "epoch") {
			t.Fatalf("--checkpoint under a file (--checkpoint-every %s): %v", every, r)
		}
	}
	if left := dirEntries(t, dir); strings.Join(left, " ") != "ck file" {
		t.Errorf("left behind: %v", left)
	}
}

// TestResumeRefusesOtherSettings resumes with another --seed (refused,
// naming both values), after editing state.json (refused for its checksum,
// falling back to the older snapshot), and with CURRENT pointing outside
// the directory (ignored with a warning) (defect 6).
func TestResumeRefusesOtherSettings(t *testing.T) {
	f := fixtures(t)
	dir := t.TempDir()
	ck := filepath.Join(dir, "ck")
	base := []string{"train", "-q", "--max-epochs", "3", "--gap-tol", "1e-9", "--keep-checkpoints"}
	if r := runBinary(t, dir, "", append(base, "--checkpoint", ck, "-o", "a.arrow", f.train)...); r.code != 0 {
		t.Fatal(r)
	}
	r := runBinary(t, dir, "", append(base, "--seed", "2", "--resume", ck, "-o", "b.arrow", f.train)...)
	if r.code != 1 || !strings.Contains(string(r.stderr), "--seed 1") || !strings.Contains(string(r.stderr), "--seed 2") {
		t.Fatalf("resume with another seed: %v", r)
	}
	st := filepath.Join(ck, "ckpt-000003", "state.json")
	b, _ := os.ReadFile(st)
	os.WriteFile(st, bytes.Replace(b, []byte(`"epoch":3`), []byte(`"epoch":2`), 1), 0o644)
	os.WriteFile(filepath.Join(ck, "CURRENT"), []byte("../../x\n"), 0o644)
	r = runBinary(t, dir, "", append(base, "--resume", ck, "-o", "b.arrow", f.train)...)
	if r.code != 0 || !strings.Contains(string(r.stderr), "checksum") || !strings.Contains(string(r.stderr), "not a snapshot") ||
		!strings.Contains(string(r.stderr), "resuming from "+filepath.Join(ck, "ckpt-000002")) {
		t.Fatalf("edited state.json and CURRENT: %v", r)
	}
	sameFile(t, filepath.Join(dir, "a.arrow"), filepath.Join(dir, "b.arrow"))
}

// cliCorruptions is the number of corrupted snapshots
// TestResumeCorruptSnapshot resumes from (go test -args -cli-corruptions N).
var cliCorruptions = flag.Int("cli-corruptions", 8, "corrupted snapshots resumed by TestResumeCorruptSnapshot")

// TestResumeCorruptSnapshot damages a file of the newest snapshot (a bit
// flip, a truncation or a splice) and resumes: never a panic; the damaged
// snapshot is refused with the reason and the run continues from the older
// one to the same model bytes. With both snapshots damaged, the resume
// fails, giving each reason.
func TestResumeCorruptSnapshot(t *testing.T) {
	f := fixtures(t)
	dir := t.TempDir()
	ck := filepath.Join(dir, "ck")
	args := []string{"train", "-q", "--max-epochs", "3", "--gap-tol", "1e-9", "--checkpoint", ck, "--keep-checkpoints"}
	if r := runBinary(t, dir, "", append(args, "-o", "a.arrow", f.train)...); r.code != 0 {
		t.Fatal(r)
	}
	files := []string{"state.json", "weights.bin", "duals.bin"}
	rng := mathrand.New(mathrand.NewPCG(3, 3))
	for k := 0; k < *cliCorruptions; k++ {
		name := files[k%len(files)]
		path := filepath.Join(ck, "ckpt-000003", name)
		orig, _ := os.ReadFile(path)
		bad := append([]byte(nil), orig...)
		how := "bit flip"
		switch k / len(files) % 3 {
		case 0:
			bad[rng.IntN(len(bad))] ^= 1 << rng.IntN(8)
		case 1:
			bad, how = bad[:rng.IntN(len(bad))], "truncation"
		default:
			i, j := rng.IntN(len(bad)), rng.IntN(len(bad))
			n := min(32, len(bad)-max(i, j))
			copy(bad[i:i+n], orig[j:j+n])
			how = "splice"
		}
		if bytes.Equal(bad, orig) {
			continue
		}
		os.WriteFile(path, bad, 0o644)
		r := runBinary(t, dir, "", append(args, "--resume", ck, "-o", "b.arrow", f.train)...)
		os.WriteFile(path, orig, 0o644)
		os.RemoveAll(filepath.Join(ck, "ckpt-000001")) // the resume rewrote the older snapshots; keep two
		noPanic(t, r)
		if r.code != 0 || !strings.Contains(string(r.stderr), "refusing snapshot ckpt-000003") ||
			!strings.Contains(string(r.stderr), "resuming from "+filepath.Join(ck, "ckpt-000002")) {
			t.Fatalf("%s of %s: %v", how, name, r)
		}
		sameFile(t, filepath.Join(dir, "a.arrow"), filepath.Join(dir, "b.arrow"))
		os.Remove(filepath.Join(dir, "b.arrow"))
	}
	for _, snap := range []string{"ckpt-000002", "ckpt-000003"} {
		os.Truncate(filepath.Join(ck, snap, "weights.bin"), 10)
	}
	r := runBinary(t, dir, "", append(args, "--resume", ck, "-o", "b.arrow", f.train)...)
	noPanic(t, r)
	if r.code != 1 || !strings.Contains(string(r.stderr), "ckpt-000002: weights.bin") || !strings.Contains(string(r.stderr), "ckpt-000003: weights.bin") {
		t.Fatalf("both snapshots damaged: %v", r)
	}
}

// TestUncertifiedCheckpoints checkpoints every epoch while certifying every
// second one (the README's large-data flags): uncertified epochs are saved
// with absent values, never NaN, which JSON cannot hold (defect 1).
func TestUncertifiedCheckpoints(t *testing.T) {
	f := fixtures(t)
	dir := t.TempDir()
	ck := filepath.Join(dir, "ck")
	r := runBinary(t, dir, "", "train", "-q", "--gap-every", "2", "--checkpoint", ck, "--keep-checkpoints", "--max-epochs", "3", "-o", "m.arrow", f.train)
	if r.code != 0 || strings.Contains(string(r.stderr), "NaN") {
		t.Fatalf("--gap-every 2 with checkpoints: %v", r)
	}
	b, err := os.ReadFile(filepath.Join(ck, "ckpt-000003", "state.json"))
	if err != nil || bytes.Contains(b, []byte("NaN")) || !bytes.Contains(b, []byte(`"certified":false`)) {
		t.Fatalf("state.json (%v): %.300s", err, b)
	}
}

// TestCheckpointDirectoryInUse: a run without --resume on a checkpoint
// directory holding snapshots is refused before any work, naming --resume
// and how to start afresh, and leaves the snapshots (in memory or the
// streamed duals they refer to) as they were, so that --resume still
// gives the uninterrupted run's model.
func TestCheckpointDirectoryInUse(t *testing.T) {
	f := fixtures(t)
	for _, duals := range []string{"memory", "stream"} {
		t.Run(duals, func(t *testing.T) {
			dir := t.TempDir()
			ck := filepath.Join(dir, "ck")
			common := []string{"train", "-q", "--gap-tol", "1e-9", "--duals", duals}
			if r := runBinary(t, dir, "", append(common, "--max-epochs", "4", "-o", "full.arrow", f.train)...); r.code != 0 {
				t.Fatalf("uninterrupted run: %v", r)
			}
			if r := runBinary(t, dir, "", append(common, "--max-epochs", "2", "--checkpoint", ck, "--keep-checkpoints", "-o", "first.arrow", f.train)...); r.code != 0 {
				t.Fatalf("first half: %v", r)
			}
			before := dirSizes(t, ck)
			r := runBinary(t, dir, "", append(common, "--max-epochs", "4", "--checkpoint", ck, "-o", "again.arrow", f.train)...)
			want := "--checkpoint " + ck + " holds the snapshots of an earlier run (newest ckpt-000002): continue it with --resume " + ck + ", or remove " + ck + " to start afresh"
			if r.code != 1 || !strings.Contains(string(r.stderr), want) || strings.Contains(string(r.stderr), "epoch") {
				t.Fatalf("fresh run on a directory with snapshots: %v\nwant %q", r, want)
			}
			if after := dirSizes(t, ck); !maps.Equal(before, after) {
				t.Errorf("the refused run changed the checkpoint directory: %v, was %v", after, before)
			}
			if _, err := os.Stat(filepath.Join(dir, "again.arrow")); err == nil {
				t.Errorf("the refused run wrote its model")
			}
			r = runBinary(t, dir, "", append(common, "--max-epochs", "4", "--resume", ck, "-o", "resumed.arrow", f.train)...)
			if r.code != 0 {
				t.Fatalf("resume: %v", r)
			}
			sameFile(t, filepath.Join(dir, "full.arrow"), filepath.Join(dir, "resumed.arrow"))
		})
	}
}

// TestFinishedRunRemovesSnapshots: a run that ends well removes its
// snapshots, CURRENT and the streamed duals it kept in the checkpoint
// directory (so the directory can be used afresh), unless
// --keep-checkpoints; an interrupted run keeps them.
func TestFinishedRunRemovesSnapshots(t *testing.T) {
	f := fixtures(t)
	for _, duals := range []string{"memory", "stream"} {
		t.Run(duals, func(t *testing.T) {
			dir := t.TempDir()
			ck := filepath.Join(dir, "ck")
			args := []string{"train", "--max-epochs", "3", "--gap-tol", "1e-9", "--duals", duals, "--checkpoint", ck}
			r := runBinary(t, dir, "", append(args, "-o", "a.arrow", f.train)...)
			if r.code != 0 || !strings.Contains(string(r.stderr), "checkpoint: "+filepath.Join(ck, "ckpt-000003")) ||
				!strings.Contains(string(r.stderr), "train: removed the snapshots in "+ck) {
				t.Fatalf("run: %v", r)
			}
			if left := dirEntries(t, ck); len(left) != 1 || left[0] != "LOCK" {
				t.Errorf("a finished run left %v in %s, want only LOCK", left, ck)
			}
			r = runBinary(t, dir, "", append(args, "--keep-checkpoints", "-o", "b.arrow", f.train)...)
			if r.code != 0 || strings.Contains(string(r.stderr), "removed the snapshots") {
				t.Fatalf("the same directory again, --keep-checkpoints: %v", r)
			}
			if snaps := train.Snapshots(ck); len(snaps) != 2 || snaps[0] != "ckpt-000003" {
				t.Errorf("--keep-checkpoints kept %v", snaps)
			}
			if _, err := os.Stat(filepath.Join(ck, "duals.stream")); (err == nil) != (duals == "stream") {
				t.Errorf("--duals %s --keep-checkpoints: duals.stream: %v", duals, err)
			}
		})
	}
}

// dirSizes maps each file under dir to its size and modification time.
func dirSizes(t *testing.T, dir string) map[string]string {
	t.Helper()
	m := map[string]string{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() == "LOCK" {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		m[path] = fmt.Sprint(info.Size(), info.ModTime().UnixNano())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestWorkersSameModelBytes: the default run, and the rounds on 1, 2, 3
// and 8 workers, write the same model bytes (the model does not depend on
// the cores), which record the schedule and round size and no worker
// count; the sequential SDCA writes another model, recording no schedule.
func TestWorkersSameModelBytes(t *testing.T) {
	f := fixtures(t)
	dir := t.TempDir()
	common := []string{"train", "-q", "--max-epochs", "4", "--gap-tol", "1e-9"}
	if r := runBinary(t, dir, "", append(common, "-o", "default.arrow", f.train)...); r.code != 0 {
		t.Fatal(r)
	}
	for _, w := range [][]string{{"--workers", "1", "--round-size", "2"}, {"--workers", "2"}, {"--workers", "3"}, {"--workers", "8"}, {"--workers", "0"}} {
		out := "w" + strings.Join(w, "") + ".arrow"
		if r := runBinary(t, dir, "", append(append(common, w...), "-o", out, f.train)...); r.code != 0 {
			t.Fatal(r)
		}
		sameFile(t, filepath.Join(dir, "default.arrow"), filepath.Join(dir, out))
	}
	_, facts := modelTraining(t, filepath.Join(dir, "default.arrow"))
	if facts["schedule"] != "rounds" || facts["round_size"] != float64(train.DefaultRoundSize) || facts["workers"] != nil {
		t.Fatalf("the default run's facts: %v", facts)
	}
	if r := runBinary(t, dir, "", append(common, "--workers", "1", "-o", "seq.arrow", f.train)...); r.code != 0 {
		t.Fatal(r)
	}
	a, _ := os.ReadFile(filepath.Join(dir, "default.arrow"))
	b, _ := os.ReadFile(filepath.Join(dir, "seq.arrow"))
	if bytes.Equal(a, b) {
		t.Fatal("the sequential SDCA wrote the rounds' model")
	}
	if _, facts := modelTraining(t, filepath.Join(dir, "seq.arrow")); facts["schedule"] != nil || facts["workers"] != nil {
		t.Fatalf("the sequential run's facts: %v", facts)
	}
}
