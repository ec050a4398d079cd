package train

import (
	"context"
	"math"

	"github.com/dualcrf/dualcrf/crf"
)

// PassResult is what one full pass over the training set computes.
type PassResult struct {
	Primal  float64   // P(w)
	Loss    float64   // (1/n) Σ_i [log Z_i(w) − w·F(x_i,y_i)]
	Grad    []float64 // ∇P(w), when asked for
	Dual    float64   // D(μ) with ‖w‖² for ‖ŵ(μ)‖², when duals were given
	Entropy float64   // (1/n) Σ_i H̃(μ_i)
	Gaps    []float64 // D̃(μ_i‖ν_i(w)) per sentence, when duals were given
	MeanGap float64   // (1/n) Σ_i Gaps[i]
}

// passWorker is one goroutine's scratch space.
type passWorker struct {
	lat                 *crf.Lattice
	nu, logNu, nuN, muN []float64
	grad                []float64
}

// Pass evaluates the primal at w — and, if duals is not nil, the dual and
// every block gap, taking w = ŵ(μ) — with all cores. Per-sentence terms are
// summed in sentence order, so the result does not depend on scheduling.
func (p *Problem) Pass(ctx context.Context, w []float64, duals DualStore, wantGrad bool) (*PassResult, error) {
	n := p.N()
	d := p.Data
	K := p.Layout.NumLabels
	loss := make([]float64, n)
	var ent, gaps []float64
	if duals != nil {
		ent = make([]float64, n)
		gaps = make([]float64, n)
	}
	var ws []*passWorker
	err := crf.Parallel(ctx, n, 0, func() func(int) {
		pw := &passWorker{lat: crf.NewLattice(K)}
		if wantGrad {
			pw.grad = make([]float64, p.Layout.Dim())
		}
		ws = append(ws, pw) // newWorker runs before any worker starts
		return func(i int) {
			var mu []float64
			if duals != nil {
				mu = duals.Block(i)
			}
			l, h, g := pw.sentence(p, w, d.Sentence(i), mu)
			loss[i] = l
			if duals != nil {
				ent[i], gaps[i] = h, g
			}
		}
	})
	if err != nil {
		return nil, err
	}
	r := &PassResult{}
	r.Loss = sum(loss) / float64(n)
	wsq := dot(w, w)
	r.Primal = p.Lambda/2*wsq + r.Loss
	if wantGrad {
		// ∇P = λw + (1/n) Σ_i (E_ν_i[F] − F_i); the workers summed E_ν[F].
		g := make([]float64, len(w))
		for _, pw := range ws {
			for j, v := range pw.grad {
				g[j] += v
			}
		}
		gold := p.GoldFeatures()
		for j := range g {
			g[j] = p.Lambda*w[j] + (g[j]-gold[j])/float64(n)
		}
		p.applyMask(g)
		r.Grad = g
	}
	if duals != nil {
		r.Entropy = sum(ent) / float64(n)
		r.Dual = -p.Lambda/2*wsq + r.Entropy
		r.Gaps = gaps
		r.MeanGap = sum(gaps) / float64(n)
	}
	return r, nil
}

// sentence returns the loss log Z − w·F of s and, when mu is given, H̃(μ)
// and D̃(μ‖ν); it adds E_ν[F] to pw.grad when that is allocated.
func (pw *passWorker) sentence(p *Problem, w []float64, s crf.Sentence, mu []float64) (loss, ent, gap float64) {
	K := p.Layout.NumLabels
	T := s.Len()
	lat := pw.lat
	lat.SetScores(p.Layout, w, s)
	logZ := lat.ForwardBackward()
	loss = logZ - lat.Score(s.Labels)
	if pw.grad == nil && mu == nil {
		return loss, 0, 0
	}
	bl := crf.BlockLen(T, K)
	pw.nu = grow(pw.nu, bl)
	pw.logNu = grow(pw.logNu, bl)
	pw.nuN = grow(pw.nuN, T*K)
	pw.muN = grow(pw.muN, T*K)
	lat.Marginals(pw.nu, pw.logNu)
	lat.NodeMarginals(pw.nuN)
	if pw.grad != nil {
		crf.AddExpected(pw.grad, p.Layout, s, pw.nuN, pw.nu, 1)
	}
	if mu != nil {
		ent = crf.Entropy(mu, T, K, pw.muN, true)
		gap = crf.KL(mu, pw.nu, pw.logNu, T, K, pw.muN, pw.nuN)
	}
	return loss, ent, gap
}

func grow(s []float64, n int) []float64 {
	if cap(s) < n {
		return make([]float64, n, n+n/2)
	}
	return s[:n]
}

// sum adds v in order with Neumaier compensation, so long sums of small
// terms (block gaps near 1e-10) keep their digits.
func sum(v []float64) float64 {
	s, c := 0.0, 0.0
	for _, x := range v {
		t := s + x
		if math.Abs(s) >= math.Abs(x) {
			c += (s - t) + x
		} else {
			c += (x - t) + s
		}
		s = t
	}
	return s + c
}
