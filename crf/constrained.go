package crf

import "math"

// Constrained decoding, n-best paths and span probabilities on a Lattice.
//
// Forbidden labels and transitions are log-potentials of −∞ (Mask): the
// paths through them have probability 0, so Viterbi, NBest and the
// log-domain forward–backward (ForwardBackwardLog) see only the allowed
// paths, and log Z is that of the allowed paths.

// Mask forbids labels and transitions in the current potentials by setting
// their log-potentials to −∞: a transition y→y' where allowTrans[y·K+y']
// is false, a first label y where allowStart[y] is false, a last label
// where allowEnd[y] is false, and at token t every label but forced[t] when
// forced[t] ≥ 0. A nil slice allows everything. Call it after SetScores (or
// SetPotentials), and run ForwardBackwardLog rather than ForwardBackward:
// the probability-domain recursions do not take −∞.
func (l *Lattice) Mask(allowTrans, allowStart, allowEnd []bool, forced []int32) {
	K, T := l.K, l.T
	inf := math.Inf(-1)
	for i, ok := range allowTrans {
		if !ok {
			l.trans[i] = inf
		}
	}
	if T == 0 {
		return
	}
	for y, ok := range allowStart {
		if !ok {
			l.theta[y] = inf
		}
	}
	for y, ok := range allowEnd {
		if !ok {
			l.theta[(T-1)*K+y] = inf
		}
	}
	for t, f := range forced {
		if f < 0 {
			continue
		}
		row := l.theta[t*K : (t+1)*K]
		for y := range row {
			if y != int(f) {
				row[y] = inf
			}
		}
	}
}

// ForwardBackwardLog runs the forward and backward recursions in the log
// domain, which takes potentials of −∞ (Mask), and returns log Z: −∞ when
// every path is forbidden. The marginals and messages that follow are the
// allowed paths' distribution.
func (l *Lattice) ForwardBackwardLog() float64 {
	l.logForwardBackward()
	l.logDom = true
	return l.logZ
}

// LogMessages writes the logarithms of the forward and backward messages
// of token t of the last forward–backward into alpha and beta (K each):
// log α_t(y), the log-sum of the scores of the paths of tokens 0..t ending
// in y, and log β_t(y), that of the paths of tokens t+1..T−1 after y (the
// edge scores included), so that α_t(y)·β_t(y)/Z = p(y_t = y | x).
func (l *Lattice) LogMessages(t int, alpha, beta []float64) {
	K, kp := l.K, l.kp
	a := l.alpha[t*kp : t*kp+K]
	b := l.beta[t*kp : t*kp+K]
	if l.logDom {
		copy(alpha[:K], a)
		copy(beta[:K], b)
		return
	}
	// α̂_t = α_t / Π_{j≤t} c_j e^{m_j} and β̂_t = β_t / Π_{j>t} c_j e^{m_j}.
	offA, offB := 0.0, 0.0
	for j := 0; j < l.T; j++ {
		o := l.rmax[j] + math.Log(l.scale[j])
		if j <= t {
			offA += o
		} else {
			offB += o
		}
	}
	for y := 0; y < K; y++ {
		alpha[y] = math.Log(a[y]) + offA
		beta[y] = math.Log(b[y]) + offB
	}
}

// nbestEntry is one of the best partial paths ending at a node: its score
// and the label and rank of the partial path it extends (−1 at token 0).
type nbestEntry struct {
	score          float64
	prevY, prevRnk int32
}

// NBest finds the n highest-scoring label paths of the current potentials
// by the list Viterbi algorithm (the n best partial paths kept at every
// node, T·K²·n steps) and writes them best first: path r into
// paths[r·T:(r+1)·T] and its score into scores[r]. It returns how many it
// wrote, fewer than n when fewer paths have a finite score. Ties go to the
// smaller previous label, then to the better partial path, so path 0 is
// Viterbi's.
func (l *Lattice) NBest(n int, paths []int32, scores []float64) int {
	K, T := l.K, l.T
	if n <= 0 || T == 0 {
		return 0
	}
	// lists[(t·K+y)·n : …+cnt[t·K+y]] are the best partial paths ending in y at t, best first.
	lists := make([]nbestEntry, T*K*n)
	cnt := make([]int, T*K)
	for y := 0; y < K; y++ {
		if s := l.theta[y]; !math.IsInf(s, -1) {
			lists[y*n] = nbestEntry{s, -1, -1}
			cnt[y] = 1
		}
	}
	heads := make([]int, K)
	for t := 1; t < T; t++ {
		for y2 := 0; y2 < K; y2++ {
			node := t*K + y2
			th := l.theta[node]
			if math.IsInf(th, -1) {
				continue
			}
			clear(heads)
			out := lists[node*n : node*n+n]
			for k := 0; k < n; k++ {
				best, arg := math.Inf(-1), -1
				for y := 0; y < K; y++ {
					prev := (t-1)*K + y
					if heads[y] >= cnt[prev] {
						continue
					}
					if v := lists[prev*n+heads[y]].score + l.trans[y*K+y2]; v > best {
						best, arg = v, y
					}
				}
				if arg < 0 {
					break
				}
				out[k] = nbestEntry{best + th, int32(arg), int32(heads[arg])}
				heads[arg]++
				cnt[node]++
			}
		}
	}
	// The n best over the last token's labels.
	clear(heads)
	got := 0
	for ; got < n; got++ {
		best, arg := math.Inf(-1), -1
		for y := 0; y < K; y++ {
			node := (T-1)*K + y
			if heads[y] < cnt[node] {
				if v := lists[node*n+heads[y]].score; v > best {
					best, arg = v, y
				}
			}
		}
		if arg < 0 {
			break
		}
		scores[got] = best
		path := paths[got*T : (got+1)*T]
		y, r := int32(arg), int32(heads[arg])
		heads[arg]++
		for t := T - 1; t >= 0; t-- {
			path[t] = y
			e := lists[(t*K+int(y))*n+int(r)]
			y, r = e.prevY, e.prevRnk
		}
	}
	return got
}
