package train

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/dualcrf/dualcrf/crf"
	"github.com/dualcrf/dualcrf/crf/crftest"
	"github.com/dualcrf/dualcrf/duals"
)

// bruteCertificate computes, by enumerating every path of every sentence,
// at the weights w = ŵ(μ) recomputed from scratch: P(w), D(μ) and the gap
// identity's right side (1/n) Σ_i KL(p_μi ‖ p(·|x_i; w)), where p_μi is the
// chain whose marginals are μ_i (a point of the marginal polytope, so that
// H̃(μ_i) is its entropy). The identity P − D = that mean holds for any
// feasible μ and nothing else.
func bruteCertificate(t *testing.T, p *Problem, store duals.Reader) (primal, dual, meanKL float64) {
	t.Helper()
	w := mustWhat(t, p, store)
	K := p.Layout.NumLabels
	n := float64(p.N())
	wsq := dot(w, w)
	loss, ent, kl := 0.0, 0.0, 0.0
	for i := 0; i < p.N(); i++ {
		s := p.Data.Sentence(i)
		j := crftest.Enumerate(p.Layout, w, s)
		loss += j.LogZ - crf.Dot(w, p.Layout, s, s.Labels)
		mu := make([]float64, crf.BlockLen(s.Len(), K))
		store.Load(i, mu)
		pm := chainJoint(mu, s.Len(), K, j.Paths)
		for k, q := range pm {
			if q > 0 {
				ent -= q * math.Log(q)
				kl += q * (math.Log(q) - math.Log(j.Prob[k]))
			}
		}
	}
	primal = p.Lambda/2*wsq + loss/n
	dual = -p.Lambda/2*wsq + ent/n
	return primal, dual, kl / n
}

// checkChains fails unless every stored block is a chain: entries in
// [0,1], cliques summing to one, adjacent edges agreeing on their node.
func checkChains(t *testing.T, p *Problem, store duals.Store) {
	t.Helper()
	K := p.Layout.NumLabels
	for i := 0; i < p.N(); i++ {
		T := p.Data.Sentence(i).Len()
		mu := loadBlock(store, i)
		for e := 0; e < max(T-1, 1); e++ {
			s := 0.0
			for _, x := range mu[e*K*K : min((e+1)*K*K, len(mu))] {
				if !(x >= 0 && x <= 1) {
					t.Fatalf("block %d holds %v", i, x)
				}
				s += x
			}
			if math.Abs(s-1) > 1e-13 {
				t.Fatalf("block %d clique %d sums to %v", i, e, s)
			}
		}
		for e := 0; e+2 < T; e++ {
			for y := 0; y < K; y++ {
				in, out := 0.0, 0.0
				for x := 0; x < K; x++ {
					in += mu[(e*K+x)*K+y]
					out += mu[((e+1)*K+y)*K+x]
				}
				if math.Abs(in-out) > 1e-14 {
					t.Fatalf("block %d: edges %d and %d disagree on label %d: %v, %v", i, e, e+1, y, in, out)
				}
			}
		}
	}
}

// optimum returns P* of p to about 1e-13: an exact (float64) SDCA run
// until its certified gap is below that, and the certificate's primal and
// dual.
func optimum(t *testing.T, p *Problem) (primal, dual float64) {
	t.Helper()
	m := &SDCA{Sampler: kindSampler(t, SamplerGap, p), Seed: 1, DualPrecision: duals.Float64}
	if err := m.Init(p); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for range 400 {
		if err := m.Epoch(ctx); err != nil {
			t.Fatal(err)
		}
		c, err := m.Certify(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if c.Gap < 1e-13 {
			return c.Primal, c.Dual
		}
	}
	t.Fatal("the float64 run did not reach a gap of 1e-13")
	return 0, 0
}

// TestCompactStepIdentity makes SDCA steps with float32 (Markov) duals on
// tiny problems and checks after every step, against brute-force
// enumeration: the stored blocks are chains; the weights the steps keep
// equal ŵ(μ) of the stored duals (the step moves w by the change of the
// block as stored, not as computed); the gap identity P − D = (1/n) Σ KL
// holds to rounding, with the pass's numbers equal to the enumeration's;
// and D(μ) never exceeds P* (an exact run's optimum): the certificate
// claims nothing false.
func TestCompactStepIdentity(t *testing.T) {
	for _, tc := range []struct {
		name            string
		real, noBias    bool
		mask, transMask bool
		n, maxT, A, K   int
		steps           int
	}{
		{"binary", false, false, false, false, 10, 4, 6, 3, 120},
		{"real", true, false, false, false, 10, 4, 6, 3, 120},
		{"one-label-pairs", true, false, false, false, 8, 5, 5, 2, 120},
		{"masks-nobias", true, true, true, true, 10, 4, 6, 3, 120},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := randomProblem(t, 17, tc.n, tc.maxT, tc.A, tc.K, tc.real, 0)
			p.Layout.NoBias = tc.noBias
			if tc.mask {
				p.Mask = ObservedMask(p.Data)
			}
			if tc.transMask {
				p.TransMask = ObservedTransitions(p.Data)
				p.TransMask[1] = false
			}
			pstar, _ := optimum(t, p)
			for _, prec := range []duals.Precision{0, duals.BFloat16} {
				testStepIdentity(t, p, prec, pstar, tc.steps)
			}
		})
	}
}

// testStepIdentity is TestCompactStepIdentity on p with duals of precision
// prec (0: the default, float32).
func testStepIdentity(t *testing.T, p *Problem, prec duals.Precision, pstar float64, steps int) {
	m := &SDCA{Sampler: kindSampler(t, SamplerUniform, p), Seed: 3, DualPrecision: prec}
	if err := m.Init(p); err != nil {
		t.Fatal(err)
	}
	if prec == 0 && m.duals.Precision() != duals.Float32 {
		t.Fatalf("default precision %v", m.duals.Precision())
	}
	{
		{
			ctx := context.Background()
			rng := rand.New(rand.NewPCG(5, 5))
			for step := 0; step <= steps; step++ {
				if step > 0 {
					m.stepOne(rng.IntN(p.N()))
				}
				checkChains(t, p, m.duals)
				what := mustWhat(t, p, m.duals)
				for j, v := range what {
					if math.Abs(v-m.st.w[j]) > 1e-11*max(1, math.Abs(v)) {
						t.Fatalf("step %d: w[%d] = %.17g, ŵ(μ) of the stored duals %.17g", step, j, m.st.w[j], v)
					}
				}
				if !relClose(dot(what, what), m.st.normSq(), 1e-9) {
					t.Fatalf("step %d: ‖w‖² = %.15g, from scratch %.15g", step, m.st.normSq(), dot(what, what))
				}
				bp, bd, bkl := bruteCertificate(t, p, m.duals)
				if resid := math.Abs(bp - bd - bkl); resid > 1e-12*max(1, math.Abs(bp)) {
					t.Fatalf("step %d: P − D = %.17g, mean KL %.17g (residual %.3g)", step, bp-bd, bkl, resid)
				}
				r, err := p.pass(ctx, what, m.duals, false)
				if err != nil {
					t.Fatal(err)
				}
				near := func(a, b float64) bool { return math.Abs(a-b) <= 1e-11*max(1, math.Abs(b)) }
				if !near(r.Primal, bp) || !near(r.Dual, bd) || !near(r.MeanGap, bkl) {
					t.Fatalf("step %d: pass P %.15g D %.15g gap %.15g, enumeration %.15g %.15g %.15g", step, r.Primal, r.Dual, r.MeanGap, bp, bd, bkl)
				}
				if bd > pstar+1e-12 {
					t.Fatalf("%v, step %d: D(μ) = %.17g above P* = %.17g", m.duals.Precision(), step, bd, pstar)
				}
			}
		}
	}
}

// TestCompactConverges: with float32 duals SDCA reaches the optimum an
// exact run reaches — sequential and with workers (ordered commits) — its
// certified gaps honest all the way (never negative beyond rounding, the
// dual never above P*), in at most one epoch more to a gap of 1e-6 —
// bfloat16 duals to 1e-4, where their rounding soon stops the progress.
func TestCompactConverges(t *testing.T) {
	p := randomProblem(t, 23, 60, 7, 14, 4, true, 0)
	pstar, dstar := optimum(t, p)
	epochsTo := func(prec duals.Precision, workers int, tol float64) int {
		m := &SDCA{Sampler: kindSampler(t, SamplerGap, p), Seed: 9, DualPrecision: prec, Workers: workers}
		if err := m.Init(p); err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		for e := 1; e <= 200; e++ {
			if err := m.Epoch(ctx); err != nil {
				t.Fatal(err)
			}
			what := mustWhat(t, p, m.duals)
			for j, v := range what {
				if math.Abs(v-m.st.w[j]) > 1e-10*max(1, math.Abs(v)) {
					t.Fatalf("%v, %d workers, epoch %d: w[%d] = %.17g, ŵ(μ) %.17g", prec, workers, e, j, m.st.w[j], v)
				}
			}
			c, err := m.Certify(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if c.Dual > pstar+1e-13 || c.Gap < -1e-13 || c.Primal < dstar-1e-13 {
				t.Fatalf("%v, %d workers, epoch %d: P %.17g D %.17g (gap %.3g) against P* %.17g", prec, workers, e, c.Primal, c.Dual, c.Gap, pstar)
			}
			if c.Gap < tol {
				return e
			}
		}
		t.Fatalf("%v, %d workers: no gap of %g in 200 epochs", prec, workers, tol)
		return 0
	}
	for _, workers := range []int{1, 2} {
		for _, c := range []struct {
			prec duals.Precision
			tol  float64
		}{{duals.Float32, 1e-6}, {duals.BFloat16, 1e-4}} {
			exact, compact := epochsTo(duals.Float64, workers, c.tol), epochsTo(c.prec, workers, c.tol)
			t.Logf("%d workers: %d epochs (float64), %d (%v) to a gap of %g", workers, exact, compact, c.prec, c.tol)
			if compact > exact+1 {
				t.Fatalf("%d workers: %v duals took %d epochs to a gap of %g, float64 %d", workers, c.prec, compact, c.tol, exact)
			}
		}
	}
}
