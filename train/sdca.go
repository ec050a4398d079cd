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
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"sync/atomic"

	"github.com/dualcrf/dualcrf/crf"
	"github.com/dualcrf/dualcrf/internal/num"
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
	// otherwise they are kept in memory.
	Duals DualStore
	// Workers is the number of goroutines making SDCA steps at once, each
	// on its own partition of the sentences (parallel.go); 0 means
	// DefaultWorkers, 1 the sequential SDCA, and AllWorkers
	// runtime.GOMAXPROCS (1 when Sampler is set and is not a Splitter).
	// More than one needs a Sampler that is a Splitter (NewSampler's are).
	// The same seed and number of workers give the same weights bit for
	// bit.
	Workers int
	// RoundSteps is about the number of steps each worker makes between two
	// aggregations of the workers' changes to the weights; 0 means
	// DefaultRoundSteps. It applies to more than one worker only.
	RoundSteps int

	p       *Problem
	w       []float64
	wsq     float64
	duals   DualStore
	sampler Sampler // the sampler in use: Sampler, or the default one
	sub     float64 // the sub-precision in use
	src     *rand.PCG
	rng     *rand.Rand
	ws      *stepWork
	rows    *sentenceRows
	steps   int64
	lsIters int64
	epoch   int          // completed epochs
	pos     int          // steps done in the epoch in progress
	live    atomic.Int64 // pos, published every 256 steps for LiveSteps
	next    int          // the sentence drawn for step pos (when pos > 0 and sequential)

	par *parallel // the workers, when there are more than one
	// A worker of a parallel SDCA is an SDCA too, on its partition: its
	// sampler's indices stand for the sentences sents, and it steps
	// against its own view of the weights, with the curvature of the
	// weights scaled (parallel.go).
	sents     []int     // the sentence of each of the sampler's indices; nil: the identity
	scale     []float64 // per attribute: σ′ of its row; nil: 1 everywhere (sequential)
	tailScale float64   // σ′ of the dense tail (B, bias, start, end)
	rowScale  []float64 // per packed row of the step's direction: its σ′
	touched   []int32   // attributes whose rows this worker changed in the round
	seen      []bool    // per attribute: in touched

	// A streamed store's epoch (sdca_stream.go): its block order, the
	// blocks of it done, and the commit hook.
	order  []int     // blocks of the epoch, in order
	bsteps []int     // steps on each
	bshare []float64 // the non-uniform share of each one's sampler
	bpos   int
	commit func() error
	// whatAt is the step count at which w was set to ŵ(μ) computed from
	// the duals (Init), −1 if never.
	whatAt int64
}

// DefaultEpsilon is the uniform weight ε of the initial duals. Since
// ŵ(μ⁰) = (ε/(λn)) Σ_i (F_i − E_uniform[F]) grows with the corpus, a large ε
// starts far out (ε = 1e-3 gives an initial gap of 594 on CoNLL-2000); with
// 1e-9 the start is w ≈ 0 and the gap 73.2, the paper's 73.1, and the
// following epochs match the paper's curve.
const DefaultEpsilon = 1e-9

// stepWork is the scratch space of one SDCA step, sized once.
type stepWork struct {
	lat      *crf.Lattice
	nu       []float64 // block
	fa, fc   []float64 // (T−1)×K factors of log ν (crf.Lattice.LogEdgeFactors)
	edges    edgeTerms
	muN, nuN []float64 // T×K node marginals
	// K×K edge marginals summed over the positions (Σ_t μ_t, Σ_t ν_t): the
	// direction's transition part.
	muSum, nuSum []float64
	dN           []float64 // T×K node δ
	lmuN         []float64 // T×K log μ nodes
	lnuN         []float64 // T×K log ν nodes
	// The direction v: on the attribute rows the step touches, packed
	// (row r of vr is attribute rows[r]), and on the dense tail (B, bias,
	// start, end). Packing keeps it in cache; a dense d-vector would put
	// every row of it a cache miss away.
	rows  []int32   // attributes touched by this step (a view of sentenceRows)
	vr    []float64 // len(rows)×K
	vt    []float64 // Dim − Trans()
	tokOf []int32   // per attribute occurrence of the sentence: its token
}

// sentenceRows lists, for every sentence, the distinct attributes it uses
// (in order of first use) and, for every attribute occurrence, its index
// in that list: the packed rows of an SDCA step's direction, computed once
// instead of looked up per occurrence in every step.
type sentenceRows struct {
	start []int   // sentence i's attributes are attrs[start[i]:start[i+1]]
	attrs []int32 // distinct attributes per sentence
	slot  []int32 // per occurrence j (an index into Dataset.Attrs): its row
}

// newSentenceRows indexes the distinct attributes of every sentence of d.
func newSentenceRows(d *crf.Dataset) *sentenceRows {
	r := &sentenceRows{start: make([]int, d.Len()+1), slot: make([]int32, len(d.Attrs))}
	seen := make([]int32, d.NumAttrs) // per attribute: 1 + its row in the current sentence's list
	for i := 0; i < d.Len(); i++ {
		lo := len(r.attrs)
		r.start[i] = lo
		for j := d.AttrStart[d.SentStart[i]]; j < d.AttrStart[d.SentStart[i+1]]; j++ {
			a := d.Attrs[j]
			if seen[a] == 0 {
				r.attrs = append(r.attrs, a)
				seen[a] = int32(len(r.attrs) - lo)
			}
			r.slot[j] = seen[a] - 1
		}
		for _, a := range r.attrs[lo:] {
			seen[a] = 0
		}
	}
	r.start[d.Len()] = len(r.attrs)
	return r
}

// of returns sentence i's distinct attributes.
func (r *sentenceRows) of(i int) []int32 { return r.attrs[r.start[i]:r.start[i+1]] }

// StepStats describes one SDCA step, for tests and the log.
type StepStats struct {
	Sentence int
	Gap      float64 // block gap before the step
	Gamma    float64 // step size taken
	Iters    int     // line-search evaluations
	Slope0   float64 // φ'(0)
}

// Defaults of SDCA's settings; the CLI's flags take them from here.
const (
	DefaultSampler      = SamplerGap
	DefaultSubPrecision = 1e-3
	// DefaultRoundSteps is SDCA.RoundSteps's zero value. On CoNLL-2000
	// (λ = 1/n) 2 workers reach a certified gap of 1e-3 in 19, 20 and 22
	// epochs with rounds of 16, 64 and 256 steps per worker; the
	// aggregation, done by one goroutine, costs about a pass over the rows
	// the round touched, a larger share of shorter rounds.
	DefaultRoundSteps = 64
	// DefaultWorkers is SDCA.Workers's zero value: the sequential SDCA.
	// On CoNLL-2000 2 workers need 19–22 epochs to a certified gap of 1e-3
	// against the sequential SDCA's 13 (the shared rows' steps are damped
	// by σ′), about what 2 cores can win back at best; more workers are
	// there on request.
	DefaultWorkers = 1
	// AllWorkers, as SDCA.Workers, runs one worker per core
	// (runtime.GOMAXPROCS).
	AllWorkers = -1
)

// check validates the settings (zero values stand for their defaults).
func (m *SDCA) check() error {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%w: "+format, append([]any{ErrBadProblem}, a...)...)
	}
	switch {
	case !(m.Epsilon >= 0 && m.Epsilon <= 1):
		return bad("ε = %g, want it in (0,1]", m.Epsilon)
	case !(m.SubPrecision >= 0 && m.SubPrecision < 1):
		return bad("SubPrecision %g, want it in (0,1)", m.SubPrecision)
	case m.Workers < AllWorkers:
		return bad("Workers %d, want AllWorkers (%d), 0 (DefaultWorkers) or more", m.Workers, AllWorkers)
	case m.RoundSteps < 0:
		return bad("RoundSteps %d, want 0 (the default) or more", m.RoundSteps)
	}
	return nil
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

// RunSettings returns every setting of SDCA on p that a resumed run must
// repeat to continue it bit for bit, by the CLI's flag names, with the
// defaults applied: the sampler's (samplerSettings), the seed, ε, the
// sub-precision, λ and the feature space.
func (m *SDCA) RunSettings(p *Problem) map[string]string {
	eps, sub := m.effective()
	g := func(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }
	rs := map[string]string{
		"solver": "sdca", "seed": strconv.FormatUint(m.Seed, 10),
		"epsilon": g(eps), "subprecision": g(sub), "lambda": g(p.Lambda),
		"feature-space": p.FeatureSpace(), "transitions": p.TransitionSpace(),
		"bias": strconv.FormatBool(!p.Layout.NoBias),
	}
	for k, v := range samplerSettings(m.Sampler) {
		rs[k] = v
	}
	// A sequential run records neither, so that its snapshots are those of
	// the SDCA that had no workers.
	streamSettings(rs, m.Duals)
	if P := m.numWorkers(p.N()); P > 1 {
		rs["workers"] = strconv.Itoa(P)
		rs["round-steps"] = strconv.Itoa(m.roundSteps())
	}
	return rs
}

// Init sets μ⁰ = ε·uniform + (1−ε)·gold on every block and w = ŵ(μ⁰).
func (m *SDCA) Init(p *Problem) error {
	if err := m.setup(p); err != nil {
		return err
	}
	d := p.Data
	K := p.Layout.NumLabels
	eps, _ := m.effective()
	if s := m.streamStore(); s != nil {
		if err := m.streamInit(s, eps); err != nil {
			return err
		}
	} else {
		for i := 0; i < d.Len(); i++ {
			s := d.Sentence(i)
			mu := m.duals.Block(i)
			initBlock(mu, s.Labels, K, eps)
			p.meterAdd(1)
		}
	}
	var err error
	if m.w, err = p.What(m.duals); err != nil {
		return err
	}
	m.whatAt = m.steps
	m.wsq = dot(m.w, m.w)
	return m.startWorkers()
}

// Resume prepares SDCA for p at checkpoint c's exact position, a verified
// checkpoint (LoadCheckpoint) of a run with the same settings (Train
// checks them): its duals are copied into the store, and its weights,
// counters, sampler and random state are restored, so the run continues as
// the checkpointed one would have.
func (m *SDCA) Resume(p *Problem, c *Checkpoint) error {
	if err := m.setup(p); err != nil {
		return err
	}
	return m.restore(c)
}

// setup checks the settings and prepares everything but the point: the
// dual store, the sampler, the random numbers and the scratch space.
func (m *SDCA) setup(p *Problem) error {
	if err := m.check(); err != nil {
		return err
	}
	m.p = p
	_, m.sub = m.effective()
	d := p.Data
	m.duals = m.Duals
	if m.duals == nil {
		m.duals = NewMemoryStore(d)
	}
	if m.duals.Len() != d.Len() {
		return fmt.Errorf("%w: dual store has %d blocks for %d sentences", ErrBadProblem, m.duals.Len(), d.Len())
	}
	m.sampler = m.Sampler
	if m.sampler == nil {
		var err error
		if m.sampler, err = NewSampler(DefaultSampler, d.Len(), SamplerOptions{}); err != nil {
			return err
		}
	} else if n := len(m.sampler.State().Gaps); n != d.Len() {
		return fmt.Errorf("%w: the sampler is sized for %d sentences, the problem has %d", ErrBadProblem, n, d.Len())
	}
	m.steps, m.lsIters, m.epoch = 0, 0, 0
	m.pos, m.next = 0, -1
	m.whatAt = -1
	m.src = rand.NewPCG(m.Seed, 0x5dca)
	m.rng = rand.New(m.src)
	m.ws = newStepWork(p)
	m.rows = newSentenceRows(d)
	m.par = nil
	m.order, m.bpos = nil, 0
	if err := m.checkStream(d.Len()); err != nil {
		return err
	}
	if P := m.numWorkers(d.Len()); P > 1 {
		if _, ok := m.sampler.(Splitter); !ok {
			return fmt.Errorf("%w: %d workers need a sampler that can be split (a Splitter, as NewSampler's are); %T is not: use Workers 1",
				ErrBadProblem, P, m.sampler)
		}
		m.par = newParallel(m, P)
	}
	return nil
}

// restore continues from checkpoint c, at its exact position.
func (m *SDCA) restore(c *Checkpoint) error {
	st := c.State
	if err := m.restoreDuals(c); err != nil {
		return err
	}
	m.w = append([]float64(nil), c.Weights...)
	m.wsq = st.WSq
	m.steps, m.lsIters, m.epoch = st.Steps, st.LineSearch, st.Epoch
	m.pos, m.next = st.Step, st.Next
	if err := m.src.UnmarshalBinary(st.RNG); err != nil {
		return fmt.Errorf("resume: random state: %w", err)
	}
	if err := m.sampler.Restore(st.Sampler); err != nil {
		return err
	}
	if st.Stream != nil && st.Step > 0 {
		m.order, m.bpos = append([]int(nil), st.BlockOrder...), st.BlockPos
		m.bsteps = append([]int(nil), st.BlockSteps...)
		m.bshare = append([]float64(nil), st.BlockShare...)
	}
	if err := m.startWorkers(); err != nil {
		return err
	}
	return m.par.restore(st)
}

// initBlock writes ε·uniform + (1−ε)·one-hot(gold) into mu.
func initBlock(mu []float64, gold []int32, K int, eps float64) {
	T := len(gold)
	if T == 1 {
		for y := range mu {
			mu[y] = eps / float64(K)
		}
		mu[gold[0]] += 1 - eps
		return
	}
	u := eps / float64(K*K)
	for i := range mu {
		mu[i] = u
	}
	for t := 0; t < T-1; t++ {
		mu[(t*K+int(gold[t]))*K+int(gold[t+1])] += 1 - eps
	}
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

func newStepWork(p *Problem) *stepWork {
	K := p.Layout.NumLabels
	return &stepWork{
		lat: crf.NewLattice(K),
		vt:  make([]float64, p.Layout.Dim()-p.Layout.Trans()),
	}
}

// What computes ŵ(μ) = (1/(λn)) Σ_i (F(x_i,y_i) − E_μ_i[F]) from scratch.
// Its only error is a StreamStore's failure to read a block.
func (p *Problem) What(duals DualStore) ([]float64, error) {
	d := p.Data
	K := p.Layout.NumLabels
	w := p.GoldFeatures()
	var node []float64
	add := func(i int) {
		s := d.Sentence(i)
		T := s.Len()
		node = grow(node, T*K)
		mu := duals.Block(i)
		crf.NodeFromBlock(mu, T, K, node)
		crf.AddExpected(w, p.Layout, s, node, mu, -1)
		p.meterAdd(1)
	}
	if ss, ok := duals.(*StreamStore); ok {
		// Block by block in file order: the same sum in the same order.
		if err := ss.Visit(ss.Sequential(), VisitOptions{}, func(_, b int) error {
			lo, hi := ss.BlockRange(b)
			for i := lo; i < hi; i++ {
				add(i)
			}
			return nil
		}, nil); err != nil {
			return nil, err
		}
	} else {
		for i := 0; i < d.Len(); i++ {
			add(i)
		}
	}
	p.applyMask(w)
	c := 1 / (p.Lambda * float64(d.Len()))
	for j := range w {
		w[j] *= c
	}
	return w, nil
}

// Weights returns the current weights (the method's own slice).
func (m *SDCA) Weights() []float64 { return m.w }

// Store returns the dual store in use.
func (m *SDCA) Store() DualStore { return m.duals }

// Epoch runs n steps, or the rest of an epoch interrupted before. When ctx
// is cancelled it returns between two steps (every 256 steps, before the
// next sentence is drawn at an epoch's start), with the position within the
// epoch and the sentence already drawn kept for EpochSteps and checkpoints.
func (m *SDCA) Epoch(ctx context.Context) error {
	if m.par != nil {
		return m.par.epoch(ctx)
	}
	if s := m.streamStore(); s != nil {
		return m.streamEpoch(ctx, s)
	}
	n := m.p.N()
	i := m.next
	if m.pos == 0 {
		if err := ctx.Err(); err != nil {
			return err
		}
		i = m.sampler.Next(m.rng)
	}
	// Each step but the epoch's last hands its block gap to the sampler and
	// draws the next sentence as soon as the gap is known — the sampler sees
	// the same calls in the same order as Update-after-Step, Next-before-Step
	// — so that the next sentence's weight rows are fetched while this step
	// finishes.
	for k := m.pos; k < n; k++ {
		if k&255 == 0 && k > 0 {
			m.live.Store(int64(k))
			if ctx.Err() != nil {
				m.pos, m.next = k, i
				return ctx.Err()
			}
		}
		if k == n-1 {
			st, _ := m.step(i, false)
			m.sampler.Update(i, st.Gap)
			break
		}
		_, i = m.step(i, true)
	}
	m.pos, m.next = 0, -1
	m.live.Store(0)
	m.epoch++
	return nil
}

// Refresh recomputes every block gap at the current weights with a full
// pass over the data (on all cores) and hands them to the sampler
// (Settings.RefreshEvery). It is meant for the start of an epoch.
func (m *SDCA) Refresh(ctx context.Context) error {
	r, err := m.p.Pass(ctx, m.w, m.duals, false)
	if err != nil {
		return err
	}
	m.sampler.Refresh(r.Gaps)
	m.par.refresh(r.Gaps)
	return nil
}

// EpochSteps returns the number of steps done in the epoch in progress (0
// between epochs).
func (m *SDCA) EpochSteps() int { return m.pos }

// LiveSteps returns the steps done in the epoch in progress, to within 256
// steps (a round with several workers). Unlike EpochSteps it may be called
// from another goroutine while an epoch runs: progress displays poll it.
func (m *SDCA) LiveSteps() int { return int(m.live.Load()) }

// Step performs one SDCA step on sentence i and returns what it did. With
// more than one worker it is a sequential step on the weights all the
// workers share between rounds (meant between epochs).
func (m *SDCA) Step(i int) StepStats {
	st, _ := m.step(i, false)
	m.par.share(m.ws.rows)
	return st
}

// step performs one SDCA step on the sampler's sentence j (sentence
// sents[j] of a worker). With draw, it also hands the block gap to the
// sampler once it is known, draws the next sentence, starts fetching that
// sentence's weight rows, and returns it.
func (m *SDCA) step(j int, draw bool) (StepStats, int) {
	p := m.p
	ws := m.ws
	lay := p.Layout
	K := lay.NumLabels
	i := m.sentence(j)
	s := p.Data.Sentence(i)
	T := s.Len()
	bl := crf.BlockLen(T, K)
	mu := m.duals.Block(i)
	m.steps++

	// 1. Oracle and block gap D̃(μ‖ν) = Σ_e KL(μ_e‖ν_e) − Σ_s KL(μ_s‖ν_s).
	ws.nu = grow(ws.nu, bl)
	ws.muN = grow(ws.muN, T*K)
	ws.nuN = grow(ws.nuN, T*K)
	ws.dN = grow(ws.dN, T*K)
	ws.lmuN = grow(ws.lmuN, T*K)
	ws.lnuN = grow(ws.lnuN, T*K)
	ws.lat.SetScores(lay, m.w, s)
	ws.lat.ForwardBackward()
	ws.nuSum = grow(ws.nuSum, K*K)
	ws.muSum = grow(ws.muSum, K*K)
	ws.lat.MarginalsSum(ws.nu, ws.nuSum)
	ws.lat.NodeMarginals(ws.nuN)
	muB := blockNodesDot(mu, T, K, ws.lat.Trans(), ws.muN, ws.muSum)
	// Separators are the inner nodes 1..T-2; few, so their logs are taken here.
	sepLo, sepHi := K, max(T-1, 1)*K
	muS, nuS, lmuS := ws.muN[sepLo:sepHi], ws.nuN[sepLo:sepHi], ws.lmuN[sepLo:sepHi]
	lnuS := ws.lnuN[sepLo:sepHi]
	num.LogInto(lmuS, muS)
	num.LogInto(lnuS, nuS)
	e := &ws.edges
	e.prepare(mu, ws.nu, muS, lmuS, nuS)
	gap := e.xlogx - m.muLogNu(T, mu, muB)
	for j, x := range muS {
		if x > 0 {
			gap -= x * (lmuS[j] - lnuS[j])
		}
	}
	st := StepStats{Sentence: i, Gap: max(gap, 0)}
	next := -1
	if draw {
		m.sampler.Update(j, st.Gap)
		next = m.sampler.Next(m.rng)
		prefetchRows(m.w, m.rows.of(m.sentence(next)), K)
	}

	// 2. Directions.
	for j := range ws.dN {
		ws.dN[j] = ws.nuN[j] - ws.muN[j]
	}
	a, b := m.direction(i, s)

	// 3. Line search on φ'(γ) = −[S(γ) − S_sep(γ)] − λn(⟨w,v⟩ + γ‖v‖²).
	ln := p.Lambda * float64(p.N())
	d0 := -(e.s0 - e.s0S) - ln*a
	st.Slope0 = d0
	gamma := 0.0
	if d0 > 0 && !math.IsNaN(d0) {
		gamma, st.Iters = m.lineSearch(mu, d0, a, b, ln)
	}
	st.Gamma = gamma
	m.lsIters += int64(st.Iters)

	// 4. Updates.
	if gamma > 0 {
		e.update(gamma, mu, ws.nu)
		m.applyPrimal(gamma)
		m.wsq += 2*gamma*a + gamma*gamma*b
	}
	m.clearDirection()
	return st, next
}

// muLogNu returns Σ_e μ_e log ν_e over the block's entries for the ν of
// the step's lattice (logNuDot).
func (m *SDCA) muLogNu(T int, mu []float64, muB float64) float64 {
	ws := m.ws
	return logNuDot(ws.lat, T, m.p.Layout.NumLabels, mu, ws.muN, muB, &ws.fa, &ws.fc)
}

// logNuDot returns Σ_e μ_e log ν_e over the entries of the block mu for the
// ν of the lattice's last ForwardBackward, from the factors
// log ν_t(y,y') = a_t(y) + B[y,y'] + c_t(y'):
// Σ_t [Σ_y μ_t(y)·a_t(y) + Σ_y' μ_{t+1}(y')·c_t(y')] + Σ μ·B, with μ's node
// marginals in muN and muB = Σ μ·B (blockNodesDot) — no logarithm per
// entry. fa and fc are scratch, grown as needed.
func logNuDot(lat *crf.Lattice, T, K int, mu, muN []float64, muB float64, fa, fc *[]float64) float64 {
	if T == 1 {
		th, lz := lat.Node(), lat.LogZ()
		s := 0.0
		for y, x := range mu[:K] {
			s += x * (th[y] - lz)
		}
		return s
	}
	n := (T - 1) * K
	*fa, *fc = grow(*fa, n), grow(*fc, n)
	lat.LogEdgeFactors(*fa, *fc)
	return muB + dot(muN[:n], *fa) + dot(muN[K:K+n], *fc)
}

// blockNodesDot sets node (T×K) to the node marginals of the block mu, as
// crf.NodeFromBlock does, sum (K×K) to its edge marginals summed over the
// positions (zero when T = 1), and returns Σ_e μ_e·B_e over its edge entries
// for the K×K transition scores B (0 when T = 1) — all in one pass over the
// block, edge by edge (blockRowsKernel).
func blockNodesDot(mu []float64, T, K int, B, node, sum []float64) (muB float64) {
	sum = sum[:K*K]
	clear(sum)
	if T == 1 {
		copy(node[:K], mu[:K])
		return 0
	}
	for t := 0; t < T-1; t++ {
		muB += blockRowsKernel(mu[t*K*K:(t+1)*K*K], K, B, node[t*K:(t+1)*K], sum)
	}
	blk := mu[(T-2)*K*K : (T-1)*K*K]
	last := node[(T-1)*K : T*K]
	clear(last)
	for y := 0; y < K; y++ {
		for y2, v := range blk[y*K : (y+1)*K] {
			last[y2] += v
		}
	}
	return muB
}

// direction fills ws.vr and ws.vt with v = −(1/(λn)) E_δ[F] on the rows of
// sentence i (s), B, bias, start and end (δ = ν − μ: its node part in
// ws.dN, its sum over the edges in ws.nuSum − ws.muSum), and returns ⟨w,v⟩
// and ‖v‖².
func (m *SDCA) direction(i int, s crf.Sentence) (wv, vv float64) {
	p := m.p
	ws := m.ws
	lay := p.Layout
	K := lay.NumLabels
	T := s.Len()
	c := -1 / (p.Lambda * float64(p.N()))
	ws.rows = m.rows.of(i)
	ws.vr = grow(ws.vr, len(ws.rows)*K)
	clear(ws.vr)
	// Row slot[j] gains c·x_j·δ_t for every attribute occurrence j of token t.
	lo, hi := s.AttrStart[0], s.AttrStart[T]
	if cap(ws.tokOf) < hi-lo {
		ws.tokOf = make([]int32, hi-lo, 2*(hi-lo))
	}
	ws.tokOf = ws.tokOf[:hi-lo]
	for t := 0; t < T; t++ {
		for j := s.AttrStart[t]; j < s.AttrStart[t+1]; j++ {
			ws.tokOf[j-lo] = int32(t)
		}
	}
	var values []float64
	if s.Values != nil {
		values = s.Values[lo:hi]
	}
	axpyRows(ws.vr, m.rows.slot[lo:hi], ws.dN, ws.tokOf, values, c, K)
	if p.Mask != nil {
		for r, a := range ws.rows {
			p.maskRow(ws.vr[r*K:r*K+K], a)
		}
	}
	if m.scale == nil {
		vv = dotKernel(ws.vr, ws.vr)
	} else {
		vv = m.scaledNorm()
	}
	// ⟨w, v⟩ on the attribute rows is c·Σ_t Σ_j x_j⟨U[a_j], δ_t⟩ = c·Σ_t ⟨θ_t − bias − start/end, δ_t⟩
	// with the node scores θ of the oracle (masked-out weights are zero, so
	// the mask changes nothing here).
	th := ws.lat.Node()
	for t := 0; t < T; t++ {
		row, dn := th[t*K:(t+1)*K], ws.dN[t*K:(t+1)*K]
		if lay.NoBias {
			wv += dot(row, dn)
			continue
		}
		bias := m.w[lay.Bias() : lay.Bias()+K]
		start, end := m.w[lay.Start():lay.Start()+K], m.w[lay.End():lay.End()+K]
		for y, x := range dn {
			u := row[y] - bias[y]
			if t == 0 {
				u -= start[y]
			}
			if t == T-1 {
				u -= end[y]
			}
			wv += u * x
		}
	}
	wv *= c
	// The dense tail: B (Σ_t δ_e), then bias (Σ_t δ_t), start (δ_0), end (δ_{T-1}).
	tail := ws.vt
	tr := tail[:K*K]
	for j := range tr {
		tr[j] = c * (ws.nuSum[j] - ws.muSum[j])
	}
	p.maskTrans(tr)
	if !lay.NoBias {
		bias := tail[K*K : K*K+K]
		for t := 0; t < T; t++ {
			for y, x := range ws.dN[t*K : (t+1)*K] {
				bias[y] += c * x
			}
		}
		start := tail[K*K+K : K*K+2*K]
		end := tail[K*K+2*K : K*K+3*K]
		for y := 0; y < K; y++ {
			start[y] = c * ws.dN[y]
			end[y] = c * ws.dN[(T-1)*K+y]
		}
	}
	wt := m.w[lay.Trans():]
	wv += dot(wt, tail)
	if m.scale == nil {
		vv += dot(tail, tail)
	} else {
		vv += m.tailScale * dot(tail, tail)
	}
	return wv, vv
}

// applyPrimal adds γv to w on the touched rows and the dense tail (a
// worker: γσ′v to its view, parallel.go).
func (m *SDCA) applyPrimal(gamma float64) {
	if m.scale != nil {
		m.applyScaled(gamma)
		return
	}
	lay := m.p.Layout
	K := lay.NumLabels
	ws := m.ws
	axpyRows(m.w, ws.rows, ws.vr, nil, nil, gamma, K)
	w, v := m.w[lay.Trans():], ws.vt
	for j := range w {
		w[j] += gamma * v[j]
	}
}

// clearDirection zeroes the direction's dense tail for the next step (its
// packed rows start empty).
func (m *SDCA) clearDirection() {
	clear(m.ws.vt)
}

// lineSearch maximises φ on [0,1] by safeguarded Newton on φ', given
// φ'(0) = d0 > 0, ⟨w,v⟩ = a, ‖v‖² = b and λn = ln. It keeps a bracket
// [lo, hi] with φ'(lo) > 0 > φ'(hi), starting from [0, 1] — φ'(1) = −λn‖v‖²
// costs nothing — and its first point is the bracket's secant root: near 0
// the entropy's log barrier makes φ” huge, so a Newton step from 0 is tiny
// and would stop the search far from the optimum. A Newton step that leaves
// the bracket is replaced by the secant root of the bracket (bisection when
// that is degenerate). It stops when a step is shorter than the
// sub-precision, and returns the step and the number of evaluations of φ'.
func (m *SDCA) lineSearch(mu []float64, d0, a, b, ln float64) (float64, int) {
	ws := m.ws
	tol := m.sub
	eval := func(g float64) (d, dd float64) {
		s, s2 := ws.edges.eval(g, mu, ws.nu) // edges less separators
		return -s - ln*(a+g*b), -s2 - ln*b
	}
	// φ'(1) = −λn‖v‖² < 0 unless v = 0, in which case the full step is optimal.
	if b <= 0 {
		return 1, 0
	}
	lo, hi := 0.0, 1.0
	dlo, dhi := d0, -ln*b
	secant := func() float64 {
		g := lo + dlo*(hi-lo)/(dlo-dhi)
		if !(g > lo && g < hi) {
			g = 0.5 * (lo + hi)
		}
		return g
	}
	g := secant()
	const maxIters = 60
	for it := 1; it <= maxIters; it++ {
		d, dd := eval(g)
		if d > 0 {
			lo, dlo = g, d
		} else {
			hi, dhi = g, d
		}
		next := math.NaN()
		if dd < 0 {
			next = g - d/dd
		}
		if !(next > lo && next < hi) {
			next = secant()
		}
		if math.Abs(next-g) < tol || hi-lo < tol {
			return next, it
		}
		g = next
	}
	return g, maxIters
}

// Counters reports steps, line-search evaluations and the running gap estimate.
func (m *SDCA) Counters() Counters {
	est := m.sampler.Estimate()
	if m.par != nil {
		est = m.par.estimate()
	}
	// Every step is one oracle call and one update of w (a step of size 0
	// included: it is the update the method chose); the line search needs
	// no oracle.
	return Counters{Steps: m.steps, LineSearch: m.lsIters, GapEstimate: est,
		OracleCalls: m.steps, Updates: m.steps, CertifyCalls: int64(m.p.N())}
}

// Certify computes P(ŵ(μ)), D(μ) and every block gap with a full pass and
// checks the gap identity P − D = mean block gap (dualCertificate).
func (m *SDCA) Certify(ctx context.Context) (Certificate, error) {
	// Streamed, where w was computed as ŵ(μ) by Init and no step has been
	// made since, it is taken as it is: the same numbers, one read of the
	// file fewer.
	var w []float64
	if m.streamStore() != nil && m.whatAt == m.steps {
		w = slices.Clone(m.w)
	}
	return dualCertificate(ctx, m.p, m.duals, w)
}

// dualCertificate is the certificate of a dual method at duals μ: P(ŵ(μ)),
// D(μ) and every block gap with a full pass, and the check of the gap
// identity P − D = mean block gap. w, when not nil, is ŵ(μ) recomputed
// from scratch by the caller (a slice the certificate takes); nil: What.
func dualCertificate(ctx context.Context, p *Problem, duals DualStore, w []float64) (Certificate, error) {
	// The pass takes ŵ(μ) recomputed from the duals rather than the
	// incrementally kept w (equal to ~1e-13): the certificate is then exactly
	// about the pair (ŵ(μ), μ) the gap identity speaks of, and its residual
	// falls from ~1e-11 to ~1e-13. Training goes on with its own w, so
	// certifying changes nothing in the run.
	if w == nil {
		var err error
		if w, err = p.What(duals); err != nil {
			return Certificate{}, err
		}
	}
	r, err := p.Pass(ctx, w, duals, false)
	if err != nil {
		return Certificate{}, err
	}
	c := Certificate{Primal: r.Primal, Dual: r.Dual, Gap: r.Primal - r.Dual, Weights: w}
	c.Residual = math.Abs(c.Gap - r.MeanGap)
	if c.Residual > 1e-7*max(1, math.Abs(r.Primal)) {
		return c, fmt.Errorf("%w: P − D = %.10g but the mean block gap is %.10g (corrupt duals, or float64 precision exhausted: is λ = %g too small for this data?)",
			ErrIdentity, c.Gap, r.MeanGap, p.Lambda)
	}
	return c, nil
}

var (
	_ Method    = (*SDCA)(nil)
	_ Resumer   = (*SDCA)(nil)
	_ Refresher = (*SDCA)(nil)
)
