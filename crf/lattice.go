package crf

import "math"

// underflow is the smallest scaled forward/backward entry the probability
// domain recursions trust; below it the lattice falls back to log domain.
const underflow = 1e-290

// Lattice is a reusable inference workspace for one goroutine. Buffers are
// sized for the longest sentence seen so far and grown only when a longer
// one arrives, so the hot path does not allocate.
//
// Forward–backward runs in the scaled probability domain, as CRFsuite does
// (each forward row normalised, the normalisers kept), which costs T·K²
// multiply–adds and no exponentials beyond T·K + K². When a scaled entry
// underflows (extreme weights) it reruns in the log domain.
type Lattice struct {
	K int // number of labels
	T int // length of the current sentence

	theta []float64 // T×K node log-potentials θ_t(y)
	trans []float64 // K×K edge log-potentials B[y,y']

	psi   []float64 // T×K exp(θ_t(y) - rowMax_t)
	rmax  []float64 // T row maxima of θ
	etr   []float64 // K×K exp(B)
	alpha []float64 // T×K scaled forward α̂_t(y) (or log α in log mode)
	beta  []float64 // T×K scaled backward β̂_t(y) (or log β in log mode)
	scale []float64 // T forward normalisers c_t
	tmp   []float64 // K scratch
	tmp2  []float64 // K scratch
	vit   []float64 // T×K Viterbi scores
	back  []int32   // T×K Viterbi back-pointers

	logZ   float64
	logDom bool    // true when alpha/beta hold log-domain messages
	sink   float64 // what touchRows read, kept so that its loads are made
}

// touchRows reads the first and last word of every attribute row of attrs
// in w and returns their sum. The rows are scattered over the weights; the
// accumulation that follows chains its additions through θ, so the core
// has few rows in flight at once. These loads do not depend on each other,
// so the rows' misses overlap and the rows are in cache when they are used.
func touchRows(w []float64, lay Layout, attrs []int32) (s float64) {
	K := lay.NumLabels
	for _, a := range attrs {
		off := lay.Row(a)
		s += w[off] + w[off+K-1]
	}
	return s
}

// NewLattice returns a workspace for K labels.
func NewLattice(K int) *Lattice {
	l := &Lattice{K: K}
	l.trans = make([]float64, K*K)
	l.etr = make([]float64, K*K)
	l.tmp = make([]float64, K)
	l.tmp2 = make([]float64, K)
	return l
}

func (l *Lattice) grow(T int) {
	l.T = T
	n := T * l.K
	if cap(l.theta) >= n {
		l.theta = l.theta[:n]
		l.psi = l.psi[:n]
		l.alpha = l.alpha[:n]
		l.beta = l.beta[:n]
		l.back = l.back[:n]
		l.vit = l.vit[:n]
		l.rmax = l.rmax[:T]
		l.scale = l.scale[:T]
		return
	}
	c := n + n/2
	l.theta = make([]float64, n, c)
	l.psi = make([]float64, n, c)
	l.alpha = make([]float64, n, c)
	l.beta = make([]float64, n, c)
	l.back = make([]int32, n, c)
	l.vit = make([]float64, n, c)
	l.rmax = make([]float64, T, T+T/2)
	l.scale = make([]float64, T, T+T/2)
}

// SetScores computes the node and edge log-potentials of sentence s under
// weights w laid out as lay.
func (l *Lattice) SetScores(lay Layout, w []float64, s Sentence) {
	K := l.K
	T := s.Len()
	l.grow(T)
	copy(l.trans, w[lay.Trans():lay.Trans()+K*K])
	l.sink += touchRows(w, lay, s.Attrs[s.AttrStart[0]:s.AttrStart[T]])
	for t := 0; t < T; t++ {
		row := l.theta[t*K : (t+1)*K]
		if lay.NoBias {
			clear(row)
		} else {
			copy(row, w[lay.Bias():lay.Bias()+K])
		}
		lo, hi := s.AttrStart[t], s.AttrStart[t+1]
		for j := lo; j < hi; j++ {
			off := lay.Row(s.Attrs[j])
			u := w[off : off+K]
			if s.Values == nil {
				for y := range row {
					row[y] += u[y]
				}
			} else {
				v := s.Values[j]
				for y := range row {
					row[y] += v * u[y]
				}
			}
		}
	}
	if !lay.NoBias && T > 0 {
		addTo(l.theta[:K], w[lay.Start():lay.Start()+K])
		addTo(l.theta[(T-1)*K:T*K], w[lay.End():lay.End()+K])
	}
}

// SetPotentials sets the log-potentials directly (T×K node, K×K edge); it is
// used by tests and by callers with their own scoring.
func (l *Lattice) SetPotentials(T int, node, trans []float64) {
	l.grow(T)
	copy(l.theta, node[:T*l.K])
	copy(l.trans, trans[:l.K*l.K])
}

func addTo(dst, src []float64) {
	for i := range dst {
		dst[i] += src[i]
	}
}

// Node returns the node log-potentials θ (T×K); the slice is the lattice's own.
func (l *Lattice) Node() []float64 { return l.theta }

// Trans returns the edge log-potentials B (K×K); the slice is the lattice's own.
func (l *Lattice) Trans() []float64 { return l.trans }

// ForwardBackward runs the forward and backward recursions on the current
// scores and returns log Z.
func (l *Lattice) ForwardBackward() float64 {
	if !l.scaledForwardBackward() {
		l.logForwardBackward()
	}
	return l.logZ
}

// LogZ returns log Z of the last ForwardBackward.
func (l *Lattice) LogZ() float64 { return l.logZ }

func (l *Lattice) scaledForwardBackward() bool {
	K, T := l.K, l.T
	ok := true
	for i, b := range l.trans {
		e := math.Exp(b)
		l.etr[i] = e
		if e < underflow || math.IsInf(e, 0) {
			ok = false
		}
	}
	for t := 0; t < T; t++ {
		row := l.theta[t*K : (t+1)*K]
		m := row[0]
		for _, v := range row[1:] {
			m = max(m, v)
		}
		l.rmax[t] = m
		p := l.psi[t*K : (t+1)*K]
		for y, v := range row {
			p[y] = math.Exp(v - m)
		}
	}
	if !ok {
		l.logDom = true
		return false
	}
	// Forward.
	a0 := l.alpha[:K]
	copy(a0, l.psi[:K])
	logZ := l.rmax[0] + normalise(a0, &l.scale[0])
	for t := 1; t < T; t++ {
		prev := l.alpha[(t-1)*K : t*K]
		cur := l.alpha[t*K : (t+1)*K]
		clear(cur)
		for y, ap := range prev {
			if ap == 0 {
				continue
			}
			e := l.etr[y*K : (y+1)*K]
			for y2, ev := range e {
				cur[y2] += ap * ev
			}
		}
		p := l.psi[t*K : (t+1)*K]
		for y2 := range cur {
			cur[y2] *= p[y2]
		}
		logZ += l.rmax[t] + normalise(cur, &l.scale[t])
	}
	l.logZ = logZ
	// Backward: β̂_{T-1} = 1, β̂_t(y) = Σ_y' E[y,y'] ψ_{t+1}(y') β̂_{t+1}(y') / c_{t+1}.
	last := l.beta[(T-1)*K : T*K]
	for y := range last {
		last[y] = 1
	}
	for t := T - 2; t >= 0; t-- {
		next := l.beta[(t+1)*K : (t+2)*K]
		p := l.psi[(t+1)*K : (t+2)*K]
		w := l.tmp
		inv := 1 / l.scale[t+1]
		for y2 := range w {
			w[y2] = p[y2] * next[y2] * inv
		}
		cur := l.beta[t*K : (t+1)*K]
		for y := range cur {
			e := l.etr[y*K : (y+1)*K]
			s := 0.0
			for y2, ev := range e {
				s += ev * w[y2]
			}
			cur[y] = s
		}
	}
	for i, a := range l.alpha[:T*K] {
		if a < underflow || l.beta[i] < underflow {
			l.logDom = true
			return false
		}
	}
	l.logDom = false
	return true
}

// normalise scales v to sum 1, stores the sum in *c and returns log c.
func normalise(v []float64, c *float64) float64 {
	s := 0.0
	for _, x := range v {
		s += x
	}
	*c = s
	inv := 1 / s
	for i := range v {
		v[i] *= inv
	}
	return math.Log(s)
}

// logForwardBackward computes log-domain messages: alpha = log α, beta = log β.
func (l *Lattice) logForwardBackward() {
	K, T := l.K, l.T
	copy(l.alpha[:K], l.theta[:K])
	for t := 1; t < T; t++ {
		prev := l.alpha[(t-1)*K : t*K]
		cur := l.alpha[t*K : (t+1)*K]
		for y2 := 0; y2 < K; y2++ {
			for y := 0; y < K; y++ {
				l.tmp[y] = prev[y] + l.trans[y*K+y2]
			}
			cur[y2] = logSumExp(l.tmp) + l.theta[t*K+y2]
		}
	}
	l.logZ = logSumExp(l.alpha[(T-1)*K : T*K])
	clear(l.beta[(T-1)*K : T*K])
	for t := T - 2; t >= 0; t-- {
		next := l.beta[(t+1)*K : (t+2)*K]
		cur := l.beta[t*K : (t+1)*K]
		for y := 0; y < K; y++ {
			for y2 := 0; y2 < K; y2++ {
				l.tmp[y2] = l.trans[y*K+y2] + l.theta[(t+1)*K+y2] + next[y2]
			}
			cur[y] = logSumExp(l.tmp)
		}
	}
}

func logSumExp(v []float64) float64 {
	m := math.Inf(-1)
	for _, x := range v {
		m = max(m, x)
	}
	if math.IsInf(m, -1) {
		return m
	}
	s := 0.0
	for _, x := range v {
		s += math.Exp(x - m)
	}
	return m + math.Log(s)
}

// NodeMarginals writes p(y_t = y | x) into dst (T×K).
func (l *Lattice) NodeMarginals(dst []float64) {
	K, T := l.K, l.T
	dst = dst[:T*K]
	if !l.logDom {
		for t := 0; t < T; t++ {
			row := dst[t*K : (t+1)*K]
			a := l.alpha[t*K : (t+1)*K]
			b := l.beta[t*K : (t+1)*K]
			s := 0.0
			for y := range row {
				row[y] = a[y] * b[y]
				s += row[y]
			}
			inv := 1 / s
			for y := range row {
				row[y] *= inv
			}
		}
		return
	}
	for i := range dst {
		dst[i] = math.Exp(l.alpha[i] + l.beta[i] - l.logZ)
	}
}

// Marginals writes the clique marginals of the sentence into dst (length
// BlockLen(T,K)): for T ≥ 2 the edge marginals p(y_t=y, y_{t+1}=y') at
// dst[(t·K+y)·K+y'], for T = 1 the node marginal. If logDst is not nil it
// receives their logarithms, computed without a logarithm per entry.
func (l *Lattice) Marginals(dst, logDst []float64) {
	K, T := l.K, l.T
	if T == 1 {
		l.NodeMarginals(dst)
		if logDst != nil {
			for y := 0; y < K; y++ {
				logDst[y] = l.theta[y] - l.logZ
			}
		}
		return
	}
	if l.logDom {
		l.logEdgeMarginals(dst, logDst)
		return
	}
	// ν_t(y,y') = α̂_t(y) E[y,y'] ψ_{t+1}(y') β̂_{t+1}(y') / c_{t+1}.
	w := l.tmp
	for t := 0; t < T-1; t++ {
		p := l.psi[(t+1)*K : (t+2)*K]
		b := l.beta[(t+1)*K : (t+2)*K]
		inv := 1 / l.scale[t+1]
		for y2 := range w {
			w[y2] = p[y2] * b[y2] * inv
		}
		a := l.alpha[t*K : (t+1)*K]
		blk := dst[t*K*K : (t+1)*K*K]
		for y, av := range a {
			e := l.etr[y*K : (y+1)*K]
			out := blk[y*K : (y+1)*K]
			for y2, ev := range e {
				out[y2] = av * ev * w[y2]
			}
		}
	}
	if logDst == nil {
		return
	}
	// log ν_t(y,y') = log α̂_t(y) + B[y,y'] + θ_{t+1}(y') - m_{t+1} + log β̂_{t+1}(y') - log c_{t+1}.
	la := l.tmp2
	for t := 0; t < T-1; t++ {
		l.edgeFactors(t, la, w)
		blk := logDst[t*K*K : (t+1)*K*K]
		for y, lay := range la {
			tr := l.trans[y*K : (y+1)*K]
			out := blk[y*K : (y+1)*K]
			for y2, tv := range tr {
				out[y2] = lay + tv + w[y2]
			}
		}
	}
}

// LogEdgeFactors fills a and c ((T−1)·K entries each, for T ≥ 2) so that
// the log edge marginals of the last ForwardBackward factor as
//
//	log ν_t(y,y') = a[t·K+y] + B[y,y'] + c[t·K+y']   (B = Trans()).
//
// A sum Σ μ log ν over a block then needs only μ's row and column sums and
// Σ μ·B — no logarithm per entry (the SDCA step's block gap).
func (l *Lattice) LogEdgeFactors(a, c []float64) {
	K := l.K
	for t := 0; t < l.T-1; t++ {
		l.edgeFactors(t, a[t*K:(t+1)*K], c[t*K:(t+1)*K])
	}
}

// edgeFactors fills a and c (K each) with edge t's factors of log ν_t.
func (l *Lattice) edgeFactors(t int, a, c []float64) {
	K := l.K
	th := l.theta[(t+1)*K : (t+2)*K]
	b := l.beta[(t+1)*K : (t+2)*K]
	if l.logDom {
		copy(a, l.alpha[t*K:(t+1)*K])
		for y, bv := range b {
			c[y] = th[y] + bv - l.logZ
		}
		return
	}
	off := l.rmax[t+1] + math.Log(l.scale[t+1])
	LogInto(a, l.alpha[t*K:(t+1)*K])
	for y, bv := range b {
		c[y] = th[y] + Log(bv) - off
	}
}

func (l *Lattice) logEdgeMarginals(dst, logDst []float64) {
	K, T := l.K, l.T
	for t := 0; t < T-1; t++ {
		for y := 0; y < K; y++ {
			for y2 := 0; y2 < K; y2++ {
				lv := l.alpha[t*K+y] + l.trans[y*K+y2] + l.theta[(t+1)*K+y2] + l.beta[(t+1)*K+y2] - l.logZ
				i := (t*K+y)*K + y2
				dst[i] = math.Exp(lv)
				if logDst != nil {
					logDst[i] = lv
				}
			}
		}
	}
}

// Score returns the unnormalised log-score Σ_t θ_t(y_t) + Σ_t B[y_t,y_{t+1}]
// of a label path under the current potentials.
func (l *Lattice) Score(path []int32) float64 {
	K := l.K
	s := 0.0
	for t, y := range path[:l.T] {
		s += l.theta[t*K+int(y)]
		if t > 0 {
			s += l.trans[int(path[t-1])*K+int(y)]
		}
	}
	return s
}

// Viterbi writes the highest-scoring label path into path (length ≥ T) and
// returns its score. Ties go to the smallest label.
func (l *Lattice) Viterbi(path []int32) float64 {
	K, T := l.K, l.T
	d := l.vit
	copy(d[:K], l.theta[:K])
	for t := 1; t < T; t++ {
		prev := d[(t-1)*K : t*K]
		cur := d[t*K : (t+1)*K]
		bk := l.back[t*K : (t+1)*K]
		for y2 := 0; y2 < K; y2++ {
			best, arg := math.Inf(-1), int32(0)
			for y := 0; y < K; y++ {
				if v := prev[y] + l.trans[y*K+y2]; v > best {
					best, arg = v, int32(y)
				}
			}
			cur[y2] = best + l.theta[t*K+y2]
			bk[y2] = arg
		}
	}
	last := d[(T-1)*K : T*K]
	best, arg := last[0], int32(0)
	for y := 1; y < K; y++ {
		if last[y] > best {
			best, arg = last[y], int32(y)
		}
	}
	path[T-1] = arg
	for t := T - 1; t > 0; t-- {
		arg = l.back[t*K+int(arg)]
		path[t-1] = arg
	}
	return best
}
