package train

// L-BFGS in the observed feature space. With a Mask (CRFsuite's feature
// space) most of the dense layout's A×K attribute weights are fixed at zero
// — 7.4 M weights of which 0.45 M are free on CRFsuite's CoNLL-2000
// attribute file — so L-BFGS optimises a compact vector of the free weights
// only: its point, gradient and correction pairs are that long, and the
// gradient pass gathers, for each chunk of sentences, the weight rows of the
// attributes the chunk uses into packed rows, scores with them and sums
// E_ν[F] into packed rows too — no dense d-vector at all. The model stays
// dense (zeros where masked).
//
// The iterates are bit for bit those of the dense vector. Every sum runs in
// the same order: the pass scores and adds the same terms chunk by chunk in
// chunk order; element-wise vector operations do not care where an entry
// sits; train's sums over the vector (‖w‖², ‖∇P‖²) and the norm gonum takes
// of the first direction run over the free weights in dense order (a zero
// adds nothing); and gonum's Dot, where it keeps four partial sums by index
// mod 4 (amd64; the last len mod 4 entries added to the first in order),
// finds each free weight in the lane of its dense index: the compact vector
// interleaves four lanes, its entry 4i+l the i-th free weight of lane l.

import (
	"context"
	"slices"

	"github.com/dualcrf/dualcrf/crf"
	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/optimize"
)

// freeSpace maps the free weights of a masked problem into a compact
// vector.
type freeSpace struct {
	dim   int   // length of the compact vector
	first []int // len A+1: attribute a's free weights are entries first[a]:first[a+1]; first[A]: the tail's
	dense []int // per free weight, increasing: its index in the dense layout
	pos   []int // and in the compact vector
	// sparse is set when the problem's layout is sparse: its vector holds
	// U's free weights in dense order, so the k-th free weight of U is its
	// entry k, and the tail follows at trans.
	sparse bool
	u      int // A·K: the dense layout's offset of B
	trans  int // the problem's layout's offset of B
	ws     []*freeWorker
}

// at returns the index of free weight k (of dense index fs.dense[k]) in
// the weight vector of the problem's layout.
func (fs *freeSpace) at(k int) int {
	A := len(fs.first) - 1
	if !fs.sparse {
		return fs.dense[k]
	}
	if k < fs.first[A] {
		return k
	}
	return fs.dense[k] - fs.u + fs.trans
}

// dotLanes returns the number of partial sums gonum's Dot keeps by index
// (4 with its amd64 assembly, 1 when it sums in order), found by a sum
// whose rounding tells them apart.
func dotLanes() int {
	if floats.Dot([]float64{1e16, 1, -1e16, 1}, []float64{1, 1, 1, 1}) == 2 {
		return 4
	}
	return 1
}

// newFreeSpace lays out the weights p's masks leave free in lanes lanes
// (see the file's comment).
func newFreeSpace(p *Problem, lanes int) *freeSpace {
	lay := p.Layout
	dl := lay.Dense()
	K, A, d, trans := lay.NumLabels, lay.NumAttrs, dl.Dim(), dl.Trans()
	n := p.FreeWeights()
	fs := &freeSpace{first: make([]int, A+1), dense: make([]int, 0, n), pos: make([]int, 0, n),
		sparse: lay.Free != nil, u: trans, trans: lay.Trans()}
	head := d - d%lanes // Dot sums entries below head by index mod lanes, the rest in lane 0
	count := make([]int, lanes)
	add := func(j int) {
		l := 0
		if j < head {
			l = j % lanes
		}
		fs.dense = append(fs.dense, j)
		fs.pos = append(fs.pos, lanes*count[l]+l)
		count[l]++
	}
	for a := 0; a < A; a++ {
		fs.first[a] = len(fs.dense)
		p.freeLabels(a, func(y int) { add(a*K + y) })
	}
	fs.first[A] = len(fs.dense)
	// The tail: B and bias, start, end.
	for i := 0; i < K*K; i++ {
		if p.TransMask == nil || p.TransMask[i] {
			add(trans + i)
		}
	}
	for j := trans + K*K; j < d; j++ {
		add(j)
	}
	fs.dim = lanes * slices.Max(count)
	return fs
}

// freeDim returns the length newFreeSpace(p, lanes) gives the compact
// vector, without laying it out.
func freeDim(p *Problem, lanes int) int {
	lay := p.Layout
	dl := lay.Dense()
	K, A, d, trans := lay.NumLabels, lay.NumAttrs, dl.Dim(), dl.Trans()
	head := d - d%lanes
	count := make([]int, lanes)
	add := func(j int) {
		if j < head {
			count[j%lanes]++
		} else {
			count[0]++
		}
	}
	for a := 0; a < A; a++ {
		p.freeLabels(a, func(y int) { add(a*K + y) })
	}
	for i := 0; i < K*K; i++ {
		if p.TransMask == nil || p.TransMask[i] {
			add(trans + i)
		}
	}
	for j := trans + K*K; j < d; j++ {
		add(j)
	}
	return lanes * slices.Max(count)
}

// expand writes the compact x into w, in the problem's layout, at the free
// weights (the others are left as they are: zero).
func (fs *freeSpace) expand(x, w []float64) {
	for k, c := range fs.pos {
		w[fs.at(k)] = x[c]
	}
}

// compact returns the free weights of w (in the problem's layout) as a
// compact vector.
func (fs *freeSpace) compact(w []float64) []float64 {
	x := make([]float64, fs.dim)
	for k, c := range fs.pos {
		x[c] = w[fs.at(k)]
	}
	return x
}

// dot returns a·b summed in dense order: train's dot of the dense vectors.
func (fs *freeSpace) dot(a, b []float64) float64 {
	s := 0.0
	for _, c := range fs.pos {
		s += a[c] * b[c]
	}
	return s
}

// norm returns gonum's Euclidean norm of the dense vector x stands for.
func (fs *freeSpace) norm(x []float64) float64 {
	v := make([]float64, len(fs.pos))
	for k, c := range fs.pos {
		v[k] = x[c]
	}
	return floats.Norm(v, 2)
}

// freeLBFGS is gonum's L-BFGS on a compact vector: its first step size is
// the inverse norm of the dense direction, in dense order.
type freeLBFGS struct {
	*optimize.LBFGS
	fs *freeSpace
}

// InitDirection sets dir to the steepest descent direction and returns the
// step size gonum's LBFGS takes for the dense vector.
func (l freeLBFGS) InitDirection(loc *optimize.Location, dir []float64) float64 {
	l.LBFGS.InitDirection(loc, dir)
	return 1 / l.fs.norm(dir)
}

// freeWorker is one goroutine's scratch space in a compact gradient pass.
type freeWorker struct {
	passWorker
	slot    []int32 // per attribute: its packed row in the current chunk
	stamp   []uint32
	touched []int32   // per packed row: its attribute
	attrs   []int32   // the chunk's attribute occurrences, as packed rows
	start   []int     // the chunk's tokens' AttrStart, relative to the chunk
	w       []float64 // the packed rows' weights and the dense tail
}

// freeGradient computes P and, into g, ∇P at the compact point x, with gold
// the compact Σ_i F_i — on all cores, summing exactly as pass does at the
// dense point (see the file's comment).
func (p *Problem) freeGradient(ctx context.Context, fs *freeSpace, x, gold, g []float64) (float64, error) {
	n := p.N()
	d := p.Data
	K := p.Layout.NumLabels
	loss := make([]float64, n)
	clear(g)
	workers := chunkWorkers(n)
	for len(fs.ws) < workers {
		fs.ws = append(fs.ws, &freeWorker{passWorker: passWorker{lat: crf.NewLattice(K)},
			slot: make([]int32, d.NumAttrs), stamp: make([]uint32, d.NumAttrs)})
	}
	lays := make([]crf.Layout, workers)
	for _, fw := range fs.ws[:workers] {
		clear(fw.stamp)
	}
	err := inChunkOrder(ctx, n, workers, func(k, c, lo, hi int) {
		defer p.meterAdd(hi - lo)
		fw := fs.ws[k]
		lays[k] = fw.pack(p, fs, x, lo, hi, uint32(c)+1)
		for i := lo; i < hi; i++ {
			loss[i] = fw.sentence(p, lays[k], i, lo)
		}
	}, func(k int) { fs.ws[k].add(fs, lays[k], g) })
	if err != nil {
		return 0, err
	}
	// ∇P = λw + (1/n) Σ_i (E_ν_i[F] − F_i), as pass computes it.
	for j := range g {
		g[j] = p.Lambda*x[j] + (g[j]-gold[j])/float64(n)
	}
	return p.Lambda/2*fs.dot(x, x) + sum(loss)/float64(n), nil
}

// pack numbers the distinct attributes of sentences lo..hi−1 (a chunk,
// numbered mark ≥ 1) in order of first use, rewrites the chunk's
// occurrences as those packed rows, gathers their weights (and the tail's)
// from the compact x, clears the packed gradient, and returns the packed
// layout: one row per distinct attribute, then the dense tail.
func (fw *freeWorker) pack(p *Problem, fs *freeSpace, x []float64, lo, hi int, mark uint32) crf.Layout {
	d := p.Data
	K := p.Layout.NumLabels
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
	lay := crf.Layout{NumAttrs: len(fw.touched), NumLabels: K, NoBias: p.Layout.NoBias}
	fw.grad = grow(fw.grad, lay.Dim())
	clear(fw.grad)
	fw.w = grow(fw.w, lay.Dim())
	clear(fw.w)
	for r, a := range fw.touched {
		row, base := fw.w[r*K:r*K+K], int(a)*K
		for k := fs.first[a]; k < fs.first[a+1]; k++ {
			row[fs.dense[k]-base] = x[fs.pos[k]]
		}
	}
	tail, A := fw.w[lay.Trans():], len(fs.first)-1
	for k := fs.first[A]; k < len(fs.dense); k++ {
		tail[fs.dense[k]-A*K] = x[fs.pos[k]]
	}
	return lay
}

// sentence returns the loss of sentence i (in the chunk starting at lo)
// and adds its E_ν[F] to the packed gradient — passWorker.sentence's
// computation on the packed rows.
func (fw *freeWorker) sentence(p *Problem, lay crf.Layout, i, lo int) float64 {
	d := p.Data
	K := lay.NumLabels
	t0 := d.SentStart[lo]
	s := crf.Sentence{AttrStart: fw.start[d.SentStart[i]-t0 : d.SentStart[i+1]-t0+1], Attrs: fw.attrs,
		Labels: d.Labels[d.SentStart[i]:d.SentStart[i+1]]}
	if d.Values != nil {
		j0 := d.AttrStart[t0]
		s.Values = d.Values[j0 : j0+len(fw.attrs)]
	}
	T := s.Len()
	lat := fw.lat
	lat.SetScores(lay, fw.w, s)
	logZ := lat.ForwardBackward()
	loss := logZ - lat.Score(s.Labels)
	fw.nu = grow(fw.nu, crf.BlockLen(T, K))
	fw.logNu = grow(fw.logNu, crf.BlockLen(T, K))
	fw.nuN = grow(fw.nuN, T*K)
	lat.Marginals(fw.nu, fw.logNu)
	lat.NodeMarginals(fw.nuN)
	crf.AddExpected(fw.grad, lay, s, fw.nuN, fw.nu, 1)
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
