package train

import (
	"context"
	"math"
	"reflect"
	"testing"

	"github.com/dualcrf/dualcrf/crf"
)

// TestSAGConverges trains the same problems with every SAG variant and with
// L-BFGS to a small certified gap and compares the optima: P within 1e-6
// relative, and the SAG certificate (‖∇P‖²/(2λ) from a full pass) small.
// One problem has real attribute values, no bias and an observed feature
// space (masks), the lazy updates' hardest case.
func TestSAGConverges(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		p    func(t *testing.T) *Problem
	}{
		{"binary", func(t *testing.T) *Problem { return randomProblem(t, 41, 40, 7, 20, 4, false, 0) }},
		{"real-masked", func(t *testing.T) *Problem { return maskedProblem(t, 5, 30, 12, 0.05, true, true, true) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := tc.p(t)
			rl, err := Train(ctx, p, Settings{MaxEpochs: 500, GapTol: 1e-12}, &LBFGS{})
			if err != nil {
				t.Fatal(err)
			}
			for _, v := range []string{SAGNUS, SAGNUSStar, SAGUniform} {
				rs, err := Train(ctx, p, Settings{MaxEpochs: 400, GapTol: 1e-9}, &SAG{Variant: v, Seed: 3})
				if err != nil {
					t.Fatal(err)
				}
				ps, pl := rs.Last.Primal, rl.Last.Primal
				t.Logf("%s: P %.15g gap %.3g after %d epochs (%s); L-BFGS P %.15g", v, ps, rs.Last.Gap, rs.Epochs, rs.Stopped, pl)
				if rs.Stopped != GapReached {
					t.Errorf("%s stopped by %s at gap %g", v, rs.Stopped, rs.Last.Gap)
				}
				if math.Abs(ps-pl) > 1e-6*math.Abs(pl) {
					t.Errorf("%s: P* %.12g, L-BFGS %.12g", v, ps, pl)
				}
				if rs.Last.Dual > pl+1e-12 {
					t.Errorf("%s: its dual bound %.15g exceeds L-BFGS's P %.15g", v, rs.Last.Dual, pl)
				}
				for j, ok := range p.Mask {
					if !ok && rs.Weights[j] != 0 {
						t.Fatalf("%s: masked weight %d is %g", v, j, rs.Weights[j])
					}
				}
			}
		})
	}
}

// TestSAGLazyEqualsDense checks the lazy updates (w = s·v, rows brought up
// to date when drawn) against rule 5, w ← (1 − αλ)w − (α/m)d, computed
// densely iteration by iteration with m counted here (the sentences drawn
// so far, the current one included), through renormalisations of s.
func TestSAGLazyEqualsDense(t *testing.T) {
	p := randomProblem(t, 17, 12, 5, 10, 3, true, 0.3)
	m := &SAG{Variant: SAGNUS, Seed: 5}
	if err := m.Init(p); err != nil {
		t.Fatal(err)
	}
	dense := make([]float64, p.Layout.Dim())
	drawn := map[int]bool{}
	renorms := 0
	for it := 0; it < 600; it++ {
		i := m.draw()
		drawn[i] = true
		sBefore := m.s
		m.iterate(i)
		if m.s == 1 && sBefore != 1 { // renormalised: restart from the lazy weights
			renorms++
			copy(dense, m.Weights())
			continue
		}
		alpha, k := m.lastAlpha, float64(len(drawn))
		for j := range dense {
			dense[j] = (1-alpha*p.Lambda)*dense[j] - alpha/k*m.d[j]
		}
		got := m.Weights()
		for j := range dense {
			if math.Abs(got[j]-dense[j]) > 1e-9*(1+math.Abs(dense[j])) {
				t.Fatalf("iteration %d, weight %d: lazy %.15g, dense %.15g", it, j, got[j], dense[j])
			}
		}
	}
	if renorms == 0 {
		t.Error("no renormalisation of s: the test did not cover it")
	}
	t.Logf("%d renormalisations", renorms)
}

// sagState gives m (after Init) a state of seen sentences with L_i of
// very different sizes, for the sampling and step-size tests: the even
// sentences are seen, L_i = 1 + i².
func sagState(m *SAG) {
	for i := 0; i < m.p.N(); i += 2 {
		m.see(i)
		m.li[i] = 1 + float64(i*i)
		m.tree.set(i, m.li[i])
		m.lmax = max(m.lmax, m.li[i])
	}
}

// TestSAGSamplingProbabilities counts the draws of rule 1 over many seeds
// against its probabilities computed here: an unseen sentence 1/n (with
// probability (n−m)/n one of the n−m uniformly), a seen one
// (m/n)·(L_i + L̄ + 2λ)/Σ_seen(L_j + L̄ + 2λ); the uniform variant 1/n.
func TestSAGSamplingProbabilities(t *testing.T) {
	p := randomProblem(t, 3, 9, 4, 6, 3, false, 10)
	n := p.N()
	for _, v := range []string{SAGNUS, SAGUniform} {
		counts := make([]float64, n)
		const seeds, per = 400, 500
		for seed := uint64(0); seed < seeds; seed++ {
			m := &SAG{Variant: v, Seed: seed}
			if err := m.Init(p); err != nil {
				t.Fatal(err)
			}
			sagState(m)
			for k := 0; k < per; k++ {
				counts[m.draw()]++
			}
		}
		want := make([]float64, n)
		seen, sumL := 0.0, 0.0
		for i := 0; i < n; i += 2 {
			seen++
			sumL += 1 + float64(i*i)
		}
		mean := sumL / seen
		z := sumL + seen*(mean+2*p.Lambda)
		for i := range want {
			switch {
			case v == SAGUniform || i%2 == 1:
				want[i] = 1 / float64(n)
			default:
				want[i] = seen / float64(n) * (1 + float64(i*i) + mean + 2*p.Lambda) / z
			}
		}
		total := float64(seeds * per)
		for i, c := range counts {
			sd := math.Sqrt(total * want[i] * (1 - want[i]))
			if math.Abs(c-total*want[i]) > 5*sd {
				t.Errorf("%s: sentence %d drawn %g times in %g, want %.1f ± %.1f", v, i, c, total, total*want[i], sd)
			}
		}
	}
}

// TestSAGStepSize checks rule 4 against the formula evaluated here from
// the seen set and the L_i: α = ((n−m)/n)/(Lmax + λ) + (m/n)(1/(2(Lmax + λ))
// + 1/(2(L̄ + λ))); uniform: 1/(Lmax + λ). The individual L_i keep their
// values across an iteration on another sentence and Lmax decays by
// 2^(−1/n) after its max with L_i (rule 6).
func TestSAGStepSize(t *testing.T) {
	p := randomProblem(t, 3, 9, 4, 6, 3, false, 0.7)
	n := float64(p.N())
	for _, v := range []string{SAGNUS, SAGUniform} {
		m := &SAG{Variant: v, Seed: 1}
		if err := m.Init(p); err != nil {
			t.Fatal(err)
		}
		sagState(m)
		lmax := m.lmax
		seen, sumL := 0.0, 0.0
		for i := 0; i < p.N(); i += 2 {
			seen++
			sumL += m.li[i]
		}
		want := 1 / (lmax + p.Lambda)
		if v != SAGUniform {
			want = (n-seen)/n/(lmax+p.Lambda) + seen/n*(1/(2*(lmax+p.Lambda))+1/(2*(sumL/seen+p.Lambda)))
		}
		if got := m.stepSize(); math.Abs(got-want) > 1e-14*want {
			t.Errorf("%s: α %.17g, want %.17g", v, got, want)
		}
		before := append([]float64(nil), m.li...)
		m.iterate(1) // unseen: no halving; its L_i may double
		for j, L := range m.li {
			if j != 1 && L != before[j] {
				t.Errorf("%s: L_%d went from %g to %g on an iteration on sentence 1", v, j, before[j], L)
			}
		}
		wantMax := max(lmax, m.li[1]) * math.Exp2(-1/n)
		if math.Abs(m.lmax-wantMax) > 1e-14*wantMax {
			t.Errorf("%s: Lmax %.17g after the iteration, want %.17g", v, m.lmax, wantMax)
		}
		seen++
		sumL += m.li[1]
		want = 1 / (max(lmax, m.li[1]) + p.Lambda)
		if v != SAGUniform {
			L := max(lmax, m.li[1])
			want = (n-seen)/n/(L+p.Lambda) + seen/n*(1/(2*(L+p.Lambda))+1/(2*(sumL/seen+p.Lambda)))
		}
		if math.Abs(m.lastAlpha-want) > 1e-14*want {
			t.Errorf("%s: the iteration's α %.17g, want %.17g", v, m.lastAlpha, want)
		}
	}
}

// sentenceLossGrad returns f_i(w) and g_i = ∇f_i(w) (dense, masked) from
// the dense weights w, without SAG's lazy scale or stored marginals.
func sentenceLossGrad(p *Problem, w []float64, i int) (float64, []float64) {
	s := p.Data.Sentence(i)
	lat := crf.NewLattice(p.Layout.NumLabels)
	lat.SetScores(p.Layout, w, s)
	f := lat.ForwardBackward() - lat.Score(s.Labels)
	K, T := p.Layout.NumLabels, s.Len()
	node, block := make([]float64, T*K), make([]float64, crf.BlockLen(T, K))
	lat.NodeMarginals(node)
	lat.Marginals(block, nil)
	g := make([]float64, len(w))
	crf.AddExpected(g, p.Layout, s, node, block, 1)
	crf.AddFeatures(g, p.Layout, s, s.Labels, -1)
	p.applyMask(g)
	return f, g
}

// sentenceLoss returns f_i(w).
func sentenceLoss(p *Problem, w []float64, i int) float64 {
	s := p.Data.Sentence(i)
	lat := crf.NewLattice(p.Layout.NumLabels)
	lat.SetScores(p.Layout, w, s)
	return lat.ForwardBackward() - lat.Score(s.Labels)
}

// TestSAGLineSearch checks rule 3 on every iteration of a run: with L the
// sentence's L_i before (halved on a revisit), its L_i after is
// L·2^k with k the smallest count for which
// f_i(w − g_i/(L·2^k)) ≤ f_i(w) − ‖g_i‖²/(2L·2^k), evaluated here from
// the dense weights, and the run's evaluations are k + 1.
func TestSAGLineSearch(t *testing.T) {
	p := randomProblem(t, 29, 10, 5, 8, 3, true, 0.05)
	m := &SAG{Variant: SAGNUS, Seed: 2, InitialL: 0.01}
	if err := m.Init(p); err != nil {
		t.Fatal(err)
	}
	doubled, halvedOnly := 0, 0
	for it := 0; it < 200; it++ {
		i := m.draw()
		w := append([]float64(nil), m.Weights()...)
		L := m.li[i]
		if m.pos[i] < m.m {
			L /= 2
		}
		f, g := sentenceLossGrad(p, w, i)
		gg := dot(g, g)
		k := 0
		for ; ; k++ {
			Lk := L * math.Exp2(float64(k))
			w2 := make([]float64, len(w))
			for j := range w {
				w2[j] = w[j] - g[j]/Lk
			}
			if sentenceLoss(p, w2, i) <= f-gg/(2*Lk) {
				break
			}
		}
		tests := m.tests
		m.iterate(i)
		want := L * math.Exp2(float64(k))
		if m.li[i] != want {
			t.Fatalf("iteration %d, sentence %d: L_i %g, want %g (%d doublings from %g)", it, i, m.li[i], want, k, L)
		}
		if m.tests-tests != int64(k+1) {
			t.Fatalf("iteration %d: %d evaluations, want %d", it, m.tests-tests, k+1)
		}
		if k > 0 {
			doubled++
		} else {
			halvedOnly++
		}
	}
	if doubled == 0 || halvedOnly == 0 {
		t.Errorf("%d searches doubled, %d did not: the test covers only one case", doubled, halvedOnly)
	}
}

// TestSAGSkipRule follows SAG-NUS*'s skip counters on one sentence drawn
// again and again: a model of the rule kept here (k, skips left) predicts
// each visit, the run's evaluation counter tells its doublings, and a
// skipped visit leaves L_i and the evaluation counter unchanged.
func TestSAGSkipRule(t *testing.T) {
	p := randomProblem(t, 31, 6, 5, 8, 3, true, 0.05)
	m := &SAG{Variant: SAGNUSStar, Seed: 2}
	if err := m.Init(p); err != nil {
		t.Fatal(err)
	}
	const i = 2
	k, left := 0, 0
	skips, searches, resets := 0, 0, 0
	for visit := 0; visit < 300; visit++ {
		L, tests, made, skipped := m.li[i], m.tests, m.searches, m.skipped
		m.iterate(i)
		if left > 0 {
			if m.skipped != skipped+1 || m.tests != tests || m.li[i] != L {
				t.Fatalf("visit %d: want a skip (%d left), got %d evaluations, L_i %g → %g", visit, left, m.tests-tests, L, m.li[i])
			}
			left--
			skips++
			continue
		}
		if m.searches != made+1 {
			t.Fatalf("visit %d: want a line search, got none (skipped %d)", visit, m.skipped-skipped)
		}
		searches++
		if m.tests-tests == 1 { // accepted without a doubling
			k++
			left = 1 << (k - 1)
		} else {
			k = 0
			resets++
		}
	}
	if skips == 0 || resets == 0 {
		t.Errorf("%d skips, %d resets in %d searches: the test covers too little", skips, resets, searches)
	}
	made, skipped := m.LineSearches()
	t.Logf("%d searches, %d skipped (%d resets)", made, skipped, resets)
}

// TestSAGDeterministic: the same seed gives the same weights bit for bit.
func TestSAGDeterministic(t *testing.T) {
	p := randomProblem(t, 23, 30, 6, 12, 3, false, 0)
	run := func() []float64 {
		r, err := Train(context.Background(), p, Settings{MaxEpochs: 3, GapTol: 1e-300}, &SAG{Seed: 9})
		if err != nil {
			t.Fatal(err)
		}
		return r.Weights
	}
	if a, b := run(), run(); !reflect.DeepEqual(a, b) {
		t.Fatal("two runs with the same seed differ")
	}
}

// TestSAGCounters: every iteration is one update and one oracle call, every
// Lipschitz evaluation one more; SAG-NUS searches every iteration (its
// steps) (gradients
// are never 0 here), a certificate is n oracle calls.
func TestSAGCounters(t *testing.T) {
	p := randomProblem(t, 7, 3, 4, 6, 3, false, 0)
	m := &SAG{Variant: SAGNUS, Seed: 1}
	res, err := Train(context.Background(), p, Settings{MaxEpochs: 2, GapTol: 1e-300, GapEvery: 1}, m)
	if err != nil {
		t.Fatal(err)
	}
	c := m.Counters()
	if c.Updates != 6 || c.Steps != 6 || c.OracleCalls != 6+c.LineSearch || c.LineSearch < 6 {
		t.Errorf("counters %+v: want 6 updates and line searches (steps), oracle calls = 6 + tests, ≥ 6 tests", c)
	}
	last := res.Records[len(res.Records)-1]
	if last.OracleCalls != c.OracleCalls || last.CertOracleCalls != 3*3 || last.Updates != 6 {
		t.Errorf("last record: oracle %d, cert %d, updates %d; want %d, 9, 6", last.OracleCalls, last.CertOracleCalls, last.Updates, c.OracleCalls)
	}
}

// TestSAGRefusesBadSettings: an unknown variant or a bad initial L.
func TestSAGRefusesBadSettings(t *testing.T) {
	p := randomProblem(t, 7, 3, 4, 6, 3, false, 0)
	for _, m := range []*SAG{{Variant: "nus*"}, {InitialL: -1}, {InitialL: math.Inf(1)}, {InitialL: math.NaN()}} {
		if err := m.Init(p); err == nil {
			t.Errorf("%+v accepted", *m)
		}
	}
}
