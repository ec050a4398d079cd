package crf

import (
	"math"

	"github.com/dualcrf/dualcrf/internal/num"
)

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
//
// The message arrays (ψ, α, β, exp B) keep their rows at a stride Kp, K
// rounded up to a multiple of 4, with zeros in the padding, so that the
// vector kernels (kernels.go) work on whole 4-wide vectors.
type Lattice struct {
	K  int // number of labels
	T  int // length of the current sentence
	kp int // row stride of the message arrays: K rounded up to a multiple of 4

	theta []float64 // T×K node log-potentials θ_t(y), capacity ≥ T·K + 4
	trans []float64 // K×K edge log-potentials B[y,y'], capacity ≥ K² + 4

	psi    []float64 // T×Kp exp(θ_t(y) - rowMax_t)
	rmax   []float64 // T row maxima of θ
	etr    []float64 // K×Kp exp(B)
	etrT   []float64 // K×Kp exp(B) transposed
	transP []float64 // K×Kp B (for log marginals)
	alpha  []float64 // T×Kp scaled forward α̂_t(y) (or log α in log mode)
	beta   []float64 // T×Kp scaled backward β̂_t(y) (or log β in log mode)
	scale  []float64 // T forward normalisers c_t
	fa     []float64 // (T−1)×Kp edge factors a_t of log ν (see LogEdgeFactors)
	fc     []float64 // (T−1)×Kp edge factors c_t of log ν
	sumP   []float64 // K×Kp edge marginals summed over positions
	tmp    []float64 // Kp scratch
	tmp2   []float64 // Kp scratch
	vit    []float64 // T×K Viterbi scores
	back   []int32   // T×K Viterbi back-pointers

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
	if f := lay.Free; f != nil {
		// A sparse row is a word or two: its first word, past its start.
		for _, a := range attrs {
			s += w[f.Start[a]]
		}
		return s
	}
	K := lay.NumLabels
	for _, a := range attrs {
		off := lay.Row(a)
		s += w[off] + w[off+K-1]
	}
	return s
}

// padK returns K rounded up to a multiple of 4.
func padK(K int) int { return (K + 3) &^ 3 }

// NewLattice returns a workspace for K labels.
func NewLattice(K int) *Lattice {
	kp := padK(K)
	l := &Lattice{K: K, kp: kp}
	l.trans = make([]float64, K*K, K*K+4)
	l.etr = make([]float64, K*kp)
	l.etrT = make([]float64, K*kp)
	l.transP = make([]float64, K*kp)
	l.sumP = make([]float64, K*kp)
	l.tmp = make([]float64, kp)
	l.tmp2 = make([]float64, kp)
	return l
}

func (l *Lattice) grow(T int) {
	l.T = T
	n, np := T*l.K, T*l.kp
	if cap(l.psi) >= np {
		l.theta = l.theta[:n]
		l.psi = l.psi[:np]
		l.alpha = l.alpha[:np]
		l.beta = l.beta[:np]
		l.fa = l.fa[:np]
		l.fc = l.fc[:np]
		l.back = l.back[:n]
		l.vit = l.vit[:n]
		l.rmax = l.rmax[:T]
		l.scale = l.scale[:T]
		return
	}
	c, cp := n+n/2, np+np/2
	l.theta = make([]float64, n, c+4)
	l.psi = make([]float64, np, cp)
	l.alpha = make([]float64, np, cp)
	l.beta = make([]float64, np, cp)
	l.fa = make([]float64, np, cp)
	l.fc = make([]float64, np, cp)
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
	var bias []float64
	if !lay.NoBias {
		bias = w[lay.Bias() : lay.Bias()+3*K]
	}
	switch {
	case lay.Free != nil:
		scoreRowsSparse(l.theta, w, lay.Free, s, bias, K)
	case s.Values == nil:
		kern.scoreRows(l.theta, w[:lay.Trans()], s.Attrs, s.AttrStart, bias, K, l.kp)
	default:
		for t := 0; t < T; t++ {
			row := l.theta[t*K : (t+1)*K]
			if bias == nil {
				clear(row)
			} else {
				copy(row, bias[:K])
			}
			for j := s.AttrStart[t]; j < s.AttrStart[t+1]; j++ {
				off := lay.Row(s.Attrs[j])
				u := w[off : off+K]
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

// scoreRowsSparse sets θ_t = bias + Σ_j x_j·U[a_j] into theta (T×K) for
// the tokens of s, with U sparse (f): each free weight added to its
// label's entry, attribute after attribute as the dense rows are (so that
// every entry is the same sum in the same order as with the dense U, whose
// other entries are zero).
func scoreRowsSparse(theta, w []float64, f *FreeRows, s Sentence, bias []float64, K int) {
	for t := 0; t+1 < len(s.AttrStart); t++ {
		row := theta[t*K : (t+1)*K]
		if bias == nil {
			clear(row)
		} else {
			copy(row, bias[:K])
		}
		for j := s.AttrStart[t]; j < s.AttrStart[t+1]; j++ {
			a := s.Attrs[j]
			lo, hi := f.Start[a], f.Start[a+1]
			u, labels := w[lo:hi], f.Labels[lo:hi]
			if s.Values == nil {
				for k, y := range labels {
					row[y] += u[k]
				}
				continue
			}
			v := s.Values[j]
			for k, y := range labels {
				row[y] += v * u[k]
			}
		}
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

// expScores sets exp B (etr, etrT) and, unless an entry of exp B underflows
// or overflows (then it returns false), ψ and the row maxima of θ.
func (l *Lattice) expScores() bool {
	K, kp := l.K, l.kp
	kern.expRows(l.etr, l.trans, nil, K, K, kp)
	for y := 0; y < K; y++ {
		for y2, e := range l.etr[y*kp : y*kp+K] {
			if e < underflow || e > math.MaxFloat64 {
				return false
			}
			l.etrT[y2*kp+y] = e
		}
	}
	kern.expRows(l.psi, l.theta, l.rmax, l.T, K, kp)
	return true
}

func (l *Lattice) scaledForwardBackward() bool {
	K, T, kp := l.K, l.T, l.kp
	if !l.expScores() {
		l.logDom = true
		return false
	}
	// Forward.
	a0 := l.alpha[:kp]
	copy(a0, l.psi[:kp])
	normalise(a0, &l.scale[0])
	kern.forward(l.alpha, l.psi, l.etr, l.scale, K, kp)
	logZ := 0.0
	for t, c := range l.scale {
		logZ += l.rmax[t] + math.Log(c)
	}
	l.logZ = logZ
	// Backward: β̂_{T-1} = 1, β̂_t(y) = Σ_y' E[y,y'] ψ_{t+1}(y') β̂_{t+1}(y') / c_{t+1}.
	last := l.beta[(T-1)*kp : T*kp]
	for y := range last {
		last[y] = 0
		if y < K {
			last[y] = 1
		}
	}
	kern.backward(l.beta, l.psi, l.etrT, l.scale, l.tmp, K, kp)
	for t := 0; t < T; t++ {
		b := l.beta[t*kp : t*kp+K]
		for y, a := range l.alpha[t*kp : t*kp+K] {
			if a < underflow || b[y] < underflow {
				l.logDom = true
				return false
			}
		}
	}
	l.logDom = false
	return true
}

// normalise scales v to sum 1 and stores the sum in *c.
func normalise(v []float64, c *float64) {
	s := 0.0
	for _, x := range v {
		s += x
	}
	*c = s
	inv := 1 / s
	for i := range v {
		v[i] *= inv
	}
}

// logForwardBackward computes log-domain messages: alpha = log α, beta = log β.
func (l *Lattice) logForwardBackward() {
	K, T, kp := l.K, l.T, l.kp
	copy(l.alpha[:K], l.theta[:K])
	for t := 1; t < T; t++ {
		prev := l.alpha[(t-1)*kp : (t-1)*kp+K]
		cur := l.alpha[t*kp : t*kp+K]
		for y2 := 0; y2 < K; y2++ {
			for y := 0; y < K; y++ {
				l.tmp[y] = prev[y] + l.trans[y*K+y2]
			}
			cur[y2] = LogSumExp(l.tmp[:K]) + l.theta[t*K+y2]
		}
	}
	l.logZ = LogSumExp(l.alpha[(T-1)*kp : (T-1)*kp+K])
	clear(l.beta[(T-1)*kp : T*kp])
	for t := T - 2; t >= 0; t-- {
		next := l.beta[(t+1)*kp : (t+1)*kp+K]
		cur := l.beta[t*kp : t*kp+K]
		for y := 0; y < K; y++ {
			for y2 := 0; y2 < K; y2++ {
				l.tmp[y2] = l.trans[y*K+y2] + l.theta[(t+1)*K+y2] + next[y2]
			}
			cur[y] = LogSumExp(l.tmp[:K])
		}
	}
}

// LogSumExp returns log Σ exp(v) without overflow (−Inf for an empty v or
// one of −Inf only).
func LogSumExp(v []float64) float64 {
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
	K, T, kp := l.K, l.T, l.kp
	dst = dst[:T*K]
	for t := 0; t < T; t++ {
		row := dst[t*K : (t+1)*K]
		a := l.alpha[t*kp : t*kp+K]
		b := l.beta[t*kp : t*kp+K]
		if l.logDom {
			for y := range row {
				row[y] = math.Exp(a[y] + b[y] - l.logZ)
			}
			continue
		}
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
}

// Marginals writes the clique marginals of the sentence into dst (length
// BlockLen(T,K)): for T ≥ 2 the edge marginals p(y_t=y, y_{t+1}=y') at
// dst[(t·K+y)·K+y'], for T = 1 the node marginal. If logDst is not nil it
// receives their logarithms, computed without a logarithm per entry.
func (l *Lattice) Marginals(dst, logDst []float64) {
	l.marginals(dst, logDst, nil)
}

// MarginalsSum does what Marginals(dst, nil) does and, in the same pass,
// sets sum (K×K) to the edge marginals summed over positions:
// sum[y·K+y'] = Σ_t p(y_t=y, y_{t+1}=y'), the expected transition counts.
// For T = 1 there are no edges and sum is all zeros.
func (l *Lattice) MarginalsSum(dst, sum []float64) {
	l.marginals(dst, nil, sum[:l.K*l.K])
}

func (l *Lattice) marginals(dst, logDst, sum []float64) {
	K, T, kp := l.K, l.T, l.kp
	if T == 1 {
		l.NodeMarginals(dst)
		if logDst != nil {
			for y := 0; y < K; y++ {
				logDst[y] = l.theta[y] - l.logZ
			}
		}
		clear(sum)
		return
	}
	dst = dst[:(T-1)*K*K]
	if l.logDom {
		l.logEdgeMarginals(dst, logDst, sum)
		return
	}
	// ν_t(y,y') = α̂_t(y) E[y,y'] ψ_{t+1}(y') β̂_{t+1}(y') / c_{t+1}.
	var sumP []float64
	if sum != nil {
		sumP = l.sumP
		clear(sumP)
	}
	kern.marginals(dst, sumP, l.alpha, l.beta, l.psi, l.etr, l.scale, l.tmp, K, kp)
	if sum != nil {
		for y := 0; y < K; y++ {
			copy(sum[y*K:(y+1)*K], sumP[y*kp:y*kp+K])
		}
	}
	if logDst == nil {
		return
	}
	l.factors()
	for y := 0; y < K; y++ {
		copy(l.transP[y*kp:y*kp+K], l.trans[y*K:(y+1)*K])
	}
	kern.logMarginals(logDst[:(T-1)*K*K], l.fa[:(T-1)*kp], l.fc[:(T-1)*kp], l.transP, K, kp)
}

// LogEdgeFactors fills a and c ((T−1)·K entries each, for T ≥ 2) so that
// the log edge marginals of the last ForwardBackward factor as
//
//	log ν_t(y,y') = a[t·K+y] + B[y,y'] + c[t·K+y']   (B = Trans()).
//
// A sum Σ μ log ν over a block then needs only μ's row and column sums and
// Σ μ·B — no logarithm per entry (the SDCA step's block gap).
func (l *Lattice) LogEdgeFactors(a, c []float64) {
	K, kp := l.K, l.kp
	l.factors()
	for t := 0; t < l.T-1; t++ {
		copy(a[t*K:(t+1)*K], l.fa[t*kp:t*kp+K])
		copy(c[t*K:(t+1)*K], l.fc[t*kp:t*kp+K])
	}
}

// factors fills the rows t < T−1 of l.fa and l.fc (stride kp, padding
// lanes zero) with the factors of the last ForwardBackward's log edge
// marginals, log ν_t(y,y') = fa[t·kp+y] + B[y,y'] + fc[t·kp+y']:
//
//	fa_t(y) = log α̂_t(y),  fc_t(y') = θ_{t+1}(y') − m_{t+1} + log β̂_{t+1}(y') − log c_{t+1}
//
// in the scaled domain, where every α̂ and β̂ is at least 1e-290 (a
// positive normal number), so that whole arrays go through num.LogVec; the
// log-domain messages are used as they are.
func (l *Lattice) factors() {
	K, kp, T := l.K, l.kp, l.T
	n := (T - 1) * kp
	if !l.logDom {
		num.LogVec(l.fa[:n], l.alpha[:n])
		num.LogVec(l.fc[:n], l.beta[kp:kp+n])
	}
	for t := 0; t < T-1; t++ {
		a, c := l.fa[t*kp:(t+1)*kp], l.fc[t*kp:(t+1)*kp]
		th := l.theta[(t+1)*K : (t+2)*K]
		if l.logDom {
			copy(a, l.alpha[t*kp:t*kp+K])
			b := l.beta[(t+1)*kp : (t+1)*kp+K]
			for y, bv := range b {
				c[y] = th[y] + bv - l.logZ
			}
		} else {
			off := l.rmax[t+1] + math.Log(l.scale[t+1])
			for y, v := range th {
				c[y] += v - off
			}
		}
		clear(a[K:])
		clear(c[K:])
	}
}

func (l *Lattice) logEdgeMarginals(dst, logDst, sum []float64) {
	K, T, kp := l.K, l.T, l.kp
	clear(sum)
	for t := 0; t < T-1; t++ {
		for y := 0; y < K; y++ {
			for y2 := 0; y2 < K; y2++ {
				lv := l.alpha[t*kp+y] + l.trans[y*K+y2] + l.theta[(t+1)*K+y2] + l.beta[(t+1)*kp+y2] - l.logZ
				i := (t*K+y)*K + y2
				dst[i] = math.Exp(lv)
				if logDst != nil {
					logDst[i] = lv
				}
				if sum != nil {
					sum[y*K+y2] += dst[i]
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
