package train

// Block samplers for SDCA (paper 001, Sections 5 and 6.3). Every sampler keeps a stale estimate g_i of
// each sentence's block duality gap — the gap seen the last time the sentence was visited — in a sum tree,
// so the running gap estimate Σ_i g_i / n is the root divided by n, O(1). Initial estimates are large
// (100), so the gap-driven samplers visit every sentence once before the estimates mean anything.
//
// The non-uniform samplers draw, with probability f (default 0.8), i ∝ w_i and otherwise i uniformly:
//
//	P(i) = (1−f)/n + f·w_i/Σ_j w_j,  with w_i = g_i (gap), L_i (importance), g_i·L_i (gap-importance),
//
// where L_i = λ + R_i/n bounds the smoothness of block i. The uniform share keeps every sentence
// reachable although the estimates are stale; when all w_i are 0 the draw is uniform. "max" picks the
// largest estimate deterministically (smallest index on ties), with no uniform share: the paper
// reports that it fails to converge, and it is kept for comparison.

import (
	"fmt"
	"math/rand/v2"
	"strings"
)

// Sampler picks the next sentence to update and learns from the block gaps it is told. SDCA.Sampler takes
// any; NewSampler makes the kinds the CLI names. A checkpoint records the kind its State names (and, for
// NewSampler's, the non-uniform share), which a resumed run must repeat.
type Sampler interface {
	// Next returns the index in [0,n) of the next sentence to visit.
	Next(rng *rand.Rand) int
	// Update records the gap estimate of block i ∈ [0,n) after it was visited (≥ 0; may be 0). Negative values
	// (rounding) and NaN count as 0; +Inf is capped at 1e300.
	Update(i int, gap float64)
	// Refresh replaces all n estimates at once (after a full certificate pass), cleaned as in Update.
	// It panics if len(gaps) != n, a programming error.
	Refresh(gaps []float64)
	// Estimate is Σ_i g_i / n over the current estimates, the running gap estimate, in O(1).
	Estimate() float64
	// State returns the sampler's state as plain data, for checkpoints; it shares nothing with the sampler.
	State() SamplerState
	// Restore replaces the state with one returned by State of a sampler of the same kind and size.
	Restore(SamplerState) error
}

// Splitter is a Sampler that can hand a subset of its sentences to a sampler of their own: what the
// streamed SDCA's blocks draw from. NewSampler's samplers are Splitters.
type Splitter interface {
	Sampler
	// Split returns a new sampler of the same kind and options over the sentences idx (distinct indices
	// in [0,n)), which it numbers 0..len(idx)−1 in idx's order, starting from their current estimates. The
	// two share nothing.
	Split(idx []int) Sampler
}

// SamplerOptions configures NewSampler. The zero value of each field is its documented default.
type SamplerOptions struct {
	// NonUniform is f, the probability of drawing from the non-uniform distribution, in (0,1];
	// 0 means the default 0.8. (For f = 0 use the "uniform" kind.)
	NonUniform float64
	// InitialGap is the initial gap estimate of every sentence, > 0; 0 means DefaultInitialGap, large
	// enough that the first pass visits every sentence.
	InitialGap float64
	// Smoothness holds L_i = λ + R_i/n for every sentence (length n, each > 0 and finite); required by
	// "importance" and "gap-importance", ignored by the other kinds.
	Smoothness []float64
}

// SamplerState is a sampler's state as plain data: what a checkpoint must store to resume the sampler.
// The options (f, L_i) are not part of it: the resuming job passes them to NewSampler again.
type SamplerState struct {
	Kind string    // the sampler kind, as given to NewSampler
	Gaps []float64 // the gap estimate of every sentence
}

// SamplerKinds lists the kinds NewSampler accepts, the default ("gap") second.
func SamplerKinds() []string {
	return []string{SamplerUniform, SamplerGap, SamplerImportance, SamplerGapImportance, SamplerMax}
}

const maxGapEstimate = 1e300 // cap for +Inf, so that sums over any realistic n stay finite

// blockSampler implements every kind; the kind decides which trees exist.
type blockSampler struct {
	kind   string
	n      int
	f      float64
	smooth []float64 // L_i; kept only by gap-importance, whose weights change with g_i
	gaps   *sumTree  // the estimates g_i; total() = n·Estimate()
	draw   *sumTree  // weights of the non-uniform draw; nil for uniform and max; == gaps for gap
	max    *maxTree  // the estimates again, for max only
}

var _ Splitter = (*blockSampler)(nil)

// NewSampler returns a sampler of the given kind (see SamplerKinds) over n sentences, every estimate set
// to opts.InitialGap.
func NewSampler(kind string, n int, opts SamplerOptions) (Sampler, error) {
	if n < 1 {
		return nil, fmt.Errorf("%w: %d sentences, want at least 1", ErrBadSampler, n)
	}
	f, err := nonUniform(opts.NonUniform)
	if err != nil {
		return nil, err
	}
	g0, err := initialGap(opts.InitialGap)
	if err != nil {
		return nil, err
	}
	s := &blockSampler{kind: kind, n: n, f: f, gaps: newSumTree(n)}
	switch kind {
	case SamplerUniform:
	case SamplerGap:
		s.draw = s.gaps
	case SamplerImportance, SamplerGapImportance:
		if err := checkSmoothness(kind, n, opts.Smoothness); err != nil {
			return nil, err
		}
		s.draw = newSumTree(n)
		if kind == SamplerImportance {
			s.draw.fill(opts.Smoothness)
		} else {
			s.smooth = append([]float64(nil), opts.Smoothness...)
		}
	case SamplerMax:
		s.max = newMaxTree(n)
	default:
		return nil, fmt.Errorf("%w: unknown kind %q, want one of %s",
			ErrBadSampler, kind, strings.Join(SamplerKinds(), ", "))
	}
	start := make([]float64, n)
	for i := range start {
		start[i] = g0
	}
	s.Refresh(start)
	return s, nil
}

// MixesUniform reports whether a sampler of kind mixes its draws with
// uniform ones, and so reads SamplerOptions.NonUniform: the gap,
// importance and gap-importance samplers do; uniform and max do not.
func MixesUniform(kind string) bool {
	switch kind {
	case SamplerGap, SamplerImportance, SamplerGapImportance:
		return true
	}
	return false
}

// nonUniform validates SamplerOptions.NonUniform and applies its default.
func nonUniform(f float64) (float64, error) {
	if f == 0 {
		return DefaultNonUniform, nil
	}
	if !(f > 0 && f <= 1) {
		return 0, fmt.Errorf("%w: non-uniform fraction %v, want it in (0,1]", ErrBadSampler, f)
	}
	return f, nil
}

// initialGap validates SamplerOptions.InitialGap and applies its default.
func initialGap(g float64) (float64, error) {
	if g == 0 {
		return DefaultInitialGap, nil
	}
	if !(g > 0 && g <= maxGapEstimate) {
		return 0, fmt.Errorf("%w: initial gap %v, want a finite positive number", ErrBadSampler, g)
	}
	return g, nil
}

// checkSmoothness checks that smooth has one finite positive constant per sentence.
func checkSmoothness(kind string, n int, smooth []float64) error {
	if len(smooth) != n {
		return fmt.Errorf("%w: %s sampling needs the smoothness L_i of all %d sentences, got %d",
			ErrBadSampler, kind, n, len(smooth))
	}
	for i, l := range smooth {
		if !(l > 0 && l <= maxGapEstimate) {
			return fmt.Errorf("%w: smoothness L_%d = %v, want a finite positive number", ErrBadSampler, i, l)
		}
	}
	return nil
}

// cleanGap maps a reported gap to a valid tree weight: rounding below 0 and NaN become 0, +Inf is capped.
func cleanGap(g float64) float64 {
	switch {
	case !(g > 0):
		return 0
	case g > maxGapEstimate:
		return maxGapEstimate
	}
	return g
}

// Next implements Sampler.
func (s *blockSampler) Next(rng *rand.Rand) int {
	switch {
	case s.max != nil:
		return s.max.argmax()
	case s.draw == nil:
		return rng.IntN(s.n)
	}
	if rng.Float64() < s.f {
		if i := s.draw.sample(rng.Float64()); i >= 0 {
			return i
		}
	}
	return rng.IntN(s.n)
}

// Update implements Sampler.
func (s *blockSampler) Update(i int, gap float64) {
	g := cleanGap(gap)
	s.gaps.set(i, g)
	if s.smooth != nil {
		s.draw.set(i, cleanGap(g*s.smooth[i]))
	}
	if s.max != nil {
		s.max.set(i, g)
	}
}

// Refresh implements Sampler.
func (s *blockSampler) Refresh(gaps []float64) {
	if len(gaps) != s.n {
		panic(fmt.Sprintf("train: sampler Refresh with %d gaps for %d sentences", len(gaps), s.n))
	}
	g := make([]float64, s.n)
	for i, x := range gaps {
		g[i] = cleanGap(x)
	}
	s.gaps.fill(g)
	if s.max != nil {
		s.max.fill(g)
	}
	if s.smooth != nil {
		for i := range g {
			g[i] = cleanGap(g[i] * s.smooth[i])
		}
		s.draw.fill(g)
	}
}

// Split implements Splitter.
func (s *blockSampler) Split(idx []int) Sampler {
	n := len(idx)
	sub := &blockSampler{kind: s.kind, n: n, f: s.f, gaps: newSumTree(n)}
	pick := func(w func(int) float64) []float64 {
		v := make([]float64, n)
		for j, i := range idx {
			v[j] = w(i)
		}
		return v
	}
	switch {
	case s.draw == s.gaps:
		sub.draw = sub.gaps
	case s.smooth != nil:
		sub.draw = newSumTree(n)
		sub.smooth = pick(func(i int) float64 { return s.smooth[i] })
	case s.draw != nil: // importance: the draw's weights are the L_i
		sub.draw = newSumTree(n)
		sub.draw.fill(pick(s.draw.weight))
	}
	if s.max != nil {
		sub.max = newMaxTree(n)
	}
	sub.Refresh(pick(s.gaps.weight))
	return sub
}

// Estimate implements Sampler.
func (s *blockSampler) Estimate() float64 { return s.gaps.total() / float64(s.n) }

// samplerSettings returns what a checkpoint records of s: its kind and, for
// NewSampler's, its non-uniform share; for nil, the default sampler's.
func samplerSettings(s Sampler) (kind string, nonUniform *float64) {
	switch s := s.(type) {
	case nil:
		f := DefaultNonUniform
		return DefaultSampler, &f
	case *blockSampler:
		f := s.f
		return s.kind, &f
	}
	return s.State().Kind, nil
}

// State implements Sampler.
func (s *blockSampler) State() SamplerState {
	g := make([]float64, s.n)
	for i := range g {
		g[i] = s.gaps.weight(i)
	}
	return SamplerState{Kind: s.kind, Gaps: g}
}

// Restore implements Sampler. It refuses a state of another kind or size, or with a gap that is
// negative, NaN or infinite, and then leaves the sampler unchanged.
func (s *blockSampler) Restore(st SamplerState) error {
	if st.Kind != s.kind {
		return fmt.Errorf("%w: restoring a %q sampler from %q state", ErrBadSampler, s.kind, st.Kind)
	}
	if len(st.Gaps) != s.n {
		return fmt.Errorf("%w: restoring %d gaps into a sampler of %d sentences", ErrBadSampler, len(st.Gaps), s.n)
	}
	for i, g := range st.Gaps {
		if !(g >= 0 && g <= maxGapEstimate) {
			return fmt.Errorf("%w: restored gap %d is %v, want a finite number ≥ 0", ErrBadSampler, i, g)
		}
	}
	s.Refresh(st.Gaps)
	return nil
}
