package train

import (
	"context"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/dualcrf/dualcrf/crf"
	"github.com/dualcrf/dualcrf/crf/crftest"
)

// TestChainFBAgainstEnumeration checks OEG's forward–backward on per-edge
// potentials: on the edge form of random weights' scores, its marginals and
// entropy equal those of the joint enumerated path by path, also with
// potentials far apart (the rescaling's case).
func TestChainFBAgainstEnumeration(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	d := crftest.RandomDataset(rng, 20, 5, 8, 3, true)
	lay := crf.Layout{NumAttrs: d.NumAttrs, NumLabels: d.NumLabels}
	K := lay.NumLabels
	lat := crf.NewLattice(K)
	for _, sd := range []float64{1, 30, 2000} { // 2000: the rescaled recursions underflow, the log domain takes over
		w := crftest.RandomWeights(rng, lay, sd)
		for i := 0; i < d.Len(); i++ {
			s := d.Sentence(i)
			T := s.Len()
			j := crftest.Enumerate(lay, w, s)
			want, _ := j.Marginals()
			lat.SetScores(lay, w, s)
			E := make([]float64, crf.BlockLen(T, K))
			edgeForm(lat.Node()[:T*K], lat.Trans(), T, K, E)
			for _, logDomain := range []bool{false, true} {
				mu := make([]float64, len(E))
				var h float64
				if logDomain && T > 1 {
					h = (&chainFB{}).runLog(E, T, K, mu)
				} else {
					h = (&chainFB{}).run(E, T, K, mu)
				}
				for k := range mu {
					if math.Abs(mu[k]-want[k]) > 1e-9 {
						t.Fatalf("sd %g sentence %d (log domain %v): μ[%d] = %.12g, enumerated %.12g", sd, i, logDomain, k, mu[k], want[k])
					}
				}
				if he := j.Entropy(); math.Abs(h-he) > 1e-8*max(1, he, math.Abs(j.LogZ)) { // H = log Z − ⟨μ,E⟩ cancels
					t.Fatalf("sd %g sentence %d (log domain %v): entropy %.12g, enumerated %.12g", sd, i, logDomain, h, he)
				}
			}
		}
	}
}

// TestOEGInvariants: after every step the dual never decreases, the gap
// identity P − D = mean block gap holds, and the incrementally kept w equals
// ŵ(μ) recomputed from the potentials' marginals — with real values, no
// bias, and observed feature and transition spaces (masks).
func TestOEGInvariants(t *testing.T) {
	for _, tc := range []struct {
		name               string
		real, noBias, mask bool
	}{{"binary", false, false, false}, {"real-nobias", true, true, false}, {"observed", true, false, true}} {
		t.Run(tc.name, func(t *testing.T) {
			p := randomProblem(t, 11, 25, 6, 12, 4, tc.real, 0)
			p.Layout.NoBias = tc.noBias
			if tc.mask {
				p.Mask, p.TransMask = ObservedMask(p.Data), ObservedTransitions(p.Data)
			}
			m := &OEG{Seed: 2}
			if err := m.Init(p); err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			ctx := context.Background()
			duals := oegDuals{m}
			prev, err := p.pass(ctx, mustWhat(t, p, duals), duals, false)
			if err != nil {
				t.Fatal(err)
			}
			rng := rand.New(rand.NewPCG(5, 5))
			for step := 0; step < 120; step++ {
				m.step(rng.IntN(p.N()))
				what := mustWhat(t, p, duals)
				if w2 := m.what(nil); !closeVec(w2, what, 1e-12) {
					t.Fatalf("step %d: ŵ(μ) from the cached sums differs from ŵ(μ) of the potentials' marginals", step)
				}
				r, err := p.pass(ctx, what, duals, false)
				if err != nil {
					t.Fatal(err)
				}
				if r.Dual < prev.Dual-1e-12*math.Abs(prev.Dual) {
					t.Fatalf("step %d: dual decreased %.15g → %.15g", step, prev.Dual, r.Dual)
				}
				if math.Abs(r.Primal-r.Dual-r.MeanGap) > 1e-9*max(1, r.Primal) {
					t.Fatalf("step %d: P − D = %.15g, mean block gap %.15g", step, r.Primal-r.Dual, r.MeanGap)
				}
				for j, v := range what {
					if math.Abs(v-m.w[j]) > 1e-9*max(1, math.Abs(v)) {
						t.Fatalf("step %d: w[%d] = %.15g, ŵ(μ) = %.15g", step, j, m.w[j], v)
					}
				}
				prev = r
			}
			if m.upd == 0 || m.upd > m.steps || m.trials < m.steps {
				t.Errorf("counts: %d steps, %d trials, %d updates", m.steps, m.trials, m.upd)
			}
			for j, ok := range p.Mask {
				if !ok && m.w[j] != 0 {
					t.Fatalf("masked weight %d = %g", j, m.w[j])
				}
			}
		})
	}
}

// TestOEGConverges: OEG reaches a small certified duality gap (its
// certificate is SDCA's, identity checked) at L-BFGS's optimum.
func TestOEGConverges(t *testing.T) {
	p := randomProblem(t, 41, 40, 7, 20, 4, false, 0)
	ctx := context.Background()
	rl, err := Train(ctx, p, Settings{MaxEpochs: 500, GapTol: 1e-12}, &LBFGS{})
	if err != nil {
		t.Fatal(err)
	}
	m := &OEG{Seed: 1}
	ro, err := Train(ctx, p, Settings{MaxEpochs: 1000, GapTol: 1e-8}, m)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	t.Logf("OEG: P %.15g gap %.3g after %d epochs (%s); L-BFGS P %.15g; %+v", ro.Last.Primal, ro.Last.Gap, ro.Epochs, ro.Stopped, rl.Last.Primal, m.Counters())
	if ro.Stopped != GapReached {
		t.Fatalf("OEG stopped by %s at gap %g", ro.Stopped, ro.Last.Gap)
	}
	if pl := rl.Last.Primal; math.Abs(ro.Last.Primal-pl) > 1e-6*pl || ro.Last.Dual > pl+1e-12 {
		t.Fatalf("OEG P %.15g D %.15g, L-BFGS P %.15g", ro.Last.Primal, ro.Last.Dual, pl)
	}
	// The log is monotone in the dual: every certified D at least the one before.
	last := math.Inf(-1)
	for _, r := range ro.Records {
		if r.Certified {
			if r.Dual < last-1e-12*math.Abs(last) {
				t.Fatalf("epoch %d: D %.15g after %.15g", r.Epoch, r.Dual, last)
			}
			last = r.Dual
		}
	}
}

// TestOEGDeterministic: the same seed gives the same weights bit for bit.
func TestOEGDeterministic(t *testing.T) {
	p := randomProblem(t, 23, 30, 6, 12, 3, false, 0)
	run := func() []float64 {
		m := &OEG{Seed: 9}
		defer m.Close()
		r, err := Train(context.Background(), p, Settings{MaxEpochs: 3, GapTol: 1e-300}, m)
		if err != nil {
			t.Fatal(err)
		}
		return r.Weights
	}
	if a, b := run(), run(); !reflect.DeepEqual(a, b) {
		t.Fatal("two runs with the same seed differ")
	}
}

// TestOEGCountersByHand: on n = 3 sentences an epoch is 3 steps, each at
// least one oracle call (a trial); updates are the kept steps; every
// certificate (each epoch: OEG has no estimate) costs 2n passes.
func TestOEGCountersByHand(t *testing.T) {
	p := randomProblem(t, 7, 3, 4, 6, 3, false, 0)
	m := &OEG{Seed: 1}
	defer m.Close()
	res, err := Train(context.Background(), p, Settings{MaxEpochs: 2, GapTol: 1e-300}, m)
	if err != nil {
		t.Fatal(err)
	}
	c := m.Counters()
	if c.Steps != 6 || c.OracleCalls != 6+c.LineSearch || c.Updates > 6 || c.Updates < 1 {
		t.Errorf("counters %+v: want 6 steps, oracle calls = 6 + extra trials, 1..6 updates", c)
	}
	for e, r := range res.Records {
		if r.CertOracleCalls != int64(6*(e+1)) {
			t.Errorf("epoch %d: %d certificate oracle calls, want %d", e, r.CertOracleCalls, 6*(e+1))
		}
	}
}

// TestOEGRefusesBadEta: η outside (0, 1].
func TestOEGRefusesBadEta(t *testing.T) {
	p := randomProblem(t, 7, 3, 4, 6, 3, false, 0)
	for _, eta := range []float64{-0.1, 1.5, math.NaN()} {
		if err := (&OEG{Eta: eta}).Init(p); err == nil {
			t.Errorf("η = %g accepted", eta)
		}
	}
}

// closeVec reports whether a and b agree entry by entry within tol
// (relative, absolute below 1).
func closeVec(a, b []float64, tol float64) bool {
	for j := range a {
		if math.Abs(a[j]-b[j]) > tol*max(1, math.Abs(b[j])) {
			return false
		}
	}
	return len(a) == len(b)
}
