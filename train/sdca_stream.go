package train

// SDCA on a streamed dual store (duals.Stream): an epoch reads and writes
// every block once, in a seeded random order, and on each makes the steps
// the in-memory gap sampler would make there in expectation (drawBlocks),
// drawing the sentences with the sampler restricted to the block
// (Splitter.Split over the block's sentences, its estimates handed back
// afterwards). The epoch's plan is made at its start, so the reader can
// fetch ahead and a checkpoint records it. With one block the plan is
// [0] with n steps (no random number is used) and the steps are exactly
// those of the in-memory SDCA.

import (
	"context"
	"fmt"
	"math"
	"sort"

	"github.com/dualcrf/dualcrf/duals"
)

// streamed is the scheduler of an SDCA on a streamed store: the epoch's
// plan (its block order, the steps on each and the non-uniform share of
// each one's sampler) and the blocks of it done.
type streamed struct {
	oneSampler
	order []int
	steps []int
	share []float64
	done  int
}

func (s *streamed) start() {}

// streamStore returns the store as a *duals.Stream, or nil.
func (m *SDCA) streamStore() *duals.Stream {
	s, _ := m.duals.(*duals.Stream)
	return s
}

// drawBlocks plans the epoch: each block once, in a seeded random order,
// blocks given no step left out; the steps of each, n in all, shared as the
// in-memory sampler would share its draws in expectation; and the
// non-uniform share of the block's own sampler, so that its draws follow
// the in-memory sampler's distribution restricted to the block. With the
// sampler's P(i) = (1−f)/n + f·W_i/W (W_i its draw weights, W their sum;
// f = 0 for the uniform and max kinds), block b gets
// s_b = n·P(b) = (1−f)·|b| + f·n·W_b/W steps (rounded by largest
// remainders) and the non-uniform share f_b = f·(W_b/W)/P(b). One block is
// planned without a random number and with the sampler's own f, so that
// its steps are the in-memory SDCA's.
func (m *SDCA) drawBlocks(s *duals.Stream) (order, steps []int, share []float64) {
	nb, n := s.Blocks(), m.p.N()
	if nb == 1 {
		return []int{0}, []int{n}, []float64{-1}
	}
	f := 0.0
	var w []float64 // W_b
	total := 0.0
	if bs, ok := m.sampler.(*blockSampler); ok && bs.draw != nil {
		f = bs.f
		w = make([]float64, nb)
		for b := range w {
			lo, hi := s.BlockRange(b)
			for i := lo; i < hi; i++ {
				w[b] += bs.draw.weight(i)
			}
		}
		total = sum(w)
		if !(total > 0) {
			f = 0
		}
	}
	rem := make([]float64, nb)
	alloc := make([]int, nb)
	fb := make([]float64, nb)
	left := n
	for b := range alloc {
		lo, hi := s.BlockRange(b)
		x := (1 - f) * float64(hi-lo)
		if f > 0 {
			nonUni := f * float64(n) * w[b] / total
			x += nonUni
			if x > 0 {
				fb[b] = nonUni / x
			}
		}
		alloc[b] = int(x)
		rem[b] = x - float64(alloc[b])
		left -= alloc[b]
	}
	// Largest remainders (ties: lower block) get the steps rounding left.
	byRem := make([]int, nb)
	for b := range byRem {
		byRem[b] = b
	}
	sort.SliceStable(byRem, func(i, j int) bool { return rem[byRem[i]] > rem[byRem[j]] })
	for k := 0; left > 0; k = (k + 1) % nb {
		alloc[byRem[k]]++
		left--
	}
	for _, b := range m.rng.Perm(nb) {
		if alloc[b] > 0 {
			order = append(order, b)
			steps = append(steps, alloc[b])
			share = append(share, fb[b])
		}
	}
	return order, steps, share
}

// epoch runs (or finishes) an epoch block by block; when ctx is cancelled
// it returns between two blocks.
func (sc *streamed) epoch(ctx context.Context) error {
	m := sc.m
	s := m.streamStore()
	if m.pos == 0 {
		if err := ctx.Err(); err != nil {
			return err
		}
		sc.order, sc.steps, sc.share = m.drawBlocks(s)
		sc.done = 0
	}
	between := func(int) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		if m.commit != nil && s.NeedCommit() {
			return m.commit()
		}
		return nil
	}
	err := s.Visit(sc.order[sc.done:], duals.VisitOptions{Write: true}, func(_, b int) error {
		lo, hi := s.BlockRange(b)
		count := sc.steps[sc.done]
		m.blockSteps(lo, hi, count, sc.share[sc.done])
		sc.done++
		m.pos += count
		return nil
	}, between)
	if err != nil {
		return err
	}
	sc.order, sc.steps, sc.share, sc.done = nil, nil, nil, 0
	m.endEpoch()
	return nil
}

// save records the epoch's plan and the blocks of it done (a snapshot is
// at a block boundary: no sentence is drawn ahead).
func (sc *streamed) save(st *checkpointState) error {
	if sc.m.pos > 0 {
		st.BlockOrder, st.BlockSteps, st.BlockShare, st.BlockPos = sc.order, sc.steps, sc.share, sc.done
	}
	return nil
}

// restore takes back the epoch's plan (restoreDuals checked it against
// the store); a snapshot of a parallel run is refused.
func (sc *streamed) restore(st checkpointState) error {
	if st.Workers > 1 {
		return errWorkers(st.Workers, 1)
	}
	if st.Stream != nil && st.Step > 0 {
		sc.order, sc.done = append([]int(nil), st.BlockOrder...), st.BlockPos
		sc.steps = append([]int(nil), st.BlockSteps...)
		sc.share = append([]float64(nil), st.BlockShare...)
	}
	return nil
}

// blockSteps makes count steps on sentences lo..hi−1 with the sampler
// restricted to them, as an in-memory epoch makes n on all; f ≥ 0 is the
// restricted sampler's non-uniform share (−1: the sampler's own).
func (m *SDCA) blockSteps(lo, hi, count int, f float64) {
	idx := make([]int, hi-lo)
	for j := range idx {
		idx[j] = lo + j
	}
	sub := m.sampler.(Splitter).Split(idx)
	if bs, ok := sub.(*blockSampler); ok && f >= 0 && bs.draw != nil {
		bs.f = f
	}
	m.st.run(&draws{sampler: sub, rng: m.rng, sents: idx}, count)
	for j, g := range sub.State().Gaps {
		m.sampler.Update(lo+j, g)
	}
}

// streamInit writes μ⁰ into every block, in file order.
func (m *SDCA) streamInit(s *duals.Stream, eps float64) error {
	return s.Visit(s.Sequential(), duals.VisitOptions{Write: true, Fresh: true}, func(_, b int) error {
		lo, hi := s.BlockRange(b)
		m.initDuals(lo, hi, eps, 0)
		return nil
	}, nil)
}

// checkStream refuses what the streamed path does not do.
func (m *SDCA) checkStream(n int) error {
	if m.streamStore() == nil {
		return nil
	}
	if P := m.numWorkers(n); P > 1 {
		return fmt.Errorf("%w: %d workers on streamed duals: the streamed store runs the sequential SDCA (Workers 1)", ErrBadProblem, P)
	}
	if _, ok := m.sampler.(Splitter); !ok {
		return fmt.Errorf("%w: streamed duals need a sampler that can be split (a Splitter, as NewSampler's are); %T is not", ErrBadProblem, m.sampler)
	}
	return nil
}

// restoreDuals puts checkpoint c's duals into the store: a copy from its
// duals.bin, or for a streamed snapshot the slot map adopted by the
// streamed store (every block's CRC is checked as it is read), after which
// the weights are checked against ŵ(μ) recomputed from the file.
func (m *SDCA) restoreDuals(c *Checkpoint) error {
	st := c.state
	ss := m.streamStore()
	switch {
	case st.Stream == nil && ss == nil:
		c.CopyDuals(m.duals)
		return nil
	case st.Stream == nil:
		return fmt.Errorf("resume %s: the snapshot holds its duals in duals.bin, this run streams them (%s)", c.Dir, ss.Path())
	case ss == nil:
		return fmt.Errorf("resume %s: the snapshot's duals are in the streamed file %s; resume with the streamed store", c.Dir, st.Stream.Path)
	}
	done := 0
	for k, b := range st.BlockOrder {
		if b < 0 || b >= ss.Blocks() || st.BlockSteps[k] < 1 || !(st.BlockShare[k] >= -1 && st.BlockShare[k] <= 1) {
			return fmt.Errorf("resume %s: state.json: block %d of %d with %d steps in the epoch's plan", c.Dir, b, ss.Blocks(), st.BlockSteps[k])
		}
		if k < st.BlockPos {
			done += st.BlockSteps[k]
		}
	}
	if done != st.Step {
		return fmt.Errorf("resume %s: state.json: step %d, but the blocks done hold %d", c.Dir, st.Step, done)
	}
	if err := ss.Adopt(*st.Stream); err != nil {
		return fmt.Errorf("resume %s: %w", c.Dir, err)
	}
	w, err := m.p.What(ss)
	if err != nil {
		return fmt.Errorf("resume %s: %w", c.Dir, err)
	}
	scale, diff := 1.0, 0.0
	for j, v := range w {
		scale = max(scale, math.Abs(v))
		diff = max(diff, math.Abs(v-c.Weights[j]))
	}
	if diff > 1e-7*scale {
		return fmt.Errorf("resume %s: weights differ from ŵ(μ) recomputed from %s by %.3g (scale %.3g)", c.Dir, ss.Path(), diff, scale)
	}
	return nil
}
