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

import (
	"fmt"
	"slices"
)

// Layout describes where each block of parameters lives in a flat weight
// vector: U, the attribute weights, then B (K×K, row = previous label),
// then bias, start and end (K each) unless NoBias is set (CRFsuite's model
// has none of the three).
//
// U is dense — A×K, row-major, one attribute's K weights contiguous —
// unless Free is set: then it holds only the weights of the attribute–label
// pairs Free lists (CSR: attribute by attribute, each attribute's labels in
// increasing order), every other pair's weight being zero and not stored.
// Where most pairs are fixed at zero (CRFsuite's observed feature space on
// many labels) that is a fraction of the dense length. The free weights of
// attribute a are entries Span(a) of the vector whichever the form, and the
// weight of (a, y) is entry Index(a, y).
type Layout struct {
	NumAttrs  int  // A
	NumLabels int  // K
	NoBias    bool // leave out bias, start and end
	// Free, when not nil, is U's sparse form. Its lists are shared, never
	// changed once in a layout.
	Free *FreeRows
}

// FreeRows lists the free attribute–label pairs of a sparse U: attribute
// a's free weights are entries Start[a] … Start[a+1]−1 of the weight
// vector, for the labels Labels[Start[a]:Start[a+1]], in increasing order.
type FreeRows struct {
	Start  []int   // len A+1, Start[0] = 0, non-decreasing
	Labels []int32 // len Start[A]: per free weight, its label
}

// Len returns the number of free attribute–label pairs.
func (f *FreeRows) Len() int { return len(f.Labels) }

// Bytes returns the memory the lists take.
func (f *FreeRows) Bytes() int64 { return 8*int64(len(f.Start)) + 4*int64(len(f.Labels)) }

// Check reports lists that do not describe a sparse U of A attributes and K
// labels.
func (f *FreeRows) Check(A, K int) error {
	if len(f.Start) != A+1 || f.Start[0] != 0 || f.Start[A] != len(f.Labels) {
		return fmt.Errorf("free rows: %d row starts for %d attributes and %d free weights", len(f.Start), A, len(f.Labels))
	}
	for a := 0; a < A; a++ {
		if f.Start[a+1] < f.Start[a] {
			return fmt.Errorf("free rows: attribute %d starts at %d, after the next one (%d)", a, f.Start[a], f.Start[a+1])
		}
		prev := int32(-1)
		for _, y := range f.Labels[f.Start[a]:f.Start[a+1]] {
			if y <= prev || int(y) >= K {
				return fmt.Errorf("free rows: attribute %d lists label %d after %d (%d labels)", a, y, prev, K)
			}
			prev = y
		}
	}
	return nil
}

// USize returns the length of U: A·K, or the free pairs' count.
func (l Layout) USize() int {
	if l.Free != nil {
		return len(l.Free.Labels)
	}
	return l.NumAttrs * l.NumLabels
}

// Dim returns d, the length of the weight vector: the length of U + K²
// (+ 3K).
func (l Layout) Dim() int {
	d := l.USize() + l.NumLabels*l.NumLabels
	if !l.NoBias {
		d += 3 * l.NumLabels
	}
	return d
}

// Trans returns the offset of B.
func (l Layout) Trans() int { return l.USize() }

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

// Row returns the offset of attribute a's K weights in a dense U. With
// Free set, rows have no fixed length: it panics (use Span).
func (l Layout) Row(a int32) int {
	if l.Free != nil {
		panic("crf: Layout.Row of a sparse layout")
	}
	return int(a) * l.NumLabels
}

// Span returns the entries lo … hi−1 of the weight vector that hold
// attribute a's free weights: its K weights in a dense U.
func (l Layout) Span(a int32) (lo, hi int) {
	if f := l.Free; f != nil {
		return f.Start[a], f.Start[a+1]
	}
	lo = int(a) * l.NumLabels
	return lo, lo + l.NumLabels
}

// RowLabels returns the labels of attribute a's free weights, in the order
// of Span(a); nil for a dense U, where they are 0 … K−1.
func (l Layout) RowLabels(a int32) []int32 {
	if f := l.Free; f != nil {
		return f.Labels[f.Start[a]:f.Start[a+1]]
	}
	return nil
}

// Index returns the entry of the weight of attribute a and label y, or −1
// when the pair is not free (its weight is zero).
func (l Layout) Index(a int32, y int) int {
	f := l.Free
	if f == nil {
		return int(a)*l.NumLabels + y
	}
	lo, hi := f.Start[a], f.Start[a+1]
	if k, ok := slices.BinarySearch(f.Labels[lo:hi], int32(y)); ok {
		return lo + k
	}
	return -1
}

// Dense returns the layout with a dense U.
func (l Layout) Dense() Layout {
	l.Free = nil
	return l
}

// Expand returns the weights w of layout l in l's dense layout (zeros at
// the pairs that are not free); w itself when l is dense.
func (l Layout) Expand(w []float64) []float64 {
	if l.Free == nil {
		return w
	}
	K := l.NumLabels
	d := l.Dense()
	out := make([]float64, d.Dim())
	for a := 0; a < l.NumAttrs; a++ {
		lo, hi := l.Span(int32(a))
		row := out[a*K : a*K+K]
		for k, y := range l.Free.Labels[lo:hi] {
			row[y] = w[lo+k]
		}
	}
	copy(out[d.Trans():], w[l.Trans():])
	return out
}

// Compact returns the dense weights w (of l's dense layout) in layout l,
// and whether every weight left out was zero; w itself when l is dense.
func (l Layout) Compact(w []float64) ([]float64, bool) {
	if l.Free == nil {
		return w, true
	}
	K := l.NumLabels
	d := l.Dense()
	out := make([]float64, l.Dim())
	zero := true
	for a := 0; a < l.NumAttrs; a++ {
		lo, hi := l.Span(int32(a))
		row := w[a*K : a*K+K]
		k := lo
		for y, v := range row {
			if k < hi && int(l.Free.Labels[k]) == y {
				out[k] = v
				k++
			} else if v != 0 {
				zero = false
			}
		}
	}
	copy(out[l.Trans():], w[d.Trans():])
	return out, zero
}

// BlockLen returns the number of clique marginals of a sentence of T tokens
// with K labels: (T-1)·K² edge marginals, or K for a one-token sentence.
func BlockLen(T, K int) int {
	if T <= 1 {
		return K
	}
	return (T - 1) * K * K
}
