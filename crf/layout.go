// Package crf is the linear-chain conditional random field core shared by the
// trainer and the decoder: the weight layout, node and edge scores,
// forward–backward, marginals, Viterbi, and the junction-tree entropy and
// Kullback–Leibler divergence of chain marginals.
//
// Labels are 0..K-1. A sentence of T tokens has node scores
//
//	θ_t(y) = Σ_a v_{t,a} U[a,y] + bias[y] + [t=0]·start[y] + [t=T-1]·end[y]
//
// and edge scores B[y,y'], so p(y|x) ∝ exp(Σ_t θ_t(y_t) + Σ_{t<T-1} B[y_t,y_{t+1}]).
// The cliques of the chain are its edges (t,t+1); the separators are the
// inner nodes 1..T-2. A one-token sentence has a single node clique.
package crf

// Layout describes where each block of parameters lives in a flat weight
// vector: U (A×K, row-major, one attribute's K weights contiguous), then B
// (K×K, row = previous label), then bias, start and end (K each) unless
// NoBias is set (CRFsuite's model has none of the three).
type Layout struct {
	NumAttrs  int  // A
	NumLabels int  // K
	NoBias    bool // leave out bias, start and end
}

// Dim returns d, the length of the weight vector: A·K + K² (+ 3K).
func (l Layout) Dim() int {
	d := l.NumAttrs*l.NumLabels + l.NumLabels*l.NumLabels
	if !l.NoBias {
		d += 3 * l.NumLabels
	}
	return d
}

// Trans returns the offset of B.
func (l Layout) Trans() int { return l.NumAttrs * l.NumLabels }

// Bias returns the offset of bias, or -1 when NoBias.
func (l Layout) Bias() int {
	if l.NoBias {
		return -1
	}
	return l.Trans() + l.NumLabels*l.NumLabels
}

// Start returns the offset of start, or -1 when NoBias.
func (l Layout) Start() int {
	if l.NoBias {
		return -1
	}
	return l.Bias() + l.NumLabels
}

// End returns the offset of end, or -1 when NoBias.
func (l Layout) End() int {
	if l.NoBias {
		return -1
	}
	return l.Start() + l.NumLabels
}

// Row returns the offset of attribute a's K weights.
func (l Layout) Row(a int32) int { return int(a) * l.NumLabels }

// BlockLen returns the number of clique marginals of a sentence of T tokens
// with K labels: (T-1)·K² edge marginals, or K for a one-token sentence.
func BlockLen(T, K int) int {
	if T <= 1 {
		return K
	}
	return (T - 1) * K * K
}
