package train

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/dualcrf/dualcrf/crf"
	"github.com/dualcrf/dualcrf/crf/crftest"
	"github.com/dualcrf/dualcrf/duals"
	"github.com/dualcrf/dualcrf/internal/num"
)

func randomProblem(t *testing.T, seed uint64, n, maxT, A, K int, real bool, lambda float64) *Problem {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 1))
	d := crftest.RandomDataset(rng, n, maxT, A, K, real)
	if lambda == 0 {
		lambda = 1 / float64(n)
	}
	p, err := NewProblem(d, lambda, false)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// kindSampler returns a fresh sampler of the given kind for p, made as the
// CLI makes it (with p's smoothness, for the importance kinds).
func kindSampler(t testing.TB, kind string, p *Problem) Sampler {
	t.Helper()
	return newTestSampler(t, kind, p.N(), SamplerOptions{Smoothness: p.Smoothness()})
}

func relClose(a, b, tol float64) bool {
	return math.Abs(a-b) <= tol*max(math.Abs(a), math.Abs(b), 1e-300)
}

// TestSDCAInvariants runs SDCA steps with exact (float64) duals on a
// random problem and checks after every step: the dual never decreases; the incrementally kept w and ‖w‖²
// equal ŵ(μ) recomputed from scratch; the gap identity
// P(ŵ(μ)) − D(μ) = mean block gap; φ'(0) ≥ the block gap.
func TestSDCAInvariants(t *testing.T) {
	for _, tc := range []struct {
		name   string
		real   bool
		noBias bool
		mask   bool
		trans  bool
	}{{"binary", false, false, false, false}, {"real", true, false, false, false}, {"nobias", true, true, false, false},
		{"observed", false, false, true, false}, {"transitions", true, false, false, true}, {"crfsuite", true, true, true, true}} {
		t.Run(tc.name, func(t *testing.T) {
			p := randomProblem(t, 11, 30, 6, 12, 4, tc.real, 0)
			if tc.noBias {
				p.Layout.NoBias = true
			}
			if tc.mask {
				p.Mask = ObservedMask(p.Data)
			}
			if tc.trans {
				p.TransMask = ObservedTransitions(p.Data)
				p.TransMask[1] = false
			}
			m := &SDCA{Sampler: kindSampler(t, SamplerUniform, p), Seed: 3, DualPrecision: duals.Float64}
			if err := m.Init(p); err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			prev, err := p.pass(ctx, m.Weights(), m.duals, false)
			if err != nil {
				t.Fatal(err)
			}
			rng := rand.New(rand.NewPCG(5, 5))
			for step := 0; step < 150; step++ {
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
				if !relClose(r.Primal-r.Dual, r.MeanGap, 1e-9) && math.Abs(r.Primal-r.Dual-r.MeanGap) > 1e-13 {
					t.Fatalf("step %d: P − D = %.15g, mean block gap %.15g", step, r.Primal-r.Dual, r.MeanGap)
				}
				prev = r
			}
			what := mustWhat(t, p, m.duals)
			for j, v := range what {
				if math.Abs(v-m.st.w[j]) > 1e-10*max(1, math.Abs(v)) {
					t.Fatalf("w[%d] = %.15g, ŵ(μ) = %.15g", j, m.st.w[j], v)
				}
			}
			if !relClose(dot(what, what), m.st.wsq, 1e-9) {
				t.Fatalf("incremental ‖w‖² = %.15g, from scratch %.15g", m.st.wsq, dot(what, what))
			}
			if tc.mask {
				for j, ok := range p.Mask {
					if !ok && m.st.w[j] != 0 {
						t.Fatalf("masked weight %d = %g", j, m.st.w[j])
					}
				}
			}
			for j, ok := range p.TransMask {
				if !ok && m.st.w[p.Layout.Trans()+j] != 0 {
					t.Fatalf("masked transition %d = %g", j, m.st.w[p.Layout.Trans()+j])
				}
			}
		})
	}
}

// TestLineSearchDerivatives checks the line search's φ' and φ” against
// finite differences of φ(γ) = H̃(μ+γδ) − (λn/2)‖w+γv‖² computed from
// scratch.
func TestLineSearchDerivatives(t *testing.T) {
	p := randomProblem(t, 21, 10, 5, 8, 3, true, 0)
	m := &SDCA{Sampler: kindSampler(t, SamplerUniform, p), Seed: 1}
	if err := m.Init(p); err != nil {
		t.Fatal(err)
	}
	for k := 0; k < 20; k++ { // move away from the initial point
		m.stepOne(k % p.N())
	}
	ln := p.Lambda * float64(p.N())
	K := p.Layout.NumLabels
	for i := 0; i < p.N(); i++ {
		s := p.Data.Sentence(i)
		T := s.Len()
		mu := append([]float64(nil), loadBlock(m.duals, i)...)
		lat := m.st.ws.lat // direction reads the node scores of the method's own lattice
		lat.SetScores(p.Layout, m.st.w, s)
		lat.ForwardBackward()
		nu := make([]float64, len(mu))
		lat.Marginals(nu, nil)
		// v from scratch: −(1/(λn)) (E_ν[F] − E_μ[F]).
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
			wg := make([]float64, len(v))
			for j := range wg {
				wg[j] = m.st.w[j] + g*v[j]
			}
			return crf.Entropy(x, T, K, make([]float64, T*K), true) - ln/2*dot(wg, wg)
		}
		// The method's own derivative evaluation.
		m.st.ws.dN = grow(m.st.ws.dN, T*K)
		m.st.ws.nu, m.st.ws.muN, m.st.ws.nuN = nu, muN, nuN
		for j := range m.st.ws.dN {
			m.st.ws.dN[j] = nuN[j] - muN[j]
		}
		m.st.ws.nuSum, m.st.ws.muSum = make([]float64, K*K), make([]float64, K*K)
		blockNodesDot(nu, T, K, lat.Trans(), make([]float64, T*K), m.st.ws.nuSum)
		blockNodesDot(mu, T, K, lat.Trans(), make([]float64, T*K), m.st.ws.muSum)
		a, b := m.st.direction(m.st.ws, i, s)
		clear(m.st.ws.vt)
		sepLo, sepHi := K, max(T-1, 1)*K
		for _, g := range []float64{0.1, 0.37, 0.8} {
			es, es2 := num.LineTerms(mu, nu, g)
			ss, ss2 := num.LineTerms(muN[sepLo:sepHi], nuN[sepLo:sepHi], g)
			d := -(es - ss) - ln*(a+g*b)
			dd := -(es2 - ss2) - ln*b
			const h = 1e-5
			fd := (phi(g+h) - phi(g-h)) / (2 * h)
			fdd := (phi(g+h) - 2*phi(g) + phi(g-h)) / (h * h)
			if math.Abs(d-fd) > 1e-6*max(1, math.Abs(fd)) {
				t.Fatalf("sentence %d γ=%g: φ' = %.10g, finite difference %.10g", i, g, d, fd)
			}
			if math.Abs(dd-fdd) > 1e-3*max(1, math.Abs(fdd)) {
				t.Fatalf("sentence %d γ=%g: φ'' = %.10g, finite difference %.10g", i, g, dd, fdd)
			}
		}
	}
}

// TestSDCAConverges checks that the certified gap falls below 1e-8 on a
// small problem, with each sampler.
func TestSDCAConverges(t *testing.T) {
	for _, kind := range []string{"uniform", "gap", "importance", "gap-importance"} {
		t.Run(kind, func(t *testing.T) {
			p := randomProblem(t, 31, 40, 6, 15, 3, false, 0.05)
			m := &SDCA{Sampler: kindSampler(t, kind, p), Seed: 9, Workers: 1}
			if err := m.Init(p); err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			var r *passResult
			for epoch := 0; epoch < 200; epoch++ {
				if err := m.Epoch(ctx); err != nil {
					t.Fatal(err)
				}
				var err error
				if r, err = p.pass(ctx, m.Weights(), m.duals, false); err != nil {
					t.Fatal(err)
				}
				if r.Primal-r.Dual < 1e-8 {
					return
				}
			}
			t.Fatalf("gap %g after 200 epochs", r.Primal-r.Dual)
		})
	}
}

// TestMuLogNuFromFactors checks the step's Σ μ log ν — taken from μ's node
// sums, Σ μ·B and the factors of log ν, with no logarithm per entry —
// against Σ μ·log ν entry by entry (log ν from crf.Lattice.Marginals, which
// the crf tests check against enumeration), in the scaled and the
// log-domain regimes, and blockNodesDot's nodes against crf.NodeFromBlock.
func TestMuLogNuFromFactors(t *testing.T) {
	for _, sd := range []float64{0, 3, 400} {
		p := randomProblem(t, 31, 40, 7, 9, 4, true, 0)
		m := &SDCA{Seed: 2}
		if err := m.Init(p); err != nil {
			t.Fatal(err)
		}
		for range 2 {
			if err := m.Epoch(context.Background()); err != nil {
				t.Fatal(err)
			}
		}
		w := m.st.w
		if sd > 0 {
			w = crftest.RandomWeights(rand.New(rand.NewPCG(5, uint64(sd))), p.Layout, sd)
		}
		K := p.Layout.NumLabels
		for i := 0; i < p.N(); i++ {
			s := p.Data.Sentence(i)
			T := s.Len()
			mu := loadBlock(m.duals, i)
			m.st.ws.lat.SetScores(p.Layout, w, s)
			m.st.ws.lat.ForwardBackward()
			nu := make([]float64, len(mu))
			logNu := make([]float64, len(mu))
			m.st.ws.lat.Marginals(nu, logNu)
			want := 0.0
			for j, x := range mu {
				if x > 0 {
					want += x * logNu[j]
				}
			}
			node, wantNode := make([]float64, T*K), make([]float64, T*K)
			m.st.ws.muN = node
			sum := make([]float64, K*K)
			muB := blockNodesDot(mu, T, K, m.st.ws.lat.Trans(), node, sum)
			crf.NodeFromBlock(mu, T, K, wantNode)
			for j := range node {
				if !relClose(node[j], wantNode[j], 1e-14) {
					t.Fatalf("sd %g sentence %d: node %d = %g, NodeFromBlock %g", sd, i, j, node[j], wantNode[j])
				}
			}
			wantB, wantSum := 0.0, make([]float64, K*K)
			for e := 0; e < T-1; e++ {
				for j, x := range mu[e*K*K : (e+1)*K*K] {
					wantSum[j] += x
					wantB += x * m.st.ws.lat.Trans()[j]
				}
			}
			if !relClose(muB, wantB, 1e-12) && math.Abs(muB-wantB) > 1e-14 {
				t.Fatalf("sd %g sentence %d: Σ μ·B = %.15g, entry by entry %.15g", sd, i, muB, wantB)
			}
			for j := range sum {
				if !relClose(sum[j], wantSum[j], 1e-13) {
					t.Fatalf("sd %g sentence %d: Σ_t μ_t[%d] = %g, entry by entry %g", sd, i, j, sum[j], wantSum[j])
				}
			}
			if got := muLogNu(m.st.ws, T, K, mu, muB); !relClose(got, want, 1e-12) {
				t.Fatalf("sd %g sentence %d (T=%d): Σ μ log ν from factors %.15g, entry by entry %.15g", sd, i, T, got, want)
			}
		}
	}
}

// cyclicSampler is a user's sampler, none of NewSampler's kinds: it visits
// the sentences in order and keeps the gaps it is told.
type cyclicSampler struct {
	next int
	gaps []float64
}

var _ Sampler = (*cyclicSampler)(nil)

func (s *cyclicSampler) Next(*rand.Rand) int {
	i := s.next
	s.next = (s.next + 1) % len(s.gaps)
	return i
}
func (s *cyclicSampler) Update(i int, gap float64) { s.gaps[i] = gap }
func (s *cyclicSampler) Refresh(gaps []float64)    { copy(s.gaps, gaps) }
func (s *cyclicSampler) Estimate() float64         { return sum(s.gaps) / float64(len(s.gaps)) }
func (s *cyclicSampler) State() SamplerState {
	return SamplerState{Kind: "cyclic", Gaps: append([]float64(nil), s.gaps...)}
}
func (s *cyclicSampler) Restore(st SamplerState) error { copy(s.gaps, st.Gaps); return nil }

// TestSDCASamplerValue checks SDCA.Sampler as a value: nil is the gap
// sampler NewSampler makes (the same weights bit for bit); a sampler of the
// user's own converges, and checkpoints would record its kind; a sampler
// sized for another number of sentences is refused.
func TestSDCASamplerValue(t *testing.T) {
	p := randomProblem(t, 33, 25, 5, 10, 3, false, 0)
	set := Settings{MaxEpochs: 3, GapTol: 1e-300}
	ctx := context.Background()
	def, err := Train(ctx, p, set, &SDCA{Seed: 4})
	if err != nil {
		t.Fatal(err)
	}
	gap, err := Train(ctx, p, set, &SDCA{Seed: 4, Sampler: kindSampler(t, SamplerGap, p)})
	if err != nil {
		t.Fatal(err)
	}
	sameBits(t, "nil sampler vs NewSampler(gap)", def.Weights, gap.Weights)

	m := &SDCA{Seed: 4, Sampler: &cyclicSampler{gaps: make([]float64, p.N())}}
	res, err := Train(ctx, p, Settings{MaxEpochs: 200, GapTol: 1e-6}, m)
	if err != nil || res.Stopped != GapReached {
		t.Fatalf("cyclic sampler: %v, stopped %v at gap %g", err, res.Stopped, res.Last.Gap)
	}
	if rs := m.RunSettings(p); rs.Sampler != "cyclic" || rs.NonUniform != nil {
		t.Fatalf("run settings of the cyclic sampler: %v", rs)
	}
	if rs := (&SDCA{}).RunSettings(p); rs.Sampler != "gap" || rs.NonUniform == nil || *rs.NonUniform != 0.8 {
		t.Fatalf("run settings of the default sampler: %v", rs)
	}

	wrong := kindSampler(t, SamplerUniform, randomProblem(t, 34, 26, 5, 10, 3, false, 0))
	if _, err := Train(ctx, p, set, &SDCA{Sampler: wrong}); !errors.Is(err, ErrBadProblem) || !strings.Contains(err.Error(), "sized for 26") {
		t.Fatalf("a sampler of 26 sentences for 25: %v", err)
	}
}

// mustWhat is Problem.What for tests, failing t on a store's read error.
func mustWhat(t testing.TB, p *Problem, store duals.Reader) []float64 {
	t.Helper()
	w, err := p.What(store)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// loadBlock returns a copy of μ_i as s keeps it.
func loadBlock(s duals.Store, i int) []float64 {
	mu := make([]float64, len(s.Raw(i))/int(s.Precision().EntryBytes()))
	s.Load(i, mu)
	return mu
}
