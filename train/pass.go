package train

import (
	"context"
	"math"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/dualcrf/dualcrf/crf"
	"github.com/dualcrf/dualcrf/duals"
	"github.com/dualcrf/dualcrf/internal/num"
)

// passResult is what one full pass over the training set computes.
type passResult struct {
	Primal  float64   // P(w), with the elastic net's λ₁‖w‖₁
	Loss    float64   // (1/n) Σ_i [log Z_i(w) − w·F(x_i,y_i)]
	Grad    []float64 // ∇ of P's smooth part (all of P without an ℓ1 term), when asked for
	Dual    float64   // D(μ) with ‖w‖² for ‖ŵ(μ)‖², when duals were given
	Entropy float64   // (1/n) Σ_i H̃(μ_i)
	Gaps    []float64 // D̃(μ_i‖ν_i(w)) per sentence, when duals were given
	MeanGap float64   // (1/n) Σ_i Gaps[i]
}

// passWorker is one goroutine's scratch space.
type passWorker struct {
	lat                 *crf.Lattice
	nu, logNu, nuN, muN []float64
	lmu                 []float64 // log μ of a block's edge entries
	fa, fc              []float64 // the factors of log ν (crf.Lattice.LogEdgeFactors)
	sum                 []float64 // K×K scratch of blockNodesDot
	mu                  []float64 // a block loaded from the duals
	// marginals: the block's node marginals (muN) and summed edges (sum)
	// came with it from the store (duals.MarginalStore)
	marginals  bool
	lmuS, lnuS []float64 // log μ and log ν of a block's separators
	grad       []float64 // E_ν[F] summed over the current chunk's sentences
	touched    []int32   // attribute rows of grad the chunk touched
	stamp      []uint32  // per attribute: 1 + the last chunk that touched it
}

// gradChunk is the number of consecutive sentences whose E_ν[F] one worker
// sums before the sum is added into the gradient. Chunks are added in
// chunk order, so the gradient's every entry is the same sum in the same
// order whatever the number of cores and however the chunks were scheduled.
const gradChunk = 64

// pass evaluates the primal at w — and, if store is not nil, the dual and
// every block gap, taking w = ŵ(μ) — with all cores. Per-sentence terms are
// summed in sentence order and the gradient chunk by chunk in chunk order,
// so the result does not depend on scheduling or the number of cores.
func (p *Problem) pass(ctx context.Context, w []float64, store duals.Reader, wantGrad bool) (*passResult, error) {
	n := p.N()
	d := p.Data
	K := p.Layout.NumLabels
	ms := marginalStore(store)
	loss := make([]float64, n)
	var ent, gaps []float64
	if store != nil {
		ent = make([]float64, n)
		gaps = make([]float64, n)
	}
	var g []float64
	var err error
	if wantGrad {
		g, err = p.expectedFeatures(ctx, w, loss)
	} else {
		span := func(lo, hi int) error {
			return num.Parallel(ctx, hi-lo, 0, func() func(int) {
				pw := &passWorker{lat: crf.NewLattice(K)}
				return func(i int) {
					i += lo
					var mu []float64
					if store != nil {
						T := d.SentStart[i+1] - d.SentStart[i]
						pw.mu = grow(pw.mu, crf.BlockLen(T, K))
						mu = pw.mu
						if pw.marginals = ms != nil; pw.marginals {
							pw.muN, pw.sum = grow(pw.muN, T*K), grow(pw.sum, K*K)
							ms.LoadMarginals(i, mu, pw.muN, pw.sum)
						} else {
							store.Load(i, mu)
						}
					}
					l, h, gap := pw.sentence(p, w, d.Sentence(i), mu)
					p.meterAdd(1)
					loss[i] = l
					if store != nil {
						ent[i], gaps[i] = h, gap
					}
				}
			})
		}
		if ss, ok := store.(*duals.Stream); ok {
			// Block by block in file order, each on all cores; the sums
			// below are over sentences in order, as in memory.
			err = ss.Visit(ss.Sequential(), duals.VisitOptions{}, func(_, b int) error {
				return span(ss.BlockRange(b))
			}, nil)
		} else {
			err = span(0, n)
		}
	}
	if err != nil {
		return nil, err
	}
	r := &passResult{}
	r.Loss = sum(loss) / float64(n)
	wsq := dot(w, w)
	r.Primal = p.Lambda/2*wsq + r.Loss + p.l1Term(w)
	if wantGrad {
		// ∇P = λw + (1/n) Σ_i (E_ν_i[F] − F_i).
		gold := p.GoldFeatures()
		for j := range g {
			g[j] = p.Lambda*w[j] + (g[j]-gold[j])/float64(n)
		}
		p.applyMask(g)
		r.Grad = g
	}
	if store != nil {
		r.Entropy = sum(ent) / float64(n)
		r.Dual = -p.Lambda/2*wsq + r.Entropy
		r.Gaps = gaps
		r.MeanGap = sum(gaps) / float64(n)
	}
	return r, nil
}

// expectedFeatures returns Σ_i E_ν_i[F] under w, filling loss[i], on all
// cores: workers claim chunks of gradChunk sentences in increasing order,
// sum a chunk into their own buffer, and add it into the total when every
// earlier chunk has been added — only the rows the chunk touched, and the
// dense tail. Memory: one d-vector per worker besides the total.
func (p *Problem) expectedFeatures(ctx context.Context, w, loss []float64) ([]float64, error) {
	n := p.N()
	d := p.Data
	lay := p.Layout
	K := lay.NumLabels
	dim, trans := lay.Dim(), lay.Trans()
	total := make([]float64, dim)
	workers := chunkWorkers(n)
	pws := make([]*passWorker, workers)
	for k := range pws {
		pws[k] = &passWorker{lat: crf.NewLattice(K), grad: make([]float64, dim), stamp: make([]uint32, d.NumAttrs)}
	}
	err := inChunkOrder(ctx, n, workers, func(k, c, lo, hi int) {
		defer p.meterAdd(hi - lo)
		pw := pws[k]
		pw.touched = pw.touched[:0]
		for i := lo; i < hi; i++ {
			s := d.Sentence(i)
			loss[i], _, _ = pw.sentence(p, w, s, nil)
			for _, a := range s.Attrs[s.AttrStart[0]:s.AttrStart[s.Len()]] {
				if pw.stamp[a] != uint32(c)+1 {
					pw.stamp[a] = uint32(c) + 1
					pw.touched = append(pw.touched, a)
				}
			}
		}
	}, func(k int) {
		pw := pws[k]
		for _, a := range pw.touched {
			lo, hi := lay.Span(a)
			addClear(total[lo:hi], pw.grad[lo:hi])
		}
		addClear(total[trans:], pw.grad[trans:])
	})
	if err != nil {
		return nil, err
	}
	return total, nil
}

// meterAdd counts k more sentences of a full pass on Meter.
func (p *Problem) meterAdd(k int) {
	if p.Meter != nil {
		p.Meter.Add(int64(k))
	}
}

// chunkWorkers is the number of goroutines inChunkOrder runs for n
// sentences: one per core, at most one per chunk.
func chunkWorkers(n int) int {
	return max(1, min(runtime.GOMAXPROCS(0), (n+gradChunk-1)/gradChunk))
}

// inChunkOrder runs a full pass over n sentences in chunks of gradChunk on
// workers goroutines: work(k, c, lo, hi) computes chunk c (sentences lo..hi−1)
// into worker k's own state, concurrently with the other workers; add(k)
// then adds worker k's result into the total, strictly in chunk order, so
// every sum is the same whatever the number of workers and their timing. A
// claimed chunk is always finished and added, so a worker waiting for its
// turn never waits for a chunk nobody does. It returns ctx's error when ctx
// was cancelled (the total is then incomplete).
func inChunkOrder(ctx context.Context, n, workers int, work func(k, c, lo, hi int), add func(k int)) error {
	chunks := (n + gradChunk - 1) / gradChunk
	var (
		next atomic.Int64
		mu   sync.Mutex
		turn int
		wg   sync.WaitGroup
	)
	cond := sync.NewCond(&mu)
	for k := 0; k < workers; k++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				c := int(next.Add(1) - 1)
				if c >= chunks {
					return
				}
				work(k, c, c*gradChunk, min((c+1)*gradChunk, n))
				mu.Lock()
				for turn != c {
					cond.Wait()
				}
				add(k)
				turn++
				cond.Broadcast()
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return ctx.Err()
}

// addClear adds src into dst and zeroes src.
func addClear(dst, src []float64) {
	dst = dst[:len(src)]
	for j, v := range src {
		dst[j] += v
		src[j] = 0
	}
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
	pw.nuN = grow(pw.nuN, T*K)
	pw.muN = grow(pw.muN, T*K)
	lat.NodeMarginals(pw.nuN)
	if pw.grad != nil {
		bl := crf.BlockLen(T, K)
		pw.nu = grow(pw.nu, bl)
		lat.Marginals(pw.nu, nil)
		crf.AddExpected(pw.grad, p.Layout, s, pw.nuN, pw.nu, 1)
	}
	if mu != nil {
		ent, gap = pw.dualTerms(p, T, mu)
	}
	return loss, ent, gap
}

// dualTerms returns H̃(μ) and D̃(μ‖ν) of a block of T tokens for the ν of
// the lattice's last ForwardBackward (node marginals in pw.nuN), as the
// SDCA step computes its block gap: with X = Σ_e μ log μ (one vector
// logarithm sweep over the block) and the separators' terms,
//
//	H̃(μ) = −X + Σ_s μ_s log μ_s,   D̃(μ‖ν) = X − Σ_e μ log ν − Σ_s μ_s (log μ_s − log ν_s),
//
// where Σ_e μ log ν comes from the factors of log ν (logNuDot), so that no
// scalar logarithm is taken per entry and ν's edge marginals are not
// formed. A divergence that rounds below zero is returned as zero.
func (pw *passWorker) dualTerms(p *Problem, T int, mu []float64) (ent, gap float64) {
	K := p.Layout.NumLabels
	mu = mu[:crf.BlockLen(T, K)]
	pw.sum = grow(pw.sum, K*K)
	var muB float64
	switch {
	case !pw.marginals:
		muB = blockNodesDot(mu, T, K, pw.lat.Trans(), pw.muN, pw.sum)
	case T > 1:
		muB = dot(pw.sum[:K*K], pw.lat.Trans()[:K*K])
	}
	pw.lmu = grow(pw.lmu, len(mu))
	x := xlogxSum(mu, pw.lmu)
	muLogNu := logNuDot(pw.lat, T, K, mu, pw.muN, muB, &pw.fa, &pw.fc)
	// The separators are the inner nodes 1..T-2.
	sepLo, sepHi := K, max(T-1, 1)*K
	muS, nuS := pw.muN[sepLo:sepHi], pw.nuN[sepLo:sepHi]
	pw.lmuS, pw.lnuS = grow(pw.lmuS, len(muS)), grow(pw.lnuS, len(muS))
	num.LogInto(pw.lmuS, muS)
	num.LogInto(pw.lnuS, nuS)
	sepX, sepKL := 0.0, 0.0
	for j, m := range muS {
		if m > 0 {
			sepX += m * pw.lmuS[j]
			sepKL += m * (pw.lmuS[j] - pw.lnuS[j])
		}
	}
	return sepX - x, max(x-muLogNu-sepKL, 0)
}

// xlogxSum returns Σ μ log μ over the entries of mu (0·log 0 = 0), with
// lmu (len(mu)) as scratch: one vector logarithm sweep (num.LogVec), the
// entries that are zero or subnormal taken apart.
func xlogxSum(mu, lmu []float64) float64 {
	lmu = lmu[:len(mu)]
	num.LogVec(lmu, mu)
	s := 0.0
	for j, m := range mu {
		switch {
		case m >= minNormal:
			s += m * lmu[j]
		case m > 0:
			s += m * math.Log(m)
		}
	}
	return s
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
