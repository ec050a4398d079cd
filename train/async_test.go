package train

import (
	"context"
	"errors"
	"math"
	"path/filepath"
	"strings"
	"testing"
)

// skipRace skips a test of asynchronous steps under the race detector:
// their lock-free reads and adds race by design (async.go).
func skipRace(t *testing.T) {
	t.Helper()
	if raceDetector {
		t.Skip("asynchronous SDCA steps read and add the weights without locks by design; the race detector reports them")
	}
}

// TestAsyncCertificateNeverLies runs asynchronous steps, atomic and wild,
// on 1, 2 and 3 workers, certifying after every epoch, against the optimum
// P* of a sequential run certified to 1e-11: at every certificate the
// training weights are ŵ(μ) recomputed from the duals bit for bit, the
// gap identity holds (Certify checks it), D ≤ P* ≤ P and P − P* ≤ the
// gap; the run reaches a gap of 1e-7. It counts how often the dual fell
// between two certificates (with one worker, never).
func TestAsyncCertificateNeverLies(t *testing.T) {
	skipRace(t)
	p := randomProblem(t, 91, 120, 6, 25, 3, true, 0)
	ctx := context.Background()
	ref, err := Train(ctx, p, Settings{MaxEpochs: 500, GapTol: 1e-11}, &SDCA{Seed: 1, Workers: 1})
	if err != nil || ref.Stopped != GapReached {
		t.Fatalf("reference run: %v, %+v", err, ref)
	}
	pstar := ref.Last.Primal
	slack := 1e-9 * max(1, math.Abs(pstar))
	for _, kind := range []string{AsyncAtomic, AsyncWild} {
		for _, P := range []int{1, 2, 3} {
			m := &SDCA{Seed: 3, Workers: P, Async: kind}
			if err := m.Init(p); err != nil {
				t.Fatal(err)
			}
			prev, dips := math.Inf(-1), 0
			var c Certificate
			for epoch := 1; epoch <= 300; epoch++ {
				if err := m.Epoch(ctx); err != nil {
					t.Fatal(err)
				}
				if c, err = m.Certify(ctx); err != nil {
					t.Fatalf("%s, %d workers, epoch %d: %v", kind, P, epoch, err)
				}
				sameBits(t, "training weights after a certificate vs ŵ(μ)", m.Weights(), mustWhat(t, p, m.duals))
				if c.Dual > pstar+slack || c.Primal < pstar-slack || c.Primal-pstar > c.Gap+slack {
					t.Fatalf("%s, %d workers, epoch %d: P %.15g, D %.15g, gap %.3g, P* %.15g", kind, P, epoch, c.Primal, c.Dual, c.Gap, pstar)
				}
				if c.Dual < prev {
					dips++
				}
				prev = c.Dual
				if c.Gap < 1e-7 {
					break
				}
			}
			t.Logf("%s, %d workers: gap %.3g after %d epochs, the dual fell %d times", kind, P, c.Gap, m.epoch, dips)
			if !(c.Gap < 1e-7) || P == 1 && dips > 0 {
				t.Fatalf("%s, %d workers: gap %g after %d epochs, the dual fell %d times", kind, P, c.Gap, m.epoch, dips)
			}
		}
	}
}

// TestAsyncResumes interrupts asynchronous steps inside an epoch: the
// snapshot holds ŵ(μ) of its duals, and the resumed run (on another number
// of workers) reaches the gap; a resume with the other kind, or with the
// rounds, is refused naming the schedule.
func TestAsyncResumes(t *testing.T) {
	skipRace(t)
	p := randomProblem(t, 92, 600, 5, 20, 3, true, 0)
	set := Settings{MaxEpochs: 200, GapTol: 1e-6, CheckpointEvery: 1}
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cc := &countingCtx{Context: ctx, cancel: cancel, at: -1}
	s := set
	s.Phase = func(ph string, ep int) {
		if ph == PhaseEpoch && ep == 2 {
			cc.calls, cc.at = 0, 3
		}
	}
	_, err := resumeRunWith(t, &SDCA{Seed: 7, Workers: 2, Async: AsyncAtomic}, p, s, dir, cc)
	var ie *InterruptedError
	if !errors.As(err, &ie) || ie.At.Step == 0 || ie.Snapshot == "" {
		t.Fatalf("interrupted run: %v", err)
	}
	c, err := LoadCheckpoint(dir, p, nil)
	if err != nil {
		t.Fatal(err)
	}
	m := &SDCA{Seed: 7, Workers: 3, Async: AsyncAtomic}
	if err := m.Resume(p, c); err != nil {
		t.Fatal(err)
	}
	// The resumed run took the snapshot's weights over (c.Weights is nil).
	sameBits(t, "the snapshot's weights vs ŵ(μ) of its duals", m.st.w, mustWhat(t, p, m.duals))
	if err := m.Close(); err != nil { // its duals' lock: the resumes below take it
		t.Fatal(err)
	}
	for _, other := range []*SDCA{{Seed: 7, Workers: 2, Async: AsyncWild}, {Seed: 7, Workers: 2}} {
		if _, err := resumeRunWith(t, other, p, set, dir, context.Background()); err == nil || !strings.Contains(err.Error(), "was made with asynchronous steps (SDCA.Async atomic)") {
			t.Fatalf("resumed %+v from a snapshot of atomic asynchronous steps: %v", other, err)
		}
	}
	res, err := resumeRunWith(t, &SDCA{Seed: 7, Workers: 3, Async: AsyncAtomic}, p, set, dir, context.Background())
	if err != nil || res.Stopped != GapReached {
		t.Fatalf("resumed run: %v, %+v", err, res)
	}
}

// TestAsyncRefusals: asynchronous steps refuse streamed duals by name; a
// sampler that cannot be split serves them.
func TestAsyncRefusals(t *testing.T) {
	p := randomProblem(t, 93, 30, 5, 10, 3, false, 0)
	stream := newStream(t, p, filepath.Join(t.TempDir(), "duals.stream"), 2048, 0)
	if err := (&SDCA{Workers: 2, Async: AsyncAtomic, Duals: stream}).Init(p); !errors.Is(err, ErrBadProblem) || !strings.Contains(err.Error(), "streamed") {
		t.Fatalf("asynchronous steps on streamed duals: %v", err)
	}
	if raceDetector {
		return
	}
	m := &SDCA{Workers: 2, Async: AsyncWild, Sampler: &cyclicSampler{gaps: make([]float64, p.N())}}
	if err := m.Init(p); err != nil {
		t.Fatal(err)
	}
	if err := m.Epoch(context.Background()); err != nil || m.Counters().Steps != int64(p.N()) {
		t.Fatalf("an epoch with a sampler that cannot be split: %v, %d steps", err, m.Counters().Steps)
	}
}
