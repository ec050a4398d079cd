package train

import (
	"context"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dualcrf/dualcrf/crf"
	"github.com/dualcrf/dualcrf/tables"
)

// The measurement of compact (float32) duals: SDCA runs in memory with its
// float64 store, and after every commit of μ_i (and on the initial duals)
// the block is replaced by what a compact store would give back when it is
// read again. The simulated representations (compactMode):
//
//   - f32: every entry rounded to float32; the weights keep moving by the
//     step's exact direction, so they drift from ŵ(μ) of the stored duals
//     (a store that rounds on write and nothing else);
//   - f32w: the same rounding, and the weights moved by the direction of the
//     rounding too, so that w = ŵ(μ) of the stored duals at every step;
//   - markov: the block stored as its first node marginal and the
//     conditionals μ_t(y,y')/μ_t(y) of every edge in float32, read back in
//     float64 as the marginals of that Markov chain (rows renormalised):
//     every block read is consistent and sums to one, so D(μ) is the dual
//     of a feasible point; w is kept at ŵ(μ) as in f32w.
//
// The certificate is computed as in every run: ŵ(μ) and D(μ) from the
// stored (rounded) duals.
type compactMode string

const (
	compactF64    compactMode = "f64"
	compactF32    compactMode = "f32"
	compactF32W   compactMode = "f32w"
	compactMarkov compactMode = "markov"
)

// compactSim rounds blocks through a compact representation.
type compactSim struct {
	mode   compactMode
	p      *Problem
	exact  []float64 // the block before rounding
	resid  []float64 // rounded − exact
	node   []float64 // T×K scratch
	rounds int64
}

// round replaces block μ of a sentence of length T by its compact image.
func (c *compactSim) round(mu []float64, T int) {
	K := c.p.Layout.NumLabels
	switch c.mode {
	case compactF32, compactF32W:
		for j, x := range mu {
			mu[j] = float64(float32(x))
		}
	case compactMarkov:
		if T == 1 {
			s := 0.0
			for j := range mu[:K] {
				mu[j] = float64(float32(mu[j]))
				s += mu[j]
			}
			for j := range mu[:K] {
				mu[j] /= s
			}
			return
		}
		// Encode: a_0 (K numbers) and the row conditionals of every edge,
		// all in float32; decode in place into marginals.
		a := make([]float64, K)
		next := make([]float64, K)
		for y := 0; y < K; y++ {
			s := 0.0
			for _, v := range mu[y*K : (y+1)*K] {
				s += v
			}
			a[y] = float64(float32(s))
		}
		sa := 0.0
		for _, v := range a {
			sa += v
		}
		for y := range a {
			a[y] /= sa
		}
		for t := 0; t < T-1; t++ {
			blk := mu[t*K*K : (t+1)*K*K]
			clear(next)
			for y := 0; y < K; y++ {
				row := blk[y*K : (y+1)*K]
				s := 0.0
				for _, v := range row {
					s += v
				}
				rs := 0.0
				for y2, v := range row {
					q := 1 / float64(K)
					if s > 0 {
						q = float64(float32(v / s))
					}
					row[y2] = q
					rs += q
				}
				for y2 := range row {
					row[y2] = a[y] * row[y2] / rs
					next[y2] += row[y2]
				}
			}
			a, next = next, a
		}
	}
}

// after is the stepper's afterCommit hook: it rounds the committed block
// and, for f32w and markov, moves w by the rounding's primal direction.
func (c *compactSim) after(sp *stepper) func(ws *stepWork) {
	return func(ws *stepWork) {
		c.rounds++
		s := c.p.Data.Sentence(ws.i)
		T := s.Len()
		K := c.p.Layout.NumLabels
		mu := ws.mu
		c.exact = append(c.exact[:0], mu...)
		c.round(mu, T)
		if c.mode == compactF32 {
			return
		}
		c.resid = grow(c.resid, len(mu))
		for j := range mu {
			c.resid[j] = mu[j] - c.exact[j]
		}
		ws.dN = grow(ws.dN, T*K)
		crf.NodeFromBlock(c.resid, T, K, ws.dN)
		ws.nuSum = grow(ws.nuSum, K*K)
		ws.muSum = grow(ws.muSum, K*K)
		clear(ws.nuSum)
		clear(ws.muSum)
		if T > 1 {
			for t := 0; t < T-1; t++ {
				for j, v := range c.resid[t*K*K : (t+1)*K*K] {
					ws.nuSum[j] += v
				}
			}
		}
		_, ws.b = sp.direction(ws, ws.i, s)
		a := 0.0
		for r, at := range ws.rows {
			a += dot(sp.w[int(at)*K:int(at)*K+K], ws.vr[r*K:r*K+K])
		}
		a += dot(sp.w[sp.p.Layout.Trans():], ws.vt)
		sp.commitPrimal(ws, 1, a)
	}
}

// install rounds every block of m's duals, recomputes w = ŵ(μ), and hooks
// the rounding into m's steps.
func (c *compactSim) install(t testing.TB, m *SDCA) {
	if c.mode == compactF64 {
		return
	}
	d := c.p.Data
	for i := 0; i < d.Len(); i++ {
		c.round(m.duals.Block(i), d.Sentence(i).Len())
	}
	m.st.w = mustWhat(t, c.p, m.duals)
	m.st.wsq = dot(m.st.w, m.st.w)
	m.st.afterCommit = c.after(m.st)
}

// TestCompactDualsSim checks the simulation itself on a small random
// problem: every representation converges, f32w and markov keep w = ŵ(μ)
// of the stored duals, and markov's blocks are consistent marginals.
func TestCompactDualsSim(t *testing.T) {
	for _, mode := range []compactMode{compactF32, compactF32W, compactMarkov} {
		t.Run(string(mode), func(t *testing.T) {
			p := randomProblem(t, 41, 120, 5, 12, 3, true, 0)
			m := &SDCA{Sampler: kindSampler(t, SamplerGap, p), Seed: 3, Workers: 1}
			if err := m.Init(p); err != nil {
				t.Fatal(err)
			}
			c := &compactSim{mode: mode, p: p}
			c.install(t, m)
			c0, err := m.Certify(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			for range 6 {
				if err := m.Epoch(context.Background()); err != nil {
					t.Fatal(err)
				}
			}
			cert, err := m.Certify(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if !(cert.Gap < c0.Gap/10) {
				t.Fatalf("gap %g after 6 epochs from %g", cert.Gap, c0.Gap)
			}
			if c.rounds != int64(6*p.N()) {
				t.Fatalf("%d roundings in %d steps", c.rounds, 6*p.N())
			}
			K := p.Layout.NumLabels
			for i := 0; i < p.N(); i++ {
				for _, v := range m.duals.Block(i) {
					if mode != compactMarkov && float64(float32(v)) != v {
						t.Fatalf("block %d holds %v, not a float32", i, v)
					}
				}
				T := p.Data.Sentence(i).Len()
				if mode == compactMarkov && T > 2 {
					mu := m.duals.Block(i)
					for tt := 0; tt < T-2; tt++ {
						for y := 0; y < K; y++ {
							in, out := 0.0, 0.0
							for x := 0; x < K; x++ {
								in += mu[(tt*K+x)*K+y]
								out += mu[((tt+1)*K+y)*K+x]
							}
							if math.Abs(in-out) > 1e-14 {
								t.Fatalf("block %d, node %d, label %d: %g in, %g out", i, tt+1, y, in, out)
							}
						}
					}
				}
			}
			if mode == compactF32 {
				return
			}
			w := mustWhat(t, p, m.duals)
			diff, scale := 0.0, 1.0
			for j := range w {
				diff = max(diff, math.Abs(w[j]-m.st.w[j]))
				scale = max(scale, math.Abs(w[j]))
			}
			if diff > 1e-10*scale {
				t.Fatalf("kept weights differ from ŵ(μ) by %g", diff)
			}
		})
	}
}

// TestCompactDualsMeasure is the measurement (docs/long-runs.md, "Compact
// duals"). It runs only when DUALCRF_COMPACT_TABLE names a feature table:
//
//	DUALCRF_COMPACT_TABLE=train.arrow DUALCRF_COMPACT_EPOCHS=60 \
//	  DUALCRF_COMPACT_MODES=f64,f32,f32w,markov \
//	  go test ./train -run TestCompactDualsMeasure -v -timeout 0
//
// It trains SDCA-GAP (seed 1, λ = 1/n) once per mode, alternating the
// modes epoch by epoch, certifies every epoch and prints one line per mode
// and epoch: the certified gap P − D, P, D, the identity's residual and the
// epoch's wall time. The caller reads epochs to 1e-3…1e-6 and the stall
// from these lines; dual values above the best float64 primal are
// certificates that claim too much.
func TestCompactDualsMeasure(t *testing.T) {
	path := os.Getenv("DUALCRF_COMPACT_TABLE")
	if path == "" {
		t.Skip("set DUALCRF_COMPACT_TABLE to a feature table to measure compact duals")
	}
	epochs := 40
	if s := os.Getenv("DUALCRF_COMPACT_EPOCHS"); s != "" {
		var err error
		if epochs, err = strconv.Atoi(s); err != nil {
			t.Fatal(err)
		}
	}
	modes := []compactMode{compactF64, compactF32, compactF32W, compactMarkov}
	if s := os.Getenv("DUALCRF_COMPACT_MODES"); s != "" {
		modes = modes[:0]
		for _, f := range strings.Split(s, ",") {
			modes = append(modes, compactMode(f))
		}
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	ft, err := tables.ReadFeatureTable(f, path, tables.FeatureReadOptions{SkipText: true})
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	type run struct {
		c *compactSim
		m *SDCA
		p *Problem
	}
	var runs []run
	for _, mode := range modes {
		p, err := NewProblem(ft.Data, 1/float64(ft.Data.Len()), false)
		if err != nil {
			t.Fatal(err)
		}
		s, err := NewSampler(DefaultSampler, p.N(), SamplerOptions{})
		if err != nil {
			t.Fatal(err)
		}
		m := &SDCA{Sampler: s, Seed: 1, Workers: 1}
		if err := m.Init(p); err != nil {
			t.Fatal(err)
		}
		c := &compactSim{mode: mode, p: p}
		c.install(t, m)
		runs = append(runs, run{c, m, p})
		var entries int64
		for i := 0; i < p.N(); i++ {
			entries += int64(len(m.duals.Block(i)))
		}
		fmt.Printf("compact %s: n=%d K=%d entries=%d float64 %.1f MiB float32 %.1f MiB\n", mode, p.N(),
			p.Layout.NumLabels, entries, float64(entries*8)/(1<<20), float64(entries*4)/(1<<20))
	}
	for e := 1; e <= epochs; e++ {
		for _, r := range runs {
			t0 := time.Now()
			if err := r.m.Epoch(ctx); err != nil {
				t.Fatal(err)
			}
			wall := time.Since(t0)
			w, err := r.p.What(r.m.duals)
			if err != nil {
				t.Fatal(err)
			}
			pr, err := r.p.pass(ctx, w, r.m.duals, false)
			if err != nil {
				t.Fatal(err)
			}
			// The kept weights' distance from ŵ(μ): f32's drift.
			drift := 0.0
			for j := range w {
				drift = max(drift, math.Abs(w[j]-r.m.st.w[j]))
			}
			fmt.Printf("compact %-6s epoch %3d gap %.4e P %.12f D %.12f resid %.2e drift %.2e wall %.2fs\n",
				r.c.mode, e, pr.Primal-pr.Dual, pr.Primal, pr.Dual, math.Abs(pr.Primal-pr.Dual-pr.MeanGap),
				drift, wall.Seconds())
		}
	}
}

// BenchmarkCompactRound measures the simulated compact stores' rounding of
// a block (T = 24, K = 22: CoNLL-2000's mean sentence), per dual entry,
// to set beside BenchmarkStepKernels' whole step per entry:
//
//	go test ./train -run '^$' -bench CompactRound
func BenchmarkCompactRound(b *testing.B) {
	const T, K = 24, 22
	p := &Problem{Layout: crf.Layout{NumLabels: K}}
	src := make([]float64, crf.BlockLen(T, K))
	x := uint64(1)
	for j := range src {
		x = x*6364136223846793005 + 1442695040888963407
		src[j] = float64(x>>11) / (1 << 53)
	}
	for t := 0; t < T-1; t++ { // normalise each edge: a block of a chain's edges, not consistent
		blk := src[t*K*K : (t+1)*K*K]
		s := 0.0
		for _, v := range blk {
			s += v
		}
		for j := range blk {
			blk[j] /= s
		}
	}
	mu := make([]float64, len(src))
	for _, mode := range []compactMode{compactF32, compactMarkov} {
		b.Run(string(mode), func(b *testing.B) {
			c := &compactSim{mode: mode, p: p}
			for b.Loop() {
				copy(mu, src)
				c.round(mu, T)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(mu)), "ns/entry")
		})
	}
}
