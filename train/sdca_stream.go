package train

// SDCA on a streamed dual store (stream.go): an epoch visits blocks — a
// seeded permutation for the uniform sampler, otherwise blocks drawn with
// probability (1−f)/nb + f·G_b/Σ G, G_b the sum of the block's gap
// estimates (f the sampler's non-uniform share) — and on each block makes
// as many steps as it has sentences, drawing them with the sampler
// restricted to the block (Splitter.Split over the block's sentences, its
// estimates handed back afterwards). The epoch's block order is drawn at
// its start, so the reader can fetch ahead and a checkpoint records it.
// With one block the order is [0] (no random number is used) and the steps
// are exactly those of the in-memory SDCA.

import (
	"context"
	"fmt"
	"math"
	"strconv"
)

// streamStore returns the store as a *StreamStore, or nil.
func (m *SDCA) streamStore() *StreamStore {
	s, _ := m.duals.(*StreamStore)
	return s
}

// drawBlocks draws the epoch's block order: blocks until they hold n
// sentences (the steps of the last one are cut to make n in all).
func (m *SDCA) drawBlocks(s *StreamStore) []int {
	nb := s.Blocks()
	if nb == 1 {
		return []int{0}
	}
	f := 0.0
	if bs, ok := m.sampler.(*blockSampler); ok && bs.draw != nil {
		f = bs.f
	}
	if f == 0 {
		return m.rng.Perm(nb)
	}
	sums := s.blockSums(m.sampler.State().Gaps)
	total := sum(sums)
	var order []int
	for steps := 0; steps < m.p.N(); {
		u := m.rng.Float64()
		b := nb - 1
		acc := 0.0
		for j, g := range sums {
			p := (1-f)/float64(nb) + f*g/total
			if !(total > 0) {
				p = 1 / float64(nb)
			}
			acc += p
			if u < acc {
				b = j
				break
			}
		}
		order = append(order, b)
		lo, hi := s.BlockRange(b)
		steps += hi - lo
	}
	return order
}

// streamEpoch runs (or finishes) an epoch block by block.
func (m *SDCA) streamEpoch(ctx context.Context, s *StreamStore) error {
	if m.pos == 0 {
		if err := ctx.Err(); err != nil {
			return err
		}
		m.order, m.bpos = m.drawBlocks(s), 0
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
	n := m.p.N()
	err := s.Visit(m.order[m.bpos:], VisitOptions{Write: true}, func(_, b int) error {
		lo, hi := s.BlockRange(b)
		count := min(hi-lo, n-m.pos) // an epoch is n steps: the last block drawn may be cut short
		m.blockSteps(lo, hi, count)
		m.bpos++
		m.pos += count
		return nil
	}, between)
	if err != nil {
		return err
	}
	m.pos, m.next, m.bpos, m.order = 0, -1, 0, nil
	m.epoch++
	return nil
}

// blockSteps makes count steps on sentences lo..hi−1 with the sampler
// restricted to them, as Epoch makes n on all.
func (m *SDCA) blockSteps(lo, hi, count int) {
	global := m.sampler
	idx := make([]int, hi-lo)
	for j := range idx {
		idx[j] = lo + j
	}
	sub := global.(Splitter).Split(idx)
	m.sampler, m.sents = sub, idx
	i := sub.Next(m.rng)
	for k := 0; k < count; k++ {
		if k == count-1 {
			st, _ := m.step(i, false)
			sub.Update(i, st.Gap)
			break
		}
		_, i = m.step(i, true)
	}
	m.sampler, m.sents = global, nil
	for j, g := range sub.State().Gaps {
		global.Update(lo+j, g)
	}
}

// streamInit writes μ⁰ into every block, in file order.
func (m *SDCA) streamInit(s *StreamStore, eps float64) error {
	d := m.p.Data
	K := m.p.Layout.NumLabels
	return s.Visit(s.Sequential(), VisitOptions{Write: true, Fresh: true}, func(_, b int) error {
		lo, hi := s.BlockRange(b)
		for i := lo; i < hi; i++ {
			initBlock(s.Block(i), d.Sentence(i).Labels, K, eps)
		}
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

// streamSettings adds the block count of a streamed store to the run
// settings: a resume must stream the same blocks.
func streamSettings(rs map[string]string, d DualStore) {
	if s, ok := d.(*StreamStore); ok {
		rs["duals-blocks"] = strconv.Itoa(s.Blocks())
	}
}

// SetCommit installs the function the streamed SDCA calls at a block
// boundary when its store must commit (StreamStore.NeedCommit): it writes
// a checkpoint of the run at that point (Train installs it when the run
// checkpoints).
func (m *SDCA) SetCommit(commit func() error) { m.commit = commit }

// restoreDuals puts checkpoint c's duals into the store: a copy from its
// duals.bin, or for a streamed snapshot the slot map adopted by the
// streamed store (every block's CRC is checked as it is read), after which
// the weights are checked against ŵ(μ) recomputed from the file.
func (m *SDCA) restoreDuals(c *Checkpoint) error {
	st := c.State
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
	for _, b := range st.BlockOrder {
		if b < 0 || b >= ss.Blocks() {
			return fmt.Errorf("resume %s: state.json: block %d of %d in the epoch's order", c.Dir, b, ss.Blocks())
		}
	}
	if err := ss.Adopt(*st.Stream); err != nil {
		return fmt.Errorf("resume %s: %w", c.Dir, err)
	}
	w, err := m.p.what(ss)
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
