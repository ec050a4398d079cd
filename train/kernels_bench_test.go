package train

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/dualcrf/dualcrf/crf"
	"github.com/dualcrf/dualcrf/duals"
	"github.com/dualcrf/dualcrf/featurize"
	"github.com/dualcrf/dualcrf/internal/datatest"
	"github.com/dualcrf/dualcrf/pipeline"
)

// kernelBlock is one sentence's dual block and oracle marginals, captured
// from a CoNLL-2000 run so that the step's kernels can be timed on real
// entries, one at a time.
type kernelBlock struct {
	sent   int
	mu, nu []float64
	gamma  float64
}

// BenchmarkStepKernels times each part of an SDCA step per edge
// entry ((T−1)·K² per sentence; ~98M per CoNLL-2000 epoch), on the blocks of
// every 30th sentence after 3 epochs of SDCA-GAP: the oracle (scores,
// forward–backward, marginals, the factors of their logs), prepare (gap, S(0), bins and
// moments), one line-search evaluation, the update of μ and log μ, and a
// whole step. Run it with
//
//	go test ./train -run '^$' -bench StepKernels -benchtime 20x
//
// ns/entry × 98M ≈ seconds per epoch spent in that part.
func BenchmarkStepKernels(b *testing.B) {
	path := datatest.Path(b, "conll2000", "train.txt.gz")
	set, err := featurize.Builtin("chunking")
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	t, _, err := featurize.Table(ctx, pipeline.Source{Path: path}, featurize.RunOptions{Templates: set, MinCount: 3})
	if err != nil {
		b.Fatal(err)
	}
	p, err := NewProblem(t.Data, 1/float64(t.Data.Len()), false)
	if err != nil {
		b.Fatal(err)
	}
	m := &SDCA{Seed: 1}
	if err := m.Init(p); err != nil {
		b.Fatal(err)
	}
	for range 3 {
		if err := m.Epoch(ctx); err != nil {
			b.Fatal(err)
		}
	}
	K := p.Layout.NumLabels
	var blocks []kernelBlock
	entries := 0
	for i := 0; i < p.N(); i += 30 {
		s := p.Data.Sentence(i)
		bl := crf.BlockLen(s.Len(), K)
		kb := kernelBlock{sent: i, nu: make([]float64, bl)}
		m.st.ws.lat.SetScores(p.Layout, m.st.w, s)
		m.st.ws.lat.ForwardBackward()
		m.st.ws.lat.Marginals(kb.nu, nil)
		kb.mu = append([]float64(nil), loadBlock(m.duals, i)...)
		kb.gamma = m.stepOne(i).Gamma
		blocks = append(blocks, kb)
		entries += bl
	}
	perEntry := func(b *testing.B) {
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(entries), "ns/entry")
	}
	b.Run("oracle", func(b *testing.B) {
		lat := crf.NewLattice(K)
		var fa, fc []float64
		for b.Loop() {
			for _, kb := range blocks {
				s := p.Data.Sentence(kb.sent)
				lat.SetScores(p.Layout, m.st.w, s)
				lat.ForwardBackward()
				lat.Marginals(kb.nu, nil)
				fa, fc = grow(fa, s.Len()*K), grow(fc, s.Len()*K)
				lat.LogEdgeFactors(fa, fc)
			}
		}
		perEntry(b)
	})
	b.Run("prepare", func(b *testing.B) {
		var e edgeTerms
		for b.Loop() {
			for _, kb := range blocks {
				e.prepare(kb.mu, kb.nu, nil, nil, nil)
			}
		}
		perEntry(b)
	})
	b.Run("prepare-hot", func(b *testing.B) { // one block, over and over: the sweep without memory stalls
		var e edgeTerms
		kb := blocks[len(blocks)/2]
		for b.Loop() {
			for range blocks {
				e.prepare(kb.mu, kb.nu, nil, nil, nil)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(blocks)*len(kb.mu)), "ns/entry")
	})
	prepared := make([]edgeTerms, len(blocks))
	for j, kb := range blocks {
		prepared[j].prepare(kb.mu, kb.nu, nil, nil, nil)
	}
	b.Run("eval", func(b *testing.B) {
		for b.Loop() {
			for j, kb := range blocks {
				prepared[j].eval(kb.gamma, kb.mu, kb.nu)
			}
		}
		perEntry(b)
	})
	mu := make([][]float64, len(blocks))
	for j, kb := range blocks {
		mu[j] = make([]float64, len(kb.mu))
	}
	b.Run("copy", func(b *testing.B) { // what "update" spends restoring its input
		for b.Loop() {
			for j, kb := range blocks {
				copy(mu[j], kb.mu)
			}
		}
		perEntry(b)
	})
	b.Run("update", func(b *testing.B) {
		for b.Loop() {
			for j, kb := range blocks {
				copy(mu[j], kb.mu)
				prepared[j].update(kb.gamma, mu[j], kb.nu)
			}
		}
		perEntry(b)
	})
	b.Run("step", func(b *testing.B) {
		for b.Loop() {
			for _, kb := range blocks {
				m.stepOne(kb.sent)
			}
		}
		perEntry(b)
	})
	// The same steps on float64 duals (the default is float32), from the
	// same epochs.
	m64 := &SDCA{Seed: 1, DualPrecision: duals.Float64}
	if err := m64.Init(p); err != nil {
		b.Fatal(err)
	}
	for range 3 {
		if err := m64.Epoch(ctx); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("step-float64", func(b *testing.B) {
		for b.Loop() {
			for _, kb := range blocks {
				m64.stepOne(kb.sent)
			}
		}
		perEntry(b)
	})
}

// benchBins returns 704 bins (a typical count for a CoNLL-2000 block)
// whose centres are those of prepare's keys with binary exponents spread
// normally around 0 (σ = 12, clipped to ±60), with realistic moments
// (|H_k| ≲ |H_0|/64^k).
func benchBins() (rho, pm []float64) {
	const nb = 704
	rng := rand.New(rand.NewPCG(21, 22))
	rho, pm = make([]float64, nb), make([]float64, binMoments*nb)
	for i := range rho {
		ex := max(-binExpSpan, min(binExpSpan, int(math.Round(12*rng.NormFloat64()))))
		k := (ex+binExpSpan)<<5 | rng.IntN(32)
		rho[i] = math.Float64frombits(uint64(k>>5+1023-binExpSpan)<<52 | uint64(k&31)<<47 | 1<<46)
		h0 := rng.NormFloat64() * math.Exp(-10*rng.Float64())
		for m := 0; m < binMoments; m++ {
			pm[m*nb+i] = h0 * math.Pow(1.0/64, float64(m)) * (2*rng.Float64() - 1)
		}
	}
	return rho, pm
}

// BenchmarkEvalBins times a line-search evaluation's pass over the bins —
// binLogs, then evalBinsGo or the evalBins kernel in use — side by side,
// per bin, on the bins of benchBins and γ = 0.3. Run it with
//
//	go test ./train -run '^$' -bench EvalBins -count 5
func BenchmarkEvalBins(b *testing.B) {
	rho, pm := benchBins()
	nb := len(rho)
	const g = 0.3
	var sink float64
	var logD []float64
	for _, k := range []struct {
		name string
		f    func(g float64, rho, pm, logD []float64) (float64, float64)
	}{{"go", evalBinsGo}, {"kernel", evalBinsKernel}} {
		b.Run(k.name, func(b *testing.B) {
			for b.Loop() {
				logD = binLogs(g, rho, logD) // as edgeTerms.eval: the logs, then the series
				s, s2 := k.f(g, rho, pm, logD)
				sink += s + s2
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(nb), "ns/bin")
		})
	}
	_ = sink
}
