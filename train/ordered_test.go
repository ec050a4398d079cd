package train

import (
	"context"
	"errors"
	"math"
	"runtime"
	"slices"
	"testing"

	"github.com/dualcrf/dualcrf/duals"
)

// TestRoundsSameBytesAnyWorkers checks that the pipelined rounds give the
// same weights, counters and certificates bit for bit on 1 (the rounds on
// one goroutine, not the sequential SDCA), 2, 3 and 8 workers, with
// segments ending inside the epochs, and that they are not the sequential
// SDCA's.
func TestRoundsSameBytesAnyWorkers(t *testing.T) {
	p := randomProblem(t, 71, 300, 6, 40, 4, true, 0)
	ctx := context.Background()
	run := func(P, R int) (*SDCA, []Certificate) {
		m := &SDCA{Seed: 5, Workers: P, RoundSize: R}
		if err := m.Init(p); err != nil {
			t.Fatal(err)
		}
		if o, ok := m.sched.(*ordered); ok {
			o.segRounds = 7
		}
		var certs []Certificate
		for range 4 {
			if err := m.Epoch(ctx); err != nil {
				t.Fatal(err)
			}
			c, err := m.Certify(ctx)
			if err != nil {
				t.Fatal(err)
			}
			certs = append(certs, c)
		}
		return m, certs
	}
	for _, R := range []int{1, 4} {
		one, certs := run(1, R)
		if _, ok := one.sched.(*ordered); !ok {
			t.Fatalf("Workers 1 with RoundSize %d runs %T", R, one.sched)
		}
		for _, P := range []int{2, 3, 8} {
			m, c := run(P, R)
			sameBits(t, "rounds on one goroutine and on several", one.Weights(), m.Weights())
			if !slices.EqualFunc(c, certs, func(a, b Certificate) bool {
				return a.Primal == b.Primal && a.Dual == b.Dual && a.Gap == b.Gap && a.Residual == b.Residual
			}) || m.Counters() != one.Counters() {
				t.Fatalf("R %d, %d workers: certificates %v, counters %+v; one worker: %v, %+v", R, P, c, m.Counters(), certs, one.Counters())
			}
		}
		seq, _ := run(1, 0)
		if _, ok := seq.sched.(*sequential); !ok || slices.Equal(seq.Weights(), one.Weights()) {
			t.Fatalf("the sequential SDCA (%T) ends on the rounds' weights", seq.sched)
		}
	}
}

// TestRoundsCommitsAscend checks after every round of 2 workers in rounds
// of 3 — the commits of one overlapping the oracles of the next — that
// the committed weights are ŵ(μ) up to rounding and that the dual D(μ),
// computed from them and the duals with the round's moves made, never
// decreases; that sentences stepped in consecutive rounds did occur (their
// oracles wait for the moves); and that the gap identity holds at the end
// (Certify checks it).
func TestRoundsCommitsAscend(t *testing.T) {
	p := randomProblem(t, 82, 40, 6, 20, 3, true, 0)
	// Exact duals: the hook below replays the moves in float64.
	m := &SDCA{Seed: 6, Workers: 2, RoundSize: 3, DualPrecision: duals.Float64}
	if err := m.Init(p); err != nil {
		t.Fatal(err)
	}
	o := m.sched.(*ordered)
	o.segRounds = 9
	ctx := context.Background()
	c0, err := m.Certify(ctx)
	if err != nil {
		t.Fatal(err)
	}
	prev, rounds, waits := c0.Dual, 0, 0
	scratch := duals.NewMemory(p.Data, duals.Float64)
	md := m.duals.(*duals.Memory)
	o.afterRound = func(q int) {
		rounds++
		// Round q−1's moves may still be made by the other worker: wait
		// for them (round q's wait for this hook to return).
		for {
			o.mu.Lock()
			p := &o.sets[(q-1)%nsets]
			left := p.q == q-1 && q-1 >= o.first && p.moveLeft > 0
			o.mu.Unlock()
			if !left {
				break
			}
			runtime.Gosched()
		}
		rs := &o.sets[q%nsets]
		for i := range p.N() {
			copy(scratch.Floats(i), md.Floats(i))
		}
		for _, s := range rs.slots[:rs.n] {
			if s.depQ != 0 {
				waits++
			}
			if s.gam > 0 {
				mixGo(s.gam, scratch.Floats(s.i), s.ws.nu)
			}
		}
		w := o.wb[q%2]
		what := mustWhat(t, p, scratch)
		scale := 0.0
		for _, x := range what {
			scale = max(scale, math.Abs(x))
		}
		for j, x := range w {
			if math.Abs(x-what[j]) > 1e-11*scale {
				t.Errorf("round %d: w[%d] = %.17g, ŵ(μ) %.17g", q, j, x, what[j])
				return
			}
		}
		r, err := p.pass(ctx, what, scratch, false)
		if err != nil {
			t.Error(err)
			return
		}
		if r.Dual < prev-1e-12*math.Abs(prev) {
			t.Errorf("round %d: the dual fell from %.15g to %.15g", q, prev, r.Dual)
		}
		prev = r.Dual
	}
	for range 6 {
		if err := m.Epoch(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if t.Failed() {
		return
	}
	if rounds < 6*p.N()/3 || waits == 0 {
		t.Fatalf("%d rounds in 6 epochs of %d sentences, %d oracles waiting for an earlier step's move", rounds, p.N(), waits)
	}
	c, err := m.Certify(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !(c.Dual > c0.Dual) || !(c.Gap >= 0) || !(c.Gap < c0.Gap/10) {
		t.Fatalf("dual %g from %g, gap %g from %g", c.Dual, c0.Dual, c.Gap, c0.Gap)
	}
	if pr, cm, mv, wall := o.pipeStats(); pr <= 0 || cm <= 0 || mv <= 0 || wall <= 0 {
		t.Fatalf("pipeline times: oracles %v, commits %v, moves %v, wall %v", pr, cm, mv, wall)
	}
}

// TestRoundsFewSentences runs rounds longer than a third of the data, so
// that most oracles wait for an earlier step's move and most rounds end at
// a sentence drawn twice, on 1, 2 and 5 workers: the same bytes, and the
// weights are ŵ(μ).
func TestRoundsFewSentences(t *testing.T) {
	p := randomProblem(t, 83, 5, 6, 10, 3, true, 0)
	var first []float64
	for _, P := range []int{1, 2, 5} {
		m := &SDCA{Seed: 2, Workers: P, RoundSize: 4}
		res, err := Train(context.Background(), p, Settings{MaxEpochs: 30, GapTol: 1e-300, GapEvery: 10}, m)
		if err != nil {
			t.Fatal(err)
		}
		if first == nil {
			first = res.Weights
		}
		sameBits(t, "few sentences", first, res.Weights)
		what := mustWhat(t, p, m.duals)
		for j, x := range m.Weights() {
			if math.Abs(x-what[j]) > 1e-10*max(1, math.Abs(x)) {
				t.Fatalf("%d workers: w[%d] = %.17g, ŵ(μ) %.17g", P, j, x, what[j])
			}
		}
	}
}

// TestRoundsStepsDoNotAllocate checks that a segment of the rounds on one
// goroutine — draws, oracles, commits, replays, moves — allocates nothing
// once the slots' scratch space has grown.
func TestRoundsStepsDoNotAllocate(t *testing.T) {
	p := randomProblem(t, 76, 100, 8, 20, 4, true, 0)
	m := &SDCA{Seed: 1, Workers: 1, RoundSize: 8}
	if err := m.Init(p); err != nil {
		t.Fatal(err)
	}
	o := m.sched.(*ordered)
	for _, rs := range o.sets { // every slot's scratch grown on every sentence
		for _, s := range rs.slots {
			for i := range p.N() {
				m.st.oracle(s.ws, i)
				clear(s.ws.vt)
				m.st.direct(s.ws)
				m.st.search(s.ws, s.ws.a, -1)
			}
		}
	}
	for range 5 {
		if err := m.Epoch(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	if a := testing.AllocsPerRun(20, func() { o.segment(40) }); a != 0 {
		t.Fatalf("%v allocations per segment", a)
	}
}

// TestRoundsRefusesOtherSnapshots checks that the rounds refuse a
// sequential snapshot and the sequential SDCA a snapshot of the rounds,
// by their schedule.
func TestRoundsRefusesOtherSnapshots(t *testing.T) {
	o := &ordered{}
	if err := o.restore(checkpointState{Next: 3}); err == nil {
		t.Fatal("the rounds took a sequential snapshot")
	}
	if err := (&sequential{}).restore(checkpointState{Schedule: ScheduleRounds}); err == nil {
		t.Fatal("the sequential SDCA took a snapshot of the rounds")
	}
	if err := (&sequential{}).restore(checkpointState{Schedule: ScheduleAsyncAtomic}); err == nil {
		t.Fatal("the sequential SDCA took a snapshot of asynchronous steps")
	}
	st := checkpointState{Workers: 2}
	if err := st.check(10, 0); err == nil || errors.Is(err, nil) {
		t.Fatal("a snapshot of an earlier version's parallel rounds passed the check")
	}
}

// TestRoundsStreamed runs the rounds inside a streamed store's periods:
// with one block they are the rounds in memory bit for bit; with many
// blocks, 1, 2 and 3 workers give the same weights, the certificate
// streamed from the file equals the one in memory, and the gap falls.
func TestRoundsStreamed(t *testing.T) {
	p := randomProblem(t, 84, 240, 6, 15, 3, true, 0)
	set := Settings{MaxEpochs: 4, GapTol: 1e-300, GapEvery: 1}
	mem, err := Train(context.Background(), p, set, &SDCA{Seed: 5, Workers: 2, RoundSize: 3})
	if err != nil {
		t.Fatal(err)
	}
	one, s := streamRunWith(t, p, &SDCA{Seed: 5, Workers: 3, RoundSize: 3}, 0, 4)
	if s.Blocks() != 1 {
		t.Fatalf("%d blocks, want 1", s.Blocks())
	}
	sameBits(t, "the rounds streamed in one block vs in memory", mem.Weights, one.Weights)
	var first *Result
	for _, P := range []int{1, 2, 3} {
		res, s := streamRunWith(t, p, &SDCA{Seed: 5, Workers: P, RoundSize: 3}, duals.Bytes(p.Data, duals.DefaultPrecision)/6, 4)
		if s.Blocks() < 5 {
			t.Fatalf("%d blocks, want ≥ 5", s.Blocks())
		}
		if first == nil {
			first = res
			// Periods of 40 sentences and oracles up to 5 commits stale: the
			// sequential SDCA falls 11 times, the rounds 4 times.
			if g0, g := res.Records[0].Gap, res.Last.Gap; !(g < g0/3) {
				t.Fatalf("gap %g after 4 epochs from %g", g, g0)
			}
			m := duals.NewMemory(p.Data, s.Precision())
			for i := range p.N() {
				copy(m.Raw(i), s.Raw(i))
			}
			sameBits(t, "ŵ(μ) in memory vs the streamed certificate's", mustWhat(t, p, m), res.Weights)
			m.Close()
			continue
		}
		sameBits(t, "streamed rounds on 1 worker and on more", first.Weights, res.Weights)
	}
}

// TestRoundsWarm starts the rounds, and asynchronous steps, from a
// finished run's duals on a grown corpus: the rounds give the same bytes
// on 1 and 2 workers, and both reach the gap.
func TestRoundsWarm(t *testing.T) {
	p0 := randomProblem(t, 61, 40, 6, 12, 3, true, 0)
	p := grown(t, p0, 20, []int{0, 1, 2}, 3)
	_, cm := trainCold(t, p0, 1e-6)
	from := make([]int, p.N())
	for i := range from {
		from[i] = -1
		if i < p0.N() {
			from[i] = i
		}
	}
	var first []float64
	for _, m := range []*SDCA{{Seed: 9, Workers: 1, RoundSize: 2}, {Seed: 9, Workers: 2, RoundSize: 2}, {Seed: 9, Workers: 2, Async: AsyncAtomic}} {
		if m.Async != "" && raceDetector {
			continue
		}
		m.Warm = &WarmStart{From: from, Labels: []int{0, 1, 2}, Blocks: storeBlocks(cm.Store())}
		res, err := Train(context.Background(), p, Settings{MaxEpochs: 200, GapTol: 1e-6}, m)
		if err != nil || res.Stopped != GapReached {
			t.Fatalf("%+v from a warm start: %v, %+v", m, err, res)
		}
		switch {
		case m.Async != "":
		case first == nil:
			first = res.Weights
		default:
			sameBits(t, "warm rounds on 1 and 2 workers", first, res.Weights)
		}
	}
}
