package train

import (
	"fmt"
	"math"
	"math/bits"
	"sync/atomic"

	"github.com/dualcrf/dualcrf/crf"
)

// Problem is a training set with its regulariser.
type Problem struct {
	Data   *crf.Dataset
	Layout crf.Layout
	Lambda float64 // λ > 0; callers often use 1/n
	// L1 is λ₁ ≥ 0, the weight of the ℓ1 term λ₁‖w‖₁ of the elastic net
	// (elastic.go); 0, the default, is the ℓ2-regularised objective. SDCA
	// (proximal SDCA) and LBFGS (OWL-QN) train it; the other methods refuse
	// it.
	L1 float64
	// Mask, when not nil, restricts a dense U to the attribute–label pairs
	// it marks (Mask[a·K+y]); weights outside it are fixed at zero and their
	// features dropped. A sparse layout (Layout.Free) restricts U by itself:
	// Mask is then nil. ObserveFeatures chooses between the two.
	Mask []bool
	// TransMask, when not nil, restricts the K×K transition weights B to the
	// label pairs it marks (TransMask[y·K+y']) in the same way. Bias, start
	// and end are never masked.
	TransMask []bool
	// Meter, when not nil, counts the sentences done by full passes over
	// the data — SDCA's initial duals, ŵ(μ) from the duals (What), the
	// forward–backward passes (pass, and L-BFGS's gradients) — adding to
	// it as they go: a progress display polls it from another goroutine
	// and counts a phase from the value at its start.
	Meter *atomic.Int64
}

// Bounds on the inputs, beyond which float64 training cannot be trusted.
const (
	// maxAttrValue bounds |x| for an attribute value.
	maxAttrValue = 1e100
	// lambdaFloorFactor: λ must be at least lambdaFloorFactor·R², with R²
	// the largest squared feature norm of a sentence, so that the weights,
	// whose norm is at most about R²/λ, and their squares stay far from
	// overflow.
	lambdaFloorFactor = 1e-100
)

// NewProblem checks d and returns the problem with the default layout.
func NewProblem(d *crf.Dataset, lambda float64, noBias bool) (*Problem, error) {
	if !(lambda > 0) || math.IsInf(lambda, 0) {
		return nil, fmt.Errorf("%w: λ must be a positive finite number, got %g", ErrBadProblem, lambda)
	}
	if d.Len() == 0 {
		return nil, fmt.Errorf("%w: no sentences", ErrBadProblem)
	}
	if d.NumLabels < 2 {
		return nil, fmt.Errorf("%w: %d label(s); a CRF needs at least 2", ErrBadProblem, d.NumLabels)
	}
	for tok, y := range d.Labels {
		if y < 0 || int(y) >= d.NumLabels {
			return nil, fmt.Errorf("%w: token %d (sentence %d) has no gold label", ErrBadProblem, tok, sentenceOf(d, tok))
		}
	}
	for j, v := range d.Values {
		if !(math.Abs(v) <= maxAttrValue) {
			tok := tokenOf(d, j)
			return nil, fmt.Errorf("%w: token row %d (sentence %d) has attribute value %g; values must be finite with |x| ≤ %g",
				ErrBadProblem, tok, sentenceOf(d, tok), v, float64(maxAttrValue))
		}
	}
	for i := 0; i < d.Len(); i++ {
		if d.SentStart[i+1] <= d.SentStart[i] {
			return nil, fmt.Errorf("%w: sentence %d is empty", ErrBadProblem, i)
		}
	}
	if r2, i := maxSentenceNorm(d); lambda < lambdaFloorFactor*r2 {
		return nil, fmt.Errorf("%w: λ = %g is below the floor %.3g for this data (%g × R², with R² = %.4g the squared feature norm of sentence %d): the weights, up to about R²/λ, would overflow float64; use a larger λ",
			ErrBadProblem, lambda, lambdaFloorFactor*r2, lambdaFloorFactor, r2, i)
	}
	lay := crf.Layout{NumAttrs: d.NumAttrs, NumLabels: d.NumLabels, NoBias: noBias}
	return &Problem{Data: d, Layout: lay, Lambda: lambda}, nil
}

// maxSentenceNorm returns the largest Σ_t (‖x_t‖² + 3) over the sentences
// (the norm of a sentence's feature vector, with its transition, bias and
// start/end features) and the sentence that has it.
func maxSentenceNorm(d *crf.Dataset) (float64, int) {
	best, at := 0.0, 0
	for i := 0; i < d.Len(); i++ {
		r := 0.0
		for tok := d.SentStart[i]; tok < d.SentStart[i+1]; tok++ {
			for j := d.AttrStart[tok]; j < d.AttrStart[tok+1]; j++ {
				v := 1.0
				if d.Values != nil {
					v = d.Values[j]
				}
				r += v * v
			}
			r += 3
		}
		if r > best {
			best, at = r, i
		}
	}
	return best, at
}

// tokenOf returns the token of attribute occurrence j.
func tokenOf(d *crf.Dataset, j int) int {
	lo, hi := 0, d.NumTokens()
	for lo+1 < hi {
		m := (lo + hi) / 2
		if d.AttrStart[m] <= j {
			lo = m
		} else {
			hi = m
		}
	}
	return lo
}

func sentenceOf(d *crf.Dataset, tok int) int {
	lo, hi := 0, d.Len()
	for lo+1 < hi {
		m := (lo + hi) / 2
		if d.SentStart[m] <= tok {
			lo = m
		} else {
			hi = m
		}
	}
	return lo
}

// ObservedMask returns the mask of attribute–label pairs that occur in the
// gold labels of d (CRFsuite's default feature space).
func ObservedMask(d *crf.Dataset) []bool {
	K := d.NumLabels
	m := make([]bool, d.NumAttrs*K)
	for tok, y := range d.Labels {
		for j := d.AttrStart[tok]; j < d.AttrStart[tok+1]; j++ {
			m[int(d.Attrs[j])*K+int(y)] = true
		}
	}
	return m
}

// ObservedFree returns the attribute–label pairs that occur in the gold
// labels of d (ObservedMask's) as the lists of a sparse U, without a dense
// mask.
func ObservedFree(d *crf.Dataset) *crf.FreeRows {
	K := d.NumLabels
	words := (K + 63) / 64
	seen := make([]uint64, d.NumAttrs*words) // per attribute, a bit per label
	for tok, y := range d.Labels {
		for _, a := range d.Attrs[d.AttrStart[tok]:d.AttrStart[tok+1]] {
			seen[int(a)*words+int(y)/64] |= 1 << (uint(y) % 64)
		}
	}
	n := 0
	for _, b := range seen {
		n += bits.OnesCount64(b)
	}
	f := &crf.FreeRows{Start: make([]int, 1, d.NumAttrs+1), Labels: make([]int32, 0, n)}
	for a := 0; a < d.NumAttrs; a++ {
		for wd, b := range seen[a*words : (a+1)*words] {
			for ; b != 0; b &= b - 1 {
				f.Labels = append(f.Labels, int32(64*wd+bits.TrailingZeros64(b)))
			}
		}
		f.Start = append(f.Start, len(f.Labels))
	}
	return f
}

// ObserveFeatures restricts U to the attribute–label pairs of the gold
// labels (CRFsuite's feature space): as a sparse layout (Layout.Free) when
// at most half of the pairs are free — the weights and every vector of
// their length then hold the free pairs only — else as a Mask over the
// dense layout, whose rows score faster. The weights are the same bit for
// bit either way. It returns whether the layout is sparse.
func (p *Problem) ObserveFeatures() bool {
	f := ObservedFree(p.Data)
	if SparseCheaper(int64(f.Len()), int64(p.Layout.NumAttrs), int64(p.Layout.NumLabels)) {
		p.Layout.Free, p.Mask = f, nil
		return true
	}
	p.Layout.Free, p.Mask = nil, ObservedMask(p.Data)
	return false
}

// freeLabels calls fn with every free label of attribute a, in increasing
// order.
func (p *Problem) freeLabels(a int, fn func(y int)) {
	lay := p.Layout
	if lay.Free != nil {
		for _, y := range lay.RowLabels(int32(a)) {
			fn(int(y))
		}
		return
	}
	K := lay.NumLabels
	for y := 0; y < K; y++ {
		if p.Mask == nil || p.Mask[a*K+y] {
			fn(y)
		}
	}
}

// SparseCheaper reports whether free of the A·K attribute–label pairs are
// few enough to hold the weights sparse (ObserveFeatures): at most half.
func SparseCheaper(free, A, K int64) bool { return 2*free <= A*K }

// checkLayout refuses a sparse layout that does not fit the data, or one
// given together with a Mask.
func (p *Problem) checkLayout() error {
	f := p.Layout.Free
	if f == nil {
		return nil
	}
	if p.Mask != nil {
		return fmt.Errorf("%w: a Mask and a sparse layout (Layout.Free) at once", ErrBadProblem)
	}
	if err := f.Check(p.Layout.NumAttrs, p.Layout.NumLabels); err != nil {
		return fmt.Errorf("%w: %v", ErrBadProblem, err)
	}
	return nil
}

// ObservedTransitions returns the mask of label pairs (y, y') that follow
// each other in the gold labels of d (CRFsuite's default,
// feature.possible_transitions=0).
func ObservedTransitions(d *crf.Dataset) []bool {
	K := d.NumLabels
	m := make([]bool, K*K)
	for i := 0; i < d.Len(); i++ {
		for tok := d.SentStart[i] + 1; tok < d.SentStart[i+1]; tok++ {
			m[int(d.Labels[tok-1])*K+int(d.Labels[tok])] = true
		}
	}
	return m
}

// FeatureSpace names the attribute feature space: "observed" with a Mask
// or a sparse layout, else "full".
func (p *Problem) FeatureSpace() string {
	if p.Mask != nil || p.Layout.Free != nil {
		return "observed"
	}
	return "full"
}

// TransitionSpace names the transition feature space: "observed" with a
// TransMask, else "all".
func (p *Problem) TransitionSpace() string {
	if p.TransMask != nil {
		return "observed"
	}
	return "all"
}

// FreeWeights returns the number of weights not fixed at zero by the masks.
func (p *Problem) FreeWeights() int {
	n := p.Layout.Dim()
	for _, ok := range p.Mask {
		if !ok {
			n--
		}
	}
	for _, ok := range p.TransMask {
		if !ok {
			n--
		}
	}
	return n
}

// N returns the number of sentences.
func (p *Problem) N() int { return p.Data.Len() }

// applyMask zeroes the masked-out entries of g: U rows and transitions.
func (p *Problem) applyMask(g []float64) {
	for i, ok := range p.Mask {
		if !ok {
			g[i] = 0
		}
	}
	p.maskTrans(g[p.Layout.Trans() : p.Layout.Trans()+len(p.TransMask)])
}

// maskTrans zeroes the masked-out entries of the K×K transitions tr.
func (p *Problem) maskTrans(tr []float64) {
	for i, ok := range p.TransMask {
		if !ok {
			tr[i] = 0
		}
	}
}

// maskRow zeroes the masked-out entries of row, a dense row of K entries
// for attribute a: those off its free labels in a sparse layout.
func (p *Problem) maskRow(row []float64, a int32) {
	if p.Layout.Free != nil {
		k := 0
		labels := p.Layout.RowLabels(a)
		for y := range row {
			if k < len(labels) && int(labels[k]) == y {
				k++
			} else {
				row[y] = 0
			}
		}
		return
	}
	if p.Mask == nil {
		return
	}
	off := p.Layout.Row(a)
	for y, ok := range p.Mask[off : off+len(row)] {
		if !ok {
			row[y] = 0
		}
	}
}

// GoldFeatures returns Σ_i F(x_i,y_i), masked.
func (p *Problem) GoldFeatures() []float64 { return p.goldInto(nil) }

// goldInto is GoldFeatures into dst when it has the capacity (a new
// vector otherwise); it returns the vector written.
func (p *Problem) goldInto(dst []float64) []float64 {
	g := dst
	if cap(g) < p.Layout.Dim() {
		g = make([]float64, p.Layout.Dim())
	}
	g = g[:p.Layout.Dim()]
	clear(g)
	for i := 0; i < p.N(); i++ {
		s := p.Data.Sentence(i)
		crf.AddFeatures(g, p.Layout, s, s.Labels, 1)
	}
	p.applyMask(g)
	return g
}
