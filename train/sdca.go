package train

// SDCA for CRFs (Le Priol, Piché & Lacoste-Julien, UAI 2018, Algorithm 2).
//
// The dual variables are the clique marginals μ_i of every sentence; the
// primal weights are kept equal to ŵ(μ) = (1/(λn)) Σ_i (F(x_i,y_i) − E_μ_i[F]).
// One step on sentence i:
//
//  1. oracle: ν = marginals of p(·|x_i; w); block gap g_i = D̃(μ_i‖ν);
//  2. ascent direction δ = ν − μ_i, primal direction v = −(1/(λn)) E_δ[F]
//     (sparse: the rows of sentence i's attributes, B, bias, start, end);
//  3. line search: maximise the concave φ(γ) = H̃(μ_i+γδ) − (λn/2)‖w+γv‖²
//     on [0,1]; with x = μ_i + γδ,
//     φ'(γ)  = −[Σ_e⟨δ_e, log x_e⟩ − Σ_s⟨δ_s, log x_s⟩] − λn(⟨w,v⟩ + γ‖v‖²),
//     φ''(γ) = −[Σ_e Σ δ_e²/x_e − Σ_s Σ δ_s²/x_s] − λn‖v‖²,
//     by safeguarded Newton (bisection when a step leaves the bracket),
//     stopping when a step is below the sub-precision;
//  4. μ_i ← μ_i + γδ, w ← w + γv, ‖w‖² ← ‖w‖² + 2γ⟨w,v⟩ + γ²‖v‖².
//
// Since log ν is the junction-tree decomposition of w·F − log Z,
// φ'(0) = ⟨δ, log ν − log μ⟩ = KL(μ‖ν) + KL(ν‖μ) ≥ g_i, and φ'(1) = −λn‖v‖².

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"strconv"
	"sync/atomic"

	"github.com/dualcrf/dualcrf/crf"
	"github.com/dualcrf/dualcrf/duals"
	"github.com/dualcrf/dualcrf/internal/num"
	"github.com/dualcrf/dualcrf/option"
)

// SDCA is the stochastic dual coordinate ascent method. The zero value of
// each field is its documented default.
type SDCA struct {
	// Sampler picks the sentence of each step and learns from the block
	// gaps it is told; nil means NewSampler(DefaultSampler, n,
	// SamplerOptions{}): gap sampling with f = DefaultNonUniform. It must be
	// sized for the problem's n sentences and fresh from NewSampler (or
	// restored to the state the run should start from): the run changes
	// it. NewSampler makes every kind the CLI names; the importance kinds
	// take Problem.Smoothness.
	Sampler Sampler
	// Epsilon is the weight of the uniform distribution in the initial duals
	// (eq. 21); 0 means DefaultEpsilon.
	Epsilon float64
	// SubPrecision stops the line search once a Newton step is shorter; 0
	// means DefaultSubPrecision.
	SubPrecision float64
	// Seed seeds the sampler's random numbers; the same seed gives the same
	// weights bit for bit.
	Seed uint64
	// Duals, when not nil, holds the dual variables (e.g. a file store);
	// otherwise they are kept in memory at DualPrecision.
	Duals duals.Store
	// DualPrecision is how the duals are kept: duals.Float32 (the Markov
	// form in float32: half the memory and traffic of float64, the same
	// epochs to a gap of 1e-4, certificates as honest), duals.Float64
	// (exact: the reference) or duals.BFloat16 (the Markov form in
	// bfloat16: a quarter of float64's memory, the same epochs to 1e-4,
	// no progress below a gap of about 3e-5); 0 means
	// duals.DefaultPrecision. A store given
	// in Duals has its own precision, which a non-zero DualPrecision must
	// equal.
	DualPrecision duals.Precision
	// Workers is the number of goroutines making SDCA steps. 1 is the
	// sequential SDCA (unless RoundSize is set), more the parallel SDCA by
	// pipelined ordered commits (ordered.go: rounds of RoundSize steps whose
	// oracles run in parallel and whose commits are made in draw order),
	// whose weights depend on the seed and RoundSize only, not on the
	// workers; 0 means DefaultWorkers and AllWorkers runtime.GOMAXPROCS.
	Workers int
	// RoundSize is the number of steps of a round of the parallel SDCA;
	// 0 means DefaultRoundSize. Set with Workers 1, it runs the parallel
	// scheme on one goroutine (the same weights as on any number).
	RoundSize int
	// Async, when not empty, replaces the ordered commits by asynchronous
	// steps (async.go): AsyncAtomic or AsyncWild. Not reproducible.
	Async string
	// Warm, when not nil, is the initial point taken from an earlier
	// run's duals (warm.go) instead of eq. 21's μ⁰; the initial
	// certificate's exact block gaps then seed the sampler. Duals in
	// memory or in a memory-mapped file only.
	Warm *WarmStart

	p       *Problem
	duals   duals.Store
	sampler Sampler // the sampler in use: Sampler, or the default one
	sub     float64 // the sub-precision in use
	src     *rand.PCG
	rng     *rand.Rand
	rows    *sentenceRows
	// st steps on the run's weights (st.w, st.wsq) and counts the run's
	// steps; sched runs the epochs (sequential, parallel or streamed,
	// chosen by setup). certW holds the last certificate's weights.
	st    *stepper
	sched scheduler
	certW []float64
	epoch int          // completed epochs
	pos   int          // steps done in the epoch in progress
	live  atomic.Int64 // pos, published every 256 steps for LiveSteps
	// commit is the hook the streamed scheduler calls when its store must
	// commit (SetCommit).
	commit func() error
	// whatAt is the step count at which w was set to ŵ(μ) computed from
	// the duals (Init), −1 if never.
	whatAt int64
	// warmGaps is set by a warm start until the initial certificate has
	// handed its block gaps to the sampler.
	warmGaps bool
	// segRounds, when not 0, shortens the rounds' segments (tests).
	segRounds int
	// warmRefresh is set for the whole of a run that started warm (and by
	// the resume of its snapshot): the run recomputes every gap estimate
	// exactly every WarmRefreshEvery epochs (warm.go).
	warmRefresh bool
}

// Describe declares SDCA: its settings, and the options of a run it
// reads beyond them — the sampler, the gap refreshes, the place of its
// duals, checkpoints, and the warm start from kept duals (its final duals
// are what a run keeps).
func (m *SDCA) Describe() Description {
	return Description{Name: "sdca", Title: "SDCA", Loss: LossLog,
		Summary:     "SDCA-GAP: stochastic dual coordinate ascent with gap sampling",
		Reads:       append([]string{RunSampler, RunNonUniform, RunRefresh, RunDuals, RunKeepDuals, RunWarmStart, RunL1}, checkpointOptions...),
		Made:        map[string]string{"Sampler": RunSampler, "Duals": RunDuals, "Warm": RunWarmStart},
		DualsOnDisk: true,
		Settings: []Setting{
			{Field: "Epsilon", Name: "epsilon", Default: DefaultEpsilon, Resume: "Epsilon",
				Help: "share in (0,1] of the uniform distribution in the initial duals, the rest on each sentence's gold labelling",
				Want: "want a weight in (0,1]", Valid: floatIn(0, 1, true, false)},
			{Field: "SubPrecision", Name: "subprecision", Default: DefaultSubPrecision, Resume: "SubPrecision",
				Help: "SDCA's line search stops when its step is shorter than this, in (0,1)",
				Want: "want a step length in (0,1)", Valid: floatIn(0, 1, true, true)},
			seedSetting("the sampler"),
			{Field: "Workers", Name: "workers", Default: DefaultWorkers,
				Help:  "SDCA workers: the rounds' oracles and moves on that many goroutines (the model depends on the seed and the round size, not on the workers); 1: the sequential SDCA of the paper",
				Want:  fmt.Sprintf("want AllWorkers (%d: one per core), 0 (DefaultWorkers) or a number of workers ≥ 1", AllWorkers),
				Valid: func(v any) bool { return v.(int) >= AllWorkers }},
			{Field: "RoundSize", Name: "round-size", Default: DefaultRoundSize, Resume: "RoundSize",
				Help: "SDCA steps in a round of the parallel SDCA (their oracles in parallel, their commits in draw order); it shapes the model, the workers do not",
				Want: "want a number of steps ≥ 1", Valid: intAtLeast(1),
				Unread: func(m Method) string {
					if m.(*SDCA).Async != "" {
						return "not used by asynchronous steps ({SDCA.Async}): they have no rounds"
					}
					return ""
				}},
			{Field: "Async", Name: "nondeterministic-async", DefaultText: "off: the reproducible rounds",
				Help:  fmt.Sprintf("asynchronous SDCA steps (%s: atomic adds, %s: plain adds): faster, and a different model on every run", AsyncAtomic, AsyncWild),
				Want:  fmt.Sprintf("want %s or %s", AsyncAtomic, AsyncWild),
				Valid: oneOf(AsyncAtomic, AsyncWild)},
			{Field: "DualPrecision", Name: "dual-precision", Default: duals.DefaultPrecision, Resume: "DualPrecision",
				Help: "how SDCA keeps its duals: float32 (each sentence's marginals as a Markov chain of float32 conditionals: " +
					"half the memory and I/O of float64, the same epochs to a gap of 1e-4, certificates as honest), float64 (exact: twice the memory) " +
					"or bfloat16 (the chain in 16-bit numbers: a quarter of float64's memory, the same epochs to 1e-4, but no progress below a gap of about 3e-5)",
				Want:  "want float32, float64 or bfloat16",
				Valid: func(v any) bool { return v.(duals.Precision).Valid() }},
		}}
}

// Check refuses a setting out of range with an *option.Error naming it
// (CheckSettings), and a DualPrecision other than the store's in Duals; a
// zero that stands for a default passes. Init checks too.
func (m *SDCA) Check() error {
	if err := CheckSettings(m, nil); err != nil {
		return err
	}
	if m.Async != "" && m.RoundSize != 0 {
		return &option.Error{Field: "SDCA.RoundSize", Value: valueText(m.RoundSize), Msg: "want 0: asynchronous steps have no rounds", Err: ErrBadProblem}
	}
	if m.DualPrecision != 0 && m.Duals != nil && m.Duals.Precision() != m.DualPrecision {
		return &option.Error{Field: "SDCA.DualPrecision", Value: m.DualPrecision.String(), Err: ErrBadProblem,
			Msg: fmt.Sprintf("the store in Duals keeps %s duals", m.Duals.Precision())}
	}
	return nil
}

// precisionOn returns the precision of the duals a run of m on p keeps:
// Precision, except that the elastic net (p.L1 > 0) keeps float64 duals
// unless told otherwise (its step moves ŵ(μ) by the exact direction).
func (m *SDCA) precisionOn(p *Problem) duals.Precision {
	if p.L1 > 0 && m.Duals == nil && m.DualPrecision == 0 {
		return duals.Float64
	}
	return m.Precision()
}

// Precision returns the precision of the duals a run of m keeps: its
// store's, else DualPrecision with its default applied.
func (m *SDCA) Precision() duals.Precision {
	switch {
	case m.Duals != nil:
		return m.Duals.Precision()
	case m.DualPrecision != 0:
		return m.DualPrecision
	}
	return duals.DefaultPrecision
}

// Facts returns what a model records of SDCA on p: its sampler and seed,
// and its schedule — none for the sequential SDCA (its bytes stay as they
// were), the rounds with their size and not the workers (which do not
// change the model), asynchronous steps (not reproducible) with their
// workers.
func (m *SDCA) Facts(p *Problem) map[string]any {
	kind, _ := samplerSettings(m.Sampler)
	facts := map[string]any{"sampler": kind, "seed": m.Seed}
	switch sched, w, R := m.schedule(p.N()); sched {
	case ScheduleRounds:
		facts["schedule"], facts["round_size"] = sched, R
	case ScheduleAsyncAtomic, ScheduleAsyncWild:
		facts["schedule"], facts["workers"] = sched, w
	}
	return facts
}

// effective returns the settings with the defaults applied.
func (m *SDCA) effective() (eps, sub float64) {
	eps, sub = m.Epsilon, m.SubPrecision
	if eps == 0 {
		eps = DefaultEpsilon
	}
	if sub == 0 {
		sub = DefaultSubPrecision
	}
	return eps, sub
}

// NumWorkers implements Workers: the number of workers SDCA will run on a
// problem of n sentences, Workers with its default applied, at most n.
func (m *SDCA) NumWorkers(n int) int { return m.numWorkers(n) }

// numWorkers returns the number of workers on n sentences: Workers, at
// most n; 0 means DefaultWorkers, and AllWorkers GOMAXPROCS.
func (m *SDCA) numWorkers(n int) int {
	P := cmp.Or(m.Workers, DefaultWorkers)
	if P == AllWorkers {
		P = runtime.GOMAXPROCS(0)
	}
	return max(1, min(P, n))
}

// The schedules of an SDCA run (SDCA.Schedule).
const (
	ScheduleSequential  = "sequential"   // one worker: the SDCA of the paper
	ScheduleRounds      = "rounds"       // pipelined ordered commits (ordered.go): reproducible
	ScheduleAsyncAtomic = "async-atomic" // asynchronous steps, atomic adds (async.go): not reproducible
	ScheduleAsyncWild   = "async-wild"   // asynchronous steps, plain adds: not reproducible
)

// Schedule returns how SDCA runs its steps on a problem of n sentences:
// the schedule (ScheduleSequential, ScheduleRounds, ScheduleAsyncAtomic or
// ScheduleAsyncWild), its workers and, for the rounds, their size.
func (m *SDCA) Schedule(n int) (kind string, workers, roundSize int) { return m.schedule(n) }

// schedule returns how SDCA runs its epochs on n sentences: the schedule,
// its goroutines and, for rounds, the round size.
func (m *SDCA) schedule(n int) (kind string, P, R int) {
	P = m.numWorkers(n)
	switch {
	case m.Async == AsyncAtomic:
		return ScheduleAsyncAtomic, P, 0
	case m.Async == AsyncWild:
		return ScheduleAsyncWild, P, 0
	case cmp.Or(m.Workers, DefaultWorkers) == 1 && m.RoundSize == 0:
		// Only one worker asked for: on one core, the default is still the
		// rounds, so that the model is the same on every machine.
		return ScheduleSequential, 1, 0
	}
	return ScheduleRounds, P, cmp.Or(m.RoundSize, DefaultRoundSize)
}

// RunSettings returns every setting of SDCA on p that a resumed run must
// repeat to continue it bit for bit, with the defaults applied: the
// sampler's, the seed, ε, the sub-precision, the workers, the streamed
// store's blocks, λ and the feature space.
func (m *SDCA) RunSettings(p *Problem) RunSettings {
	eps, sub := m.effective()
	rs := RunSettings{Version: settingsVersion, Solver: "sdca", Seed: m.Seed, Epsilon: eps, SubPrecision: sub,
		Lambda: p.Lambda, L1: p.L1, Sentences: p.N(), FeatureSpace: p.FeatureSpace(), Transitions: p.TransitionSpace(),
		Bias: !p.Layout.NoBias, DualPrecision: precisionSetting(m.precisionOn(p))}
	rs.Sampler, rs.NonUniform = samplerSettings(m.Sampler)
	if s, ok := m.Duals.(*duals.Stream); ok {
		rs.DualsBlocks = s.Blocks()
	}
	// A sequential run records one worker and no schedule (as it always
	// has); the rounds their size, whatever the workers (the weights do not
	// depend on them); asynchronous steps their kind only.
	switch kind, _, R := m.schedule(p.N()); kind {
	case ScheduleSequential:
		rs.Workers = 1
	case ScheduleRounds:
		rs.Schedule, rs.RoundSize = kind, R
	default:
		rs.Schedule = kind
	}
	return rs
}

// Init sets μ⁰ = ε·uniform + (1−ε)·gold on every block (or the kept
// duals of Warm) and w = ŵ(μ⁰).
func (m *SDCA) Init(p *Problem) error {
	if err := m.setup(p); err != nil {
		return err
	}
	eps, _ := m.effective()
	if m.Warm != nil {
		if err := m.initWarm(m.Warm, eps); err != nil {
			return err
		}
	} else if s := m.streamStore(); s != nil {
		if err := m.streamInit(s, eps); err != nil {
			return err
		}
	} else {
		m.initDuals(0, p.N(), eps, 0)
		p.meterAdd(p.N())
	}
	u, err := p.What(m.duals)
	if err != nil {
		return err
	}
	m.st.setElastic(u)
	m.whatAt = m.st.steps
	m.sched.start()
	return nil
}

// initDuals sets the blocks of sentences lo..hi−1 to μ⁰ (initBlock) on
// the given number of goroutines (0: one per core). Each block is written
// by one goroutine alone, so the result does not depend on their number.
func (m *SDCA) initDuals(lo, hi int, eps float64, workers int) {
	d := m.p.Data
	K := m.p.Layout.NumLabels
	// Init takes no context: the pass is short and cannot be cancelled.
	_ = num.Parallel(context.Background(), hi-lo, workers, func() func(int) {
		var mu []float64
		return func(i int) {
			i += lo
			s := d.Sentence(i)
			mu = grow(mu, crf.BlockLen(s.Len(), K))
			initBlock(mu, s.Labels, K, eps)
			m.duals.Put(i, mu)
		}
	})
}

// Resume implements Resumer: it prepares SDCA for p at checkpoint c's
// exact position, a verified checkpoint (LoadCheckpoint) of a run with the
// same settings (Train checks them): its duals are copied into the store,
// and its weights, counters, sampler and random state are restored, so
// the run continues as the checkpointed one would have.
func (m *SDCA) Resume(p *Problem, c *Checkpoint) error {
	if err := m.setup(p); err != nil {
		return err
	}
	return m.restore(c)
}

// setup checks the settings and prepares everything but the point: the
// dual store, the sampler, the random numbers and the scratch space.
func (m *SDCA) setup(p *Problem) error {
	if err := m.Check(); err != nil {
		return err
	}
	if err := p.checkL1(); err != nil {
		return err
	}
	if p.L1 > 0 && m.Workers == 0 && m.RoundSize == 0 && m.Async == "" {
		m.Workers = 1 // the elastic net's steps are sequential (its stepper is not the rounds')
	}
	if kind, _, _ := m.schedule(p.N()); p.L1 > 0 && kind != ScheduleSequential {
		return &option.Error{Field: "SDCA.Workers", Value: strconv.Itoa(m.Workers), Err: ErrBadProblem,
			Msg: "the elastic net ({L1}) is trained by one worker: want 1, or leave it unset"}
	}
	if pr := m.precisionOn(p); p.L1 > 0 && pr != duals.Float64 {
		return &option.Error{Field: "SDCA.DualPrecision", Value: pr.String(), Err: ErrBadProblem,
			Msg: "the elastic net ({L1}) keeps its duals in float64 (its step moves the weights by the exact direction): want float64"}
	}
	m.p = p
	_, m.sub = m.effective()
	d := p.Data
	var err error
	if m.duals, m.sampler, err = storeAndSampler(d, m.Duals, m.Sampler, m.precisionOn(p)); err != nil {
		return err
	}
	m.epoch, m.pos = 0, 0
	m.whatAt = -1
	m.warmGaps, m.warmRefresh = false, false
	m.src = rand.NewPCG(m.Seed, 0x5dca)
	m.rng = rand.New(m.src)
	m.rows = newSentenceRows(d)
	m.st = newStepper(p, m.duals, m.rows, m.sub)
	if err := m.checkStream(d.Len()); err != nil {
		return err
	}
	switch kind, P, R := m.schedule(d.Len()); {
	case m.streamStore() != nil:
		if kind == ScheduleAsyncAtomic || kind == ScheduleAsyncWild {
			return fmt.Errorf("%w: asynchronous steps (SDCA.Async) need the duals in memory or in a memory-mapped file, not streamed", ErrBadProblem)
		}
		m.sched = newStreamed(m, m.streamStore(), P, R)
	case kind == ScheduleRounds:
		o := newOrdered(m, P, R)
		o.segRounds = cmp.Or(m.segRounds, segmentRounds)
		m.sched = o
	case kind != ScheduleSequential:
		m.sched = newAsync(m, P, kind == ScheduleAsyncWild)
	default:
		m.sched = &sequential{oneSampler: oneSampler{m}, next: -1}
	}
	return nil
}

// restore continues from checkpoint c, at its exact position.
func (m *SDCA) restore(c *Checkpoint) error {
	st := c.state
	if err := m.restoreDuals(c); err != nil {
		return err
	}
	m.st.setElastic(c.Weights) // taken over: a resumed run holds no second copy
	c.Weights = nil
	m.st.wsq = st.WSq
	m.st.steps, m.st.lsIters, m.epoch = st.Steps, st.LineSearch, st.Epoch
	m.pos = st.Step
	m.warmRefresh, m.warmGaps = st.WarmRefresh, st.WarmGaps
	if err := m.src.UnmarshalBinary(st.RNG); err != nil {
		return fmt.Errorf("resume: random state: %w", err)
	}
	if err := m.sampler.Restore(st.Sampler); err != nil {
		return err
	}
	m.sched.start()
	return m.sched.restore(st)
}

// Smoothness returns, for every sentence i, L_i = λ + R_i/n with R_i
// estimated by 2·Σ_t (‖x_t‖² + 2) — the squared norm of
// F(x_i,y_i) − F(x_i,y) for a path y that differs from the gold one
// everywhere, ignoring overlaps: the SamplerOptions.Smoothness of the
// importance samplers.
func (p *Problem) Smoothness() []float64 {
	d := p.Data
	n := float64(d.Len())
	L := make([]float64, d.Len())
	for i := range L {
		r := 0.0
		for tok := d.SentStart[i]; tok < d.SentStart[i+1]; tok++ {
			x := 0.0
			for j := d.AttrStart[tok]; j < d.AttrStart[tok+1]; j++ {
				v := 1.0
				if d.Values != nil {
					v = d.Values[j]
				}
				x += v * v
			}
			r += 2 * (x + 2)
		}
		L[i] = p.Lambda + r/n
	}
	return L
}

// Weights returns the current weights (the method's own slice; for the
// elastic net a new one, soft(ŵ(μ), λ₁/λ)).
func (m *SDCA) Weights() []float64 { return m.st.primal() }

// Epoch runs n steps, or the rest of an epoch interrupted before. When ctx
// is cancelled it returns between two steps (the scheduler says where it
// can stop), with the position within the epoch kept for checkpoints.
func (m *SDCA) Epoch(ctx context.Context) error { return m.sched.epoch(ctx) }

// endEpoch notes the end of an epoch.
func (m *SDCA) endEpoch() {
	m.pos = 0
	m.live.Store(0)
	m.epoch++
}

// Refresh implements Refresher: it recomputes every block gap at the
// current weights with a full pass over the data (on all cores) and hands
// them to the sampler (Settings.RefreshEvery). It is meant for the start
// of an epoch.
func (m *SDCA) Refresh(ctx context.Context) error {
	r, err := m.p.pass(ctx, m.st.primal(), m.duals, false)
	if err != nil {
		return err
	}
	m.sched.refresh(r.Gaps)
	return nil
}

// EpochSteps returns the number of steps done in the epoch in progress (0
// between epochs).
func (m *SDCA) EpochSteps() int { return m.pos }

// SetCommit installs the function the streamed scheduler calls at a block
// boundary when its store must commit (duals.Stream.NeedCommit): it writes
// a checkpoint of the run at that point (Train installs it when the run
// checkpoints).
func (m *SDCA) SetCommit(commit func() error) { m.commit = commit }

// LiveSteps returns the steps done in the epoch in progress, to within 256
// steps (a round with several workers). It may be called from another
// goroutine while an epoch runs: progress displays poll it.
func (m *SDCA) LiveSteps() int { return int(m.live.Load()) }

// stepOne performs one sequential SDCA step on sentence i, on the run's
// weights, and returns what it did (for tests, between epochs).
func (m *SDCA) stepOne(i int) stepStats {
	st, _ := m.st.step(&draws{sampler: m.sampler, rng: m.rng}, i, false)
	return st
}

// Counters reports steps, line-search evaluations and the running gap estimate.
func (m *SDCA) Counters() Counters {
	est := m.sched.estimate()
	// Every step is one oracle call and one update of w (a step of size 0
	// included: it is the update the method chose); the line search needs
	// no oracle.
	steps := m.st.steps
	calls := steps
	if sc, ok := m.sched.(*streamed); ok {
		calls += sc.refreshed // the gaps of blocks refreshed when read
	}
	return Counters{Steps: steps, LineSearch: m.st.lsIters, GapEstimate: est,
		OracleCalls: calls, Updates: steps, CertifyCalls: int64(m.p.N())}
}

// Certify computes P(ŵ(μ)), D(μ) and every block gap with a full pass and
// checks the gap identity P − D = mean block gap (dualCertificate).
func (m *SDCA) Certify(ctx context.Context) (Certificate, error) {
	// Where w was computed as ŵ(μ) by Init and no step has been made since
	// (the certificate of the initial point), it is taken as it is: the
	// same numbers, one pass over the duals fewer.
	//
	// The certificate's weights go into the buffer of the previous
	// certificate, which the driver has dropped (Certificate.Weights): a
	// run holds w and one ŵ(μ), and makes no garbage of its length.
	if a, ok := m.sched.(*async); ok && !a.fresh {
		// The workers have stopped: training goes on from ŵ(μ), which the
		// certificate is about, and the races' drift is gone.
		if err := a.exact(); err != nil {
			return Certificate{}, err
		}
	}
	var w []float64
	if m.whatAt == m.st.steps {
		w = append(m.certW[:0], m.st.dualVector()...)
		m.certW = w
		m.p.meterAdd(m.p.N()) // the ŵ(μ) half of the certificate's work
	} else {
		var err error
		if w, err = m.p.whatInto(m.certW, m.duals); err != nil {
			return Certificate{}, err
		}
		m.certW = w
	}
	if m.warmGaps {
		// The initial certificate of a warm start (also when a resume
		// makes it: the snapshot says it is due).
		return m.warmCertify(ctx, w)
	}
	c, gaps, err := dualCertificateGaps(ctx, m.p, m.duals, w)
	if sc, ok := m.sched.(*streamed); ok && sc.room > 0 && err == nil {
		// Streamed over blocks, the estimates of sentences stepped many
		// times in one period, and not since, fall far below their gaps:
		// the certificate's exact gaps replace them.
		sc.refresh(gaps)
	}
	return c, err
}

// dualCertificate is the certificate of a dual method at duals μ: P(w(μ)),
// D(μ) and every block gap with a full pass, and the check of the gap
// identity P − D = mean block gap, for the primal point w(μ) = ŵ(μ), or
// soft(ŵ(μ), λ₁/λ) for the elastic net (elastic.go). w, when not nil, is
// ŵ(μ) recomputed from scratch by the caller (a slice the certificate
// takes, and turns into w(μ)); nil: What.
func dualCertificate(ctx context.Context, p *Problem, store duals.Reader, w []float64) (Certificate, error) {
	c, _, err := dualCertificateGaps(ctx, p, store, w)
	return c, err
}

// dualCertificateGaps is dualCertificate that also returns the block gaps.
func dualCertificateGaps(ctx context.Context, p *Problem, store duals.Reader, w []float64) (Certificate, []float64, error) {
	// The pass takes ŵ(μ) recomputed from the duals rather than the
	// incrementally kept w (equal to ~1e-13): the certificate is then exactly
	// about the pair (ŵ(μ), μ) the gap identity speaks of, and its residual
	// falls from ~1e-11 to ~1e-13. Training goes on with its own w, so
	// certifying changes nothing in the run.
	if w == nil {
		var err error
		if w, err = p.What(store); err != nil {
			return Certificate{}, nil, err
		}
	}
	w = p.primalOf(w)
	r, err := p.pass(ctx, w, store, false)
	if err != nil {
		return Certificate{}, nil, err
	}
	c := Certificate{Primal: r.Primal, Dual: r.Dual, Gap: r.Primal - r.Dual, Weights: w}
	c.Residual = math.Abs(c.Gap - r.MeanGap)
	if !(c.Residual <= 1e-7*max(1, math.Abs(r.Primal))) { // a NaN residual fails too
		return c, nil, fmt.Errorf("%w: P − D = %.10g but the mean block gap is %.10g (corrupt duals, or float64 precision exhausted: is λ = %g too small for this data?)",
			ErrIdentity, c.Gap, r.MeanGap, p.Lambda)
	}
	return c, r.Gaps, nil
}

var (
	_ Describer    = (*SDCA)(nil)
	_ Resumer      = (*SDCA)(nil)
	_ Refresher    = (*SDCA)(nil)
	_ Committer    = (*SDCA)(nil)
	_ EpochStepper = (*SDCA)(nil)
)

// storeAndSampler returns the dual store and sampler of a dual method on
// d: the given ones, checked against d's size, or for nil a store in
// memory at precision prec and the default sampler.
func storeAndSampler(d *crf.Dataset, store duals.Store, sampler Sampler, prec duals.Precision) (duals.Store, Sampler, error) {
	if store == nil {
		store = duals.NewMemory(d, prec)
	}
	if store.Len() != d.Len() {
		return nil, nil, fmt.Errorf("%w: dual store has %d blocks for %d sentences", ErrBadProblem, store.Len(), d.Len())
	}
	if sampler == nil {
		var err error
		if sampler, err = NewSampler(DefaultSampler, d.Len(), SamplerOptions{}); err != nil {
			return nil, nil, err
		}
	} else if n := len(sampler.State().Gaps); n != d.Len() {
		return nil, nil, fmt.Errorf("%w: the sampler is sized for %d sentences, the problem has %d", ErrBadProblem, n, d.Len())
	}
	return store, sampler, nil
}

// Close releases the dual variables of a store the method made itself (the
// duals in memory: Duals nil); a store it was given is the caller's to
// close. The weights stay valid. Closing twice does nothing.
func (m *SDCA) Close() error {
	if m.duals == nil || m.Duals != nil {
		return nil
	}
	err := m.duals.Close()
	m.duals = nil
	return err
}
