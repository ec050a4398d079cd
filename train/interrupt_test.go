package train

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestWarmResumeBeforeFirstCertificate: a warm-started run stopped before
// its initial certificate (whose exact block gaps become the sampler's
// estimates) and resumed without the kept duals ends with the weights of
// the uninterrupted run, bit for bit: the snapshot records that the
// initial gaps are still to be handed over. (It used to resume with the
// cold estimates and end at another primal.)
func TestWarmResumeBeforeFirstCertificate(t *testing.T) {
	p := randomProblem(t, 62, 30, 5, 10, 3, true, 0)
	_, cm := trainCold(t, p, 1e-6)
	old := cm.Store()
	q := grown(t, p, 15, []int{0, 1, 2}, 3)
	from := make([]int, q.N())
	for i := range from {
		from[i] = -1
		if i < p.N() {
			from[i] = i
		}
	}
	warm := func() *SDCA {
		return &SDCA{Seed: 8, Workers: 1, Warm: &WarmStart{From: from, Labels: []int{0, 1, 2}, Blocks: storeBlocks(old)}}
	}
	set := Settings{MaxEpochs: 4, GapTol: 1e-300, CheckpointEvery: 1}
	full, err := Train(context.Background(), q, set, warm())
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		phase string
		calls int
	}{
		{"at-once", PhaseCertificate, 0},
		{"mid-pass", PhaseCertificate, 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			cc := &countingCtx{Context: ctx, cancel: cancel, at: -1}
			m := warm()
			s := set
			s.Checkpoint = saver(dir, m)
			s.Phase = func(ph string, ep int) {
				if ph == c.phase && ep == 0 {
					if c.calls == 0 {
						cancel()
					}
					cc.calls, cc.at = 0, c.calls
				}
			}
			_, err := Train(cc, q, s, m)
			var ie *InterruptedError
			if !errors.As(err, &ie) || ie.At != (Position{Pending: true}) || ie.Snapshot == "" {
				t.Fatalf("got %v, want a snapshot before the initial certificate", err)
			}
			ck, err := LoadCheckpoint(dir, q, func(s string) { t.Error(s) })
			if err != nil {
				t.Fatal(err)
			}
			defer ck.Duals.Close()
			if !ck.state.WarmGaps {
				t.Fatal("the snapshot does not record the initial gaps still to be handed over")
			}
			r := &SDCA{Seed: 8, Workers: 1}
			s = set
			s.Resume, s.Checkpoint = ck, saver(dir, r)
			res, err := Train(context.Background(), q, s, r)
			if err != nil {
				t.Fatal(err)
			}
			sameBits(t, "resumed vs uninterrupted", full.Weights, res.Weights)
			if res.Last.Primal != full.Last.Primal {
				t.Fatalf("primal %.17g, uninterrupted %.17g", res.Last.Primal, full.Last.Primal)
			}
		})
	}
}

// TestFactsSurviveResume: the caller's facts (Settings.Facts) are in every
// snapshot, and a resumed run's checkpoint returns them.
func TestFactsSurviveResume(t *testing.T) {
	p := randomProblem(t, 63, 20, 5, 10, 3, true, 0)
	dir := t.TempDir()
	m := &SDCA{Seed: 3, Workers: 1}
	facts := []byte(`{"warm_start":{"from":"k.duals","kept":3}}`)
	if _, err := Train(context.Background(), p, Settings{MaxEpochs: 2, GapTol: 1e-300, CheckpointEvery: 1,
		Checkpoint: saver(dir, m), Facts: facts}, m); err != nil {
		t.Fatal(err)
	}
	c, err := LoadCheckpoint(dir, p, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Duals.Close()
	if string(c.Facts()) != string(facts) {
		t.Fatalf("facts %s, want %s", c.Facts(), facts)
	}
}

// TestStreamCheckpointWithinEpochPhase: a cancellation during a checkpoint
// written within an epoch (a streamed store's commit) says it was in that
// epoch, not after the one before (which it used to).
func TestStreamCheckpointWithinEpochPhase(t *testing.T) {
	p := randomProblem(t, 76, 200, 6, 15, 3, true, 0)
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	inEpoch2 := false
	set := Settings{MaxEpochs: 4, GapTol: 1e-300, GapEvery: 2, CheckpointEvery: 1,
		Phase: func(ph string, ep int) {
			switch {
			case ph == PhaseEpoch && ep == 2:
				inEpoch2 = true
			case ph == PhaseCheckpoint && inEpoch2:
				cancel()
			}
		}}
	_, err := streamCkptRun(t, p, filepath.Join(dir, "duals"), filepath.Join(dir, "ck"), set, ctx, nil)
	var ie *InterruptedError
	if !errors.As(err, &ie) {
		t.Fatalf("got %v, want an interruption", err)
	}
	if ie.At.Epoch != 1 || ie.At.Step == 0 {
		t.Fatalf("stopped at %+v, want within epoch 2 (the commit's position)", ie.At)
	}
	if msg := ie.Error(); !strings.HasPrefix(msg, "interrupted during a checkpoint write in epoch 2 (the write was completed); stopped after step ") {
		t.Fatalf("%q: want the write in epoch 2", msg)
	}
}

// TestStreamDamagedNewestSnapshot: when the newest snapshot of a streamed
// run is damaged, the previous one stands in for it only while the
// streamed file still holds its blocks. Resumed at once after the newest
// was written (no block written since), the run ends as the uninterrupted
// one; after blocks were written past it (a crash before the next
// commit), the resume is refused naming the damaged snapshot, not calling
// the streamed file corrupt.
func TestStreamDamagedNewestSnapshot(t *testing.T) {
	p := randomProblem(t, 77, 200, 6, 15, 3, true, 0)
	set := Settings{MaxEpochs: 4, GapTol: 1e-300, GapEvery: 2, CheckpointEvery: 1}
	base := t.TempDir()
	full, err := streamCkptRun(t, p, filepath.Join(base, "duals"), filepath.Join(base, "ck"), set, context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	damage := func(t *testing.T, ck string) string {
		t.Helper()
		newest := snapshotNames(ck)[0]
		path := filepath.Join(ck, newest, "state.json")
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		b[len(b)/2] ^= 0x20
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return newest
	}
	t.Run("previous-intact", func(t *testing.T) {
		dir := t.TempDir()
		path, ck := filepath.Join(dir, "duals"), filepath.Join(dir, "ck")
		ctx, cancel := context.WithCancel(context.Background())
		k := 0
		stop := func(save func(Progress) (string, error)) func(Progress) (string, error) {
			return func(pr Progress) (string, error) {
				if k++; k == 6 {
					defer cancel() // after this snapshot, nothing more is written
				}
				return save(pr)
			}
		}
		if _, err := streamCkptRun(t, p, path, ck, set, ctx, stop); err == nil {
			t.Fatal("the run was not interrupted")
		}
		damage(t, ck)
		res, err := streamCkptRun(t, p, path, ck, set, context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		sameBits(t, "resumed from the previous snapshot vs uninterrupted", full.Weights, res.Weights)
	})
	t.Run("previous-overwritten", func(t *testing.T) {
		dir := t.TempDir()
		path, ck := filepath.Join(dir, "duals"), filepath.Join(dir, "ck")
		crash := errors.New("crash")
		k := 0
		fail := func(save func(Progress) (string, error)) func(Progress) (string, error) {
			return func(pr Progress) (string, error) {
				if k++; k == 7 {
					return "", crash // blocks written since the 6th commit
				}
				return save(pr)
			}
		}
		if _, err := streamCkptRun(t, p, path, ck, set, context.Background(), fail); !errors.Is(err, crash) {
			t.Fatalf("got %v, want the crash", err)
		}
		newest := damage(t, ck)
		_, err := streamCkptRun(t, p, path, ck, set, context.Background(), nil)
		if err == nil || !strings.Contains(err.Error(), newest+", the snapshot to continue from, is damaged") ||
			!strings.Contains(err.Error(), "cannot stand in for it") || !strings.Contains(err.Error(), "start afresh") {
			t.Fatalf("got %v, want a refusal naming the damaged snapshot %s", err, newest)
		}
	})
}
