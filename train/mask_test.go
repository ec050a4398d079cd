package train

import (
	"context"
	"math"
	"testing"

	"github.com/dualcrf/dualcrf/crf"
	"github.com/dualcrf/dualcrf/crf/crftest"
)

// chainJoint returns the path probabilities of the chain distribution whose
// clique marginals are the block mu: p(y) = Π_t μ_t(y_t,y_{t+1}) / Π_{inner t} μ_t(y_t).
func chainJoint(mu []float64, T, K int, paths [][]int32) []float64 {
	node := make([]float64, T*K)
	crf.NodeFromBlock(mu, T, K, node)
	p := make([]float64, len(paths))
	for i, y := range paths {
		if T == 1 {
			p[i] = mu[y[0]]
			continue
		}
		v := 1.0
		for t := 0; t+1 < T; t++ {
			v *= mu[(t*K+int(y[t]))*K+int(y[t+1])]
		}
		for t := 1; t+1 < T; t++ {
			v /= node[t*K+int(y[t])]
		}
		p[i] = v
	}
	return p
}

// TestMaskedDualBruteForce trains SDCA with the attribute and transition
// masks (CRFsuite's observed feature space, plus two transitions masked
// out) and checks against brute-force enumeration of every path of every
// sentence: the masked weights are zero; P(ŵ(μ)), D(μ) and the gap
// identity P(ŵ(μ)) − D(μ) = (1/n) Σ_i KL(p_μi ‖ p(·|x_i; ŵ(μ))) hold for
// the restricted feature space; and SDCA and L-BFGS reach the same optimum.
func TestMaskedDualBruteForce(t *testing.T) {
	p := randomProblem(t, 71, 12, 4, 6, 3, true, 0)
	K := p.Layout.NumLabels
	p.Mask = ObservedMask(p.Data)
	p.TransMask = ObservedTransitions(p.Data)
	p.TransMask[0], p.TransMask[K+2] = false, false
	m := &SDCA{Seed: 4}
	res, err := Train(context.Background(), p, Settings{MaxEpochs: 4, GapTol: 1e-300}, m)
	if err != nil {
		t.Fatal(err)
	}
	w := res.Weights
	for j, ok := range p.Mask {
		if !ok && w[j] != 0 {
			t.Fatalf("masked attribute weight %d = %g", j, w[j])
		}
	}
	for j, ok := range p.TransMask {
		if !ok && w[p.Layout.Trans()+j] != 0 {
			t.Fatalf("masked transition %d = %g", j, w[p.Layout.Trans()+j])
		}
	}
	n := float64(p.N())
	wsq := dot(w, w)
	loss, ent, kl := 0.0, 0.0, 0.0
	for i := 0; i < p.N(); i++ {
		s := p.Data.Sentence(i)
		nu := crftest.Enumerate(p.Layout, w, s)
		loss += nu.LogZ - crf.Dot(w, p.Layout, s, s.Labels)
		pm := chainJoint(loadBlock(m.duals, i), s.Len(), K, nu.Paths)
		for k, q := range pm {
			if q > 0 {
				ent -= q * math.Log(q)
				kl += q * (math.Log(q) - math.Log(nu.Prob[k]))
			}
		}
	}
	P := p.Lambda/2*wsq + loss/n
	D := -p.Lambda/2*wsq + ent/n
	if !relClose(P, res.Last.Primal, 1e-10) || !relClose(D, res.Last.Dual, 1e-9) {
		t.Fatalf("brute force P %.15g D %.15g; certificate P %.15g D %.15g", P, D, res.Last.Primal, res.Last.Dual)
	}
	if math.Abs((P-D)-kl/n) > 1e-10*max(1, P) {
		t.Fatalf("gap identity: P − D = %.15g, mean KL %.15g", P-D, kl/n)
	}
	// The restricted optimum: SDCA and L-BFGS agree.
	set := Settings{MaxEpochs: 500, GapTol: 1e-10}
	rs, err := Train(context.Background(), p, set, &SDCA{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	rl, err := Train(context.Background(), p, set, &LBFGS{})
	if err != nil {
		t.Fatal(err)
	}
	if !relClose(rs.Last.Primal, rl.Last.Primal, 1e-7) || rs.Last.Gap > 1e-9 {
		t.Fatalf("masked optimum: SDCA %.12g (gap %g), L-BFGS %.12g (gap %g)", rs.Last.Primal, rs.Last.Gap, rl.Last.Primal, rl.Last.Gap)
	}
	for j, ok := range p.TransMask {
		if !ok && rl.Weights[p.Layout.Trans()+j] != 0 {
			t.Fatalf("L-BFGS moved masked transition %d to %g", j, rl.Weights[p.Layout.Trans()+j])
		}
	}
}

// TestObservedTransitions checks the transition mask against the gold
// label pairs.
func TestObservedTransitions(t *testing.T) {
	d := &crf.Dataset{NumLabels: 3, SentStart: []int{0, 3, 4}, Labels: []int32{0, 1, 1, 2},
		AttrStart: []int{0, 0, 0, 0, 0}}
	got := ObservedTransitions(d)
	want := []bool{false, true, false, false, true, false, false, false, false}
	for j := range want {
		if got[j] != want[j] {
			t.Fatalf("mask %v, want %v", got, want)
		}
	}
	p := &Problem{Data: d, Layout: crf.Layout{NumLabels: 3}, TransMask: got}
	if p.FreeWeights() != p.Layout.Dim()-7 || p.TransitionSpace() != "observed" {
		t.Fatalf("free weights %d of %d (%s)", p.FreeWeights(), p.Layout.Dim(), p.TransitionSpace())
	}
}
