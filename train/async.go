package train

// Asynchronous SDCA (PASSCoDe: Hsieh, Yu & Dhillon, ICML 2015 — the
// parallel form of LIBLINEAR's dual coordinate descent; Hogwild!: Niu, Recht,
// Ré & Wright, NIPS 2011), an explicit option (SDCA.Async) that gives up
// reproducibility for the barrier-free use of every core.
//
// The P workers draw from the run's sampler, under a lock that each step
// takes once (to tell the sampler its last block gap and draw the next
// sentence); a sentence another worker is stepping is drawn again, so
// that the blocks μ_i a worker steps are its own. (Dealing the sentences
// to the workers, each drawing from its own share, was measured to stall:
// when one worker's steps run before the other's — a small problem, a busy
// machine — the share stepped first ends far from its optimum, as in block
// coordinate ascent over two halves.) A worker makes whole
// sequential steps — oracle, direction, line search, μ_i ← μ_i + γδ — on
// the shared weights, read without locks while the others write them, and
// adds γv to them: AsyncAtomic adds each number atomically (no addition is
// lost; the weights differ from ŵ(μ) by rounding only), AsyncWild adds
// them plainly (faster, and an addition racing with another worker's can
// be lost: w drifts from ŵ(μ)). A step's line search takes ⟨w,v⟩ at the
// weights its worker read, so the dual may fall a little between two
// certificates. At each certificate, and when a run is interrupted, the
// workers have stopped and w = ŵ(μ) is recomputed exactly (What, in a
// fixed order on every core): the race's drift is gone, and the gap
// identity is checked as always — the certificate never lies.
//
// The reads and the wild adds race by design (Go's memory model lets a
// racing read of a float64 see some value written to it; the atomic
// variant's adds are compare-and-swap loops): the race detector reports
// them, and the tests of this file do not run under it.

import (
	"context"
	"math"
	"sync"
	"sync/atomic"
	"unsafe"
)

// The asynchronous kinds (SDCA.Async).
const (
	AsyncAtomic = "atomic" // atomic adds to the weights
	AsyncWild   = "wild"   // plain adds: an update racing with another can be lost
)

// asyncCheck is how many steps a worker makes between two looks at the
// run's cancellation.
const asyncCheck = 64

// async is the scheduler of an asynchronous SDCA.
type async struct {
	oneSampler
	P     int
	wild  bool
	works []*stepWork // per worker: its scratch space
	// mu guards the sampler, the run's random numbers and busy, the
	// sentences being stepped.
	mu   sync.Mutex
	busy []bool
	// fresh is set when w was recomputed as ŵ(μ) and no step has been
	// made since.
	fresh bool
}

// newAsync makes the scheduler of m (set up but for its point) for P
// workers.
func newAsync(m *SDCA, P int, wild bool) *async {
	a := &async{oneSampler: oneSampler{m}, P: P, wild: wild, busy: make([]bool, m.p.N())}
	for range P {
		a.works = append(a.works, newStepWork(m.p))
	}
	return a
}

func (a *async) start() { a.fresh = true }

// epoch runs the epoch's steps, or its remaining ones, on the workers.
// When ctx is cancelled the workers stop within asyncCheck steps each, and
// w is recomputed as ŵ(μ).
func (a *async) epoch(ctx context.Context) error {
	m := a.m
	n := m.p.N()
	var wg sync.WaitGroup
	var claimed, done atomic.Int64
	iters := make([]int64, a.P)
	left := int64(n - m.pos)
	for k := range a.P {
		wg.Add(1)
		go func() {
			defer wg.Done()
			iters[k] = a.work(ctx, k, left, &claimed, &done)
		}()
	}
	wg.Wait()
	for _, it := range iters {
		m.st.lsIters += it
	}
	made := int(done.Load())
	m.st.steps += int64(made)
	m.pos += made
	a.fresh = a.fresh && made == 0
	if m.pos < n {
		// Cancelled: the snapshot gets ŵ(μ), not the drifted weights.
		if err := a.exact(); err != nil {
			return err
		}
		m.live.Store(int64(m.pos))
		return ctx.Err()
	}
	m.st.wsq = dot(m.st.w, m.st.w)
	m.endEpoch()
	return nil
}

// work makes worker k's steps until the epoch's left steps are claimed or
// ctx is cancelled; it counts them in done and returns the line search's
// evaluations.
func (a *async) work(ctx context.Context, k int, left int64, claimed, done *atomic.Int64) (iters int64) {
	m := a.m
	st := m.st
	ws := a.works[k]
	i, gap := -1, 0.0
	for c := 0; ; c++ {
		if c%asyncCheck == 0 && c > 0 {
			m.live.Store(int64(m.pos) + done.Load())
			if ctx.Err() != nil {
				a.next(i, gap, false)
				return iters
			}
		}
		if claimed.Add(1) > left {
			a.next(i, gap, false)
			return iters
		}
		i = a.next(i, gap, true)
		s := st.oracle(ws, i)
		gap = s.Gap
		clear(ws.vt) // the direction adds into it
		st.direct(ws)
		_, gamma, it := st.search(ws, ws.a, -1)
		iters += int64(it)
		if gamma > 0 {
			// A store that rounds keeps the block rounded: the weights
			// drift from ŵ(μ) by that rounding as by the races, until the
			// next certificate recomputes them.
			st.moveDual(ws, gamma)
			if a.wild {
				st.applyPrimal(ws, gamma)
			} else {
				a.addAtomic(ws, gamma)
			}
		}
		done.Add(1)
	}
}

// next tells the sampler the block gap of sentence i, stepped last (i < 0:
// none), and, with draw, draws the next sentence, one no other worker is
// stepping.
func (a *async) next(i int, gap float64, draw bool) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	m := a.m
	if i >= 0 {
		m.sampler.Update(i, gap)
		a.busy[i] = false
	}
	if !draw {
		return -1
	}
	j := m.sampler.Next(m.rng)
	for tries := 0; a.busy[j]; tries++ {
		if tries < 4 {
			j = m.sampler.Next(m.rng)
		} else {
			// The max sampler draws the same sentence again and again.
			j = m.rng.IntN(len(a.busy))
		}
	}
	a.busy[j] = true
	return j
}

// addAtomic adds γv to the weights, each number by an atomic
// compare-and-swap.
func (a *async) addAtomic(ws *stepWork, gamma float64) {
	lay := a.m.p.Layout
	K := lay.NumLabels
	w := a.m.st.w
	for r, at := range ws.rows {
		lo, _ := lay.Span(at)
		vr := ws.vr[r*K : (r+1)*K]
		if labels := lay.RowLabels(at); labels != nil {
			// A sparse layout: the row's free weights only.
			for k, y := range labels {
				if v := vr[y]; v != 0 {
					addFloat(&w[lo+k], gamma*v)
				}
			}
			continue
		}
		for y, v := range vr {
			if v != 0 {
				addFloat(&w[lo+y], gamma*v)
			}
		}
	}
	tail := w[lay.Trans():]
	for j, v := range ws.vt {
		if v != 0 {
			addFloat(&tail[j], gamma*v)
		}
	}
}

// addFloat adds d to *p atomically.
func addFloat(p *float64, d float64) {
	u := (*uint64)(unsafe.Pointer(p))
	for {
		old := atomic.LoadUint64(u)
		if atomic.CompareAndSwapUint64(u, old, math.Float64bits(math.Float64frombits(old)+d)) {
			return
		}
	}
}

// exact sets w = ŵ(μ), recomputed from the duals, and ‖w‖².
func (a *async) exact() error {
	m := a.m
	w, err := m.p.What(m.duals)
	if err != nil {
		return err
	}
	copy(m.st.w, w)
	m.st.wsq = dot(m.st.w, m.st.w)
	m.whatAt = m.st.steps
	a.fresh = true
	return nil
}

// save records the schedule (a snapshot is between steps, with w = ŵ(μ)).
func (a *async) save(st *checkpointState) error {
	st.Schedule = ScheduleAsyncAtomic
	if a.wild {
		st.Schedule = ScheduleAsyncWild
	}
	return nil
}

// restore refuses a snapshot of another schedule.
func (a *async) restore(st checkpointState) error {
	want := ScheduleAsyncAtomic
	if a.wild {
		want = ScheduleAsyncWild
	}
	if st.Schedule != want {
		return errSchedule(st, want)
	}
	return nil
}
