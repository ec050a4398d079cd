package train

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/dualcrf/dualcrf/crf"
	"github.com/dualcrf/dualcrf/crf/crftest"
	"github.com/dualcrf/dualcrf/duals"
)

// trainCold trains p from eq. 21 to the tolerance and returns the result
// and the method (whose Store holds the final duals).
func trainCold(t *testing.T, p *Problem, tol float64) (*Result, *SDCA) {
	t.Helper()
	return trainColdAt(t, p, tol, 0)
}

// trainColdAt is trainCold with duals of the given precision (0: the
// default).
func trainColdAt(t *testing.T, p *Problem, tol float64, prec duals.Precision) (*Result, *SDCA) {
	t.Helper()
	m := &SDCA{Seed: 2, Workers: 1, DualPrecision: prec}
	res, err := Train(context.Background(), p, Settings{MaxEpochs: 500, GapTol: tol}, m)
	if err != nil {
		t.Fatal(err)
	}
	return res, m
}

// storeBlocks reads the blocks of s in order, as duals.Kept.Each does.
func storeBlocks(s duals.Store) func(func(int, []float64) error) error {
	return func(fn func(int, []float64) error) error {
		for j := range s.Len() {
			if err := fn(j, append([]float64(nil), loadBlock(s, j)...)); err != nil {
				return err
			}
		}
		return nil
	}
}

// TestWarmSameProblem starts a run from a finished run's duals on the same
// sentences: every block is taken bit for bit, the initial certificate is
// the finished run's final one, its block gaps are the sampler's, and the
// run stops at once.
func TestWarmSameProblem(t *testing.T) {
	p := randomProblem(t, 21, 25, 6, 10, 3, true, 0)
	cold, cm := trainCold(t, p, 1e-6)
	old := cm.Store()
	from := make([]int, p.N())
	for i := range from {
		from[i] = i
	}
	w := &SDCA{Seed: 9, Workers: 1, Warm: &WarmStart{From: from, Labels: []int{0, 1, 2}, Blocks: storeBlocks(old)}}
	if err := w.Init(p); err != nil {
		t.Fatal(err)
	}
	for i := range p.N() {
		a, b := loadBlock(w.Store(), i), loadBlock(old, i)
		for e := range a {
			if math.Float64bits(a[e]) != math.Float64bits(b[e]) {
				t.Fatalf("block %d entry %d: %v, kept %v", i, e, a[e], b[e])
			}
		}
	}
	c, err := w.Certify(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !relClose(c.Primal, cold.Last.Primal, 1e-12) || math.Abs(c.Gap-cold.Last.Gap) > 1e-12 {
		t.Fatalf("initial certificate P %.15g gap %g; the kept run ended at P %.15g gap %g", c.Primal, c.Gap, cold.Last.Primal, cold.Last.Gap)
	}
	// The sampler holds the exact block gaps: their mean is the gap.
	gaps := w.sampler.State().Gaps
	sum := 0.0
	for _, g := range gaps {
		sum += g
	}
	if !relClose(sum/float64(len(gaps)), c.Gap, 1e-6) {
		t.Fatalf("the sampler's gaps average %g, the certified gap is %g", sum/float64(len(gaps)), c.Gap)
	}
	w2 := &SDCA{Seed: 9, Workers: 1, Warm: &WarmStart{From: from, Labels: []int{0, 1, 2}, Blocks: storeBlocks(old)}}
	res, err := Train(context.Background(), p, Settings{MaxEpochs: 500, GapTol: 1e-6}, w2)
	if err != nil {
		t.Fatal(err)
	}
	if res.Epochs != 0 || res.Stopped != GapReached {
		t.Fatalf("a warm start at a certified point ran %d epochs (%v)", res.Epochs, res.Stopped)
	}
}

// grown returns p's sentences plus extra random ones, with the labels
// renumbered by perm (old label a is perm[a]) and, in the added sentences
// only, old label 0 renamed to the new label newLabel: a corpus grown by a
// day whose annotators split a label.
func grown(t *testing.T, p *Problem, extra int, perm []int, newLabel int) *Problem {
	t.Helper()
	K := p.Layout.NumLabels + 1
	more := crftest.RandomDataset(rand.New(rand.NewPCG(99, 1)), extra, 6, p.Data.NumAttrs, p.Layout.NumLabels, true)
	a, b := p.Data, more
	d := &crf.Dataset{NumAttrs: a.NumAttrs, NumLabels: K}
	d.SentStart = append([]int(nil), a.SentStart...)
	d.AttrStart = append([]int(nil), a.AttrStart...)
	d.Attrs = append(append([]int32(nil), a.Attrs...), b.Attrs...)
	d.Values = append(append([]float64(nil), a.Values...), b.Values...)
	for _, y := range a.Labels {
		d.Labels = append(d.Labels, int32(perm[y]))
	}
	for _, y := range b.Labels {
		if y == 0 {
			d.Labels = append(d.Labels, int32(newLabel))
		} else {
			d.Labels = append(d.Labels, int32(perm[y]))
		}
	}
	N, occ := a.SentStart[len(a.SentStart)-1], a.AttrStart[len(a.AttrStart)-1]
	for _, s := range b.SentStart[1:] {
		d.SentStart = append(d.SentStart, N+s)
	}
	for _, s := range b.AttrStart[1:] {
		d.AttrStart = append(d.AttrStart, occ+s)
	}
	q, err := NewProblem(d, p.Lambda, false)
	if err != nil {
		t.Fatal(err)
	}
	return q
}

// TestWarmGrownNewLabel warm-starts a grown corpus with relabelled ids and
// a new label: kept blocks are (1−ε)·π(μ) + ε·uniform — exactly with
// float64 duals, to the rounding of float32 or bfloat16 ones —, positive and
// consistent marginals, the certificates hold, and the final primal agrees
// with a cold run's within the two certified gaps.
func TestWarmGrownNewLabel(t *testing.T) {
	for _, prec := range duals.Precisions {
		t.Run(prec.String(), func(t *testing.T) { testWarmGrownNewLabel(t, prec) })
	}
}

func testWarmGrownNewLabel(t *testing.T, prec duals.Precision) {
	tol := 0.0
	switch prec {
	case duals.Float32:
		tol = 1e-6
	case duals.BFloat16:
		tol = 0.05
	}
	p := randomProblem(t, 31, 20, 5, 10, 3, true, 0)
	_, cm := trainColdAt(t, p, 1e-8, prec)
	old := cm.Store()
	perm := []int{1, 3, 0} // kept label a is the grown problem's perm[a]; label 2 is new
	q := grown(t, p, 10, perm, 2)
	from := make([]int, q.N())
	for i := range from {
		from[i] = -1
		if i < p.N() {
			from[i] = i
		}
	}
	const eps = 1e-3
	ws := &WarmStart{From: from, Labels: perm, Blocks: storeBlocks(old)}
	w := &SDCA{Seed: 5, Workers: 1, Epsilon: eps, Warm: ws, DualPrecision: prec}
	if err := w.Init(q); err != nil {
		t.Fatal(err)
	}
	K := 4
	for i := range p.N() {
		T := q.Data.SentStart[i+1] - q.Data.SentStart[i]
		got, kept := loadBlock(w.Store(), i), loadBlock(old, i)
		for e, x := range got {
			if !(x > 0) {
				t.Fatalf("block %d entry %d = %g: not positive", i, e, x)
			}
		}
		if T == 1 {
			for a, y := range perm {
				if want := (1-eps)*kept[a] + eps/float64(K); math.Abs(got[y]-want) > tol*want {
					t.Fatalf("block %d label %d: %g, want %g", i, y, got[y], want)
				}
			}
			continue
		}
		for tt := 0; tt < T-1; tt++ {
			for a, ya := range perm {
				for b, yb := range perm {
					want := (1-eps)*kept[(tt*3+a)*3+b] + eps/float64(K*K)
					if g := got[(tt*K+ya)*K+yb]; math.Abs(g-want) > tol*want {
						t.Fatalf("block %d edge %d (%d,%d): %g, want %g", i, tt, ya, yb, g, want)
					}
				}
			}
		}
		// Consistent: edge tt's right node marginal is edge tt+1's left one.
		for tt := 0; tt+2 < T; tt++ {
			for y := range K {
				right, left := 0.0, 0.0
				for z := range K {
					right += got[(tt*K+z)*K+y]
					left += got[((tt+1)*K+y)*K+z]
				}
				if math.Abs(right-left) > 1e-12 {
					t.Fatalf("block %d: node %d label %d has marginals %g and %g", i, tt+1, y, right, left)
				}
			}
		}
	}
	ctx := context.Background()
	warm, err := Train(ctx, q, Settings{MaxEpochs: 500, GapTol: 1e-8}, &SDCA{Seed: 5, Workers: 1, Epsilon: eps,
		Warm: &WarmStart{From: from, Labels: perm, Blocks: storeBlocks(old)}, DualPrecision: prec})
	if err != nil {
		t.Fatal(err)
	}
	cold, _ := trainColdAt(t, q, 1e-8, prec)
	if d := math.Abs(warm.Last.Primal - cold.Last.Primal); d > warm.Last.Gap+cold.Last.Gap {
		t.Fatalf("warm primal %.15g and cold %.15g differ by %g, more than their gaps %g + %g",
			warm.Last.Primal, cold.Last.Primal, d, warm.Last.Gap, cold.Last.Gap)
	}
	if warm.Records[0].Gap >= cold.Records[0].Gap {
		t.Errorf("the warm start's initial gap %g is not below the cold start's %g", warm.Records[0].Gap, cold.Records[0].Gap)
	}
}

// TestWarmRefused refuses a warm start that does not fit the problem.
func TestWarmRefused(t *testing.T) {
	p := randomProblem(t, 41, 5, 4, 6, 3, false, 0)
	m := duals.NewMemory(p.Data, duals.DefaultPrecision)
	defer m.Close()
	ok := func() *WarmStart {
		return &WarmStart{From: []int{0, 1, 2, 3, 4}, Labels: []int{0, 1, 2}, Blocks: storeBlocks(m)}
	}
	for name, change := range map[string]func(*WarmStart){
		"short":       func(w *WarmStart) { w.From = w.From[:4] },
		"twice":       func(w *WarmStart) { w.From[1] = 0 },
		"label twice": func(w *WarmStart) { w.Labels[1] = 0 },
		"label range": func(w *WarmStart) { w.Labels[2] = 3 },
		"more labels": func(w *WarmStart) { w.Labels = []int{0, 1, 2, 3} },
		"below -1":    func(w *WarmStart) { w.From[2] = -2 },
		"no blocks":   func(w *WarmStart) { w.Blocks = nil },
		"block size": func(w *WarmStart) {
			w.Blocks = func(fn func(int, []float64) error) error { return fn(0, make([]float64, 1)) }
		},
		"few blocks": func(w *WarmStart) { w.Blocks = func(func(int, []float64) error) error { return nil } },
	} {
		ws := ok()
		change(ws)
		if err := (&SDCA{Workers: 1, Warm: ws}).Init(p); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// TestWarmRefreshResumes: a run that starts warm recomputes its gap
// estimates every WarmRefreshEvery epochs, exactly as RefreshEvery does
// on the same start (the same weights bit for bit, and the same oracle
// calls counted), not as a run without refreshes does, nor as one with
// RefreshEvery 1; its snapshot records it, and a run resumed from a snapshot goes on
// refreshing — the uninterrupted run's weights bit for bit — where a
// resume that forgot it ends elsewhere.
func TestWarmRefreshResumes(t *testing.T) {
	p := randomProblem(t, 61, 24, 5, 10, 3, true, 0)
	_, cm := trainCold(t, p, 1e-6)
	old := cm.Store()
	q := grown(t, p, 12, []int{0, 1, 2}, 3)
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
	ctx := context.Background()
	set := Settings{MaxEpochs: 6, GapTol: 1e-300, GapEvery: 3}
	full, err := Train(ctx, q, set, warm())
	if err != nil {
		t.Fatal(err)
	}
	// The same start, its refreshes asked for by RefreshEvery, and without
	// any: a warm start's sampler gaps are the initial certificate's in
	// all three, so only the refreshes tell them apart.
	r2 := set
	r2.RefreshEvery = WarmRefreshEvery
	asked, err := Train(ctx, q, r2, warm())
	if err != nil {
		t.Fatal(err)
	}
	sameBits(t, "warm vs warm with RefreshEvery WarmRefreshEvery", asked.Weights, full.Weights)
	if a, b := asked.Records[6].OracleCalls, full.Records[6].OracleCalls; a != b || a != int64(6*q.N()+(5/WarmRefreshEvery)*q.N()) {
		t.Fatalf("oracle calls: %d warm, %d with RefreshEvery, want 6 epochs and %d refreshes of %d", b, a, 5/WarmRefreshEvery, q.N())
	}
	r1 := set
	r1.RefreshEvery = 1
	every, err := Train(ctx, q, r1, warm())
	if err != nil {
		t.Fatal(err)
	}
	if slices.Equal(every.Weights, full.Weights) {
		t.Fatal("the same weights with RefreshEvery 1 as with the warm start's own period")
	}
	none := warm()
	if err := none.Init(q); err != nil {
		t.Fatal(err)
	}
	if _, err := none.Certify(ctx); err != nil {
		t.Fatal(err)
	}
	none.warmRefresh = false
	for range 6 {
		if err := none.Epoch(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if slices.Equal(none.Weights(), full.Weights) {
		t.Fatal("the same weights with and without the warm start's refreshes")
	}

	dir := t.TempDir()
	m := warm()
	first := set
	first.MaxEpochs, first.CheckpointEvery, first.Checkpoint = 2, 1, saver(dir, m)
	if _, err := Train(ctx, q, first, m); err != nil {
		t.Fatal(err)
	}
	resume := func(forget bool) []float64 {
		c, err := LoadCheckpoint(dir, q, func(s string) { t.Error(s) })
		if err != nil {
			t.Fatal(err)
		}
		defer c.Duals.Close()
		if c.state.Epoch != 2 || !c.state.WarmRefresh {
			t.Fatalf("snapshot at epoch %d, warm refresh %v", c.state.Epoch, c.state.WarmRefresh)
		}
		c.state.WarmRefresh = !forget
		second := set
		second.Resume = c
		// A resume is made without the kept duals (its own are in the
		// snapshot).
		res, err := Train(ctx, q, second, &SDCA{Seed: 8, Workers: 1})
		if err != nil {
			t.Fatal(err)
		}
		return res.Weights
	}
	sameBits(t, "warm resumed vs uninterrupted", full.Weights, resume(false))
	if slices.Equal(resume(true), full.Weights) {
		t.Fatal("a resume without the warm refreshes gives the same weights")
	}
}
