package train

import (
	"context"
	"errors"
	"math"
	"runtime"
	"slices"
	"testing"
)

// TestParallelSameBits checks that a parallel SDCA gives the same weights
// bit for bit for the same seed and number of workers — three runs each,
// whatever the goroutines' timing — and that the workers do change the
// trajectory (2 and 3 workers end elsewhere than 1).
func TestParallelSameBits(t *testing.T) {
	p := randomProblem(t, 71, 300, 6, 40, 4, true, 0)
	set := Settings{MaxEpochs: 4, GapTol: 1e-300, GapEvery: 2}
	ctx := context.Background()
	var ends [][]float64
	for _, P := range []int{1, 2, 3} {
		var first *Result
		for run := range 3 {
			res, err := Train(ctx, p, set, &SDCA{Seed: 5, Workers: P, RoundSteps: 16})
			if err != nil {
				t.Fatal(err)
			}
			if run == 0 {
				first = res
				continue
			}
			sameBits(t, "same seed and workers", first.Weights, res.Weights)
			for i, r := range res.Records {
				if f := first.Records[i]; r.Steps != f.Steps || r.LineSearch != f.LineSearch || r.GapEstimate != f.GapEstimate ||
					r.Certified != f.Certified || (r.Certified && r.Gap != f.Gap) {
					t.Fatalf("%d workers, run %d, record %d: %+v, first run %+v", P, run, i, r, f)
				}
			}
		}
		if first.Records[4].Steps != int64(4*p.N()) {
			t.Fatalf("%d workers: %d steps in 4 epochs of %d sentences", P, first.Records[4].Steps, p.N())
		}
		ends = append(ends, first.Weights)
	}
	for k := 1; k < len(ends); k++ {
		if slices.Equal(ends[0], ends[k]) {
			t.Fatalf("%d workers end on the sequential weights", k+1)
		}
	}
}

// TestParallelKeepsWHat checks, after every epoch of 3 workers with short
// rounds, that the committed weights equal ŵ(μ) recomputed from the duals
// up to rounding, that the certificate's gap identity holds (Certify
// checks it), and that the dual objective never decreases — every commit
// ascends D — while the gap falls. (The problem is small and dense — 30
// attributes shared by 200 sentences — so each oracle's staleness costs
// much: one step per worker and round.)
func TestParallelKeepsWHat(t *testing.T) {
	p := randomProblem(t, 72, 200, 7, 30, 4, true, 0)
	m := &SDCA{Seed: 3, Workers: 3, RoundSteps: 1}
	if err := m.Init(p); err != nil {
		t.Fatal(err)
	}
	if o, ok := m.sched.(*ordered); !ok || p.N() < 5*len(o.slots) {
		t.Fatalf("want a parallel run of several rounds per epoch, have %T", m.sched)
	}
	ctx := context.Background()
	prev, err := m.Certify(ctx)
	if err != nil {
		t.Fatal(err)
	}
	first := prev.Gap
	for epoch := 1; epoch <= 8; epoch++ {
		if err := m.Epoch(ctx); err != nil {
			t.Fatal(err)
		}
		what := mustWhat(t, p, m.duals)
		scale := 0.0
		for _, x := range what {
			scale = max(scale, math.Abs(x))
		}
		for j, x := range m.Weights() {
			if math.Abs(x-what[j]) > 1e-11*scale {
				t.Fatalf("epoch %d: w[%d] = %.17g, ŵ(μ) %.17g", epoch, j, x, what[j])
			}
		}
		if dw := dot(m.Weights(), m.Weights()); m.st.wsq != dw {
			t.Fatalf("epoch %d: ‖w‖² kept %.17g, of w %.17g", epoch, m.st.wsq, dw)
		}
		c, err := m.Certify(ctx)
		if err != nil {
			t.Fatalf("epoch %d: %v", epoch, err)
		}
		if c.Dual < prev.Dual-1e-12*math.Abs(prev.Dual) {
			t.Fatalf("epoch %d: the dual fell from %.15g to %.15g", epoch, prev.Dual, c.Dual)
		}
		prev = c
	}
	if !(prev.Gap < first/10) {
		t.Fatalf("gap %g after 8 epochs, %g at the start", prev.Gap, first)
	}
}

// TestParallelConverges checks that 2 workers reach a certified gap of
// 1e-8 on a small problem with each sampler (split among the workers).
func TestParallelConverges(t *testing.T) {
	for _, kind := range []string{"uniform", "gap", "importance", "gap-importance"} {
		t.Run(kind, func(t *testing.T) {
			p := randomProblem(t, 31, 40, 6, 15, 3, false, 0.05)
			res, err := Train(context.Background(), p, Settings{MaxEpochs: 1000, GapTol: 1e-8},
				&SDCA{Sampler: kindSampler(t, kind, p), Seed: 9, Workers: 2, RoundSteps: 4})
			if err != nil {
				t.Fatal(err)
			}
			if res.Stopped != GapReached {
				t.Fatalf("stopped by %s at gap %g after %d epochs", res.Stopped, res.Last.Gap, res.Epochs)
			}
			t.Logf("%d epochs", res.Epochs)
		})
	}
}

// TestParallelResumesBitIdentical interrupts a run of 2 workers inside an
// epoch (it stops at the end of a round) and between epochs, resumes from
// the snapshot written on the way out, and requires the uninterrupted run's
// weights, certificate and log bit for bit; resuming with another number of
// workers is refused, naming the setting.
func TestParallelResumesBitIdentical(t *testing.T) {
	p := randomProblem(t, 73, 400, 4, 15, 3, true, 0)
	set := Settings{MaxEpochs: 4, GapTol: 1e-300, GapEvery: 2, CheckpointEvery: 1}
	newM := func() *SDCA { return &SDCA{Seed: 7, Workers: 2, RoundSteps: 20} }
	full, err := resumeRunWith(t, newM(), p, set, t.TempDir(), context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		ep    int // cancel in epoch ep,
		calls int // on this check of ctx.Err after it starts (0: at once)
		mid   bool
	}{{"epoch-2-round-3", 2, 4, true}, {"epoch-3-round-1", 3, 2, true}, {"epoch-3-start", 3, 0, false}} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			cc := &countingCtx{Context: ctx, cancel: cancel, at: -1}
			s := set
			s.Phase = func(ph string, ep int) {
				if ph == PhaseEpoch && ep == c.ep {
					if c.calls == 0 {
						cancel()
					}
					cc.calls, cc.at = 0, c.calls
				}
			}
			_, err := resumeRunWith(t, newM(), p, s, dir, cc)
			var ie *InterruptedError
			if !errors.As(err, &ie) || !errors.Is(err, context.Canceled) {
				t.Fatalf("interrupted run: %v", err)
			}
			t.Logf("%v", ie)
			if (ie.At.Step > 0) != c.mid || ie.At.Epoch != c.ep-1 || ie.Snapshot == "" {
				t.Fatalf("stopped at %+v (snapshot %q)", ie.At, ie.Snapshot)
			}
			other := &SDCA{Seed: 7, Workers: 3, RoundSteps: 20}
			if _, err := resumeRunWith(t, other, p, set, dir, context.Background()); !isSettingsError(err, "Workers", "2", "3") {
				t.Fatalf("resumed with 3 workers a snapshot of 2: %v", err)
			}
			res, err := resumeRunWith(t, newM(), p, set, dir, context.Background())
			if err != nil {
				t.Fatal(err)
			}
			sameBits(t, "resumed vs uninterrupted", full.Weights, res.Weights)
			if res.Last.Gap != full.Last.Gap || len(res.Records) != len(full.Records) {
				t.Fatalf("resumed: gap %g, %d records; uninterrupted: gap %g, %d records", res.Last.Gap, len(res.Records), full.Last.Gap, len(full.Records))
			}
			for i, r := range res.Records {
				f := full.Records[i]
				if r.Certified != f.Certified || r.Steps != f.Steps || r.LineSearch != f.LineSearch || r.GapEstimate != f.GapEstimate ||
					(r.Certified && r.Gap != f.Gap) {
					t.Fatalf("record %d: %+v, uninterrupted %+v", i, r, f)
				}
			}
		})
	}
}

// TestEstimateMemoryCountsWorkers checks that the memory estimate of a
// parallel SDCA counts the scratch space of every slot of its rounds.
func TestEstimateMemoryCountsWorkers(t *testing.T) {
	p := randomProblem(t, 75, 50, 6, 20, 4, false, 0)
	one := EstimateMemory(p, MemoryOptions{Method: &SDCA{Workers: 1}, DualsInMemory: true, Workers: 1})
	three := EstimateMemory(p, MemoryOptions{Method: &SDCA{Workers: 3}, DualsInMemory: true, Workers: 1})
	if got, want := three.Scratch-one.Scratch, int64(3*p.Layout.NumLabels*p.Layout.NumLabels*8); got < want {
		t.Fatalf("3 workers add %d bytes of scratch, want at least their slots' %d", got, want)
	}
	if n := (&SDCA{Workers: 3}).NumWorkers(p.N()); n != 3 {
		t.Fatalf("NumWorkers = %d with Workers 3", n)
	}
	if n := (&SDCA{Workers: 3}).NumWorkers(2); n != 2 {
		t.Fatalf("NumWorkers = %d with Workers 3 on 2 sentences", n)
	}
}

// TestParallelStepsDoNotAllocate checks that the steps of a round — the
// parallel phase's halves and the ordered commits — allocate nothing once
// the slots' scratch space has grown (starting a round's goroutines is
// not counted).
func TestParallelStepsDoNotAllocate(t *testing.T) {
	p := randomProblem(t, 76, 100, 8, 20, 4, true, 0)
	m := &SDCA{Seed: 1, Workers: 2, RoundSteps: 8}
	if err := m.Init(p); err != nil {
		t.Fatal(err)
	}
	if err := m.Epoch(context.Background()); err != nil {
		t.Fatal(err)
	}
	o := m.sched.(*ordered)
	for _, ws := range o.slots { // every slot's scratch grown on every sentence
		for i := range p.N() {
			m.st.oracle(ws, i)
			m.st.direct(ws)
			clear(ws.vt)
		}
	}
	if a := testing.AllocsPerRun(20, func() {
		o.draw(len(o.slots))
		for r := range o.sents {
			o.prepare(0, r)
		}
		o.commitAll()
	}); a != 0 {
		t.Fatalf("%v allocations per round", a)
	}
}

// TestWorkersSetting checks how Workers resolves: 0 is DefaultWorkers,
// AllWorkers is GOMAXPROCS, a sampler that cannot be split keeps
// AllWorkers sequential and is refused with 2 workers, and a sequential
// run records no workers in its run settings (its snapshots are those of
// an SDCA without workers) while a parallel one records both settings.
func TestWorkersSetting(t *testing.T) {
	p := randomProblem(t, 77, 30, 5, 10, 3, false, 0)
	if n := (&SDCA{}).NumWorkers(p.N()); n != DefaultWorkers {
		t.Fatalf("Workers 0: %d workers", n)
	}
	if n, want := (&SDCA{Workers: AllWorkers}).NumWorkers(1000), runtime.GOMAXPROCS(0); n != want {
		t.Fatalf("AllWorkers: %d workers, GOMAXPROCS %d", n, want)
	}
	// The parallel oracles draw from the run's one sampler: any sampler
	// serves several workers (the former partitioned rounds needed a
	// Splitter).
	two := &SDCA{Workers: 2, Sampler: &cyclicSampler{gaps: make([]float64, p.N())}}
	if n := two.NumWorkers(p.N()); n != 2 {
		t.Fatalf("2 workers with a sampler that cannot be split: %d workers", n)
	}
	if err := two.Init(p); err != nil {
		t.Fatalf("2 workers with a sampler that cannot be split: %v", err)
	}
	if err := two.Epoch(context.Background()); err != nil {
		t.Fatalf("2 workers with a sampler that cannot be split, an epoch: %v", err)
	}
	if err := (&SDCA{Workers: -2}).Init(p); !errors.Is(err, ErrBadProblem) {
		t.Fatalf("Workers -2: %v", err)
	}
	if rs := (&SDCA{Workers: 1}).RunSettings(p); rs.Workers != 1 || rs.RoundSteps != 0 {
		t.Fatalf("sequential run settings: %v", rs)
	}
	if rs := (&SDCA{Workers: 2}).RunSettings(p); rs.Workers != 2 || rs.RoundSteps != DefaultRoundSize/2 {
		t.Fatalf("parallel run settings: %v", rs)
	}
}
