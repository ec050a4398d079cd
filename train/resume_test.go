package train

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// countingCtx cancels its context on the n-th call of Err: a cancellation
// that lands at an exact check inside an epoch or a certificate pass. The
// passes call Err from several goroutines: mu guards the count.
type countingCtx struct {
	context.Context
	cancel func()
	mu     sync.Mutex
	calls  int
	at     int
}

func (c *countingCtx) Err() error {
	c.mu.Lock()
	c.calls++
	if c.calls == c.at {
		c.cancel()
	}
	c.mu.Unlock()
	return c.Context.Err()
}

// sameBits fails unless a and b are equal bit for bit.
func sameBits(t *testing.T, what string, a, b []float64) {
	t.Helper()
	if len(a) != len(b) {
		t.Fatalf("%s: %d vs %d weights", what, len(a), len(b))
	}
	for j := range a {
		if math.Float64bits(a[j]) != math.Float64bits(b[j]) {
			t.Fatalf("%s: weight %d: %.17g vs %.17g", what, j, a[j], b[j])
		}
	}
}

// resumeRun trains p from the newest snapshot in dir (or afresh when dir
// has none) with cancellation cut, and returns the result or the error.
func resumeRun(t *testing.T, p *Problem, set Settings, dir string, ctx context.Context) (*Result, error) {
	t.Helper()
	return resumeRunWith(t, &SDCA{Seed: 7, Workers: 1}, p, set, dir, ctx)
}

// resumeRunWith is resumeRun with the method m (fresh).
func resumeRunWith(t *testing.T, m *SDCA, p *Problem, set Settings, dir string, ctx context.Context) (*Result, error) {
	t.Helper()
	set.Checkpoint = saver(dir, m)
	if len(snapshotNames(dir)) > 0 {
		c, err := LoadCheckpoint(dir, p, func(s string) { t.Log(s) })
		if err != nil {
			t.Fatal(err)
		}
		defer c.Duals.Close()
		set.Resume = c
	}
	return Train(ctx, p, set, m)
}

// TestInterruptAnywhereResumesBitIdentical cancels training at every kind
// of moment — inside an epoch at an exact step, before and during a
// certificate pass, during a checkpoint write, during setup — resumes from
// the snapshot written on the way out, and requires the final weights,
// certificate and log to equal the uninterrupted run's bit for bit. Epochs
// are certified every second epoch only, so snapshots hold uncertified
// records (defect 1), and every epoch is checkpointed.
func TestInterruptAnywhereResumesBitIdentical(t *testing.T) {
	p := randomProblem(t, 61, 600, 4, 15, 3, true, 0)
	set := Settings{MaxEpochs: 5, GapTol: 1e-300, GapEvery: 2, CheckpointEvery: 1}
	full, err := resumeRun(t, p, set, t.TempDir(), context.Background())
	if err != nil {
		t.Fatal(err)
	}
	type cut struct {
		name  string
		phase string // on entering this phase of epoch ep,
		ep    int
		calls int // cancel at once (0) or on the calls-th check of ctx.Err after it
		at    Position
	}
	cuts := []cut{
		{"setup", PhaseSetup, 0, 1, Position{Pending: true}},
		{"cert-0", PhaseCertificate, 0, 0, Position{Pending: true}},
		{"epoch-1-start", PhaseEpoch, 1, 0, Position{}},
		{"epoch-1-step256", PhaseEpoch, 1, 2, Position{Step: 256}},
		{"epoch-3-step512", PhaseEpoch, 3, 3, Position{Epoch: 2, Step: 512}},
		{"cert-2-mid", PhaseCertificate, 2, 3, Position{Epoch: 2, Pending: true}},
		{"ckpt-2", PhaseCheckpoint, 2, 0, Position{Epoch: 2}},
		{"epoch-3", PhaseEpoch, 3, 0, Position{Epoch: 2}},
		{"cert-4", PhaseCertificate, 4, 0, Position{Epoch: 4, Pending: true}},
		{"epoch-5-step256", PhaseEpoch, 5, 2, Position{Epoch: 4, Step: 256}},
	}
	for _, c := range cuts {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			cc := &countingCtx{Context: ctx, cancel: cancel, at: -1}
			runCtx := context.Context(cc)
			s := set
			arm := func(ph string, ep int) {
				if ph == c.phase && ep == c.ep {
					if c.calls == 0 {
						cancel()
					}
					cc.calls, cc.at = 0, c.calls
				}
			}
			arm(PhaseSetup, 0)
			s.Phase = arm
			_, err := resumeRun(t, p, s, dir, runCtx)
			var ie *InterruptedError
			if !errors.As(err, &ie) || !errors.Is(err, context.Canceled) {
				t.Fatalf("interrupted run: %v", err)
			}
			t.Logf("%v", ie)
			if ie.At != c.at {
				t.Fatalf("stopped at %+v, want %+v", ie.At, c.at)
			}
			if ie.Phase != PhaseSetup && ie.Snapshot == "" {
				t.Fatalf("no snapshot after %v", ie)
			}
			res, err := resumeRun(t, p, set, dir, context.Background())
			if err != nil {
				t.Fatal(err)
			}
			sameBits(t, "resumed vs uninterrupted", full.Weights, res.Weights)
			if res.Last.Primal != full.Last.Primal || res.Last.Gap != full.Last.Gap || res.Epochs != full.Epochs {
				t.Fatalf("resumed certificate %+v after %d epochs, uninterrupted %+v after %d",
					res.Last, res.Epochs, full.Last, full.Epochs)
			}
			if len(res.Records) != len(full.Records) {
				t.Fatalf("%d records, want %d", len(res.Records), len(full.Records))
			}
			for i, r := range res.Records {
				f := full.Records[i]
				if r.Certified != f.Certified || r.Steps != f.Steps || r.LineSearch != f.LineSearch ||
					(r.Certified && (r.Primal != f.Primal || r.Gap != f.Gap)) {
					t.Fatalf("record %d: %+v, uninterrupted %+v", i, r, f)
				}
			}
		})
	}
}

// TestResumeAtOrPastMaxEpochs resumes a snapshot whose epoch is at or past
// MaxEpochs: the result carries the real certificate of that point and its
// epoch count, never zeros (defect 2), even when that epoch was not
// certified before (the record is completed).
func TestResumeAtOrPastMaxEpochs(t *testing.T) {
	p := randomProblem(t, 62, 40, 5, 10, 3, false, 0)
	dir := t.TempDir()
	set := Settings{MaxEpochs: 3, GapTol: 1e-300, GapEvery: 2, CheckpointEvery: 1}
	full, err := resumeRun(t, p, set, dir, context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, max := range []int{3, 2} {
		s := set
		s.MaxEpochs = max
		res, err := resumeRun(t, p, s, dir, context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if res.Epochs != 3 || res.Stopped != EpochLimit || res.Last.Primal != full.Last.Primal || res.Last.Gap != full.Last.Gap || res.Last.Gap == 0 {
			t.Fatalf("max %d: resumed %d epochs (%s), certificate %+v; the run had %+v", max, res.Epochs, res.Stopped, res.Last, full.Last)
		}
		sameBits(t, "weights", full.Weights, res.Weights)
	}
	// A snapshot of an uncertified epoch (2 with GapEvery 2 is certified; use 1 with GapEvery 3).
	dir2 := t.TempDir()
	s := Settings{MaxEpochs: 2, GapTol: 1e-300, GapEvery: 3, CheckpointEvery: 1}
	if _, err := resumeRun(t, p, s, dir2, context.Background()); err != nil {
		t.Fatal(err)
	}
	os.RemoveAll(filepath.Join(dir2, "ckpt-000002"))
	os.Remove(filepath.Join(dir2, "CURRENT"))
	s.MaxEpochs = 1
	res, err := resumeRun(t, p, s, dir2, context.Background())
	if err != nil {
		t.Fatal(err)
	}
	last := res.Records[len(res.Records)-1]
	if res.Epochs != 1 || !last.Certified || last.Epoch != 1 || last.Primal != res.Last.Primal || !(res.Last.Gap > 0) {
		t.Fatalf("resumed at epoch 1: %d epochs, last record %+v, certificate %+v", res.Epochs, last, res.Last)
	}
}

// TestResumeAfterFinishedRun resumes the last snapshot of a run that had
// already stopped on its gap (a kill before the model was written): no
// further epoch is trained (defect 5).
func TestResumeAfterFinishedRun(t *testing.T) {
	p := randomProblem(t, 63, 40, 5, 10, 3, false, 0)
	dir := t.TempDir()
	set := Settings{MaxEpochs: 50, GapTol: 0.05, CheckpointEvery: 1}
	full, err := resumeRun(t, p, set, dir, context.Background())
	if err != nil || full.Stopped != GapReached {
		t.Fatalf("%v, stopped %v", err, full)
	}
	res, err := resumeRun(t, p, set, dir, context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if res.Epochs != full.Epochs || res.Stopped != GapReached || len(res.Records) != len(full.Records) {
		t.Fatalf("resume of a finished run: %d epochs (%s), %d records; the run stopped after %d",
			res.Epochs, res.Stopped, len(res.Records), full.Epochs)
	}
	sameBits(t, "weights", full.Weights, res.Weights)
}

// TestResultIsCertifiedWeights checks that the weights returned are
// exactly the ones the final certificate is about (defect 14): ŵ(μ) of the
// final duals, whose primal a fresh pass reproduces bit for bit.
func TestResultIsCertifiedWeights(t *testing.T) {
	p := randomProblem(t, 64, 40, 5, 10, 3, true, 0)
	m := &SDCA{Seed: 3}
	res, err := Train(context.Background(), p, Settings{MaxEpochs: 4, GapTol: 1e-300}, m)
	if err != nil {
		t.Fatal(err)
	}
	sameBits(t, "result vs ŵ(μ)", mustWhat(t, p, m.duals), res.Weights)
	r, err := p.pass(context.Background(), res.Weights, m.duals, false)
	if err != nil {
		t.Fatal(err)
	}
	if r.Primal != res.Last.Primal || r.Primal-r.Dual != res.Last.Gap {
		t.Fatalf("pass over the written weights: P %.17g gap %.17g; certificate P %.17g gap %.17g",
			r.Primal, r.Primal-r.Dual, res.Last.Primal, res.Last.Gap)
	}
}

// TestRecordJSON checks that uncertified records (NaN) round-trip through
// JSON as absent values (defect 1).
func TestRecordJSON(t *testing.T) {
	recs := []EpochRecord{
		{Epoch: 1, Steps: 3, Primal: math.NaN(), Dual: math.NaN(), Gap: math.NaN(), Residual: math.NaN(), GapEstimate: 0.5},
		{Epoch: 2, Steps: 6, Certified: true, Primal: 1.5, Dual: 1.25, Gap: 0.25, Residual: math.NaN(), GapEstimate: math.NaN(),
			Metrics: map[string]float64{MetricAccuracy: 0.9}},
	}
	b, err := json.Marshal(recs)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "NaN") {
		t.Fatalf("JSON holds NaN: %s", b)
	}
	var back []EpochRecord
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	for i := range recs {
		a, z := fmt.Sprintf("%+v", recs[i]), fmt.Sprintf("%+v", back[i])
		if a != z {
			t.Fatalf("record %d: %s came back as %s", i, a, z)
		}
	}
}

// TestCheckpointVerifiesEverything edits state.json (with and without
// fixing its checksum), points CURRENT outside the directory, and resumes
// with a changed seed: each is refused with the reason (defect 6).
func TestCheckpointVerifiesEverything(t *testing.T) {
	p := randomProblem(t, 65, 30, 5, 10, 3, false, 0)
	dir := t.TempDir()
	set := Settings{MaxEpochs: 2, GapTol: 1e-300, CheckpointEvery: 1}
	if _, err := resumeRun(t, p, set, dir, context.Background()); err != nil {
		t.Fatal(err)
	}
	spath := filepath.Join(dir, "ckpt-000002", "state.json")
	orig, _ := os.ReadFile(spath)
	var f stateFile
	if err := json.Unmarshal(orig, &f); err != nil {
		t.Fatal(err)
	}
	var st checkpointState
	if err := json.Unmarshal(f.State, &st); err != nil {
		t.Fatal(err)
	}
	edits := []struct {
		name string
		edit func(*checkpointState)
		want string
	}{
		{"negative epoch", func(s *checkpointState) { s.Epoch = -1 }, "epoch -1"},
		{"rng", func(s *checkpointState) { s.RNG = s.RNG[:10] }, "random state"},
		{"sampler gap", func(s *checkpointState) { s.Sampler.Gaps[3] = -1 }, "sampler gap 3"},
		{"steps", func(s *checkpointState) { s.Steps++ }, "steps done"},
		{"wsq", func(s *checkpointState) { s.WSq *= 1.001 }, "‖w‖²"},
		{"duals crc", func(s *checkpointState) { s.DualsCRC++ }, "CRC-32C"},
	}
	for _, e := range edits {
		s := st
		s.Sampler.Gaps = append([]float64(nil), st.Sampler.Gaps...)
		e.edit(&s)
		// Edited without the checksum: refused for the checksum.
		body, _ := json.Marshal(s)
		raw, _ := json.Marshal(stateFile{SHA256: f.SHA256, State: body})
		os.WriteFile(spath, raw, 0o644)
		if _, err := loadSnapshot(filepath.Join(dir, "ckpt-000002"), p); err == nil || !strings.Contains(err.Error(), "checksum") {
			t.Errorf("%s, checksum not updated: %v", e.name, err)
		}
		// Edited with a valid checksum: refused for what is wrong.
		enc, _ := encodeState(s)
		os.WriteFile(spath, enc, 0o644)
		if _, err := loadSnapshot(filepath.Join(dir, "ckpt-000002"), p); err == nil || !strings.Contains(err.Error(), e.want) {
			t.Errorf("%s: %v, want %q", e.name, err, e.want)
		}
	}
	os.WriteFile(spath, orig, 0o644)
	// CURRENT naming something outside the directory is ignored, with a warning.
	os.WriteFile(filepath.Join(dir, "CURRENT"), []byte("../../etc\n"), 0o644)
	var warned []string
	c, err := LoadCheckpoint(dir, p, func(s string) { warned = append(warned, s) })
	if err != nil {
		t.Fatal(err)
	}
	c.Duals.Close()
	if c.state.Epoch != 2 || len(warned) != 1 || !strings.Contains(warned[0], "not a snapshot") {
		t.Fatalf("CURRENT outside: loaded epoch %d, warnings %q", c.state.Epoch, warned)
	}
	// Another seed is refused, naming the setting and both values.
	c, err = LoadCheckpoint(dir, p, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Duals.Close()
	m := &SDCA{Seed: 8, Workers: 1}
	s := set
	s.Resume = c
	_, err = Train(context.Background(), p, s, m)
	if !isSettingsError(err, "Seed", "7", "8") || !strings.Contains(err.Error(), "SDCA.Seed 8: ") || !strings.Contains(err.Error(), "was made with SDCA.Seed 7") {
		t.Fatalf("resume with another seed: %v", err)
	}
}

// TestLockDir checks that a second lock of a checkpoint directory fails at
// once and that the lock cleans what interrupted runs left (defects 4, 5).
func TestLockDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ck")
	l, err := LockDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := LockDir(dir); !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), "locked by another training run") {
		t.Fatalf("second lock: %v", err)
	}
	os.Mkdir(filepath.Join(dir, ".ckpt-000003.tmp-123"), 0o755)
	os.WriteFile(filepath.Join(dir, "CURRENT.tmp"), nil, 0o644)
	os.WriteFile(filepath.Join(dir, "keep.txt"), nil, 0o644)
	l.Unlock()
	l, err = LockDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Unlock()
	ents, _ := os.ReadDir(dir)
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	if strings.Join(names, " ") != "LOCK keep.txt" {
		t.Fatalf("after relocking: %v", names)
	}
	if _, err := LockDir(filepath.Join(dir, "keep.txt", "x")); err == nil {
		t.Fatal("a path under a file was accepted")
	}
}
