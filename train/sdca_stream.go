package train

// SDCA on a streamed dual store (duals.Stream): an epoch reads and writes
// every block once, in a seeded random order, and on each makes the steps
// the in-memory gap sampler would make there in expectation (drawBlocks).
// The epoch's plan is made at its start, so the reader can fetch ahead and
// a checkpoint records it. With one block the plan is [0] with n steps (no
// random number is used) and the steps are exactly those of the in-memory
// SDCA.
//
// With more than one block, a working set crosses the blocks (selective
// block minimization, Chang & Roth, KDD 2011; dual cached loops,
// Matsushima, Vishwanathan & Smola, KDD 2012): besides the resident
// block, the store holds up to its room for them (by default
// duals.StreamHeldSlots slots) of the sentences of
// highest gap estimate (duals.Stream.Hold), and a block's period draws its
// steps, with the sampler restricted to them (Splitter.Split), from the
// block and the held sentences of other blocks. At the end of the period
// the block's held sentences go back into it, and the block and the held
// sentences are ranked by gap estimate: the held ones of other blocks that
// fall out of the first slot's worth are no longer drawn, but stay held
// until their own block's period (so every block is read and written once
// an epoch, and nothing is written twice); the block's own sentences in
// it are held, as room allows. Gap sampling puts many steps on few
// sentences: without the working set they are crammed into their block's
// period, with it they are spread over the epoch, as in memory.
//
// The sampler's estimates stay honest: a sentence's estimate is the gap
// its last step saw, and a certificate (a full pass) hands every exact
// gap to the sampler (refresh), which the estimates of sentences stepped
// many times in one period, and not since, would otherwise miss. With a
// working set, a block's estimates are also made exact when it is read,
// before its period draws (refreshGaps: one oracle call per sentence an
// epoch, counted in Counters.OracleCalls).
//
// Workers step inside a period as in memory (ordered.go): their rounds
// draw from the period's sampler, and the pipeline is empty at the
// period's end.

import (
	"cmp"
	"context"
	"fmt"
	"hash/crc32"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/dualcrf/dualcrf/crf"
	"github.com/dualcrf/dualcrf/duals"
	"github.com/dualcrf/dualcrf/internal/num"
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
	// par steps with workers (nil: sequentially).
	par *ordered
	// The working set: room is the bytes of encoded duals it may hold (0:
	// none, one block); held lists its sentences in the store's order, and
	// out marks those ranked out of it, held until their block's period.
	room int64
	held []int
	out  []bool
	// refreshed counts the oracle calls of refreshGaps.
	refreshed int64
}

func (sc *streamed) start() {
	if sc.par != nil {
		sc.par.start()
	}
}

// newStreamed makes the scheduler of m on s for P workers in rounds of R
// steps (R = 0: sequential steps), with a working
// set of the room s has for held sentences (duals.StreamOptions.HeldSlots)
// when the sampler draws by gap.
func newStreamed(m *SDCA, s *duals.Stream, P, R int) *streamed {
	sc := &streamed{oneSampler: oneSampler{m}}
	if R > 0 {
		sc.par = newOrdered(m, P, R)
	}
	// The working set is ranked by gap: samplers that do not draw by gap
	// (uniform, importance, max) step on each block alone, as they did.
	bs, byGap := m.sampler.(*blockSampler)
	byGap = byGap && (bs.kind == SamplerGap || bs.kind == SamplerGapImportance)
	if s.Blocks() > 1 && byGap {
		sc.room = s.HeldRoom()
		sc.out = make([]bool, m.p.N())
	}
	return sc
}

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
//
// The working set's sentences (ws, those drawn in every period) are
// drawn in every period: their weight is shared equally by the blocks,
// W_b = Σ_{i∈b∖ws} W_i + Σ_{i∈ws} W_i / nb.
func (m *SDCA) drawBlocks(s *duals.Stream, ws []int) (order, steps []int, share []float64) {
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
		in := make(map[int]bool, len(ws))
		spread := 0.0
		for _, i := range ws {
			in[i] = true
			spread += bs.draw.weight(i)
		}
		for b := range w {
			lo, hi := s.BlockRange(b)
			for i := lo; i < hi; i++ {
				if !in[i] {
					w[b] += bs.draw.weight(i)
				}
			}
			w[b] += spread / float64(nb)
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
		sc.order, sc.steps, sc.share = m.drawBlocks(s, sc.workingSet())
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
		sc.period(s, lo, hi, count, sc.share[sc.done])
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
	if sc.par != nil {
		st.Schedule = ScheduleRounds
	}
	st.Refreshed = sc.refreshed
	st.Held = append([]int(nil), sc.held...)
	if len(st.Held) > 0 {
		st.HeldCRC = crc32.Checksum(sc.m.heldBytes(), castagnoli)
	}
	st.HeldOut = nil
	for k, i := range sc.held {
		if sc.out[i] {
			st.HeldOut = append(st.HeldOut, k)
		}
	}
	return nil
}

// restore takes back the epoch's plan (restoreDuals checked it against
// the store); a snapshot of another schedule is refused.
func (sc *streamed) restore(st checkpointState) error {
	want := ""
	if sc.par != nil {
		want = ScheduleRounds
	}
	if st.Schedule != want || st.Workers > 1 {
		return errSchedule(st, cmp.Or(want, ScheduleSequential))
	}
	sc.refreshed = st.Refreshed
	if st.Stream != nil && st.Step > 0 {
		sc.order, sc.done = append([]int(nil), st.BlockOrder...), st.BlockPos
		sc.steps = append([]int(nil), st.BlockSteps...)
		sc.share = append([]float64(nil), st.BlockShare...)
	}
	return nil
}

// period makes count steps in block lo..hi−1's period, after the block's
// gap estimates are made exact (refreshGaps) when there is a working set: on its sentences
// and the working set's others, with the sampler restricted to them, as an
// in-memory epoch makes n on all; f ≥ 0 is the restricted sampler's
// non-uniform share (−1: the sampler's own). Then the working set is
// ranked again.
func (sc *streamed) period(s *duals.Stream, lo, hi, count int, f float64) {
	m := sc.m
	idx := make([]int, hi-lo, hi-lo+len(sc.held))
	for j := range idx {
		idx[j] = lo + j
	}
	for _, i := range sc.held {
		if (i < lo || i >= hi) && !sc.out[i] {
			idx = append(idx, i)
		}
	}
	if sc.room > 0 {
		sc.refreshGaps(s, idx[:hi-lo])
	}
	sub := m.sampler.(Splitter).Split(idx)
	if bs, ok := sub.(*blockSampler); ok && f >= 0 && bs.draw != nil {
		bs.f = f
	}
	d := &draws{sampler: sub, rng: m.rng, sents: idx}
	if sc.par != nil {
		sc.par.run(d, count)
	} else {
		m.st.run(d, count)
	}
	gaps := sub.State().Gaps
	for j, g := range gaps {
		m.sampler.Update(idx[j], g)
	}
	if sc.room > 0 {
		sc.rerank(s, lo, hi, idx, gaps)
	}
}

// refreshGaps hands the sampler the exact gaps of the sentences idx (a
// block just read) at the current weights, one oracle call each on all
// cores: their estimates date from their block's last period, an epoch
// ago, and the weights have moved since. Measured on CoNLL-2000 in 400 MiB
// (27 blocks): 1e-3 in 23 epochs, where the estimates of an epoch ago
// took 27; refreshing the working set's others too in every period (3n
// oracle calls an epoch) gave 23 as well.
func (sc *streamed) refreshGaps(s *duals.Stream, idx []int) {
	m := sc.m
	gaps := make([]float64, len(idx))
	K := m.p.Layout.NumLabels
	w := m.st.w
	if m.st.u != nil {
		m.st.wbuf = m.st.primalInto(m.st.wbuf) // the elastic net's, kept for the next block's
		w = m.st.wbuf
	}
	_ = num.Parallel(context.Background(), len(idx), 0, func() func(int) {
		pw := &passWorker{lat: crf.NewLattice(K)}
		var mu []float64
		return func(j int) {
			i := idx[j]
			sent := m.p.Data.Sentence(i)
			mu = grow(mu, crf.BlockLen(sent.Len(), K))
			s.Load(i, mu)
			_, _, gaps[j] = pw.sentence(m.p, w, sent, mu)
		}
	})
	m.p.meterAdd(len(idx))
	sc.refreshed += int64(len(idx))
	for j, i := range idx {
		m.sampler.Update(i, gaps[j])
	}
}

// workingSet returns the sentences drawn in every period: those held and
// not ranked out.
func (sc *streamed) workingSet() []int {
	var ws []int
	for _, i := range sc.held {
		if !sc.out[i] {
			ws = append(ws, i)
		}
	}
	return ws
}

// size returns the bytes of sentence i's encoded duals.
func (sc *streamed) size(i int) int64 {
	d := sc.m.p.Data
	return sc.m.duals.Precision().BlockBytes(d.SentStart[i+1]-d.SentStart[i], d.NumLabels)
}

// rerank ends block lo..hi−1's period in the working set: the block's held
// sentences go back into it (it is resident), and of the block's sentences
// and the working set's others (idx, with their gap estimates gaps), the
// first room's worth by estimate are the new working set: others that
// fall out of it stay held until their block's period, and the block's
// sentences in it are held as the room left allows.
func (sc *streamed) rerank(s *duals.Stream, lo, hi int, idx []int, gaps []float64) {
	size := sc.size
	kept := make([]int, 0, len(sc.held))
	used := int64(0)
	for _, i := range sc.held {
		if i >= lo && i < hi {
			s.Release(i)
			sc.out[i] = false
			continue
		}
		kept = append(kept, i)
		used += size(i)
	}
	rank := make([]int, len(idx))
	for j := range rank {
		rank[j] = j
	}
	sort.SliceStable(rank, func(a, b int) bool { return gaps[rank[a]] > gaps[rank[b]] })
	in := int64(0)
	var admit []int
	for _, j := range rank {
		i := idx[j]
		n := size(i)
		if in+n > sc.room {
			if i < lo || i >= hi {
				sc.out[i] = true
			}
			continue
		}
		in += n
		if i >= lo && i < hi && used+n <= sc.room {
			admit = append(admit, i)
			used += n
		}
	}
	s.Compact(kept)
	for _, i := range admit {
		if !s.Hold(i) {
			panic(fmt.Sprintf("train: the working set has no room for sentence %d", i))
		}
	}
	sc.held = append(kept, admit...)
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
	if err := m.restoreHeld(c); err != nil {
		return err
	}
	w, err := m.p.What(ss)
	if err != nil && len(c.Refused) > 0 {
		// An older snapshot stands in for damaged newer ones only while
		// the streamed file still holds its blocks: the slots it alone
		// referenced are free for writes once a newer one commits.
		return fmt.Errorf("resume: %s, the snapshot to continue from, is damaged, and %s cannot stand in for it: "+
			"the streamed duals %s have been written since it was made (%w); start afresh (the damaged snapshot: %s)",
			strings.Join(refusedNames(c.Refused), ", "), filepath.Base(c.Dir), ss.Path(), err, strings.Join(c.Refused, "; "))
	}
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

// heldBytes returns the duals of the streamed run's working set, in its
// order: a snapshot's held.bin.
func (m *SDCA) heldBytes() []byte {
	sc, ok := m.sched.(*streamed)
	if !ok || len(sc.held) == 0 {
		return nil
	}
	s := m.streamStore()
	var b []byte
	for _, i := range sc.held {
		b = append(b, s.Raw(i)...)
	}
	return b
}

// restoreHeld takes back a streamed snapshot's working set: its
// sentences, and their duals from held.bin (checked against the state's
// CRC).
func (m *SDCA) restoreHeld(c *Checkpoint) error {
	st := c.state
	sc := m.sched.(*streamed)
	ss := m.streamStore()
	path := filepath.Join(c.Dir, "held.bin")
	bad := func(msg string) error { return fmt.Errorf("resume %s: %s", path, msg) }
	if len(st.Held) == 0 {
		if len(st.HeldOut) > 0 {
			return bad("state.json: sentences ranked out of an empty working set")
		}
		return nil
	}
	if sc.room == 0 {
		return bad(fmt.Sprintf("state.json: a working set of %d sentences for a store of one block", len(st.Held)))
	}
	n := m.p.N()
	need := int64(0)
	seen := make(map[int]bool, len(st.Held))
	for _, i := range st.Held {
		if i < 0 || i >= n || seen[i] {
			return bad(fmt.Sprintf("state.json: held sentence %d out of range or repeated", i))
		}
		seen[i] = true
		need += sc.size(i)
	}
	if need > sc.room {
		return bad(fmt.Sprintf("state.json: the working set holds %d bytes of duals, more than its room of %d", need, sc.room))
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("resume %s: %w", c.Dir, err)
	}
	if int64(len(raw)) != need {
		return bad(fmt.Sprintf("%d bytes, want %d (the %s duals of %d held sentences)", len(raw), need, ss.Precision(), len(st.Held)))
	}
	if crc32.Checksum(raw, castagnoli) != st.HeldCRC {
		return bad("checksum mismatch (corrupt)")
	}
	mu := raw
	for _, i := range st.Held {
		k := sc.size(i)
		if !ss.HoldData(i, mu[:k]) {
			return bad(fmt.Sprintf("cannot hold sentence %d", i))
		}
		mu = mu[k:]
	}
	sc.held = append([]int(nil), st.Held...)
	for _, k := range st.HeldOut {
		if k < 0 || k >= len(st.Held) {
			return bad(fmt.Sprintf("state.json: ranked-out position %d of %d held sentences", k, len(st.Held)))
		}
		sc.out[st.Held[k]] = true
	}
	return nil
}

// refusedNames returns the snapshot names of Checkpoint.Refused's entries.
func refusedNames(refused []string) []string {
	names := make([]string, len(refused))
	for i, r := range refused {
		names[i], _, _ = strings.Cut(r, ":")
	}
	return names
}
