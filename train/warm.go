package train

// SDCA's warm start: the initial duals taken from an earlier run's final
// duals on (part of) the same sentences.
//
// A kept block μ_j is a point of sentence j's marginal polytope over the
// kept labels; relabelled by an injective map π of the kept labels into
// the problem's, it is a point of the polytope over the problem's labels
// that gives zero mass to every label π misses (a new label). The dual
// entropy H̃ needs μ in the polytope's relative interior, so where labels
// are new the block is mixed with the uniform marginals U (positive
// everywhere): μ_i = (1−ε)·π(μ_j) + ε·U, ε the run's Epsilon (eq. 21's).
// Both terms are consistent marginals (adjacent edges agree on their
// shared node), so their convex combination is too, and it is positive:
// μ is dual-feasible, and P(ŵ(μ)) − D(μ) = (1/n)Σ_i D̃(μ_i‖ν_i(ŵ(μ)))
// holds exactly as at any interior point — the certificate passes check
// this identity as always. Where the label set is the same (π a
// permutation) ε is 0 and the kept entries are moved, not changed: a kept
// block with the same label ids is bit-identical in a float64 store (a
// float32 store encodes it again: a chain again, to float32's rounding). A sentence without a
// kept block starts at eq. 21's μ⁰.
//
// The sampler's gap estimates from a cold start (all equal) would be far
// off: kept sentences are near their optimum, new ones far from it. The
// initial certificate's pass computes every block gap exactly; they are
// handed to the sampler before the first epoch. They go stale as the new
// sentences move w — the kept ones' estimates, small at the start, are
// only corrected when drawn, so the sampler neglects them while their
// true gaps grow — so a run that starts warm with a sampler of gap
// estimates recomputes them exactly every WarmRefreshEvery epochs, as
// Settings.RefreshEvery does (which, when given, sets the period instead).
// On CoNLL-2000 grown by 10%: 7 epochs instead of 10 to a gap of 1e-3,
// with a refresh every epoch or every second one; each pass costs about
// half an epoch, so every second. The snapshot of such a run records it,
// so that a resume goes on refreshing: a resumed run is the uninterrupted
// one, bit for bit.

import (
	"context"
	"fmt"
	"slices"

	"github.com/dualcrf/dualcrf/crf"
	"github.com/dualcrf/dualcrf/duals"
	"github.com/dualcrf/dualcrf/internal/num"
)

// WarmStart is SDCA's initial point taken from kept duals (SDCA.Warm).
type WarmStart struct {
	// From[i] is the kept block of the problem's sentence i, an index
	// into the blocks Blocks reads, or −1 for a sentence without one. No
	// block may serve two sentences.
	From []int
	// Labels[a] is the problem's label id of kept label a; distinct. A
	// problem label no kept label maps to is new: it gets zero mass
	// before the mix with ε of the uniform marginals.
	Labels []int
	// Blocks calls fn with every kept block in order (j = 0, 1, …) and
	// stops at fn's first error (duals.Kept.Each); mu may be reused
	// between calls.
	Blocks func(fn func(j int, mu []float64) error) error
}

// check refuses a warm start that does not fit the problem's n sentences
// and K labels.
func (ws *WarmStart) check(n, K int) error {
	if len(ws.From) != n {
		return fmt.Errorf("%w: the warm start maps %d sentences, the problem has %d", ErrBadProblem, len(ws.From), n)
	}
	if len(ws.Labels) == 0 || len(ws.Labels) > K || ws.Blocks == nil {
		return fmt.Errorf("%w: the warm start has %d labels for a problem of %d", ErrBadProblem, len(ws.Labels), K)
	}
	seen := make([]bool, K)
	for a, y := range ws.Labels {
		if y < 0 || y >= K || seen[y] {
			return fmt.Errorf("%w: the warm start maps its label %d to %d", ErrBadProblem, a, y)
		}
		seen[y] = true
	}
	return nil
}

// initWarm sets the duals from ws as the file's comment says.
func (m *SDCA) initWarm(ws *WarmStart, eps float64) error {
	p := m.p
	d := p.Data
	n, K := d.Len(), p.Layout.NumLabels
	if err := ws.check(n, K); err != nil {
		return err
	}
	if m.streamStore() != nil {
		return fmt.Errorf("%w: a warm start needs duals in memory or in a memory-mapped file, not streamed", ErrBadProblem)
	}
	// inv[j] is the sentence kept block j starts.
	inv := map[int]int{}
	for i, j := range ws.From {
		if j < -1 {
			return fmt.Errorf("%w: the warm start maps sentence %d to block %d", ErrBadProblem, i, j)
		}
		if j < 0 {
			continue
		}
		if o, dup := inv[j]; dup {
			return fmt.Errorf("%w: the warm start gives kept block %d to sentences %d and %d", ErrBadProblem, j, o, i)
		}
		inv[j] = i
	}
	_ = num.Parallel(context.Background(), n, 0, func() func(int) {
		var mu []float64
		return func(i int) {
			if ws.From[i] < 0 {
				s := d.Sentence(i)
				mu = grow(mu, crf.BlockLen(s.Len(), K))
				initBlock(mu, s.Labels, K, eps)
				m.duals.Put(i, mu)
			}
		}
	})
	mix := 0.0
	if len(ws.Labels) < K {
		mix = eps
	}
	done := 0
	var blk []float64
	err := ws.Blocks(func(j int, mu []float64) error {
		i, ok := inv[j]
		if !ok {
			return nil
		}
		T := d.SentStart[i+1] - d.SentStart[i]
		if want := crf.BlockLen(T, len(ws.Labels)); len(mu) != want {
			return fmt.Errorf("%w: kept block %d has %d entries; sentence %d of %d tokens wants %d", ErrBadProblem, j, len(mu), i, T, want)
		}
		blk = grow(blk, crf.BlockLen(T, K))
		relabel(blk, mu, ws.Labels, T, K, mix)
		m.duals.Put(i, blk)
		done++
		return nil
	})
	if err != nil {
		return err
	}
	if done != len(inv) {
		return fmt.Errorf("%w: the warm start read %d of its %d kept blocks", ErrBadProblem, done, len(inv))
	}
	p.meterAdd(n)
	m.warmGaps = true
	kind, _ := samplerSettings(m.sampler)
	m.warmRefresh = kind != SamplerUniform && kind != SamplerImportance
	return nil
}

// RefreshPeriod implements Refresher: WarmRefreshEvery when the run
// started warm with a sampler of gap estimates (the file's comment), else
// 0.
func (m *SDCA) RefreshPeriod() int {
	if m.warmRefresh {
		return WarmRefreshEvery
	}
	return 0
}

// WarmRefreshEvery is the period, in epochs, at which a run that started
// warm with a sampler of gap estimates recomputes them exactly when
// Settings.RefreshEvery is not given (the file's comment).
const WarmRefreshEvery = 2

// WarmRefreshes reports whether a run of m that starts warm refreshes its
// gap estimates by itself (every WarmRefreshEvery epochs when
// Settings.RefreshEvery is not given): with a sampler of gap estimates,
// not uniform, not importance (the sampler m's run made, RunSampler).
// For the facts a run records.
func WarmRefreshes(m Method) bool {
	kind, _ := samplerSettings(madeSampler(m))
	return kind != SamplerUniform && kind != SamplerImportance
}

// madeSampler returns the sampler m's run made (RunSampler), nil when none.
func madeSampler(m Method) Sampler {
	d, _ := Describe(m)
	for f, opt := range d.Made {
		if opt == RunSampler {
			s, _ := field(m, f).Interface().(Sampler)
			return s
		}
	}
	return nil
}

// relabel sets dst, a block of T tokens over K labels, to
// (1−mix)·π(src) + mix·U, where src is a block over len(L) labels and
// π maps label a to L[a]. With mix 0 the entries of src are moved
// unchanged.
func relabel(dst, src []float64, L []int, T, K int, mix float64) {
	Ko := len(L)
	keep := 1 - mix
	if T <= 1 {
		u := mix / float64(K)
		for y := range dst {
			dst[y] = u
		}
		for a, y := range L {
			dst[y] = keep*src[a] + u
		}
		return
	}
	u := mix / float64(K*K)
	for e := range dst {
		dst[e] = u
	}
	for t := 0; t < T-1; t++ {
		for a, ya := range L {
			so := (t*Ko + a) * Ko
			do := (t*K + ya) * K
			for b, yb := range L {
				dst[do+yb] = keep*src[so+b] + u
			}
		}
	}
}

// warmCertify is the initial certificate of a warm start: the dual
// certificate, whose exact block gaps become the sampler's estimates.
func (m *SDCA) warmCertify(ctx context.Context, w []float64) (Certificate, error) {
	c, gaps, err := dualCertificateGaps(ctx, m.p, m.duals, w)
	if err != nil {
		return c, err
	}
	m.sched.refresh(slices.Clone(gaps))
	m.warmGaps = false
	return c, nil
}

// Store returns the dual store of the run (after Init or a resume): the
// duals a run keeps for a later warm start.
func (m *SDCA) Store() duals.Store { return m.duals }
