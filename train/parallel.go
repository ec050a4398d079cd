package train

// Parallel SDCA: CoCoA+ (Ma, Smith, Jaggi, Jordan, Richtárik & Takáč,
// ICML 2015, "adding" aggregation) with a per-row safety factor σ′.
//
// The sentences are split among P workers once (partition: by the seed,
// balancing dual entries). An epoch is a number of rounds; in a round every
// worker k makes SDCA steps on its own sentences against its own view
// u_k = w + C·Δw_k of the weights, where Δw_k is the change of ŵ(μ) its
// steps have made in the round and C is diagonal: σ′_j is the number of
// workers whose sentences use weight j (the tail B, bias, start, end: P).
// Then the changes are added, w ← w + Σ_k Δw_k, in worker order, and every
// view is w again.
//
// Why this ascends the dual: with μ' = μ + Σ_k Δμ_k, for every weight j
// Cauchy–Schwarz over the σ′_j workers that can change it gives
// (Σ_k Δw_kj)² ≤ σ′_j Σ_k Δw_kj², so
//
//	D(μ') ≥ Σ_k G_k(Δμ_k),  G_k = (1/n) Σ_{i∈k} H̃(μ_i + Δμ_i) − (λ/2)[‖w‖²/P + 2⟨w,Δw_k⟩ + Σ_j σ′_j Δw_kj²],
//
// with equality at Δμ = 0. Each worker maximises its own G_k by SDCA steps:
// G_k's gradient in μ_i is the oracle at u_k (ν = marginals under u_k), and
// along a step γ·δ, with v = −(1/(λn)) E_δ[F] as in the sequential step,
//
//	φ'_k(γ) = −[S(γ) − S_sep(γ)] − λn(⟨u_k, v⟩ + γ Σ_j σ′_j v_j²),
//
// the sequential line search with ‖v‖² weighted by σ′ (rowsNorm). The
// step moves u_k by γ·C·v (move). A worker is therefore a stepper
// on its view with its scaling, and this file is the scheduler that runs
// them. Every round therefore increases
// D, whatever the round's length, and a row that only one worker uses
// (σ′ = 1) takes the sequential step. P = 1 is the sequential SDCA itself.
// The result depends on the seed, P and the round length only: the same
// ones give the same weights bit for bit.
//
// The certificates do not see the workers: P, D and the gap come from μ
// and ŵ(μ) recomputed, as for the sequential SDCA.

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"

	"github.com/dualcrf/dualcrf/crf"
)

// Random streams of a parallel SDCA, with the seed: the partition's, and
// worker k's (workerStream + k).
const (
	partitionStream = 0x9a27
	workerStream    = 0x5dca0001
)

// parallel is the scheduler of a parallel SDCA: its workers and the
// round in progress.
type parallel struct {
	m       *SDCA
	workers []*worker
	rounds  int // rounds per epoch
	round   int // rounds done in the epoch in progress
	wg      sync.WaitGroup
}

// worker is one worker of a parallel SDCA: a stepper on its view of the
// weights, with its scaling, and the sampler of its sentences (split from
// the run's) with its own random numbers.
type worker struct {
	st  *stepper
	sc  *scaling // st's scaler
	d   draws    // d.sents: the worker's sentences
	src *rand.PCG
}

// scaling is a worker's stepScaler, what makes its step a CoCoA+ local
// step: σ′ per row and on the tail, and the rows the worker changed in
// the round.
type scaling struct {
	scale    []float64 // per attribute: σ′ of its row (shared by the workers)
	tail     float64   // σ′ of the dense tail (B, bias, start, end)
	rowScale []float64 // per packed row of the step's direction: its σ′
	touched  []int32   // attributes whose rows this worker changed in the round
	seen     []bool    // per attribute: in touched
}

// newParallel makes the P workers of m (set up but for its point): their
// partitions, σ′, scratch space and random streams. Their samplers and
// views come from start.
func newParallel(m *SDCA, P int) *parallel {
	p := m.p
	d := p.Data
	parts := partition(d, p.Layout.NumLabels, P, m.Seed)
	scale := rowScales(m.rows, parts, d.NumAttrs)
	par := &parallel{m: m}
	fewest := d.Len()
	for k, idx := range parts {
		st := newStepper(p, m.duals, m.rows, m.sub)
		sc := &scaling{scale: scale, tail: float64(P), seen: make([]bool, d.NumAttrs)}
		st.scaled = sc
		wk := &worker{st: st, sc: sc, src: rand.NewPCG(m.Seed, workerStream+uint64(k))}
		wk.d = draws{rng: rand.New(wk.src), sents: idx}
		par.workers = append(par.workers, wk)
		fewest = min(fewest, len(idx))
	}
	// Every worker makes at least one step per round.
	per := P * m.roundSteps()
	par.rounds = max(1, min(fewest, (d.Len()+per-1)/per))
	return par
}

// partition splits the sentences of d among P workers: taken in an order
// shuffled by the seed, each goes to the worker with the fewest dual
// entries so far (the lowest on ties), so that the workers' shares of an
// epoch cost about the same. Each list is sorted; none is empty (n ≥ P).
func partition(d *crf.Dataset, K, P int, seed uint64) [][]int {
	order := rand.New(rand.NewPCG(seed, partitionStream)).Perm(d.Len())
	load := make([]int64, P)
	parts := make([][]int, P)
	for _, i := range order {
		k := 0
		for j, l := range load {
			if l < load[k] {
				k = j
			}
		}
		load[k] += int64(crf.BlockLen(d.SentStart[i+1]-d.SentStart[i], K))
		parts[k] = append(parts[k], i)
	}
	for _, part := range parts {
		slices.Sort(part)
	}
	return parts
}

// rowScales returns σ′ of every attribute's row: the number of partitions
// with a sentence that uses it (1 for an attribute no sentence uses).
func rowScales(rows *sentenceRows, parts [][]int, A int) []float64 {
	scale := make([]float64, A)
	last := make([]int, A) // 1 + the last partition counted
	for k, part := range parts {
		for _, i := range part {
			for _, a := range rows.of(i) {
				if last[a] != k+1 {
					last[a] = k + 1
					scale[a]++
				}
			}
		}
	}
	for a, s := range scale {
		if s == 0 {
			scale[a] = 1
		}
	}
	return scale
}

// start gives every worker the point the run is at, after Init or a
// resume: the weights as its view, and a sampler split from the run's over
// its sentences.
func (par *parallel) start() {
	m := par.m
	sp := m.sampler.(Splitter)
	for _, wk := range par.workers {
		wk.d.sampler = sp.Split(wk.d.sents)
		wk.st.w = append(wk.st.w[:0], m.st.w...)
	}
	par.round = 0
}

// restore takes the workers' random states and the round from a
// checkpoint's state (made at a round boundary).
func (par *parallel) restore(st checkpointState) error {
	if st.Workers != len(par.workers) || len(st.WorkerRNG) != len(par.workers) {
		return errWorkers(st.Workers, len(par.workers))
	}
	for k, wk := range par.workers {
		if err := wk.src.UnmarshalBinary(st.WorkerRNG[k]); err != nil {
			return fmt.Errorf("resume: random state of worker %d: %w", k, err)
		}
	}
	for r := 0; r < par.rounds; r++ {
		if par.stepsBefore(r) == st.Step {
			par.round = r
			return nil
		}
	}
	return fmt.Errorf("resume: step %d of the epoch is not the end of a round of %d workers", st.Step, len(par.workers))
}

// save records the workers' random states (the snapshot is at the end of
// a round: no sentence is drawn ahead).
func (par *parallel) save(st *checkpointState) error {
	st.Workers = len(par.workers)
	st.WorkerRNG = make([][]byte, len(par.workers))
	for k, wk := range par.workers {
		b, err := wk.src.MarshalBinary()
		if err != nil {
			return err
		}
		st.WorkerRNG[k] = b
	}
	return nil
}

// stepsBefore returns the steps of an epoch done before round r.
func (par *parallel) stepsBefore(r int) int {
	s := 0
	for _, wk := range par.workers {
		s += len(wk.d.sents) * r / par.rounds
	}
	return s
}

// epoch runs the rounds of an epoch, or its remaining rounds. When ctx is
// cancelled it returns at the end of a round, the steps done so far in
// m.pos.
func (par *parallel) epoch(ctx context.Context) error {
	m := par.m
	// ‖w‖², kept for the checkpoints, is recomputed whenever the epoch
	// returns: the workers' steps do not track it.
	defer func() { m.st.wsq = dot(m.st.w, m.st.w) }()
	for par.round < par.rounds {
		if err := ctx.Err(); err != nil {
			return err
		}
		par.runRound()
		par.round++
		m.pos = par.stepsBefore(par.round)
		m.live.Store(int64(m.pos))
	}
	par.round = 0
	m.endEpoch()
	return nil
}

// runRound has every worker make its steps of the round and aggregates
// their changes. Only adding the changes into w, in worker order, is done
// by one goroutine: each worker turns its view into its change and then
// takes the new w back into its view on its own goroutine.
func (par *parallel) runRound() {
	r := par.round
	w := par.m.st.w
	par.each(func(wk *worker) {
		nk := len(wk.d.sents)
		wk.st.run(&wk.d, nk*(r+1)/par.rounds-nk*r/par.rounds)
		wk.toChange(w)
	})
	par.aggregate()
	par.each(par.resync)
	par.endRound()
}

// each runs f for every worker at once, worker 0 on the calling goroutine,
// and returns when all are done.
func (par *parallel) each(f func(wk *worker)) {
	for _, wk := range par.workers[1:] {
		par.wg.Add(1)
		go func() {
			defer par.wg.Done()
			f(wk)
		}()
	}
	f(par.workers[0])
	par.wg.Wait()
}

// tailScale returns σ′ of the dense tail.
func (c *scaling) tailScale() float64 { return c.tail }

// rowsNorm returns Σ_r σ′_r ‖v_r‖² over the packed rows of sp's step's
// direction, noting each row's σ′ for move.
func (c *scaling) rowsNorm(sp *stepper) float64 {
	ws := sp.ws
	K := sp.p.Layout.NumLabels
	c.rowScale = grow(c.rowScale, len(ws.rows))
	vv := 0.0
	for r, a := range ws.rows {
		s := c.scale[a]
		c.rowScale[r] = s
		v := ws.vr[r*K : (r+1)*K]
		vv += s * dot(v, v)
	}
	return vv
}

// move moves a worker's view sp.w by γ·C·v — γσ′_r v_r on each packed
// row, γσ′ v on the tail — and notes the rows it changed.
func (c *scaling) move(sp *stepper, gamma float64) {
	lay := sp.p.Layout
	ws := sp.ws
	axpyRows(sp.w, ws.rows, ws.vr, nil, c.rowScale, gamma, lay.NumLabels)
	g := gamma * c.tail
	w, v := sp.w[lay.Trans():], ws.vt
	for j := range w {
		w[j] += g * v[j]
	}
	for _, a := range ws.rows {
		if !c.seen[a] {
			c.seen[a] = true
			c.touched = append(c.touched, a)
		}
	}
}

// toChange turns a worker's view u = w + C·Δw on the rows it changed in
// the round, and on the tail, into its change Δw = (u − w)/σ′.
func (wk *worker) toChange(w []float64) {
	lay := wk.st.p.Layout
	c := wk.sc
	K, tr := lay.NumLabels, lay.Trans()
	u := wk.st.w
	for _, a := range c.touched {
		r, s := lay.Row(a), c.scale[a]
		for y := r; y < r+K; y++ {
			u[y] = (u[y] - w[y]) / s
		}
	}
	for y := tr; y < len(w); y++ {
		u[y] = (u[y] - w[y]) / c.tail
	}
}

// aggregate adds the workers' changes (toChange) into w, in worker order.
func (par *parallel) aggregate() {
	m := par.m
	lay := m.p.Layout
	K, tr := lay.NumLabels, lay.Trans()
	w := m.st.w
	for _, wk := range par.workers {
		u := wk.st.w
		for _, a := range wk.sc.touched {
			r := lay.Row(a)
			for y := r; y < r+K; y++ {
				w[y] += u[y]
			}
		}
		for y := tr; y < len(w); y++ {
			w[y] += u[y]
		}
	}
}

// resync makes worker wk's view w again on every row a worker changed in
// the round, and on the tail.
func (par *parallel) resync(wk *worker) {
	lay := par.m.p.Layout
	K, tr := lay.NumLabels, lay.Trans()
	w := par.m.st.w
	for _, v := range par.workers {
		for _, a := range v.sc.touched {
			r := lay.Row(a)
			copy(wk.st.w[r:r+K], w[r:r+K])
		}
	}
	copy(wk.st.w[tr:], w[tr:])
}

// endRound forgets the rows the workers changed and moves their counters
// into the run's.
func (par *parallel) endRound() {
	m := par.m
	for _, wk := range par.workers {
		c := wk.sc
		for _, a := range c.touched {
			c.seen[a] = false
		}
		c.touched = c.touched[:0]
		m.st.steps += wk.st.steps
		m.st.lsIters += wk.st.lsIters
		wk.st.steps, wk.st.lsIters = 0, 0
	}
}

// share copies the rows of attributes and the tail from the run's weights
// into every worker's view, after a sequential step (stepOne) changed them.
func (par *parallel) share(attrs []int32) {
	lay := par.m.p.Layout
	K, tr := lay.NumLabels, lay.Trans()
	w := par.m.st.w
	for _, wk := range par.workers {
		for _, a := range attrs {
			r := lay.Row(a)
			copy(wk.st.w[r:r+K], w[r:r+K])
		}
		copy(wk.st.w[tr:], w[tr:])
	}
}

// refresh hands every worker the gap estimates of its sentences.
func (par *parallel) refresh(gaps []float64) {
	par.m.sampler.Refresh(gaps)
	for _, wk := range par.workers {
		wk.d.sampler.Refresh(pick(gaps, wk.d.sents))
	}
}

// estimate returns Σ_i g_i / n over the workers' estimates.
func (par *parallel) estimate() float64 {
	s, n := 0.0, 0
	for _, wk := range par.workers {
		s += wk.d.sampler.Estimate() * float64(len(wk.d.sents))
		n += len(wk.d.sents)
	}
	return s / float64(n)
}

// samplerState returns the sampler state of the whole run: the run's
// sampler's kind with every sentence's estimate from the workers.
func (par *parallel) samplerState() SamplerState {
	st := par.m.sampler.State()
	for _, wk := range par.workers {
		for j, g := range wk.d.sampler.State().Gaps {
			st.Gaps[wk.d.sents[j]] = g
		}
	}
	return st
}

// pick returns v[idx[0]], v[idx[1]], ….
func pick(v []float64, idx []int) []float64 {
	out := make([]float64, len(idx))
	for j, i := range idx {
		out[j] = v[i]
	}
	return out
}

var _ stepScaler = (*scaling)(nil)
