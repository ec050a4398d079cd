package train

import (
	"context"
	"errors"
	"math"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// TestParallelSameBits checks that a parallel SDCA gives the same weights,
// records and certificates bit for bit for the same seed and round size
// whatever the workers — three runs each, whatever the goroutines' timing —
// and that the round size does change the trajectory.
func TestParallelSameBits(t *testing.T) {
	p := randomProblem(t, 71, 300, 6, 40, 4, true, 0)
	set := Settings{MaxEpochs: 4, GapTol: 1e-300, GapEvery: 2}
	ctx := context.Background()
	var ends [][]float64
	for _, R := range []int{4, 16} {
		var first *Result
		for run, P := range []int{2, 3, 2, 1} {
			res, err := Train(ctx, p, set, &SDCA{Seed: 5, Workers: P, RoundSize: R})
			if err != nil {
				t.Fatal(err)
			}
			if run == 0 {
				first = res
				continue
			}
			sameBits(t, "same seed and round", first.Weights, res.Weights)
			for i, r := range res.Records {
				if f := first.Records[i]; r.Steps != f.Steps || r.LineSearch != f.LineSearch || r.GapEstimate != f.GapEstimate ||
					r.Certified != f.Certified || (r.Certified && r.Gap != f.Gap) {
					t.Fatalf("R %d, %d workers, record %d: %+v, first run %+v", R, P, i, r, f)
				}
			}
		}
		if first.Records[4].Steps != int64(4*p.N()) {
			t.Fatalf("R %d: %d steps in 4 epochs of %d sentences", R, first.Records[4].Steps, p.N())
		}
		ends = append(ends, first.Weights)
	}
	if slices.Equal(ends[0], ends[1]) {
		t.Fatal("rounds of 4 and 16 end on the same weights")
	}
}

// TestParallelKeepsWHat checks, after every epoch of 3 workers with
// rounds of 3, that the committed weights equal ŵ(μ) recomputed from the duals
// up to rounding, that the certificate's gap identity holds (Certify
// checks it), and that the dual objective never decreases — every commit
// ascends D — while the gap falls. (The problem is small and dense — 30
// attributes shared by 200 sentences — so each oracle's staleness costs
// much: one step per worker and round, two rounds stale.)
func TestParallelKeepsWHat(t *testing.T) {
	p := randomProblem(t, 72, 200, 7, 30, 4, true, 0)
	m := &SDCA{Seed: 3, Workers: 3, RoundSize: 3}
	if err := m.Init(p); err != nil {
		t.Fatal(err)
	}
	if o, ok := m.sched.(*ordered); !ok || p.N() < 5*o.R {
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
				&SDCA{Sampler: kindSampler(t, kind, p), Seed: 9, Workers: 2, RoundSize: 8})
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
// epoch (it stops where its pipeline is empty, at the end of a segment)
// and between epochs, resumes from the snapshot written on the way out
// with 3 workers, and requires the uninterrupted run's weights,
// certificate and log bit for bit; resuming with another round size, or
// sequentially, is refused, naming the setting.
func TestParallelResumesBitIdentical(t *testing.T) {
	p := randomProblem(t, 73, 400, 4, 15, 3, true, 0)
	set := Settings{MaxEpochs: 4, GapTol: 1e-300, GapEvery: 2, CheckpointEvery: 1}
	newM := func(P, R int) *SDCA { return &SDCA{Seed: 7, Workers: P, RoundSize: R, segRounds: 10} }
	full, err := resumeRunWith(t, newM(2, 4), p, set, t.TempDir(), context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		ep    int // cancel in epoch ep,
		calls int // on this check of ctx.Err after it starts (0: at once)
		mid   bool
	}{{"epoch-2-segment-3", 2, 4, true}, {"epoch-3-segment-1", 3, 2, true}, {"epoch-3-start", 3, 0, false}} {
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
			_, err := resumeRunWith(t, newM(2, 4), p, s, dir, cc)
			var ie *InterruptedError
			if !errors.As(err, &ie) || !errors.Is(err, context.Canceled) {
				t.Fatalf("interrupted run: %v", err)
			}
			t.Logf("%v", ie)
			if (ie.At.Step > 0) != c.mid || ie.At.Epoch != c.ep-1 || ie.Snapshot == "" {
				t.Fatalf("stopped at %+v (snapshot %q)", ie.At, ie.Snapshot)
			}
			if _, err := resumeRunWith(t, newM(2, 5), p, set, dir, context.Background()); err == nil || !strings.Contains(err.Error(), "made with SDCA.RoundSize 4") {
				t.Fatalf("resumed with rounds of 5 a snapshot of rounds of 4: %v", err)
			}
			if _, err := resumeRunWith(t, newM(1, 0), p, set, dir, context.Background()); err == nil || !strings.Contains(err.Error(), "this run has the sequential SDCA") {
				t.Fatalf("resumed sequentially a snapshot of the rounds: %v", err)
			}
			res, err := resumeRunWith(t, newM(3, 4), p, set, dir, context.Background())
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

// TestEstimateMemoryCountsWorkers checks that the memory estimate of the
// rounds counts the second copy of the weights and the scratch space of
// every slot of the four rounds it holds, and that of asynchronous steps
// every worker's scratch.
func TestEstimateMemoryCountsWorkers(t *testing.T) {
	p := randomProblem(t, 75, 50, 6, 20, 4, false, 0)
	KK := int64(p.Layout.NumLabels * p.Layout.NumLabels * 8)
	one := EstimateMemory(p, MemoryOptions{Method: &SDCA{Workers: 1}, DualsInMemory: true, Workers: 1})
	rounds := EstimateMemory(p, MemoryOptions{Method: &SDCA{Workers: 2, RoundSize: 4}, DualsInMemory: true, Workers: 1})
	if got, want := rounds.Scratch-one.Scratch, nsets*4*KK; got < want {
		t.Fatalf("rounds of 4 add %d bytes of scratch, want at least their slots' %d", got, want)
	}
	if got, want := rounds.Weights-one.Weights, int64(p.Layout.Dim()*8); got != want {
		t.Fatalf("the rounds add %d bytes of weights, want the second copy's %d", got, want)
	}
	async := EstimateMemory(p, MemoryOptions{Method: &SDCA{Workers: 3, Async: AsyncAtomic}, DualsInMemory: true, Workers: 1})
	if got, want := async.Scratch-one.Scratch, 3*KK; got < want || async.Weights != one.Weights {
		t.Fatalf("3 asynchronous workers add %d bytes of scratch (want at least %d) and %d of weights", got, want, async.Weights-one.Weights)
	}
	if n := (&SDCA{Workers: 3}).NumWorkers(p.N()); n != 3 {
		t.Fatalf("NumWorkers = %d with Workers 3", n)
	}
	if n := (&SDCA{Workers: 3}).NumWorkers(2); n != 2 {
		t.Fatalf("NumWorkers = %d with Workers 3 on 2 sentences", n)
	}
}

// TestWorkersSetting checks how Workers resolves: 0 is DefaultWorkers,
// AllWorkers is GOMAXPROCS, any sampler serves the rounds, and a
// sequential run records one worker and no schedule in its run settings
// (its snapshots are those of an SDCA without workers) while the rounds
// record their schedule and size and not the workers, and asynchronous
// steps their kind.
func TestWorkersSetting(t *testing.T) {
	p := randomProblem(t, 77, 30, 5, 10, 3, false, 0)
	if n := (&SDCA{}).NumWorkers(p.N()); n != min(runtime.GOMAXPROCS(0), p.N()) {
		t.Fatalf("Workers 0: %d workers, GOMAXPROCS %d", n, runtime.GOMAXPROCS(0))
	}
	if n, want := (&SDCA{Workers: AllWorkers}).NumWorkers(1000), runtime.GOMAXPROCS(0); n != want {
		t.Fatalf("AllWorkers: %d workers, GOMAXPROCS %d", n, want)
	}
	// On one core, or one sentence, the default is the rounds on one
	// worker, not the sequential SDCA: the same model on every machine.
	for _, m := range []*SDCA{{}, {Workers: AllWorkers}, {Workers: 3}} {
		if kind, P, R := m.Schedule(1); kind != ScheduleRounds || P != 1 || R != DefaultRoundSize {
			t.Fatalf("Workers %d on one sentence: %s on %d workers, rounds of %d", m.Workers, kind, P, R)
		}
	}
	if kind, _, _ := (&SDCA{Workers: 1}).Schedule(1000); kind != ScheduleSequential {
		t.Fatalf("Workers 1: %s", kind)
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
	if rs := (&SDCA{Workers: 1}).RunSettings(p); rs.Workers != 1 || rs.Schedule != "" || rs.RoundSize != 0 {
		t.Fatalf("sequential run settings: %+v", rs)
	}
	for _, P := range []int{1, 2, AllWorkers} {
		if rs := (&SDCA{Workers: P, RoundSize: 6}).RunSettings(p); rs.Workers != 0 || rs.Schedule != ScheduleRounds || rs.RoundSize != 6 {
			t.Fatalf("run settings of the rounds on %d workers: %+v", P, rs)
		}
	}
	if rs := (&SDCA{Workers: 2}).RunSettings(p); rs.Schedule != ScheduleRounds || rs.RoundSize != DefaultRoundSize {
		t.Fatalf("run settings of 2 workers: %+v", rs)
	}
	if rs := (&SDCA{Workers: 2, Async: AsyncWild}).RunSettings(p); rs.Workers != 0 || rs.Schedule != ScheduleAsyncWild || rs.RoundSize != 0 {
		t.Fatalf("run settings of asynchronous steps: %+v", rs)
	}
}
