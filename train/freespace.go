package train

// L-BFGS in the observed feature space. With a Mask (CRFsuite's feature
// space) most of the dense layout's A×K attribute weights are fixed at zero
// — 7.4 M weights of which 0.45 M are free on CRFsuite's CoNLL-2000
// attribute file — so L-BFGS optimises a compact vector of the free weights
// only: its point, gradient and correction pairs are that long, and the
// gradient pass sums each chunk of sentences into packed rows (only the
// attributes the chunk uses) rather than into a dense d-vector per worker.
// The model stays dense (zeros where masked).
//
// The iterates are bit for bit those of the dense vector. Every sum runs in
// the same order: the pass adds the same terms chunk by chunk in chunk
// order; element-wise vector operations do not care where an entry sits;
// train's dot and gonum's Euclidean norm run in index order (a zero adds
// nothing); and gonum's Dot on amd64 keeps four partial sums by index mod 4
// with the last len mod 4 entries added to the first in order, so every
// free weight keeps its dense index's residue mod 4 in the compact vector
// (zero padding between them, about 1.5 entries per free weight) and the
// dense tail stays the compact tail.

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/dualcrf/dualcrf/crf"
)

// freeSpace maps the free weights of a masked problem into a compact
// vector.
type freeSpace struct {
	dim   int   // length of the compact vector
	first []int // len A+1: attribute a's free weights are entries first[a]:first[a+1]; first[A]: the tail's
	dense []int // per free weight, increasing: its index in the dense layout
	pos   []int // and in the compact vector (≡ dense mod 4 outside the tail)
}

// newFreeSpace lays out the weights p's masks leave free (see the file's
// comment for why positions keep their residue mod 4).
func newFreeSpace(p *Problem) *freeSpace {
	lay := p.Layout
	K, A, d, trans := lay.NumLabels, lay.NumAttrs, lay.Dim(), lay.Trans()
	n := p.FreeWeights()
	fs := &freeSpace{first: make([]int, A+1), dense: make([]int, 0, n), pos: make([]int, 0, n)}
	head := d - d%4 // gonum's Dot sums entries below head by index mod 4, the rest in order
	next, inTail := 0, false
	add := func(j int) {
		if j < head {
			next += ((j-next)%4 + 4) % 4
		} else if !inTail {
			next, inTail = (next+3)/4*4, true
		}
		fs.dense = append(fs.dense, j)
		fs.pos = append(fs.pos, next)
		next++
	}
	for a := 0; a < A; a++ {
		fs.first[a] = len(fs.dense)
		for y := 0; y < K; y++ {
			if p.Mask == nil || p.Mask[a*K+y] {
				add(a*K + y)
			}
		}
	}
	fs.first[A] = len(fs.dense)
	for i := 0; i < K*K; i++ {
		if p.TransMask == nil || p.TransMask[i] {
			add(trans + i)
		}
	}
	for j := trans + K*K; j < d; j++ {
		add(j)
	}
	fs.dim = next
	if !inTail {
		fs.dim = (next + 3) / 4 * 4
	}
	return fs
}

// expand writes the compact x into the dense w at the free weights (the
// others are left as they are: zero).
func (fs *freeSpace) expand(x, w []float64) {
	for k, j := range fs.dense {
		w[j] = x[fs.pos[k]]
	}
}

// compact returns the free weights of the dense w as a compact vector.
func (fs *freeSpace) compact(w []float64) []float64 {
	x := make([]float64, fs.dim)
	for k, j := range fs.dense {
		x[fs.pos[k]] = w[j]
	}
	return x
}

// freeWorker is one goroutine's scratch space in a compact gradient pass.
type freeWorker struct {
	passWorker
	slot    []int32 // per attribute: its packed row in the current chunk
	stamp   []uint32
	touched []int32 // per packed row: its attribute
	attrs   []int32 // the chunk's attribute occurrences, as packed rows
	start   []int   // the chunk's tokens' AttrStart, relative to the chunk
}

// freeGradient computes P(w) and, into g (compact), ∇P(w) at the dense w
// whose free weights are the compact x, with gold the compact Σ_i F_i — on
// all cores, summing exactly as Pass does (see the file's comment).
func (p *Problem) freeGradient(ctx context.Context, fs *freeSpace, w, x, gold, g []float64) (float64, error) {
	n := p.N()
	d := p.Data
	K := p.Layout.NumLabels
	loss := make([]float64, n)
	clear(g)
	chunks := (n + gradChunk - 1) / gradChunk
	workers := max(1, min(runtime.GOMAXPROCS(0), chunks))
	var (
		next atomic.Int64
		mu   sync.Mutex
		turn int
		wg   sync.WaitGroup
	)
	cond := sync.NewCond(&mu)
	for k := 0; k < workers; k++ {
		fw := &freeWorker{passWorker: passWorker{lat: crf.NewLattice(K)},
			slot: make([]int32, d.NumAttrs), stamp: make([]uint32, d.NumAttrs)}
		wg.Add(1)
		go func() {
			defer wg.Done()
			// A claimed chunk is always finished and added, so a worker
			// waiting for its turn never waits for a chunk nobody does.
			for ctx.Err() == nil {
				c := int(next.Add(1) - 1)
				if c >= chunks {
					return
				}
				lo, hi := c*gradChunk, min((c+1)*gradChunk, n)
				lay := fw.pack(p, lo, hi, uint32(c)+1)
				for i := lo; i < hi; i++ {
					loss[i] = fw.sentence(p, w, lay, i, lo)
				}
				mu.Lock()
				for turn != c {
					cond.Wait()
				}
				fw.add(fs, lay, g)
				turn++
				cond.Broadcast()
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	// ∇P = λw + (1/n) Σ_i (E_ν_i[F] − F_i), as Pass computes it.
	for j := range g {
		g[j] = p.Lambda*x[j] + (g[j]-gold[j])/float64(n)
	}
	return p.Lambda/2*dot(w, w) + sum(loss)/float64(n), nil
}

// pack numbers the distinct attributes of sentences lo..hi−1 (a chunk,
// numbered mark ≥ 1) in order of first use, rewrites the chunk's
// occurrences as those packed rows, clears the packed gradient, and returns
// the packed layout: one row per distinct attribute, then the dense tail.
func (fw *freeWorker) pack(p *Problem, lo, hi int, mark uint32) crf.Layout {
	d := p.Data
	t0, t1 := d.SentStart[lo], d.SentStart[hi]
	j0, j1 := d.AttrStart[t0], d.AttrStart[t1]
	fw.touched = fw.touched[:0]
	fw.attrs = fw.attrs[:0]
	for _, a := range d.Attrs[j0:j1] {
		if fw.stamp[a] != mark {
			fw.stamp[a] = mark
			fw.slot[a] = int32(len(fw.touched))
			fw.touched = append(fw.touched, a)
		}
		fw.attrs = append(fw.attrs, fw.slot[a])
	}
	fw.start = fw.start[:0]
	for tok := t0; tok <= t1; tok++ {
		fw.start = append(fw.start, d.AttrStart[tok]-j0)
	}
	lay := crf.Layout{NumAttrs: len(fw.touched), NumLabels: p.Layout.NumLabels, NoBias: p.Layout.NoBias}
	fw.grad = grow(fw.grad, lay.Dim())
	clear(fw.grad)
	return lay
}

// sentence returns the loss of sentence i (in the chunk starting at lo) at
// w and adds its E_ν[F] to the packed gradient — the computation of
// passWorker.sentence, on the packed rows.
func (fw *freeWorker) sentence(p *Problem, w []float64, lay crf.Layout, i, lo int) float64 {
	d := p.Data
	K := p.Layout.NumLabels
	s := d.Sentence(i)
	T := s.Len()
	lat := fw.lat
	lat.SetScores(p.Layout, w, s)
	logZ := lat.ForwardBackward()
	loss := logZ - lat.Score(s.Labels)
	fw.nu = grow(fw.nu, crf.BlockLen(T, K))
	fw.logNu = grow(fw.logNu, crf.BlockLen(T, K))
	fw.nuN = grow(fw.nuN, T*K)
	lat.Marginals(fw.nu, fw.logNu)
	lat.NodeMarginals(fw.nuN)
	t0 := d.SentStart[lo]
	ps := crf.Sentence{AttrStart: fw.start[d.SentStart[i]-t0 : d.SentStart[i+1]-t0+1], Attrs: fw.attrs, Labels: s.Labels}
	if d.Values != nil {
		j0 := d.AttrStart[t0]
		ps.Values = d.Values[j0 : j0+len(fw.attrs)]
	}
	crf.AddExpected(fw.grad, lay, ps, fw.nuN, fw.nu, 1)
	return loss
}

// add adds the packed gradient's free weights into the compact total g.
func (fw *freeWorker) add(fs *freeSpace, lay crf.Layout, g []float64) {
	K := lay.NumLabels
	for r, a := range fw.touched {
		row := fw.grad[r*K : r*K+K]
		base := int(a) * K
		for k := fs.first[a]; k < fs.first[a+1]; k++ {
			g[fs.pos[k]] += row[fs.dense[k]-base]
		}
	}
	tail := fw.grad[lay.Trans():]
	A := len(fs.first) - 1
	for k := fs.first[A]; k < len(fs.dense); k++ {
		g[fs.pos[k]] += tail[fs.dense[k]-A*K]
	}
}
