package train

// Online exponentiated gradient for CRFs (Collins, Globerson, Koo, Carreras
// & Bartlett, JMLR 2008), one of the paper's peers (Le Priol et al. 2018,
// §6.4), on SDCA's dual
//
//	D(μ) = −λ/2 ‖ŵ(μ)‖² + (1/n) Σ_i H̃(μ_i).
//
// The dual block of sentence i is a chain distribution q_i kept by its
// clique log-potentials θ̃_i: one K×K table per edge (node scores folded
// into the edges: node t into edge t, the last node into the last edge),
// K node scores for a sentence of one token — a block of the size of
// SDCA's μ_i. An exponentiated-gradient step on block i with step η,
//
//	θ̃_i ← (1−η)·θ̃_i + η·θ_i(w),   θ_i(w) the scores of sentence i under w = ŵ(μ),
//
// is q_i ← q_i^(1−η)·p_w^η, renormalised. Its marginals μ_i' come from a
// forward–backward on θ̃_i' (one oracle call per trial), and w moves by
// −(1/(λn))(E_μ_i'[F] − E_μ_i[F]) exactly as SDCA's primal update. The trial
// is kept only if the dual increases; otherwise η_i is halved and the step
// tried again (at most oegMaxTrials trials a step). After a kept step η_i
// grows by oegGrowth, up to 1 (η = 1 is the step to p_w itself). Sentences
// are visited in a fresh uniform random permutation every epoch.
//
// Each sentence's node marginals, summed edge marginals and entropy are
// cached (T·K + K² + 1 numbers, less than its block) so that a step needs
// one forward–backward per trial and no recomputation of the old point.
// The certificate is SDCA's: ŵ(μ) recomputed from scratch (from the cached
// sums), P, D and the block gaps from a full pass, the gap identity
// checked; μ is rebuilt from the potentials as the pass reads it.

import (
	"context"
	"math"
	"math/rand/v2"

	"github.com/dualcrf/dualcrf/crf"
	"github.com/dualcrf/dualcrf/duals"
)

// OEG's constants.
const (
	// oegGrowth multiplies η_i after a step that increased the dual.
	oegGrowth = 1.05
	// oegInitWeight is the potential of the gold label pairs in the initial
	// θ̃_i (all others 0): q_i⁰ puts about e^(−oegInitWeight) ≈ 1e-9 on each
	// other pair, near SDCA's initial duals (DefaultEpsilon).
	oegInitWeight = 20.7
	// oegMaxTrials bounds the trials of one step.
	oegMaxTrials = 10
)

// OEG is the online exponentiated-gradient method. The zero value of each
// field is its documented default.
type OEG struct {
	// Eta is the initial step size of every sentence, in (0, 1]; 0 means
	// DefaultOEGEta.
	Eta float64
	// Seed seeds the permutations; the same seed gives the same weights bit
	// for bit.
	Seed uint64

	p      *Problem
	theta  *duals.Memory // θ̃_i
	cache  []float64     // per sentence: node marginals (T×K), then summed edge marginals (K×K, T ≥ 2)
	off    []int
	ent    []float64 // H̃(μ_i)
	eta    []float64
	w      []float64
	certW  []float64 // the last certificate's weights
	rng    *rand.Rand
	rows   *sentenceRows
	lat    *crf.Lattice
	fb     *chainFB
	g      []float64 // scratch d-vector: the step's direction v
	ew     []float64 // scratch: θ_i(w) in edge form
	trial  []float64 // scratch: the trial potentials
	mu     []float64 // scratch: the trial marginals
	node   []float64 // scratch: their node marginals
	sum    []float64 // scratch: their summed edge marginals
	steps  int64
	trials int64
	upd    int64
}

// OEGBytes returns the bytes of OEG's state on d beyond the weights: the
// potentials (blocks of μ's size, DualBytes) and the cached marginal sums
// and entropies.
func OEGBytes(d *crf.Dataset) int64 {
	return duals.Bytes(d, duals.Float64) + SAGBytes(d) + 8*int64(d.Len())
}

// Describe declares OEG: its settings, and none of the options some
// methods read (it draws random permutations; its potentials stay in
// memory; it cannot resume).
func (m *OEG) Describe() Description {
	return Description{Name: "oeg", Title: "OEG", Loss: LossLog,
		Summary: "online exponentiated gradient (Collins et al. 2008), with SDCA's dual certificate",
		Settings: []Setting{
			{Field: "Eta", Name: "oeg-eta", Default: DefaultOEGEta,
				Help: "OEG: every sentence's initial step size η_i, in (0,1] (halved while the dual does not increase, ×1.05 after a kept step)",
				Want: "want a step size in (0,1]", Valid: floatIn(0, 1, true, false)},
			seedSetting("the permutations"),
		}}
}

// Check refuses a setting out of range with an *option.Error naming it
// (CheckSettings); a zero that stands for a default passes. Init checks
// too.
func (m *OEG) Check() error { return CheckSettings(m, nil) }

// Facts returns what a model records of OEG: its seed.
func (m *OEG) Facts(p *Problem) map[string]any { return map[string]any{"seed": m.Seed} }

// Init sets every θ̃_i to oegInitWeight on the gold label pairs and w to
// ŵ(μ) of their marginals.
func (m *OEG) Init(p *Problem) error {
	if err := m.Check(); err != nil {
		return err
	}
	if err := refuseL1(p, "OEG"); err != nil {
		return err
	}
	m.p = p
	d := p.Data
	n := d.Len()
	K := p.Layout.NumLabels
	eta := m.Eta
	if eta == 0 {
		eta = DefaultOEGEta
	}
	m.theta = duals.NewMemory(d, duals.Float64)
	m.off = sagOffsets(d)
	m.cache = make([]float64, m.off[n])
	m.ent = make([]float64, n)
	m.eta = make([]float64, n)
	m.rng = rand.New(rand.NewPCG(m.Seed, 0x0e9))
	m.rows = newSentenceRows(d)
	m.lat = crf.NewLattice(K)
	m.fb = &chainFB{}
	m.g = make([]float64, p.Layout.Dim())
	m.steps, m.trials, m.upd = 0, 0, 0
	for i := 0; i < n; i++ {
		m.eta[i] = eta
		s := d.Sentence(i)
		T := s.Len()
		th := m.theta.Floats(i)
		clear(th)
		if T == 1 {
			th[s.Labels[0]] = oegInitWeight
		}
		for t := 0; t+1 < T; t++ {
			th[(t*K+int(s.Labels[t]))*K+int(s.Labels[t+1])] = oegInitWeight
		}
		m.mu = grow(m.mu, len(th))
		m.ent[i] = m.fb.run(th, T, K, m.mu)
		node, sum := m.cached(i, T)
		crf.NodeFromBlock(m.mu, T, K, node)
		edgeSum(m.mu, T, K, sum)
	}
	m.w = m.what(nil)
	return nil
}

// what computes ŵ(μ) = (1/(λn)) Σ_i (F_i − E_μ_i[F]) from scratch, from the
// cached node and summed edge marginals (those of the potentials, computed
// when they were set), without a forward–backward, into dst (a new vector
// when it is too short).
func (m *OEG) what(dst []float64) []float64 {
	p := m.p
	d := p.Data
	w := p.goldInto(dst)
	for i := 0; i < d.Len(); i++ {
		s := d.Sentence(i)
		node, sum := m.cached(i, s.Len())
		addExpectedSum(w, p.Layout, s, node, sum, -1)
	}
	p.applyMask(w)
	c := 1 / (p.Lambda * float64(d.Len()))
	for j := range w {
		w[j] *= c
	}
	return w
}

// cached returns sentence i's cached node marginals and summed edge
// marginals (nil for T = 1).
func (m *OEG) cached(i, T int) (node, sum []float64) {
	K := m.p.Layout.NumLabels
	c := m.cache[m.off[i]:m.off[i+1]]
	if T < 2 {
		return c[:T*K], nil
	}
	return c[:T*K], c[T*K:]
}

// edgeSum sets sum (K×K) to the edge marginals of block mu summed over the
// positions (nothing for T = 1).
func edgeSum(mu []float64, T, K int, sum []float64) {
	if T < 2 {
		return
	}
	clear(sum[:K*K])
	for t := 0; t < T-1; t++ {
		for j, v := range mu[t*K*K : (t+1)*K*K] {
			sum[j] += v
		}
	}
}

// Epoch visits every sentence once, in a fresh random permutation. When
// ctx is cancelled it returns its error between two steps.
func (m *OEG) Epoch(ctx context.Context) error {
	for k, i := range m.rng.Perm(m.p.N()) {
		if k&255 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		m.step(i)
	}
	return nil
}

// step makes one OEG step on sentence i: trials with η_i halved until the
// dual increases.
func (m *OEG) step(i int) {
	p := m.p
	lay := p.Layout
	K := lay.NumLabels
	s := p.Data.Sentence(i)
	T := s.Len()
	m.steps++
	th := m.theta.Floats(i)
	bl := len(th)
	// θ_i(w) in edge form.
	m.lat.SetScores(lay, m.w, s)
	m.ew = grow(m.ew, bl)
	edgeForm(m.lat.Node()[:T*K], m.lat.Trans(), T, K, m.ew)
	m.trial, m.mu = grow(m.trial, bl), grow(m.mu, bl)
	m.node, m.sum = grow(m.node, T*K), grow(m.sum, K*K)
	oldNode, oldSum := m.cached(i, T)
	rows := m.rows.of(i)
	ln := p.Lambda * float64(p.N())
	c := 1 / ln
	for trial := 0; trial < oegMaxTrials; trial++ {
		eta := m.eta[i]
		for j := range th {
			m.trial[j] = (1-eta)*th[j] + eta*m.ew[j]
		}
		h := m.fb.run(m.trial, T, K, m.mu)
		m.trials++
		crf.NodeFromBlock(m.mu, T, K, m.node)
		edgeSum(m.mu, T, K, m.sum)
		// v = −c(E_μ'[F] − E_μ[F]) on i's rows and the tail.
		addExpectedSum(m.g, lay, s, m.node, m.sum[:K*K], -c)
		addExpectedSum(m.g, lay, s, oldNode, oldSum, c)
		m.maskRows(rows)
		wv, vv := 0.0, 0.0
		for _, a := range rows {
			lo, hi := lay.Span(a)
			wv += dot(m.w[lo:hi], m.g[lo:hi])
			vv += dot(m.g[lo:hi], m.g[lo:hi])
		}
		tr := lay.Trans()
		wv += dot(m.w[tr:], m.g[tr:])
		vv += dot(m.g[tr:], m.g[tr:])
		if gain := h - m.ent[i] - ln/2*(2*wv+vv); gain > 0 {
			for _, a := range rows {
				lo, hi := lay.Span(a)
				for j := lo; j < hi; j++ {
					m.w[j] += m.g[j]
				}
			}
			for j := tr; j < len(m.w); j++ {
				m.w[j] += m.g[j]
			}
			copy(th, m.trial)
			copy(oldNode, m.node)
			if T >= 2 {
				copy(oldSum, m.sum[:K*K])
			}
			m.ent[i] = h
			m.eta[i] = min(1, eta*oegGrowth)
			m.upd++
			m.clearDirection(rows)
			return
		}
		m.clearDirection(rows)
		m.eta[i] = eta / 2
	}
}

// maskRows zeroes the masked-out entries of the direction on rows and
// the transitions (a sparse layout holds no masked-out entry on rows).
func (m *OEG) maskRows(rows []int32) {
	p := m.p
	K := p.Layout.NumLabels
	if p.Mask != nil {
		for _, a := range rows {
			off := p.Layout.Row(a)
			p.maskRow(m.g[off:off+K], a)
		}
	}
	p.maskTrans(m.g[p.Layout.Trans() : p.Layout.Trans()+K*K])
}

// clearDirection zeroes the scratch direction on rows and the tail.
func (m *OEG) clearDirection(rows []int32) {
	lay := m.p.Layout
	for _, a := range rows {
		lo, hi := lay.Span(a)
		clear(m.g[lo:hi])
	}
	clear(m.g[lay.Trans():])
}

// edgeForm writes the node scores θ (T×K) and transitions B (K×K) of a
// sentence as per-edge potentials: edge t is θ_t(y) + B[y,y'], plus
// θ_{T−1}(y') on the last edge; for T = 1 the K node scores.
func edgeForm(theta, B []float64, T, K int, dst []float64) {
	if T == 1 {
		copy(dst[:K], theta[:K])
		return
	}
	for t := 0; t < T-1; t++ {
		e := dst[t*K*K : (t+1)*K*K]
		for y := 0; y < K; y++ {
			for y2 := 0; y2 < K; y2++ {
				e[y*K+y2] = theta[t*K+y] + B[y*K+y2]
			}
		}
	}
	last := dst[(T-2)*K*K : (T-1)*K*K]
	for y := 0; y < K; y++ {
		for y2 := 0; y2 < K; y2++ {
			last[y*K+y2] += theta[(T-1)*K+y2]
		}
	}
}

// chainMinSum: a rescaled recursion whose sum falls below it may have lost
// paths to underflow (or be subnormal, with few digits), so chainFB redoes
// the sentence in the log domain.
const chainMinSum = 1e-280

// chainFB is forward–backward on a chain with arbitrary per-edge
// log-potentials, in the exponential domain, rescaled per position.
type chainFB struct {
	a, b, P []float64
	M       []float64
}

// run computes the clique marginals mu of the chain with edge potentials E
// (a block: (T−1)×K×K, or K node potentials for T = 1) and returns its
// entropy H = log Z − ⟨μ, E⟩.
func (f *chainFB) run(E []float64, T, K int, mu []float64) float64 {
	if T == 1 {
		mx := math.Inf(-1)
		for _, e := range E[:K] {
			mx = max(mx, e)
		}
		z := 0.0
		for y, e := range E[:K] {
			mu[y] = math.Exp(e - mx)
			z += mu[y]
		}
		h := mx + math.Log(z)
		for y := range mu[:K] {
			mu[y] /= z
			h -= mu[y] * E[y]
		}
		return h
	}
	n := (T - 1) * K * K
	f.P, f.M = grow(f.P, n), grow(f.M, T-1)
	f.a, f.b = grow(f.a, T*K), grow(f.b, T*K)
	for t := 0; t < T-1; t++ {
		e, P := E[t*K*K:(t+1)*K*K], f.P[t*K*K:(t+1)*K*K]
		mx := math.Inf(-1)
		for _, x := range e {
			mx = max(mx, x)
		}
		f.M[t] = mx
		for j, x := range e {
			P[j] = math.Exp(x - mx)
		}
	}
	logZ := math.Log(float64(K))
	for y := 0; y < K; y++ {
		f.a[y] = 1 / float64(K)
	}
	for t := 0; t < T-1; t++ {
		P := f.P[t*K*K : (t+1)*K*K]
		at, an := f.a[t*K:(t+1)*K], f.a[(t+1)*K:(t+2)*K]
		clear(an)
		for y, av := range at {
			if av == 0 {
				continue
			}
			for y2, pv := range P[y*K : (y+1)*K] {
				an[y2] += av * pv
			}
		}
		z := 0.0
		for _, v := range an {
			z += v
		}
		if !(z >= chainMinSum) || math.IsInf(z, 0) {
			return f.runLog(E, T, K, mu) // the paths through here underflowed
		}
		for y2 := range an {
			an[y2] /= z
		}
		logZ += f.M[t] + math.Log(z)
	}
	for y := 0; y < K; y++ {
		f.b[(T-1)*K+y] = 1
	}
	for t := T - 2; t >= 0; t-- {
		P := f.P[t*K*K : (t+1)*K*K]
		bt, bn := f.b[t*K:(t+1)*K], f.b[(t+1)*K:(t+2)*K]
		z := 0.0
		for y := 0; y < K; y++ {
			bt[y] = dot(P[y*K:(y+1)*K], bn)
			z += bt[y]
		}
		if !(z >= chainMinSum) || math.IsInf(z, 0) {
			return f.runLog(E, T, K, mu)
		}
		for y := range bt {
			bt[y] /= z
		}
	}
	h := logZ
	for t := 0; t < T-1; t++ {
		P, e := f.P[t*K*K:(t+1)*K*K], E[t*K*K:(t+1)*K*K]
		at, bn := f.a[t*K:(t+1)*K], f.b[(t+1)*K:(t+2)*K]
		m := mu[t*K*K : (t+1)*K*K]
		z := 0.0
		for y, av := range at {
			for y2 := 0; y2 < K; y2++ {
				v := av * P[y*K+y2] * bn[y2]
				m[y*K+y2] = v
				z += v
			}
		}
		if !(z >= chainMinSum) || math.IsInf(z, 0) {
			return f.runLog(E, T, K, mu)
		}
		for j := range m {
			m[j] /= z
			if m[j] > 0 {
				h -= m[j] * e[j]
			}
		}
	}
	return h
}

// runLog is run in the log domain: slower (a logarithm and K
// exponentials per entry), for potentials so far apart that the rescaled
// recursions underflow.
func (f *chainFB) runLog(E []float64, T, K int, mu []float64) float64 {
	f.a, f.b = grow(f.a, T*K), grow(f.b, T*K)
	tmp := make([]float64, K)
	clear(f.a[:K])
	for t := 0; t < T-1; t++ {
		e := E[t*K*K : (t+1)*K*K]
		for y2 := 0; y2 < K; y2++ {
			for y := 0; y < K; y++ {
				tmp[y] = f.a[t*K+y] + e[y*K+y2]
			}
			f.a[(t+1)*K+y2] = crf.LogSumExp(tmp)
		}
	}
	logZ := crf.LogSumExp(f.a[(T-1)*K : T*K])
	clear(f.b[(T-1)*K : T*K])
	for t := T - 2; t >= 0; t-- {
		e := E[t*K*K : (t+1)*K*K]
		for y := 0; y < K; y++ {
			for y2 := 0; y2 < K; y2++ {
				tmp[y2] = e[y*K+y2] + f.b[(t+1)*K+y2]
			}
			f.b[t*K+y] = crf.LogSumExp(tmp)
		}
	}
	h := logZ
	for t := 0; t < T-1; t++ {
		e, m := E[t*K*K:(t+1)*K*K], mu[t*K*K:(t+1)*K*K]
		for y := 0; y < K; y++ {
			for y2 := 0; y2 < K; y2++ {
				j := y*K + y2
				m[j] = math.Exp(f.a[t*K+y] + e[j] + f.b[(t+1)*K+y2] - logZ)
				if m[j] > 0 {
					h -= m[j] * e[j]
				}
			}
		}
	}
	return h
}

// Weights returns the current weights (the method's own slice).
func (m *OEG) Weights() []float64 { return m.w }

// Certify is SDCA's certificate (dualCertificate) on the marginals of the
// potentials, ŵ(μ) recomputed from the cached marginal sums.
func (m *OEG) Certify(ctx context.Context) (Certificate, error) {
	m.certW = m.what(m.certW) // the buffer of the certificate before (Certificate.Weights)
	return dualCertificate(ctx, m.p, oegDuals{m}, m.certW)
}

// Counters reports sentence visits as steps, every trial (one
// forward–backward on the trial potentials) as an oracle call, the trials
// beyond the first of a step as line-search evaluations, the kept steps as
// updates. A certificate rebuilds μ from the potentials as the pass reads
// it besides the pass's own oracle: 2n forward–backward passes.
func (m *OEG) Counters() Counters {
	return Counters{Steps: m.steps, LineSearch: m.trials - m.steps, GapEstimate: nan(), OracleCalls: m.trials,
		Updates: m.upd, CertifyCalls: 2 * int64(m.p.N())}
}

// Close releases the potentials.
func (m *OEG) Close() error {
	if m.theta == nil {
		return nil
	}
	return m.theta.Close()
}

// oegDuals shows OEG's potentials as a reader of the duals, their
// marginals, each block computed when asked for (safe for concurrent use:
// every call has its own scratch space).
type oegDuals struct{ m *OEG }

// Load sets mu to μ_i, the marginals of θ̃_i.
func (o oegDuals) Load(i int, mu []float64) {
	th := o.m.theta.Floats(i)
	s := o.m.p.Data.Sentence(i)
	(&chainFB{}).run(th, s.Len(), o.m.p.Layout.NumLabels, mu[:len(th)])
}

// Len returns the number of blocks.
func (o oegDuals) Len() int { return o.m.theta.Len() }

var (
	_ Describer    = (*OEG)(nil)
	_ duals.Reader = oegDuals{}
)
