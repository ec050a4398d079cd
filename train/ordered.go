package train

// Parallel SDCA by parallel oracles and ordered commits (the pattern of
// liblinear-multicore: Chiang, Lee & Lin, KDD 2016).
//
// An epoch is a number of rounds. A round draws up to R = P·m sentences
// from the run's sampler (m = RoundSteps; fewer when the epoch ends, and
// the round ends early at a sentence drawn twice, which then opens the
// next round, so that no block is stepped twice from one snapshot). Then:
//
//   - in parallel, worker k takes the round's slots k, k+P, … and for each
//     makes the first half of a sequential step at the round's weights w:
//     the oracle, the block gap, the directions δ = ν − μ_i and v, with
//     ⟨w,v⟩ and ‖v‖², and the line search against w (stepper.oracle,
//     direct, search). Nothing is written but the slot's scratch space;
//   - serially, in draw order, each step's line search is redone against
//     the current weights — which the round's earlier commits moved — and
//     committed: ⟨w,v⟩ is recomputed as a sparse dot over v's rows and its
//     tail (φ's entropy terms do not depend on w), the search starts from
//     the snapshot's γ (warm: one or two evaluations), and μ_i, w and ‖w‖²
//     move (stepper.commit); the sampler is told the block gap. The first
//     slot's weights are still the snapshot: its search is taken as it is.
//
// Every γ is then the maximiser, to the sub-precision, of the dual along
// a feasible direction (μ_i + γδ is a mixture of μ_i and ν) at the current
// iterate, so the dual never decreases and the certificate is that of the
// sequential SDCA. A step's oracle is at most R−1 commits stale, out of
// n per epoch: the progress per epoch is about the sequential one. The
// result depends on the seed and R only — draws, commits and every sum
// are in a fixed order, whatever the goroutines' timing — and R = 1 is the
// sequential SDCA bit for bit.

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/dualcrf/dualcrf/crf"
)

// ordered is the scheduler of a parallel SDCA: parallel oracles, ordered
// commits.
type ordered struct {
	oneSampler
	// d is where the rounds draw from: the run's sampler, or a streamed
	// period's (run).
	d     *draws
	js    []int       // per slot: the sentence's index in d's sampler
	P     int         // workers
	slots []*stepWork // R = P·m
	bins  [][]float64 // per worker: the moments' table of its steps' bins (zero between steps)
	sents []int       // the sentences of the round in progress, in draw order
	g0    []float64   // per slot: γ of the search against the round's weights
	it0   []int       // per slot: that search's evaluations
	gap   []float64   // per slot: the block gap
	gam   []float64   // per slot: the step committed
	row   []float64   // a weight row laid out densely (dotRows, sparse layouts)
	// owed is the number of slots of the last round whose moves of the
	// duals are not made yet (settle).
	owed  int
	mark  []int // per sentence: the round that drew it last (rounds count from 1)
	slot  []int // per sentence: its slot in that round
	round int   // rounds made in the run (for mark)
	carry int   // a sentence drawn twice, that opens the next round; −1: none
	// carryJ is the carried sentence's index in d's sampler.
	carryJ int
	// The parallel phase's tasks (phase): claim holds the phase's
	// generation (high 32 bits) and its next unclaimed task; done counts
	// the tasks finished, and the one that finishes the last says so on
	// fin.
	gen   uint32
	claim atomic.Uint64
	done  atomic.Int32
	fin   chan struct{}
	// The wall time of the parallel phases and of the serial commits (and
	// draws), for the serial fraction (phaseTimes).
	parallel, serial time.Duration
}

// newOrdered makes the scheduler of m (set up but for its point) for P
// workers of m.roundSteps(P) slots each.
func newOrdered(m *SDCA, P int) *ordered {
	p := m.p
	R := P * m.roundSteps(P)
	o := &ordered{oneSampler: oneSampler{m}, d: &draws{sampler: m.sampler, rng: m.rng}, js: make([]int, 0, R), P: P, carry: -1, fin: make(chan struct{}, 1),
		sents: make([]int, 0, R), g0: make([]float64, R), it0: make([]int, R), gap: make([]float64, R), gam: make([]float64, R),
		mark: make([]int, p.N()), slot: make([]int, p.N())}
	for range R {
		o.slots = append(o.slots, newStepWork(p))
	}
	// A worker's steps share the moments' table of its bins (1 MiB): it
	// makes them one at a time.
	for range P {
		o.bins = append(o.bins, make([]float64, binCopies*binStride*(binKeys+1)))
	}
	return o
}

func (o *ordered) start() { o.carry = -1 }

// epoch runs the rounds of an epoch, or its remaining ones. When ctx is
// cancelled it returns at the end of a round, the sentence carried to the
// next one kept for the checkpoint.
func (o *ordered) epoch(ctx context.Context) error {
	m := o.m
	n := m.p.N()
	// ‖w‖², kept by the commits, is recomputed whenever the epoch returns,
	// as the parallel scheduler always has.
	// The duals are settled then too: certificates and snapshots read them.
	defer func() {
		o.settle()
		m.st.wsq = dot(m.st.w, m.st.w)
	}()
	for m.pos < n {
		if err := ctx.Err(); err != nil {
			return err
		}
		o.runRound(n - m.pos)
		m.pos += len(o.sents)
		m.live.Store(int64(m.pos))
	}
	m.endEpoch()
	return nil
}

// runRound makes a round of at most left steps.
func (o *ordered) runRound(left int) {
	t0 := time.Now()
	o.draw(min(len(o.slots), left))
	t1 := time.Now()
	o.phase()
	t2 := time.Now()
	o.commitAll()
	o.parallel += t2.Sub(t1)
	o.serial += t1.Sub(t0) + time.Since(t2)
}

// commitAll redoes the line search of the round's steps against the
// current weights and commits them, in draw order.
func (o *ordered) commitAll() {
	m := o.m
	st := m.st
	for r := range o.sents {
		ws := o.slots[r]
		if r+1 < len(o.sents) {
			// The next commit's rows are cold: the oracles read them on
			// other cores, before this round's commits.
			st.sink += prefetchWeights(st.w, m.p.Layout, o.slots[r+1].rows)
		}
		a, gamma, iters := ws.a, o.g0[r], o.it0[r]
		if r > 0 {
			// The round's earlier commits moved w: search again from γ.
			a = dotRows(st.w, ws.rows, ws.vr, ws.vt, m.p.Layout, &o.row)
			var it int
			_, gamma, it = st.search(ws, a, gamma)
			iters += it
		}
		o.gam[r] = st.commitPrimal(ws, gamma, a)
		st.steps++
		st.lsIters += int64(iters)
		o.d.sampler.Update(o.js[r], o.gap[r])
	}
	o.owed = len(o.sents)
}

// settle makes the moves of the duals the last round's commits owe, in
// parallel: the round's blocks are disjoint. (Between rounds, the next
// round's phase makes them.)
func (o *ordered) settle() {
	if o.owed > 0 {
		o.sents = o.sents[:0]
		o.phase()
	}
}

// phase runs the parallel phase of a round: task r moves the duals that
// slot r owes from the last round's commit (r < owed; draw made those of
// this round's sentences already) and then makes the first half of slot
// r's step (r < len(sents)). The tasks touch nothing but their slot's
// scratch and block, so whichever worker takes one, the result is the
// same: the workers take the next task free until none is left, which
// keeps them busy however long the sentences and however the system
// schedules the threads. It returns when every task is done; a worker
// that starts late finds none (the generation has moved on) and stops.
func (o *ordered) phase() {
	n := max(o.owed, len(o.sents))
	o.gen++
	gen := o.gen
	o.done.Store(0)
	o.claim.Store(uint64(gen) << 32)
	for k := 1; k < min(o.P, n); k++ {
		go o.work(k, gen, n)
	}
	o.work(0, gen, n)
	<-o.fin
	o.owed = 0
}

// work is worker k's part of phase gen of n tasks.
func (o *ordered) work(k int, gen uint32, n int) {
	for {
		c := o.claim.Load()
		if uint32(c>>32) != gen || int(uint32(c)) >= n {
			return
		}
		if !o.claim.CompareAndSwap(c, c+1) {
			continue
		}
		r := int(uint32(c))
		if r < o.owed && o.gam[r] > 0 {
			o.m.st.moveDual(o.slots[r], o.gam[r])
		}
		if r < len(o.sents) {
			o.prepare(k, r)
		}
		if o.done.Add(1) == int32(n) {
			o.fin <- struct{}{}
		}
	}
}

// draw draws the round's sentences, at most count: the sentence carried
// from the last round first, then from the sampler until count or a
// sentence drawn twice, which is carried to the next round.
func (o *ordered) draw(count int) {
	o.round++
	o.sents, o.js = o.sents[:0], o.js[:0]
	if o.carry >= 0 {
		o.take(o.carry, o.carryJ)
		o.carry = -1
	}
	for len(o.sents) < count {
		j := o.d.sampler.Next(o.d.rng)
		i := o.d.sentence(j)
		if o.mark[i] == o.round {
			o.carry, o.carryJ = i, j
			return
		}
		o.take(i, j)
	}
}

// run makes count steps drawn from d (a streamed period's sampler), in
// rounds, and settles them: no sentence is carried past them.
func (o *ordered) run(d *draws, count int) {
	o.d = d
	for done := 0; done < count; done += len(o.sents) {
		o.runRound(count - done)
	}
	o.settle()
	o.m.st.wsq = dot(o.m.st.w, o.m.st.w)
}

// take adds sentence i to the round in progress. If the last round
// stepped it, the move of its duals that round owes is made first: its
// oracle in this round reads them.
func (o *ordered) take(i, j int) {
	if r := o.slot[i]; o.owed > 0 && o.mark[i] == o.round-1 && o.gam[r] > 0 {
		o.m.st.moveDual(o.slots[r], o.gam[r])
		o.gam[r] = 0
	}
	o.mark[i], o.slot[i] = o.round, len(o.sents)
	o.sents = append(o.sents, i)
	o.js = append(o.js, j)
}

// prepare makes, on worker k, the first half of the step of slot r at the
// round's weights: oracle, gap, directions and the line search against
// them.
func (o *ordered) prepare(k, r int) {
	st, ws := o.m.st, o.slots[r]
	ws.edges.slots = o.bins[k]
	s := st.oracle(ws, o.sents[r])
	o.gap[r] = s.Gap
	st.direct(ws)
	_, o.g0[r], o.it0[r] = st.search(ws, ws.a, -1)
}

// save records the workers and the sentence carried to the next round (a
// snapshot is at the end of a round).
func (o *ordered) save(st *checkpointState) error {
	st.Workers = o.P
	if o.m.pos > 0 {
		st.Next = o.carry
	}
	return nil
}

// restore checks that the snapshot was made with as many workers and takes
// back the sentence carried to the next round.
func (o *ordered) restore(st checkpointState) error {
	if st.Workers != o.P {
		return errWorkers(st.Workers, o.P)
	}
	o.carry, o.carryJ = st.Next, st.Next
	return nil
}

// phaseTimes returns the wall time spent so far in the parallel phases
// and in the serial ones (draws and commits).
func (o *ordered) phaseTimes() (parallel, serial time.Duration) { return o.parallel, o.serial }

// dotRows returns ⟨w, v⟩ for the direction v of packed rows vr (row r on
// attribute rows[r]) and dense tail vt. In a sparse layout each weight row
// is laid out densely in the scratch *row first, so that the sum is the
// dense layout's, bit for bit.
func dotRows(w []float64, rows []int32, vr, vt []float64, lay crf.Layout, row *[]float64) float64 {
	K := lay.NumLabels
	s := 0.0
	for r, a := range rows {
		lo, hi := lay.Span(a)
		u := w[lo:hi]
		if lay.Free != nil {
			*row = grow(*row, K)
			clear(*row)
			for k, y := range lay.RowLabels(a) {
				(*row)[y] = u[k]
			}
			u = *row
		}
		s += dotKernel(u, vr[r*K:(r+1)*K])
	}
	return s + dot(w[lay.Trans():], vt)
}
