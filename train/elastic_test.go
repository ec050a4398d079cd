package train

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/dualcrf/dualcrf/crf"
	"github.com/dualcrf/dualcrf/crf/crftest"
	"github.com/dualcrf/dualcrf/duals"
	"github.com/dualcrf/dualcrf/option"
)

// elasticProblem is randomProblem with an ℓ1 weight l1 (and a λ of 1/n).
func elasticProblem(t *testing.T, seed uint64, n, maxT, A, K int, real bool, l1 float64) *Problem {
	t.Helper()
	p := randomProblem(t, seed, n, maxT, A, K, real, 0)
	p.L1 = l1
	return p
}

// bruteElastic returns, by enumerating every label path, the elastic
// net's primal at w, the dual at μ (with the primal point w, which must be
// soft(ŵ(μ), λ₁/λ)) and the mean block gap (1/n) Σ_i KL(q_μi‖p(·|x_i;w)).
func bruteElastic(p *Problem, w []float64, store duals.Store) (primal, dual, meanGap float64) {
	n := p.N()
	K := p.Layout.NumLabels
	loss, ent, gaps := 0.0, 0.0, 0.0
	for i := range n {
		s := p.Data.Sentence(i)
		jp := crftest.Enumerate(p.Layout, w, s)
		loss += jp.LogZ - crf.Dot(w, p.Layout, s, s.Labels)
		mu := make([]float64, crf.BlockLen(s.Len(), K))
		store.Load(i, mu)
		for k, q := range chainJoint(mu, s.Len(), K, jp.Paths) {
			if q > 0 {
				ent -= q * math.Log(q)
				gaps += q * (math.Log(q) - math.Log(jp.Prob[k]))
			}
		}
	}
	wsq, l1 := 0.0, 0.0
	for _, x := range w {
		wsq += x * x
		l1 += math.Abs(x)
	}
	nf := float64(n)
	return loss/nf + p.Lambda/2*wsq + p.L1*l1, ent/nf - p.Lambda/2*wsq, gaps / nf
}

// TestElasticGapIdentity runs proximal SDCA steps on random tiny problems
// and checks after every step, against brute-force enumeration: the primal
// at w = soft(ŵ(μ), λ₁/λ), the dual and the mean block gap equal the
// certificate pass's, and P − D equals the mean block gap (the gap
// identity, whose Fenchel–Young residual vanishes at w = ∇g*(v)); the
// dual never decreases; φ'(0) ≥ the block gap. At the end the kept u
// equals ŵ(μ) from scratch, w its soft-thresholded copy and the kept ‖w‖²
// their norm, and the ℓ1 term has made some weights zero and left others.
func TestElasticGapIdentity(t *testing.T) {
	for _, tc := range []struct {
		name   string
		real   bool
		noBias bool
		mask   bool
		trans  bool
	}{{"binary", false, false, false, false}, {"real", true, false, false, false}, {"nobias", true, true, false, false},
		{"observed", false, false, true, false}, {"crfsuite", true, true, true, true}} {
		t.Run(tc.name, func(t *testing.T) {
			p := elasticProblem(t, 81, 25, 4, 10, 3, tc.real, 0.02)
			p.Layout.NoBias = tc.noBias
			if tc.mask {
				p.Mask = ObservedMask(p.Data)
			}
			if tc.trans {
				p.TransMask = ObservedTransitions(p.Data)
			}
			m := &SDCA{Sampler: kindSampler(t, SamplerUniform, p), Seed: 3}
			if err := m.Init(p); err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			prev, err := p.pass(ctx, m.Weights(), m.duals, false)
			if err != nil {
				t.Fatal(err)
			}
			rng := rand.New(rand.NewPCG(5, 5))
			for step := 0; step < 120; step++ {
				st := m.stepOne(rng.IntN(p.N()))
				if st.Slope0 < st.Gap*(1-1e-9)-1e-15 {
					t.Fatalf("step %d: φ'(0) = %g < block gap %g", step, st.Slope0, st.Gap)
				}
				r, err := p.pass(ctx, m.Weights(), m.duals, false)
				if err != nil {
					t.Fatal(err)
				}
				if r.Dual < prev.Dual-1e-12*math.Abs(prev.Dual) {
					t.Fatalf("step %d (γ=%g): dual decreased %.15g → %.15g", step, st.Gamma, prev.Dual, r.Dual)
				}
				if math.Abs(r.Primal-r.Dual-r.MeanGap) > 1e-12*max(1, r.Primal) {
					t.Fatalf("step %d: P − D = %.15g, mean block gap %.15g", step, r.Primal-r.Dual, r.MeanGap)
				}
				if step%10 == 0 {
					bp, bd, bg := bruteElastic(p, m.Weights(), m.duals)
					if !relClose(bp, r.Primal, 1e-10) || !relClose(bd, r.Dual, 1e-10) || math.Abs(bg-r.MeanGap) > 1e-10 {
						t.Fatalf("step %d: enumeration P %.15g D %.15g gap %.15g, pass P %.15g D %.15g gap %.15g",
							step, bp, bd, bg, r.Primal, r.Dual, r.MeanGap)
					}
					if math.Abs(bp-bd-bg) > 1e-10 {
						t.Fatalf("step %d: by enumeration P − D = %.15g, mean KL %.15g", step, bp-bd, bg)
					}
				}
				prev = r
			}
			u := mustWhat(t, p, m.duals)
			zeros, nonzeros := 0, 0
			wsq := 0.0
			weights := m.Weights()
			for j, v := range u {
				if math.Abs(v-m.st.u[j]) > 1e-10*max(1, math.Abs(v)) {
					t.Fatalf("u[%d] = %.15g, ŵ(μ) = %.15g", j, m.st.u[j], v)
				}
				w := soft(m.st.u[j], p.threshold())
				if math.Float64bits(w) != math.Float64bits(weights[j]) {
					t.Fatalf("w[%d] = %.17g, soft(u) = %.17g", j, weights[j], w)
				}
				wsq += w * w
				if w == 0 {
					zeros++
				} else {
					nonzeros++
				}
			}
			if !relClose(wsq, m.st.wsq, 1e-9) {
				t.Fatalf("kept ‖w‖² = %.15g, from scratch %.15g", m.st.wsq, wsq)
			}
			if zeros == 0 || nonzeros == 0 {
				t.Fatalf("%d zero and %d non-zero weights: λ₁ should make some, not all, zero", zeros, nonzeros)
			}
		})
	}
}

// TestElasticPackedScores: the scores a proximal step's oracle makes from
// its sentence's packed rows of soft(u, τ) are those of the whole primal
// point, bit for bit, for every sentence and layout (bias or none, real
// values or binary).
func TestElasticPackedScores(t *testing.T) {
	for _, noBias := range []bool{false, true} {
		for _, real := range []bool{false, true} {
			p := elasticProblem(t, 84, 30, 6, 12, 4, real, 0.02)
			p.Layout.NoBias = noBias
			m := &SDCA{Seed: 2}
			if err := m.Init(p); err != nil {
				t.Fatal(err)
			}
			if err := m.Epoch(context.Background()); err != nil {
				t.Fatal(err)
			}
			w := m.Weights()
			whole := crf.NewLattice(p.Layout.NumLabels)
			for i := range p.N() {
				s := p.Data.Sentence(i)
				whole.SetScores(p.Layout, w, s)
				pl, ps := m.st.packPrimal(m.st.ws, i, s)
				m.st.ws.lat.SetScores(pl, m.st.ws.pw, ps)
				a, b := whole.Node(), m.st.ws.lat.Node()
				for j := range s.Len() * p.Layout.NumLabels {
					if math.Float64bits(a[j]) != math.Float64bits(b[j]) {
						t.Fatalf("bias %v real %v sentence %d: node score %d is %v packed, %v whole", !noBias, real, i, j, b[j], a[j])
					}
				}
				if fmt.Sprint(whole.Trans()) != fmt.Sprint(m.st.ws.lat.Trans()) {
					t.Fatalf("sentence %d: transition scores differ", i)
				}
			}
		}
	}
}

// TestElasticLine checks elasticLine against h'(γ) − h'(0) and h”(γ) summed
// coordinate by coordinate, h(γ) = ½ Σ soft(u_j + γd_j, τ)², and against
// finite differences of h, on random coordinates that cross the threshold
// (including ones starting exactly on it).
func TestElasticLine(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	const tau = 0.7
	var l elasticLine
	for trial := range 50 {
		n := 1 + rng.IntN(20)
		u, d := make([]float64, n), make([]float64, n)
		for j := range u {
			u[j], d[j] = 2*rng.NormFloat64(), 2*rng.NormFloat64()
			switch rng.IntN(9) {
			case 0:
				u[j] = tau
			case 1:
				u[j] = -tau
			case 2:
				d[j] = 0
			case 3: // ending on the threshold
				d[j] = tau - u[j]
			case 4:
				d[j] = -tau - u[j]
			case 5: // within the dead zone
				u[j], d[j] = tau*(2*rng.Float64()-1), tau*(rng.Float64()-0.5)
			}
		}
		l.reset()
		for j := range u {
			l.add(u[j], d[j], tau)
		}
		// The comparisons-first scan of a step finds the same line.
		var run elasticLine
		run.addRun(u, d, tau)
		if !relClose(run.slope0, l.slope0, 1e-14) || fmt.Sprint(run.at, run.jump) != fmt.Sprint(l.at, l.jump) {
			t.Fatalf("trial %d: addRun gives q'(0) %g, breakpoints %v %v; add %g, %v %v", trial, run.slope0, run.at, run.jump, l.slope0, l.at, l.jump)
		}
		h := func(g float64) (v, dv float64) {
			for j := range u {
				x := soft(u[j]+g*d[j], tau)
				v += x * x / 2
				dv += x * d[j]
			}
			return v, dv
		}
		_, h0 := h(0)
		for _, g := range []float64{0.013, 0.25, 0.5, 0.77, 0.999, 1} {
			q, dq := l.eval(g)
			_, hg := h(g)
			if math.Abs(q-(hg-h0)) > 1e-12*max(1, math.Abs(hg)) {
				t.Fatalf("trial %d γ=%g: q = %.15g, h'(γ) − h'(0) = %.15g", trial, g, q, hg-h0)
			}
			// q' is the right derivative (the left one at γ = 1, where
			// a coordinate may end on the threshold).
			ga := g
			if g == 1 {
				ga = 1 - 1e-9
			}
			want := 0.0
			for j := range u {
				if math.Abs(u[j]+ga*d[j]) > tau {
					want += d[j] * d[j]
				}
			}
			if math.Abs(dq-want) > 1e-12*max(1, want) {
				t.Fatalf("trial %d γ=%g: q' = %.15g, Σ active d² = %.15g", trial, g, dq, want)
			}
			if g < 1 {
				const e = 1e-6
				hp, _ := h(g + e)
				hm, _ := h(g - e)
				if fd := (hp - hm) / (2 * e); math.Abs(fd-hg) > 1e-6*max(1, math.Abs(hg)) {
					t.Fatalf("trial %d γ=%g: h' = %.12g, finite difference %.12g", trial, g, hg, fd)
				}
			}
		}
	}
}

// TestElasticLineSearch checks the proximal step's line search against
// finite differences of φ(γ) = H̃(μ+γδ) − λn·h(γ) computed from scratch on
// a trained-for-a-while problem, and that its γ maximises φ on [0,1] to
// the sub-precision.
func TestElasticLineSearch(t *testing.T) {
	p := elasticProblem(t, 83, 12, 5, 8, 3, true, 0.03)
	m := &SDCA{Sampler: kindSampler(t, SamplerUniform, p), Seed: 1, SubPrecision: 1e-9}
	if err := m.Init(p); err != nil {
		t.Fatal(err)
	}
	for k := 0; k < 30; k++ {
		m.stepOne(k % p.N())
	}
	ln := p.Lambda * float64(p.N())
	K := p.Layout.NumLabels
	tau := p.threshold()
	for i := 0; i < p.N(); i++ {
		s := p.Data.Sentence(i)
		T := s.Len()
		ws := m.st.ws
		mu := make([]float64, crf.BlockLen(T, K))
		m.duals.Load(i, mu)
		m.st.oracle(ws, i)
		m.st.direct(ws)
		// The direction from scratch, dense: −(1/(λn)) E_δ[F].
		nu := append([]float64(nil), ws.nu[:len(mu)]...)
		nuN, muN := make([]float64, T*K), make([]float64, T*K)
		crf.NodeFromBlock(nu, T, K, nuN)
		crf.NodeFromBlock(mu, T, K, muN)
		v := make([]float64, p.Layout.Dim())
		crf.AddExpected(v, p.Layout, s, nuN, nu, -1/ln)
		crf.AddExpected(v, p.Layout, s, muN, mu, 1/ln)
		phi := func(g float64) float64 {
			x := make([]float64, len(mu))
			for j := range x {
				x[j] = mu[j] + g*(nu[j]-mu[j])
			}
			h := 0.0
			for j := range v {
				w := soft(m.st.u[j]+g*v[j], tau)
				h += w * w / 2
			}
			return crf.Entropy(x, T, K, make([]float64, T*K), true) - ln*h
		}
		d0, gamma, _ := m.st.search(ws, ws.a, -1)
		const h = 1e-5
		if fd := (phi(h) - phi(0)) / h; math.Abs(d0-fd) > 1e-3*max(1, math.Abs(fd)) {
			t.Fatalf("sentence %d: φ'(0) = %.10g, finite difference %.10g", i, d0, fd)
		}
		for _, g := range []float64{0.1, 0.45, 0.9} {
			es, es2 := ws.edges.eval(g, mu, ws.nu)
			q, dq := ws.elastic.eval(g)
			d := -es - ln*(ws.a+q)
			dd := -es2 - ln*dq
			fd := (phi(g+h) - phi(g-h)) / (2 * h)
			if math.Abs(d-fd) > 1e-6*max(1, math.Abs(fd)) {
				t.Fatalf("sentence %d γ=%g: φ' = %.10g, finite difference %.10g", i, g, d, fd)
			}
			fdd := (phi(g+h) - 2*phi(g) + phi(g-h)) / (h * h)
			if math.Abs(dd-fdd) > 1e-3*max(1, math.Abs(fdd)) && !nearBreak(ws.elastic, g, 2*h) {
				t.Fatalf("sentence %d γ=%g: φ'' = %.10g, finite difference %.10g", i, g, dd, fdd)
			}
		}
		// γ maximises φ on [0,1]: no point of a fine grid is higher.
		best := phi(gamma)
		for k := 0; k <= 200; k++ {
			if g := float64(k) / 200; phi(g) > best+1e-9*max(1, math.Abs(best)) {
				t.Fatalf("sentence %d: φ(%g) = %.12g above φ(γ=%g) = %.12g", i, g, phi(g), gamma, best)
			}
		}
		clear(ws.vt)
	}
}

// nearBreak reports whether γ is within e of a breakpoint of l, where φ”
// jumps and a finite difference straddles the jump.
func nearBreak(l elasticLine, g, e float64) bool {
	for _, b := range l.at {
		if math.Abs(b-g) < e {
			return true
		}
	}
	return false
}

// bruteObjective returns the elastic net's smooth part f(w) = mean loss +
// (λ/2)‖w‖² and its gradient by enumeration, masked as p's masks say.
func bruteObjective(p *Problem, w []float64) (float64, []float64) {
	n := float64(p.N())
	g := make([]float64, len(w))
	f := 0.0
	for i := 0; i < p.N(); i++ {
		s := p.Data.Sentence(i)
		j := crftest.Enumerate(p.Layout, w, s)
		f += j.LogZ - crf.Dot(w, p.Layout, s, s.Labels)
		block, node := j.Marginals()
		crf.AddExpected(g, p.Layout, s, node, block, 1/n)
		crf.AddFeatures(g, p.Layout, s, s.Labels, -1/n)
	}
	f /= n
	for k, x := range w {
		f += p.Lambda / 2 * x * x
		g[k] += p.Lambda * x
	}
	p.applyMask(g)
	return f, g
}

// fistaOptimum minimises the elastic net of p by FISTA (proximal gradient
// with Nesterov's momentum and backtracking, restarted when the objective
// rises) on the brute-force objective — an optimiser sharing nothing with
// train's oracle or its methods — and returns the minimiser and P there.
func fistaOptimum(t *testing.T, p *Problem, iters int) ([]float64, float64) {
	t.Helper()
	d := p.Layout.Dim()
	x, y, prev := make([]float64, d), make([]float64, d), make([]float64, d)
	full := func(w []float64) float64 {
		f, _ := bruteObjective(p, w)
		return f + p.l1Term(w)
	}
	L, tk := 1.0, 1.0
	obj := full(x)
	for it := 0; it < iters; it++ {
		fy, gy := bruteObjective(p, y)
		var xn []float64
		for {
			xn = make([]float64, d)
			quad := fy
			for j := range xn {
				xn[j] = soft(y[j]-gy[j]/L, p.L1/L)
				dj := xn[j] - y[j]
				quad += gy[j]*dj + L/2*dj*dj
			}
			p.applyMask(xn)
			if fx, _ := bruteObjective(p, xn); fx <= quad+1e-15*max(1, math.Abs(fx)) {
				break
			}
			L *= 2
		}
		on := full(xn)
		if on > obj {
			// Restart the momentum from x.
			copy(y, x)
			tk = 1
			continue
		}
		tn := (1 + math.Sqrt(1+4*tk*tk)) / 2
		copy(prev, x)
		copy(x, xn)
		for j := range y {
			y[j] = x[j] + (tk-1)/tn*(x[j]-prev[j])
		}
		tk, obj = tn, on
		L /= 1.5 // let the step grow back
	}
	return x, obj
}

// TestElasticOptimum trains the elastic net to a certified gap of 1e-10
// with proximal SDCA — sequential, with 2 workers, and streamed over
// blocks — and with OWL-QN, and checks each against FISTA's optimum of the
// brute-force objective: the primal within the certified gap above it,
// the dual below it, and the weights within the strong-convexity bound
// ‖w − w*‖² ≤ 2·gap/λ, zeros included.
func TestElasticOptimum(t *testing.T) {
	for _, tc := range []struct {
		name string
		mask bool
	}{{"full", false}, {"observed", true}} {
		t.Run(tc.name, func(t *testing.T) {
			p := elasticProblem(t, 85, 20, 4, 8, 3, true, 0.015)
			p.Layout.NoBias = true
			if tc.mask {
				p.Mask = ObservedMask(p.Data)
				p.TransMask = ObservedTransitions(p.Data)
			}
			wStar, pStar := fistaOptimum(t, p, 3000)
			fy, gy := bruteObjective(p, wStar)
			_ = fy
			v := make([]float64, len(gy))
			for j := range v {
				v[j] = p.Lambda*wStar[j] - gy[j]
			}
			if fg := fenchelYoungL1(p.Lambda, p.L1, wStar, v); fg > 1e-11 {
				t.Fatalf("FISTA stopped %g from the optimum", fg)
			}
			zeros := 0
			for _, x := range wStar {
				if x == 0 {
					zeros++
				}
			}
			if zeros == 0 || zeros == len(wStar) {
				t.Fatalf("%d zero weights of %d at the optimum", zeros, len(wStar))
			}
			ctx := context.Background()
			set := Settings{MaxEpochs: 5000, GapTol: 1e-10}
			streamed := duals.Bytes(p.Data, duals.Float64) / 4
			for _, run := range []struct {
				name string
				m    func() Method
			}{
				{"sdca", func() Method { return &SDCA{Seed: 2} }},
				{"sdca-streamed", func() Method {
					return &SDCA{Seed: 2, Duals: newStream(t, p, filepath.Join(t.TempDir(), "d.stream"), streamed, 0)}
				}},
				{"owlqn", func() Method { return &LBFGS{} }},
				{"owlqn-dense", func() Method { return &LBFGS{dense: true} }},
			} {
				t.Run(run.name, func(t *testing.T) {
					res, err := Train(ctx, p, set, run.m())
					if err != nil {
						t.Fatal(err)
					}
					c := res.Last
					if c.Gap > 1e-10 {
						t.Fatalf("stopped (%v) at gap %g", res.Stopped, c.Gap)
					}
					if c.Dual > pStar+1e-12 || c.Primal < pStar-1e-12 || c.Primal > pStar+c.Gap+1e-12 {
						t.Fatalf("P %.15g, D %.15g (gap %g), FISTA's P* %.15g", c.Primal, c.Dual, c.Gap, pStar)
					}
					dist := 0.0
					for j, x := range res.Weights {
						dist += (x - wStar[j]) * (x - wStar[j])
					}
					if bound := 2 * (c.Gap + 1e-12) / p.Lambda; dist > bound {
						t.Fatalf("‖w − w*‖² = %g above 2·gap/λ = %g", dist, bound)
					}
					bp, _ := bruteObjective(p, res.Weights)
					if bp += p.l1Term(res.Weights); !relClose(bp, c.Primal, 1e-12) {
						t.Fatalf("certified P %.15g, by enumeration %.15g", c.Primal, bp)
					}
				})
			}
		})
	}
}

// TestElasticResumesBitIdentical interrupts elastic-net runs — sequential
// mid-epoch, 2 workers mid-round, streamed over blocks at a commit — and
// requires the resumed run to end on the uninterrupted run's weights bit
// for bit (the snapshot holds u = ŵ(μ), from which w follows exactly); a
// resume with another λ₁ is refused naming it.
func TestElasticResumesBitIdentical(t *testing.T) {
	p := elasticProblem(t, 87, 300, 4, 15, 3, true, 0.01)
	set := Settings{MaxEpochs: 4, GapTol: 1e-300, GapEvery: 2, CheckpointEvery: 1}
	for _, tc := range []struct {
		name string
		m    func() *SDCA
	}{{"sequential", func() *SDCA { return &SDCA{Seed: 7, Workers: 1} }}} {
		t.Run(tc.name, func(t *testing.T) {
			full, err := resumeRunWith(t, tc.m(), p, set, t.TempDir(), context.Background())
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			cc := &countingCtx{Context: ctx, cancel: cancel, at: -1}
			s := set
			s.Phase = func(ph string, ep int) {
				if ph == PhaseEpoch && ep == 3 {
					cc.calls, cc.at = 0, 2
				}
			}
			_, err = resumeRunWith(t, tc.m(), p, s, dir, cc)
			var ie *InterruptedError
			if !errors.As(err, &ie) || ie.At.Step == 0 || ie.Snapshot == "" {
				t.Fatalf("interrupted run: %v", err)
			}
			other := *p
			other.L1 = 0.02
			var oe *option.Error
			if _, err := resumeRunWith(t, tc.m(), &other, set, dir, context.Background()); !errors.Is(err, ErrResumeSettings) || !errors.As(err, &oe) || oe.Field != "L1" {
				t.Fatalf("resumed with another λ₁: %v", err)
			}
			res, err := resumeRunWith(t, tc.m(), p, set, dir, context.Background())
			if err != nil {
				t.Fatal(err)
			}
			sameBits(t, "resumed vs uninterrupted", full.Weights, res.Weights)
			if res.Last.Gap != full.Last.Gap {
				t.Fatalf("resumed gap %g, uninterrupted %g", res.Last.Gap, full.Last.Gap)
			}
		})
	}
	t.Run("streamed", func(t *testing.T) {
		base := t.TempDir()
		full, err := streamCkptRun(t, p, filepath.Join(base, "duals"), filepath.Join(base, "ck"), set, context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		dir := t.TempDir()
		path, ck := filepath.Join(dir, "duals"), filepath.Join(dir, "ck")
		crash := errors.New("crash")
		k := 0
		fail := func(save func(Progress) (string, error)) func(Progress) (string, error) {
			return func(pr Progress) (string, error) {
				if k++; k == 5 {
					return "", crash
				}
				return save(pr)
			}
		}
		if _, err := streamCkptRun(t, p, path, ck, set, context.Background(), fail); !errors.Is(err, crash) {
			t.Fatalf("got %v, want the crash", err)
		}
		res, err := streamCkptRun(t, p, path, ck, set, context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		sameBits(t, "resumed vs uninterrupted", full.Weights, res.Weights)
	})
}

// TestElasticStepsDoNotAllocate checks that proximal SDCA steps —
// sequential, and the rounds of 2 workers — allocate nothing once their
// scratch space has grown.
func TestElasticStepsDoNotAllocate(t *testing.T) {
	p := elasticProblem(t, 88, 100, 8, 20, 4, true, 0.01)
	m := &SDCA{Seed: 1}
	if err := m.Init(p); err != nil {
		t.Fatal(err)
	}
	if err := m.Epoch(context.Background()); err != nil {
		t.Fatal(err)
	}
	d := &draws{sampler: m.sampler, rng: m.rng}
	if a := testing.AllocsPerRun(5, func() { m.st.run(d, 2*p.N()) }); a != 0 {
		t.Fatalf("%v allocations per %d sequential steps", a, 2*p.N())
	}
	// The parallel schedules are refused with an ℓ1 term.
	for _, m := range []*SDCA{{Seed: 1, Workers: 2}, {Seed: 1, Workers: 1, RoundSize: 8}, {Seed: 1, Workers: 2, Async: AsyncAtomic}} {
		var oe *option.Error
		if err := m.Init(p); !errors.As(err, &oe) || oe.Field != "SDCA.Workers" {
			t.Fatalf("workers %d, round size %d, async %q with λ₁: %v", m.Workers, m.RoundSize, m.Async, err)
		}
	}
}

// TestElasticRefusedByOtherMethods: OEG, SAG and BCFW minimise the ℓ2
// objective only and refuse an ℓ1 term by its field; a negative or NaN λ₁
// is refused by SDCA and L-BFGS.
func TestElasticRefusedByOtherMethods(t *testing.T) {
	p := elasticProblem(t, 89, 10, 4, 6, 3, false, 0.01)
	for _, m := range []Method{&OEG{}, &SAG{}, &BCFW{}} {
		var fe *option.Error
		if err := m.Init(p); !errors.As(err, &fe) || fe.Field != "L1" {
			t.Fatalf("%T with λ₁: %v", m, err)
		}
	}
	for _, l1 := range []float64{-1, math.NaN(), math.Inf(1)} {
		p.L1 = l1
		for _, m := range []Method{&SDCA{}, &LBFGS{}} {
			var fe *option.Error
			if err := m.Init(p); !errors.As(err, &fe) || fe.Field != "L1" {
				t.Fatalf("%T with λ₁ = %g: %v", m, l1, err)
			}
		}
	}
}

// TestSoft: soft is sign(x)·max(|x| − t, 0) written out in its three
// cases, bit for bit (+0 in the dead zone), on the thresholds, zeros,
// infinities and random values.
func TestSoft(t *testing.T) {
	cases := func(x, tau float64) float64 {
		switch {
		case x > tau:
			return x - tau
		case x < -tau:
			return x + tau
		}
		return 0
	}
	rng := rand.New(rand.NewPCG(3, 3))
	xs := []float64{0, math.Copysign(0, -1), 1, -1, 0.5, -0.5, math.Inf(1), math.Inf(-1), 1e-300, -1e-300, math.Nextafter(0.5, 1), math.Nextafter(-0.5, -1)}
	for range 1000 {
		xs = append(xs, rng.NormFloat64())
	}
	for _, tau := range []float64{0, 0.5, 1e-3} {
		for _, x := range xs {
			if a, b := soft(x, tau), cases(x, tau); math.Float64bits(a) != math.Float64bits(b) {
				t.Fatalf("soft(%g, %g) = %g, want %g", x, tau, a, b)
			}
		}
	}
}
