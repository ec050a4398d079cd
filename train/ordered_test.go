package train

import (
	"context"
	"math"
	"testing"
)

// TestOrderedOneSlotIsSequential checks that the ordered scheduler with
// one worker and rounds of one step is the sequential SDCA bit for bit:
// the same draws, oracles, searches and commits.
func TestOrderedOneSlotIsSequential(t *testing.T) {
	p := randomProblem(t, 81, 150, 7, 25, 4, true, 0)
	ctx := context.Background()
	seq := &SDCA{Seed: 4, Workers: 1}
	ord := &SDCA{Seed: 4, Workers: 1, RoundSteps: 1}
	for _, m := range []*SDCA{seq, ord} {
		if err := m.Init(p); err != nil {
			t.Fatal(err)
		}
	}
	ord.sched = newOrdered(ord, 1)
	ord.sched.start()
	for epoch := 1; epoch <= 3; epoch++ {
		for _, m := range []*SDCA{seq, ord} {
			if err := m.Epoch(ctx); err != nil {
				t.Fatal(err)
			}
		}
		sameBits(t, "ordered with one slot vs sequential", seq.Weights(), ord.Weights())
		if a, b := seq.Counters(), ord.Counters(); a != b {
			if !(math.IsNaN(a.GapEstimate) && math.IsNaN(b.GapEstimate)) || a.Steps != b.Steps || a.LineSearch != b.LineSearch {
				t.Fatalf("epoch %d: counters %+v, sequential %+v", epoch, b, a)
			}
		}
	}
}

// TestOrderedCommitsAscend checks, commit by commit, that the dual never
// decreases on a small problem with 4 workers in rounds of 3 steps each
// (the dual recomputed from μ and ŵ(μ) after every round), that the
// rounds do draw several sentences, and that the gap identity holds at
// the end (Certify checks it).
func TestOrderedCommitsAscend(t *testing.T) {
	p := randomProblem(t, 82, 120, 6, 20, 3, true, 0)
	m := &SDCA{Seed: 6, Workers: 4, RoundSteps: 3}
	if err := m.Init(p); err != nil {
		t.Fatal(err)
	}
	o := m.sched.(*ordered)
	ctx := context.Background()
	dual := func() float64 {
		c, err := m.Certify(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return c.Dual
	}
	prev := dual()
	first := prev
	rounds, steps := 0, 0
	for steps < 4*p.N() {
		o.runRound(len(o.slots))
		rounds++
		steps += len(o.sents)
		d := dual()
		if d < prev-1e-12*math.Abs(prev) {
			t.Fatalf("round %d: the dual fell from %.15g to %.15g", rounds, prev, d)
		}
		prev = d
	}
	if rounds > steps/2 {
		t.Fatalf("%d rounds for %d steps: rounds of one step", rounds, steps)
	}
	c, err := m.Certify(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !(c.Dual > first) || !(c.Gap >= 0) {
		t.Fatalf("dual %g from %g, gap %g", c.Dual, first, c.Gap)
	}
	if par, ser := o.phaseTimes(); par <= 0 || ser <= 0 {
		t.Fatalf("phase times: parallel %v, serial %v", par, ser)
	}
}
