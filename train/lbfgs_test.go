package train

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"
)

// maskCases are the feature spaces L-BFGS and SDCA train on: full or
// observed attribute–label pairs, all or observed transitions, with and
// without the bias, start and end weights.
var maskCases = []struct {
	name                string
	noBias, mask, trans bool
}{
	{"full", false, false, false}, {"nobias", true, false, false}, {"observed", false, true, false},
	{"transitions", false, false, true}, {"crfsuite", true, true, true},
}

// maskedProblem returns a small random problem with real-valued
// attributes in the feature space of the case; a mask asked for fixes at
// least one weight at zero.
func maskedProblem(t *testing.T, seed uint64, n, A int, lambda float64, noBias, mask, trans bool) *Problem {
	t.Helper()
	p := randomProblem(t, seed, n, 5, A, 3, true, lambda)
	p.Layout.NoBias = noBias
	if mask {
		p.Mask = ObservedMask(p.Data)
	}
	if trans {
		// Random labels soon follow each other in every way: two pairs more
		// are masked out, so that the mask always bites.
		p.TransMask = ObservedTransitions(p.Data)
		p.TransMask[1], p.TransMask[5] = false, false
	}
	if masked := p.Layout.Dim() - p.FreeWeights(); (masked > 0) != (mask || trans) {
		t.Fatalf("%d weights masked", masked)
	}
	return p
}

// free reports whether weight j of p is free (not fixed at zero by a mask).
func (p *Problem) free(j int) bool {
	tr := p.Layout.Trans()
	switch {
	case j < tr:
		return p.Mask == nil || p.Mask[j]
	case j < tr+len(p.TransMask):
		return p.TransMask[j-tr]
	}
	return true
}

// TestGradientFiniteDifferences checks ∇P as Pass returns it (wantGrad) —
// all that L-BFGS sees of the objective besides P — against central
// differences of P on every weight, in every feature space of maskCases:
// a masked weight's gradient must be exactly 0 (else L-BFGS would move it),
// a free one's within 1e-7 of the difference quotient (whose own error,
// h²·P‴/6 plus rounding ε·P/h with h = 1e-5, is about 1e-10). It would
// catch a gradient that leaves out a feature (a start or end weight, a
// real attribute value), counts one where the layout has none (NoBias), gets
// λw or the gold features wrong, or masks the wrong entries.
func TestGradientFiniteDifferences(t *testing.T) {
	ctx := context.Background()
	for _, tc := range maskCases {
		t.Run(tc.name, func(t *testing.T) {
			p := maskedProblem(t, 81, 8, 20, 0.1, tc.noBias, tc.mask, tc.trans)
			rng := rand.New(rand.NewPCG(82, 83))
			w := make([]float64, p.Layout.Dim())
			for j := range w {
				if p.free(j) {
					w[j] = 0.7 * rng.NormFloat64()
				}
			}
			r, err := p.pass(ctx, w, nil, true)
			if err != nil {
				t.Fatal(err)
			}
			primal := func() float64 {
				r, err := p.pass(ctx, w, nil, false)
				if err != nil {
					t.Fatal(err)
				}
				return r.Primal
			}
			const h = 1e-5
			worst, masked := 0.0, 0
			for j, g := range r.Grad {
				if !p.free(j) {
					masked++
					if g != 0 {
						t.Fatalf("masked weight %d has gradient %g", j, g)
					}
					continue
				}
				x := w[j]
				w[j] = x + h
				up := primal()
				w[j] = x - h
				down := primal()
				w[j] = x
				fd := (up - down) / (2 * h)
				if err := math.Abs(fd - g); err > 1e-7*max(1, math.Abs(g)) {
					t.Fatalf("weight %d of %d: ∂P = %.12g, difference quotient %.12g", j, len(w), g, fd)
				} else {
					worst = max(worst, err)
				}
			}
			t.Logf("d = %d, %d masked; greatest |∂P − difference quotient| %.2g", len(w), masked, worst)
		})
	}
}

// TestLBFGSObservedMask trains L-BFGS and SDCA to a certified gap of 1e-9
// in every feature space of maskCases (among them CRFsuite's: observed
// pairs and transitions, no bias) and checks that both certificates hold
// for the restricted problem: each method's P − gap bounds the other's P
// from below (so the two P agree within the larger gap), L-BFGS leaves
// every masked weight at exactly 0, and the two weight vectors are within
// the strong-convexity bound ‖w − w'‖² ≤ 2(gap + gap')/λ. An L-BFGS that
// moved a masked weight would reach a P below the restricted optimum, under
// SDCA's certified lower bound.
func TestLBFGSObservedMask(t *testing.T) {
	ctx := context.Background()
	for _, tc := range maskCases {
		t.Run(tc.name, func(t *testing.T) {
			p := maskedProblem(t, 84, 40, 40, 0, tc.noBias, tc.mask, tc.trans)
			set := Settings{MaxEpochs: 1000, GapTol: 1e-9}
			rl, err := Train(ctx, p, set, &LBFGS{})
			if err != nil {
				t.Fatal(err)
			}
			rs, err := Train(ctx, p, set, &SDCA{Seed: 3})
			if err != nil {
				t.Fatal(err)
			}
			if rl.Stopped != GapReached || rs.Stopped != GapReached {
				t.Fatalf("L-BFGS stopped (%v) at gap %g, SDCA (%v) at %g", rl.Stopped, rl.Last.Gap, rs.Stopped, rs.Last.Gap)
			}
			for j, v := range rl.Weights {
				if !p.free(j) && v != 0 {
					t.Fatalf("L-BFGS moved masked weight %d to %g", j, v)
				}
			}
			pl, ps := rl.Last.Primal, rs.Last.Primal
			if rl.Last.Dual > ps+1e-12 || rs.Last.Dual > pl+1e-12 {
				t.Fatalf("certificates cross: L-BFGS P %.15g (gap %.3g), SDCA P %.15g (gap %.3g)", pl, rl.Last.Gap, ps, rs.Last.Gap)
			}
			diff := 0.0
			for j := range rl.Weights {
				d := rl.Weights[j] - rs.Weights[j]
				diff += d * d
			}
			if bound := 2 * (rl.Last.Gap + rs.Last.Gap) / p.Lambda; diff > bound*1.0001+1e-18 {
				t.Fatalf("‖w_lbfgs − w_sdca‖² = %g exceeds the strong-convexity bound %g", diff, bound)
			}
			t.Logf("P* L-BFGS %.12g (gap %.2g, %d iterations), SDCA %.12g (gap %.2g, %d epochs)", pl, rl.Last.Gap, rl.Epochs, ps, rs.Last.Gap, rs.Epochs)
		})
	}
}
