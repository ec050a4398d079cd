package train

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"

	"github.com/dualcrf/dualcrf/crf"
	"github.com/dualcrf/dualcrf/crf/crftest"
)

// enumDual is the structural SVM's dual written out by enumeration, the
// independent reference of the BCFW tests: for every sentence i its label
// paths, their Hamming losses Δ_i(y) (the count of wrong tokens, divided
// by T_i for HammingMean) and their dense feature differences
// ψ_i(y) = F(x_i,y_i) − F(x_i,y) (masked).
type enumDual struct {
	p     *Problem
	paths [][][]int32   // paths[i][k]
	loss  [][]float64   // Δ_i(path k)
	psi   [][][]float64 // ψ_i(path k)
}

func newEnumDual(p *Problem, hamming string) *enumDual {
	e := &enumDual{p: p}
	dim := p.Layout.Dim()
	for i := 0; i < p.N(); i++ {
		s := p.Data.Sentence(i)
		T := s.Len()
		j := crftest.Enumerate(p.Layout, make([]float64, dim), s)
		var ls []float64
		var ps [][]float64
		for _, y := range j.Paths {
			miss := 0
			for t := range y {
				if y[t] != s.Labels[t] {
					miss++
				}
			}
			switch hamming {
			case HammingMean:
				ls = append(ls, float64(miss)/float64(T))
			case HammingCount:
				ls = append(ls, float64(miss))
			default:
				panic("unknown Hamming loss " + hamming)
			}
			g := make([]float64, dim)
			crf.AddFeatures(g, p.Layout, s, s.Labels, 1)
			crf.AddFeatures(g, p.Layout, s, y, -1)
			p.applyMask(g)
			ps = append(ps, g)
		}
		e.paths = append(e.paths, j.Paths)
		e.loss = append(e.loss, ls)
		e.psi = append(e.psi, ps)
	}
	return e
}

// primal is P(w) by enumeration of every path of every sentence.
func (e *enumDual) primal(w []float64) float64 {
	h := 0.0
	for i := range e.paths {
		best := math.Inf(-1)
		for k := range e.paths[i] {
			best = max(best, e.loss[i][k]-dot(w, e.psi[i][k]))
		}
		h += best
	}
	return 0.5*e.p.Lambda*dot(w, w) + h/float64(len(e.paths))
}

// weights is w(α) = (1/(λn)) Σ_i Σ_y α_i(y) ψ_i(y).
func (e *enumDual) weights(alpha [][]float64) []float64 {
	w := make([]float64, e.p.Layout.Dim())
	c := 1 / (e.p.Lambda * float64(len(e.paths)))
	for i := range alpha {
		for k, a := range alpha[i] {
			for j, v := range e.psi[i][k] {
				w[j] += c * a * v
			}
		}
	}
	return w
}

// dual is D(α) = −λ/2‖w(α)‖² + (1/n) Σ_i Σ_y α_i(y) Δ_i(y).
func (e *enumDual) dual(alpha [][]float64) float64 {
	w := e.weights(alpha)
	l := 0.0
	for i := range alpha {
		l += dot(alpha[i], e.loss[i])
	}
	return -0.5*e.p.Lambda*dot(w, w) + l/float64(len(alpha))
}

// blockGap is G_i = max_y [Δ_i(y) − ⟨w,ψ_i(y)⟩] − Σ_y α_i(y)[Δ_i(y) − ⟨w,ψ_i(y)⟩].
func (e *enumDual) blockGap(i int, alpha []float64, w []float64) float64 {
	best, mean := math.Inf(-1), 0.0
	for k := range e.paths[i] {
		v := e.loss[i][k] - dot(w, e.psi[i][k])
		best = max(best, v)
		mean += alpha[k] * v
	}
	return best - mean
}

// marginals returns the clique marginals of the distribution alpha over
// sentence i's paths, in the dual store's block layout.
func (e *enumDual) marginals(i int, alpha []float64) []float64 {
	K := e.p.Layout.NumLabels
	T := len(e.paths[i][0])
	mu := make([]float64, crf.BlockLen(T, K))
	for k, y := range e.paths[i] {
		if T == 1 {
			mu[y[0]] += alpha[k]
			continue
		}
		for t := 0; t < T-1; t++ {
			mu[(t*K+int(y[t]))*K+int(y[t+1])] += alpha[k]
		}
	}
	return mu
}

// optimum maximises the enumerated dual by accelerated projected gradient
// ascent (FISTA) on the product of simplices, an independent generic
// method, and returns its α after iters iterations.
func (e *enumDual) optimum(iters int) [][]float64 {
	n := len(e.paths)
	nf := float64(n)
	lam := e.p.Lambda
	// The gradient's Lipschitz constant is ‖Ψ‖²/(λn²), Ψ the matrix of
	// every ψ_i(y); ‖Ψ‖² by power iteration on ΨᵀΨ (an overestimate by 10%).
	dim := e.p.Layout.Dim()
	v := make([]float64, dim)
	for j := range v {
		v[j] = 1 + float64(j%7)
	}
	norm := 0.0
	for it := 0; it < 200; it++ {
		nv := make([]float64, dim)
		for i := range e.psi {
			for _, ps := range e.psi[i] {
				c := dot(ps, v)
				for j, x := range ps {
					nv[j] += c * x
				}
			}
		}
		norm = math.Sqrt(dot(nv, nv)) / math.Sqrt(dot(v, v))
		v = nv
		s := 1 / math.Sqrt(dot(v, v))
		for j := range v {
			v[j] *= s
		}
	}
	L := 1.1 * norm / (lam * nf * nf)
	alpha := make([][]float64, n)
	for i := range alpha {
		alpha[i] = make([]float64, len(e.paths[i]))
		alpha[i][0] = 1
	}
	yv := make([][]float64, n)
	for i := range yv {
		yv[i] = slices.Clone(alpha[i])
	}
	tk := 1.0
	for it := 0; it < iters; it++ {
		w := e.weights(yv)
		next := make([][]float64, n)
		for i := range yv {
			g := make([]float64, len(yv[i]))
			for k := range g {
				g[k] = yv[i][k] + (e.loss[i][k]-dot(w, e.psi[i][k]))/nf/L
			}
			next[i] = projectSimplex(g)
		}
		tn := (1 + math.Sqrt(1+4*tk*tk)) / 2
		for i := range yv {
			for k := range yv[i] {
				yv[i][k] = next[i][k] + (tk-1)/tn*(next[i][k]-alpha[i][k])
			}
		}
		alpha, tk = next, tn
	}
	return alpha
}

// projectSimplex returns the Euclidean projection of v on the simplex.
func projectSimplex(v []float64) []float64 {
	u := slices.Clone(v)
	sort.Sort(sort.Reverse(sort.Float64Slice(u)))
	css, theta := 0.0, 0.0
	for j, x := range u {
		css += x
		if t := (css - 1) / float64(j+1); x-t > 0 {
			theta = t
		}
	}
	out := make([]float64, len(v))
	for j, x := range v {
		out[j] = max(x-theta, 0)
	}
	return out
}

// tinyHingeProblems are the BCFW tests' problems: T ≤ 4, K ≤ 3, with every
// layout variant.
func tinyHingeProblems(t *testing.T) map[string]*Problem {
	out := map[string]*Problem{}
	for _, tc := range []struct {
		name                      string
		real, noBias, mask, trans bool
		K                         int
	}{{"binary", false, false, false, false, 3}, {"real", true, false, false, false, 3}, {"nobias", true, true, false, false, 2},
		{"observed", false, false, true, false, 3}, {"crfsuite", true, true, true, true, 3}} {
		p := randomProblem(t, 31, 8, 4, 5, tc.K, tc.real, 0.05)
		p.Layout.NoBias = tc.noBias
		if tc.mask {
			p.Mask = ObservedMask(p.Data)
		}
		if tc.trans {
			p.TransMask = ObservedTransitions(p.Data)
		}
		out[tc.name] = p
	}
	return out
}

// hammings are BCFW's Hamming losses, which the enumeration tests run
// through.
var hammings = []string{HammingMean, HammingCount}

// TestBCFWSteps makes BCFW steps on tiny problems and checks after every
// step, against an explicit distribution α_i over every sentence's paths
// moved by the same Frank–Wolfe steps: the blocks are α's marginals; the
// kept w and ‖w‖² are w(α); the step's gap is the enumerated block gap and
// the line search's slope; H_i is the enumerated hinge; the primal, the
// dual, every block gap and the gap identity P − D = mean block gap of the
// pass equal their enumeration; the dual never decreases.
func TestBCFWSteps(t *testing.T) {
	ctx := context.Background()
	for name, p := range tinyHingeProblems(t) {
		for _, hamming := range hammings {
			t.Run(name+"/"+hamming, func(t *testing.T) { testBCFWSteps(ctx, t, p, hamming) })
		}
	}
}

func testBCFWSteps(ctx context.Context, t *testing.T, p *Problem, hamming string) {
	e := newEnumDual(p, hamming)
	m := &BCFW{Sampler: kindSampler(t, SamplerUniform, p), Seed: 3, Hamming: hamming}
	if err := m.Init(p); err != nil {
		t.Fatal(err)
	}
	alpha := make([][]float64, p.N())
	for i := range alpha {
		alpha[i] = make([]float64, len(e.paths[i]))
		k := slices.IndexFunc(e.paths[i], func(y []int32) bool { return slices.Equal(y, p.Data.Sentence(i).Labels) })
		alpha[i][k] = 1
	}
	rng := rand.New(rand.NewPCG(9, 9))
	prevD := e.dual(alpha)
	moved := 0
	for step := 0; step < 200; step++ {
		i := rng.IntN(p.N())
		w0 := slices.Clone(m.Weights())
		wantGap := e.blockGap(i, alpha[i], w0)
		wantH := math.Inf(-1)
		for k := range e.paths[i] {
			wantH = max(wantH, e.loss[i][k]-dot(w0, e.psi[i][k]))
		}
		st := m.step(i)
		if math.Abs(st.Gap-max(wantGap, 0)) > 1e-10 || math.Abs(st.Slope-wantGap) > 1e-10 {
			t.Fatalf("step %d: block gap %.15g, slope %.15g, enumerated %.15g", step, st.Gap, st.Slope, wantGap)
		}
		if math.Abs(st.Hinge-wantH) > 1e-10 {
			t.Fatalf("step %d: H_i %.15g, enumerated %.15g", step, st.Hinge, wantH)
		}
		// The same move on α: towards the oracle's path.
		k := slices.IndexFunc(e.paths[i], func(y []int32) bool { return slices.Equal(y, m.bw.path) })
		before := slices.Clone(alpha[i])
		moveTo := func(g float64) {
			for j := range alpha[i] {
				alpha[i][j] = (1 - g) * before[j]
			}
			alpha[i][k] += g
		}
		// γ maximises the dual on [0,1] along the step's direction.
		for _, g := range []float64{st.Gamma - 1e-3, st.Gamma + 1e-3} {
			moveTo(min(1, max(0, g)))
			Dg := e.dual(alpha)
			moveTo(st.Gamma)
			if D := e.dual(alpha); Dg > D+1e-13 {
				t.Fatalf("step %d: D(γ=%g) = %.15g > D(γ=%g) = %.15g", step, g, Dg, st.Gamma, D)
			}
		}
		moveTo(st.Gamma)
		if st.Gamma > 0 {
			moved++
		}
		mu := e.marginals(i, alpha[i])
		for j, x := range mu {
			if math.Abs(x-loadBlock(m.duals, i)[j]) > 1e-12 {
				t.Fatalf("step %d: block %d entry %d = %g, α's marginal %g", step, i, j, loadBlock(m.duals, i)[j], x)
			}
		}
		w := e.weights(alpha)
		for j, v := range w {
			if math.Abs(v-m.st.w[j]) > 1e-9*max(1, math.Abs(v)) {
				t.Fatalf("step %d: w[%d] = %.15g, w(α) = %.15g", step, j, m.st.w[j], v)
			}
		}
		if !relClose(dot(w, w), m.st.wsq, 1e-9) && math.Abs(dot(w, w)-m.st.wsq) > 1e-12 {
			t.Fatalf("step %d: ‖w‖² kept %.15g, w(α) %.15g", step, m.st.wsq, dot(w, w))
		}
		D := e.dual(alpha)
		if D < prevD-1e-12 {
			t.Fatalf("step %d (γ=%g): dual decreased %.15g → %.15g", step, st.Gamma, prevD, D)
		}
		prevD = D
		r, err := p.hingePass(ctx, w, m.duals, m.count)
		if err != nil {
			t.Fatal(err)
		}
		if P := e.primal(w); math.Abs(r.primal-P) > 1e-10 || math.Abs(r.dual-D) > 1e-10 {
			t.Fatalf("step %d: pass P = %.15g, D = %.15g; enumerated %.15g, %.15g", step, r.primal, r.dual, P, D)
		}
		for b := range alpha {
			if g := e.blockGap(b, alpha[b], w); math.Abs(r.gaps[b]-g) > 1e-10 {
				t.Fatalf("step %d: block %d gap %.15g, enumerated %.15g", step, b, r.gaps[b], g)
			}
		}
		if math.Abs(r.primal-r.dual-r.meanGap) > 1e-12 {
			t.Fatalf("step %d: P − D = %.15g, mean block gap %.15g", step, r.primal-r.dual, r.meanGap)
		}
	}
	if moved < 20 {
		t.Fatalf("only %d of 200 steps moved", moved)
	}
}

// TestBCFWOptimum trains BCFW to a tight certified gap and checks its
// primal against the optimum of the enumerated dual found by an independent
// method (accelerated projected gradient), within both certificates; and
// the weights within the distance λ-strong convexity allows.
func TestBCFWOptimum(t *testing.T) {
	for name, p := range tinyHingeProblems(t) {
		for _, hamming := range hammings {
			testBCFWOptimum(t, name+"/"+hamming, p, hamming)
		}
	}
}

func testBCFWOptimum(t *testing.T, name string, p *Problem, hamming string) {
	e := newEnumDual(p, hamming)
	alpha := e.optimum(20000)
	wq := e.weights(alpha)
	Pq, Dq := e.primal(wq), e.dual(alpha)
	if Pq-Dq > 1e-4 {
		t.Fatalf("%s: the reference did not converge: P − D = %g", name, Pq-Dq)
	}
	for _, kind := range []string{SamplerGap, SamplerUniform} {
		t.Run(name+"/"+kind, func(t *testing.T) {
			res, err := Train(context.Background(), p, Settings{GapTol: 1e-4, MaxEpochs: 500000},
				&BCFW{Sampler: kindSampler(t, kind, p), Seed: 1, Hamming: hamming})
			if err != nil {
				t.Fatal(err)
			}
			if !res.TargetMet() {
				t.Fatalf("stopped (%s) after %d epochs at gap %g", res.Stopped, res.Epochs, res.Last.Gap)
			}
			Pb := e.primal(res.Weights)
			if math.Abs(Pb-res.Last.Primal) > 1e-10 {
				t.Fatalf("certified primal %.15g, enumerated %.15g", res.Last.Primal, Pb)
			}
			// P* ∈ [Dq, Pq] and P* ∈ [Pb − gap, Pb].
			if Pb < Dq-1e-12 || Pb-res.Last.Gap > Pq+1e-12 {
				t.Fatalf("BCFW P = %.12g (gap %.3g), reference P* ∈ [%.12g, %.12g]", Pb, res.Last.Gap, Dq, Pq)
			}
			// λ/2‖w − w*‖² ≤ P(w) − P*, for both.
			d := 0.0
			for j := range wq {
				d += (wq[j] - res.Weights[j]) * (wq[j] - res.Weights[j])
			}
			if r := math.Sqrt(2*res.Last.Gap/p.Lambda) + math.Sqrt(2*(Pq-Dq)/p.Lambda); math.Sqrt(d) > r+1e-9 {
				t.Fatalf("‖w − w_ref‖ = %g, beyond the certified %g", math.Sqrt(d), r)
			}
		})
	}
}

// TestBCFWDeterministic checks that a seed gives the same weights bit for
// bit, and that refreshing the gap estimates runs.
func TestBCFWDeterministic(t *testing.T) {
	p := randomProblem(t, 41, 40, 8, 20, 4, true, 0)
	run := func(refresh int) *Result {
		res, err := Train(context.Background(), p, Settings{GapTol: 1e-2, MaxEpochs: 5000, RefreshEvery: refresh},
			&BCFW{Sampler: kindSampler(t, SamplerGap, p), Seed: 7})
		if err != nil {
			t.Fatal(err)
		}
		if !res.TargetMet() {
			t.Fatalf("stopped (%s) after %d epochs at gap %g", res.Stopped, res.Epochs, res.Last.Gap)
		}
		return res
	}
	a, b := run(0), run(0)
	if !slices.Equal(a.Weights, b.Weights) {
		t.Fatal("the same seed gave different weights")
	}
	run(3)
}

// TestBCFWCertifyRefreshesSampler checks that a certificate hands the
// sampler the exact block gaps of its pass: after Certify and
// UseCertificate (what Train does after a certificate due by its
// schedule) the sampler's
// estimates are the exact gaps at the current point, not the stale gaps
// of the steps, and the certified gap is no larger than their mean.
func TestBCFWCertifyRefreshesSampler(t *testing.T) {
	ctx := context.Background()
	for name, p := range tinyHingeProblems(t) {
		t.Run(name, func(t *testing.T) {
			m := &BCFW{Sampler: kindSampler(t, SamplerGap, p), Seed: 5}
			if err := m.Init(p); err != nil {
				t.Fatal(err)
			}
			for ep := 0; ep < 3; ep++ {
				if err := m.Epoch(ctx); err != nil {
					t.Fatal(err)
				}
				c, err := m.Certify(ctx)
				if err != nil {
					t.Fatal(err)
				}
				m.UseCertificate()
				// The current point's gaps (the certificate may be w̄'s);
				// the pass's gaps are checked against enumeration by
				// TestBCFWSteps.
				w, err := p.What(m.duals)
				if err != nil {
					t.Fatal(err)
				}
				r, err := p.hingePass(ctx, w, m.duals, m.count)
				if err != nil {
					t.Fatal(err)
				}
				got := m.sampler.State().Gaps
				for i := range got {
					if want := cleanGap(r.gaps[i]); got[i] != want {
						t.Errorf("epoch %d: sentence %d's estimate %.15g, the exact gap %.15g", ep+1, i, got[i], want)
					}
				}
				if math.Abs(m.sampler.Estimate()-r.meanGap) > 1e-12 || c.Gap > r.meanGap+1e-12 {
					t.Fatalf("epoch %d: estimate %.15g after the certificate, the current point's gap %.15g, certified %.15g",
						ep+1, m.sampler.Estimate(), r.meanGap, c.Gap)
				}
			}
		})
	}
}

// TestBCFWAverage runs BCFW averaging on tiny problems and checks at
// every epoch, against the weights recorded after each epoch: the
// certificate's primal is min(P(w), P(w̄)) with w̄ = Σ_e e·w_e / Σ_e e
// and P by enumeration, its dual is the current D(μ), its weights are
// the better point's, and w̄'s primal is no lower than the enumerated
// optimum's dual.
func TestBCFWAverage(t *testing.T) {
	ctx := context.Background()
	for name, p := range tinyHingeProblems(t) {
		for _, hamming := range hammings {
			t.Run(name+"/"+hamming, func(t *testing.T) { testBCFWAverage(ctx, t, p, hamming) })
		}
	}
}

func testBCFWAverage(ctx context.Context, t *testing.T, p *Problem, hamming string) {
	e := newEnumDual(p, hamming)
	Dq := e.dual(e.optimum(20000))
	m := &BCFW{Sampler: kindSampler(t, SamplerUniform, p), Seed: 11, Hamming: hamming}
	if err := m.Init(p); err != nil {
		t.Fatal(err)
	}
	var ws [][]float64 // the weights after each epoch
	averaged := 0
	for ep := 1; ep <= 30; ep++ {
		if err := m.Epoch(ctx); err != nil {
			t.Fatal(err)
		}
		w := slices.Clone(m.Weights())
		ws = append(ws, w)
		r, err := p.hingePass(ctx, w, m.duals, m.count)
		if err != nil {
			t.Fatal(err)
		}
		sw := float64(ep*(ep+1)) / 2 // Σ_e e
		wbar := make([]float64, len(w))
		for k := range ws {
			for j := range wbar {
				wbar[j] += float64(k+1) / sw * ws[k][j]
			}
		}
		Pbar := e.primal(wbar)
		if Pbar < Dq-1e-9 {
			t.Fatalf("epoch %d: P(w̄) = %.12g below the optimum's dual %.12g", ep, Pbar, Dq)
		}
		c, err := m.Certify(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if P := min(r.primal, Pbar); math.Abs(c.Primal-P) > 1e-9 || math.Abs(c.Dual-r.dual) > 1e-12 || math.Abs(c.Gap-(P-r.dual)) > 1e-9 {
			t.Fatalf("epoch %d: certificate P = %.15g, D = %.15g, gap %.15g; P(w) = %.15g, P(w̄) = %.15g, D(μ) = %.15g",
				ep, c.Primal, c.Dual, c.Gap, r.primal, Pbar, r.dual)
		}
		if math.Abs(e.primal(c.Weights)-c.Primal) > 1e-9 {
			t.Fatalf("epoch %d: the certificate's weights have P = %.15g, not its %.15g", ep, e.primal(c.Weights), c.Primal)
		}
		if Pbar < r.primal-1e-9 {
			averaged++
		}
	}
	t.Logf("w̄ had the lower primal at %d of 30 epochs", averaged)
}
