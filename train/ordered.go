package train

// Parallel SDCA by pipelined ordered commits: parallel oracles, commits in
// draw order (the pattern of liblinear-multicore: Chiang, Lee & Lin, KDD
// 2016), with the commits of one round overlapping the oracles of the next.
//
// A run's steps are drawn in rounds of at most R sentences (R = RoundSize;
// fewer when the epoch or a streamed period ends, and a round ends early
// at a sentence drawn twice, which then opens the next round, so that no
// block is stepped twice from one snapshot). Write S_q for the weights
// once rounds 1..q are committed. For round q:
//
//   - the oracles (prepare): for each of its sentences, the first half of a
//     sequential step at S_{q−2} — the oracle, the block gap, the
//     directions δ = ν − μ_i and v with ‖v‖² and the entropy's terms
//     (stepper.oracle, direct). They run on the workers while round q−1 is
//     committed, and write nothing but their slot's scratch space;
//   - the commits (commitRound), one goroutine at a time, in draw order:
//     each step's line search against the current weights (⟨w,v⟩ as a
//     sparse dot over v's rows and tail; φ's entropy terms do not depend
//     on w; a first search against S_{q−2}, to start this one from, measured
//     no gain), and w and ‖w‖² move; the sampler is told the block gap;
//   - the moves of the duals μ_i ← μ_i + γδ, once the round is committed,
//     on the workers (the round's blocks are disjoint), each by the worker
//     that made its oracle (whose core holds the block) unless another has
//     nothing else to do;
//   - round q+2 is drawn once round q is committed, so its oracles see S_q.
//
// A sentence stepped in one of the three rounds before q is prepared in
// round q only once that step's move of its duals is made, so every oracle
// reads the current μ_i (the moves of earlier rounds are made before round
// q is drawn). Every γ is then the maximiser, to the sub-precision, of the dual
// along a feasible direction (μ_i + γδ is a mixture of μ_i and ν) at the
// current iterate: the dual never decreases and the certificate is that of
// the sequential SDCA. An oracle misses at most 2R−1 commits, out of n per
// epoch.
//
// The oracles of round q read S_{q−2} while round q−1's commits move the
// weights: the weights are held twice, wb[q mod 2] holding S_{q−2} while
// round q is prepared. Round q commits into wb[q mod 2] after replaying
// round q−1's steps into it (the same additions in the same order as their
// commits made in the other copy, so both copies agree bit for bit), so
// round q+1's oracles read S_{q−1} from the other copy all along: no worker
// waits for a round's end, and a round's commits need only their own
// oracles. The run's weights (SDCA.st.w) are wb[0]; both copies are equal
// whenever the pipeline is empty. Besides the sequential SDCA's, the rounds
// hold that second copy (d numbers), four rounds of slots (each a step's
// scratch space: the oracle's block ν, its entries' keys and logarithms),
// per goroutine the bins' table (1 MiB), and a round and a slot per
// sentence.
//
// The goroutines take the most urgent task ready, under one lock: the
// next round's commits (the critical path), a move of the duals, an oracle
// of the earliest round.
//
// The pipeline is emptied every segmentRounds rounds, at the end of an
// epoch or of a streamed period: the two rounds after that point are both
// prepared at its weights. Cancellation, snapshots, certificates and
// periods happen only there, so a snapshot holds nothing but what a
// sequential one does (the sentence carried to the next round besides).
//
// Draws, commits and every sum are made in a fixed order, whatever the
// goroutines' timing, and a task's result depends only on its inputs, not
// on the goroutine that runs it: the trajectory depends on the seed and R
// only — not on the number of workers, which may differ on a resume.

import (
	"context"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/dualcrf/dualcrf/crf"
	"github.com/dualcrf/dualcrf/duals"
)

// nsets is the number of rounds a scheduler holds: while round q is
// committed, round q+1 is prepared, round q−1's steps are replayed, and
// round q−2's moves of the duals may still be in progress — so that no
// commit waits for the last round's moves.
const nsets = 4

// segmentRounds is the number of rounds between two points where the
// pipeline is empty (or an epoch's or period's end): a cancelled run stops
// at the next one.
const segmentRounds = 256

// ordered is the scheduler of a parallel SDCA by pipelined ordered commits.
type ordered struct {
	oneSampler
	// d is where the rounds draw from: the run's sampler, or a streamed
	// period's (run).
	d *draws
	R int // the round size
	P int // goroutines
	// wb are the two copies of the weights (wb[0] is the run's), and
	// views steppers that read them, for the oracles.
	wb    [2][]float64
	views [2]stepper
	// twin is set while wb[1] equals wb[0] between segments.
	twin bool
	sets [nsets]roundSet // round q in sets[q mod nsets]
	// bins is per goroutine the moments' table of its oracles' bins (1 MiB,
	// zero between steps): one table kept hot in its core's cache, where a
	// table per slot measured 1.6× the CPU of edgeTerms.prepare.
	bins  [][]float64
	mark  []int // per sentence: the round that drew it last (rounds count from 1)
	slot  []int // per sentence: its slot in that round
	round int   // rounds drawn in the run (for mark)
	carry int   // a sentence drawn twice, that opens the next round; −1: none
	// carryJ is the carried sentence's index in d's sampler.
	carryJ int

	// The segment in progress, under mu. first is its first round, last
	// its last drawn (first−1 before any), committed the last committed;
	// left the steps it may still draw and rounds the rounds.
	mu        sync.Mutex
	cond      *sync.Cond
	wg        sync.WaitGroup // the goroutines but the first
	first     int
	last      int
	committed int
	left      int
	rounds    int
	serial    bool // a goroutine is committing
	idle      int  // goroutines waiting for a task
	steps     int  // steps committed in the segment
	base      int  // SDCA.pos at the segment's start
	err       error

	// segRounds is the rounds of a segment: segmentRounds (tests make it
	// shorter).
	segRounds int
	// afterRound, when not nil, runs on the committing goroutine after each
	// round's commits, before its moves of the duals (tests).
	afterRound func(q int)

	// row is the committing goroutine's scratch of a weight row laid
	// out densely (dotRows, sparse layouts), sink what its
	// prefetchWeights read.
	row  []float64
	sink float64

	// busy is the work of the goroutines, by kind, waited their time
	// waiting for a task, and wall the segments' wall time (pipeStats).
	busy   [3]time.Duration
	waited time.Duration
	wall   time.Duration
}

// roundSet is a round in the pipeline: its slots (sentences in draw
// order) and where its tasks are. Fields after slots are under ordered.mu.
type roundSet struct {
	q     int // the round (0: none)
	slots []*slotState
	n     int // slots drawn
	// prepNext is the first slot not yet taken for its oracle, prepLeft
	// the oracles not done, moveLeft the moves not done; done: committed.
	prepNext, prepLeft int
	moveLeft           int
	done               bool
}

// slotState is a step of a round: its sentence and scratch space, what its
// oracle found, and the step it committed.
type slotState struct {
	ws   *stepWork
	i, j int // the sentence, and its index in the sampler
	// dep is the earlier step on the same sentence (round depQ, slot
	// depS; depQ 0: none) whose move of the duals the oracle waits for.
	depQ, depS int
	taken      bool // the oracle is taken (under mu)
	owner      int  // the goroutine that made the oracle (under mu)
	moving     bool // the move of the duals is taken (under mu)
	gap        float64
	gam        float64 // the step committed: γ of v (the replay adds γv)
	owe        float64 // the move of the duals it owes (0: made at the commit)
	moved      bool    // the move of the duals is made (under mu)
	sink       float64 // what prefetchWeights read (the oracle's goroutine)
}

// Task kinds, for busy.
const (
	taskPrepare = iota
	taskCommit
	taskMove
)

// newOrdered makes the scheduler of m (set up but for its point) for P
// goroutines and rounds of R steps.
func newOrdered(m *SDCA, P, R int) *ordered {
	p := m.p
	o := &ordered{oneSampler: oneSampler{m}, d: &draws{sampler: m.sampler, rng: m.rng}, R: R, P: P, carry: -1, segRounds: segmentRounds,
		mark: make([]int, p.N()), slot: make([]int, p.N())}
	o.cond = sync.NewCond(&o.mu)
	for k := range o.sets {
		for range R {
			o.sets[k].slots = append(o.sets[k].slots, &slotState{ws: newStepWork(p)})
		}
	}
	for range P {
		o.bins = append(o.bins, make([]float64, binCopies*binStride*(binKeys+1)))
	}
	return o
}

// start takes the run's weights: the twin copy is made at the next
// segment.
func (o *ordered) start() {
	o.carry = -1
	o.twin = false
}

// epoch runs the segments of an epoch, or its remaining ones. When ctx is
// cancelled it returns between two segments, the sentence carried to the
// next round kept for the checkpoint.
func (o *ordered) epoch(ctx context.Context) error {
	m := o.m
	n := m.p.N()
	o.d = &draws{sampler: m.sampler, rng: m.rng}
	// ‖w‖², kept by the commits, is recomputed whenever the epoch returns,
	// as the parallel scheduler always has.
	defer func() { m.st.wsq = dot(m.st.w, m.st.w) }()
	for m.pos < n {
		if err := ctx.Err(); err != nil {
			return err
		}
		m.pos += o.segment(n - m.pos)
		m.live.Store(int64(m.pos))
	}
	m.endEpoch()
	return nil
}

// run makes count steps drawn from d (a streamed period's sampler) and
// empties the pipeline: no sentence is carried past them.
func (o *ordered) run(d *draws, count int) {
	o.d = d
	for done := 0; done < count; {
		done += o.segment(count - done)
	}
	o.m.st.wsq = dot(o.m.st.w, o.m.st.w)
}

// segment runs up to segmentRounds rounds of at most left steps in all,
// and returns the steps made; the pipeline is empty at its start and at
// its end.
func (o *ordered) segment(left int) int {
	m := o.m
	t0 := time.Now()
	if !o.twin || len(o.wb[0]) == 0 || &o.wb[0][0] != &m.st.w[0] {
		o.wb[0] = m.st.w
		if len(o.wb[1]) != len(m.st.w) {
			o.wb[1] = make([]float64, len(m.st.w))
		}
		copy(o.wb[1], m.st.w)
		o.twin = true
		for b := range o.views {
			o.views[b] = *m.st
			o.views[b].w = o.wb[b]
			o.views[b].ws = nil
		}
	}
	o.first, o.last, o.committed = o.round+1, o.round, o.round
	o.left, o.rounds, o.steps, o.base, o.err = left, o.segRounds, 0, m.pos, nil
	for range 2 {
		o.drawNext()
	}
	for k := 1; k < o.P; k++ {
		o.wg.Add(1)
		go o.helper(k)
	}
	o.work(0)
	o.wg.Wait()
	if o.err != nil {
		panic(o.err)
	}
	// The other copy misses the last round: replayed, both are equal.
	o.replay(o.last + 1)
	o.wall += time.Since(t0)
	return o.steps
}

// helper is goroutine k > 0 of a segment.
func (o *ordered) helper(k int) {
	defer o.wg.Done()
	o.work(k)
}

// drawNext draws the next round of the segment, if it has one: at most R
// sentences, the one carried from the last round first, then from the
// sampler until R, the steps left, or a sentence drawn twice, which is
// carried to the next round.
func (o *ordered) drawNext() {
	if o.left == 0 || o.rounds == 0 {
		return
	}
	o.round++
	q := o.round
	rs := &o.sets[q%nsets]
	rs.q, rs.n, rs.done = q, 0, false
	count := min(o.R, o.left)
	if o.carry >= 0 {
		o.take(rs, o.carry, o.carryJ)
		o.carry = -1
	}
	for rs.n < count {
		j := o.d.sampler.Next(o.d.rng)
		i := o.d.sentence(j)
		if o.mark[i] == q {
			o.carry, o.carryJ = i, j
			break
		}
		o.take(rs, i, j)
	}
	rs.prepNext, rs.prepLeft, rs.moveLeft = 0, rs.n, rs.n
	o.left -= rs.n
	o.rounds--
	o.last = q
}

// take adds sentence i (index j in the sampler) to round rs. If one of the
// segment's last three rounds stepped it, its oracle waits for that step's
// move of the duals.
func (o *ordered) take(rs *roundSet, i, j int) {
	s := rs.slots[rs.n]
	s.i, s.j, s.taken, s.moving, s.moved, s.gam, s.owe = i, j, false, false, false, 0, 0
	s.depQ = 0
	if q := o.mark[i]; q >= o.first && q >= rs.q-(nsets-1) {
		s.depQ, s.depS = q, o.slot[i]
	}
	o.mark[i], o.slot[i] = rs.q, rs.n
	rs.n++
}

// work is goroutine k's loop: it takes the most urgent task ready — the
// next round's commits, a move of the duals, an oracle (earliest round
// first) — until the segment is done.
func (o *ordered) work(k int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for {
		if o.err != nil {
			return
		}
		if o.committed == o.last && o.movesDone() {
			o.cond.Broadcast()
			return
		}
		if q := o.committed + 1; !o.serial && q <= o.last && o.commitReady(q) {
			o.serial = true
			o.mu.Unlock()
			t := time.Now()
			o.commitRound(q)
			o.busy[taskCommit] += time.Since(t)
			o.mu.Lock()
			o.serial = false
			o.committed = q
			rs := &o.sets[q%nsets]
			rs.done = true
			for _, s := range rs.slots[:rs.n] {
				if s.owe == 0 {
					s.moved = true
					rs.moveLeft--
				}
			}
			o.drawNext()
			o.cond.Broadcast()
			continue
		}
		// A move is made by the goroutine that prepared its slot, whose
		// core holds the block and ν, unless nothing else is left to do.
		rs, s := o.nextMove(k, false)
		if s == nil {
			if rs, r := o.nextPrepare(); rs != nil {
				rs.slots[r].owner = k
				o.mu.Unlock()
				t := time.Now()
				o.prepare(k, rs, r)
				d := time.Since(t)
				o.mu.Lock()
				o.busy[taskPrepare] += d
				rs.prepLeft--
				o.cond.Broadcast()
				continue
			}
			rs, s = o.nextMove(k, true)
		}
		if s != nil {
			o.mu.Unlock()
			t := time.Now()
			o.m.st.moveDual(s.ws, s.owe)
			d := time.Since(t)
			o.mu.Lock()
			o.busy[taskMove] += d
			s.moved = true
			rs.moveLeft--
			o.cond.Broadcast()
			continue
		}
		o.idle++
		if o.idle == o.P && !o.serial {
			// Every goroutine waits and none commits: no task can ever be
			// ready. A bug, never a state of a run.
			o.err = fmt.Errorf("train: the ordered scheduler is stuck at round %d of %d..%d", o.committed+1, o.first, o.last)
			o.cond.Broadcast()
			return
		}
		t := time.Now()
		o.cond.Wait()
		o.waited += time.Since(t)
		o.idle--
	}
}

// commitReady says whether round q may be committed: its oracles are
// done, and the moves of round q−2, whose set round q+2 will take, are
// made.
func (o *ordered) commitReady(q int) bool {
	rs := &o.sets[q%nsets]
	if rs.prepLeft > 0 {
		return false
	}
	if p := &o.sets[(q+2)%nsets]; p.q == q-2 && p.moveLeft > 0 {
		return false
	}
	return true
}

// movesDone says whether every committed round's moves are made.
func (o *ordered) movesDone() bool {
	for k := range o.sets {
		if rs := &o.sets[k]; rs.q >= o.first && rs.done && rs.moveLeft > 0 {
			return false
		}
	}
	return true
}

// nextMove takes the first move of the duals not yet taken, of the
// earliest committed round: of a slot goroutine k prepared, or with any
// of any slot.
func (o *ordered) nextMove(k int, any bool) (*roundSet, *slotState) {
	for q := max(o.first, o.committed-(nsets-1)); q <= o.committed; q++ {
		rs := &o.sets[q%nsets]
		if rs.q != q || rs.moveLeft == 0 {
			continue
		}
		for _, s := range rs.slots[:rs.n] {
			if !s.moved && !s.moving && (any || s.owner == k) {
				s.moving = true
				return rs, s
			}
		}
	}
	return nil, nil
}

// nextPrepare takes the first oracle ready of the earliest round: not
// taken, and its sentence's earlier step moved.
func (o *ordered) nextPrepare() (*roundSet, int) {
	for q := o.committed + 1; q <= o.last; q++ {
		rs := &o.sets[q%nsets]
		for r := rs.prepNext; r < rs.n; r++ {
			s := rs.slots[r]
			if s.taken || !o.depMoved(s) {
				continue
			}
			s.taken = true
			for rs.prepNext < rs.n && rs.slots[rs.prepNext].taken {
				rs.prepNext++
			}
			return rs, r
		}
	}
	return nil, -1
}

// depMoved says whether slot s's sentence has no earlier step whose move
// of the duals is pending.
func (o *ordered) depMoved(s *slotState) bool {
	if s.depQ == 0 {
		return true
	}
	d := &o.sets[s.depQ%nsets]
	return d.q != s.depQ || d.slots[s.depS].moved
}

// prepare makes, on goroutine k, the first half of the step of slot r of
// round rs at S_{q−2} (wb[q mod 2]): oracle, gap and directions.
func (o *ordered) prepare(k int, rs *roundSet, r int) {
	sp, s := &o.views[rs.q%2], rs.slots[r]
	ws := s.ws
	ws.edges.slots = o.bins[k]
	st := sp.oracle(ws, s.i)
	s.gap = st.Gap
	if r+1 < rs.n {
		// The round's next oracle, here or on another core, reads its
		// weight rows: fetched while this step finishes, as the sequential
		// SDCA fetches its next step's.
		s.sink += prefetchWeights(sp.w, sp.p.Layout, sp.rows.of(rs.slots[r+1].i))
	}
	clear(ws.vt) // the direction adds into it
	sp.direct(ws)
}

// commitRound commits round q into wb[q mod 2]: round q−1's steps are
// replayed there first, then each step's line search is redone against
// the current weights and committed, in draw order. The first round of a
// segment's first step sees the weights of its oracle: its search is taken
// as it is.
func (o *ordered) commitRound(q int) {
	m := o.m
	st := m.st
	lay := m.p.Layout
	sp := &o.views[q%2]
	w := o.wb[q%2]
	rs := &o.sets[q%nsets]
	o.sink += prefetchWeights(w, lay, rs.slots[0].ws.rows)
	o.replay(q)
	for r, s := range rs.slots[:rs.n] {
		ws := s.ws
		if r+1 < rs.n {
			// The next commit's rows are cold: the oracles read them on
			// other cores, before this round's commits.
			o.sink += prefetchWeights(w, lay, rs.slots[r+1].ws.rows)
		}
		// The oracle's weights are the current ones for the segment's
		// first step only: ⟨w,v⟩ is recomputed for every other.
		a := ws.a
		if q > o.first || r > 0 {
			a = dotRows(w, ws.rows, ws.vr, ws.vt, lay, &o.row)
		}
		_, gamma, iters := st.search(ws, a, -1)
		s.gam, s.owe = gamma, gamma
		switch {
		case gamma > 0 && st.exact:
			sp.applyPrimal(ws, gamma)
			st.wsq += 2*gamma*a + gamma*gamma*ws.b
		case gamma > 0:
			// A store that rounds: the block is put now, and v becomes
			// the primal direction of its actual change (γ 1), which both
			// copies of the weights add.
			sp.putRounded(ws, gamma)
			sp.applyPrimal(ws, 1)
			st.wsq = math.NaN()
			s.gam, s.owe = 1, 0
		}
		st.steps++
		st.lsIters += int64(iters)
		o.d.sampler.Update(s.j, s.gap)
	}
	o.steps += rs.n
	m.live.Store(int64(o.base + o.steps))
	// The next round's commits replay these steps into the other copy:
	// fetch its rows (the oracles read that copy; nobody writes it).
	other := o.wb[(q+1)%2]
	for _, s := range rs.slots[:rs.n] {
		if s.gam > 0 {
			o.sink += prefetchWeights(other, lay, s.ws.rows)
		}
	}
	if o.afterRound != nil {
		o.afterRound(q)
	}
}

// replay adds round q−1's steps to wb[q mod 2], which holds S_{q−2}: the
// additions its commits made to the other copy, in their order. Nothing
// before the segment is replayed: both copies hold it.
func (o *ordered) replay(q int) {
	if q-1 < o.first {
		return
	}
	rs := &o.sets[(q-1)%nsets]
	sp := &o.views[q%2]
	for _, s := range rs.slots[:rs.n] {
		if s.gam > 0 {
			sp.applyPrimal(s.ws, s.gam)
		}
	}
}

// save records the sentence carried to the next round (a snapshot is at a
// segment's end, the pipeline empty).
func (o *ordered) save(st *checkpointState) error {
	st.Schedule = ScheduleRounds
	if o.m.pos > 0 {
		st.Next = o.carry
	}
	return nil
}

// restore takes back the sentence carried to the next round; a snapshot
// of another scheduler is refused.
func (o *ordered) restore(st checkpointState) error {
	if st.Schedule != ScheduleRounds {
		return errSchedule(st, ScheduleRounds)
	}
	o.carry, o.carryJ = st.Next, st.Next
	return nil
}

// pipeStats returns the goroutines' work so far — the oracles, the serial
// commits (with the draws and the replays) and the moves of the duals —
// and the segments' wall time.
func (o *ordered) pipeStats() (prepare, commit, move, wall time.Duration) {
	return o.busy[taskPrepare], o.busy[taskCommit], o.busy[taskMove], o.wall
}

// ScheduleStats is where the time of a parallel SDCA's epochs went.
type ScheduleStats struct {
	Workers int
	// Oracles, Commits and Moves are the workers' busy time in each kind of
	// task: the first halves of the steps (in parallel), the commits in
	// draw order (serial: one goroutine at a time) and the moves of the
	// duals (in parallel); Waited their time waiting for a task; Wall is
	// the wall time of the epochs' steps.
	Oracles, Commits, Moves, Waited, Wall time.Duration
}

// ScheduleStats returns where the time of the run's steps went, for the
// rounds (ok false for the other schedules).
func (m *SDCA) ScheduleStats() (s ScheduleStats, ok bool) {
	var o *ordered
	switch sc := m.sched.(type) {
	case *ordered:
		o = sc
	case *streamed:
		o = sc.par
	}
	if o == nil {
		return s, false
	}
	s.Workers = o.P
	s.Oracles, s.Commits, s.Moves, s.Wall = o.pipeStats()
	s.Waited = o.waited
	return s, true
}

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

// putRounded puts μ_i + γδ into a store that rounds and leaves in ws.vr
// and ws.vt the primal direction of the block's actual change δ' = μ' − μ_i
// (commitRounded's), for the rounds to add into both copies of the weights.
func (sp *stepper) putRounded(ws *stepWork, gamma float64) {
	s := sp.p.Data.Sentence(ws.i)
	T, K := s.Len(), sp.p.Layout.NumLabels
	ws.edges.update(gamma, ws.mu, ws.nu)
	if ms, ok := sp.duals.(duals.MarginalStore); ok {
		ms.PutMarginals(ws.i, ws.mu, ws.dN[:T*K], ws.nuSum)
	} else {
		sp.duals.Put(ws.i, ws.mu)
		blockNodesDot(ws.mu, T, K, ws.lat.Trans(), ws.dN, ws.nuSum)
	}
	for j, x := range ws.muN[:T*K] {
		ws.dN[j] -= x
	}
	clear(ws.vt)
	sp.direction(ws, ws.i, s)
}
