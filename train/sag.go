package train

// SAG for CRFs (Schmidt, Babanezhad, Ahmed, Defazio, Clifton & Sarkar,
// AISTATS 2015, arXiv 1504.04406), one of the paper's peers (Le Priol et
// al. 2018, §6.4), with the rules of Schmidt's own adaptive non-uniform
// SAG code: SAG_LipschitzLS_logistic.c of the SAG4CRF and SAG packages,
// read in its R port (IshmaelBelghazi/bigoptim, src/sag_adaptive.c; cited
// below as "sag_adaptive.c"). SAG-NUS*'s line-search skipping is the rule
// of the CRF port anoidgit/CRF (code_Torch/sag_nus.lua, "sag_nus.lua").
//
// The primal is P(w) = λ/2‖w‖² + (1/n) Σ_i f_i(w) with f_i the log-loss of
// sentence i. SAG keeps the last gradient g_i = E_{p_i}[F] − F(x_i,y_i) of
// every sentence it has seen (of the loss alone, without the regulariser),
// as the node marginals and summed edge marginals of p_i (E_p[F] depends on
// nothing else), and their sum d. One iteration:
//
//  1. draw i (sampleIndex: with probability (n−m)/n an unseen sentence
//     uniformly, m the sentences seen so far; else a seen one with
//     probability ∝ (L_i + λ) + (L̄ + λ), L̄ the mean L_i of the seen);
//  2. oracle: the marginals ν of p(·|x_i; w), f_i(w), g_i = E_ν[F] − F_i;
//     d ← d − g_i^old + g_i, the marginals of i replace the old ones;
//  3. line search: on a revisit L_i ← L_i/2; then while ‖g_i‖² > 2^−26
//     and f_i(w − g_i/L_i) > f_i(w) − ‖g_i‖²/(2L_i), L_i ← 2L_i (each
//     evaluation one oracle call); Lmax ← max(Lmax, L_i);
//  4. step α = ((n−m)/n)/(Lmax + λ) + (m/n)·(1/(2(Lmax + λ)) + 1/(2(L̄ + λ)))
//     with m counting i;
//  5. w ← (1 − αλ)w − (α/m)d;
//  6. Lmax ← Lmax·2^(−1/n). The individual L_i do not decay.
//
// Step 5 touches every weight. It is made lazily: w = s·v, so that the
// factor (1 − αλ) is one multiplication of s; the rows of the attributes
// (whose d changes only when a sentence using them is drawn) move by
// −d_j·Σ_k α_k/(m_k s_{k+1}), a running sum A, applied to a row only when
// its sentence is drawn, the certificate or the weights are asked for (each
// row remembers the A it was brought up to); the dense tail (B, bias,
// start, end) moves every iteration. When s falls below sagMinScale every
// row is brought up to date and s folded into v, so s never underflows.
//
// Variants: "nus" is the above (SAG-NUS); "nus-star" (SAG-NUS*) adds the
// skip rule of sag_nus.lua: k_i counts the consecutive line searches of
// sentence i accepted without a doubling; on such an acceptance the next
// 2^(k_i−1) line searches of i are skipped (no halving, no test: L_i kept);
// a doubling resets k_i to 0. "uniform" draws i uniformly among all n and
// steps 1/(Lmax + λ), with the same line search.

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"

	"github.com/dualcrf/dualcrf/crf"
	"github.com/dualcrf/dualcrf/option"
)

// SAG's constants.
const (
	// sagPrecision: no Lipschitz test when ‖g_i‖² is at most this
	// (sag_adaptive.c: precision = 1.490116119384765625e-8, 2^−26).
	sagPrecision = 1.490116119384765625e-8
	// sagMinScale: below it the lazy scale s is folded into the weights.
	sagMinScale = 1e-9
	// sagMaxDoublings bounds the doublings of one Lipschitz test (a guard
	// the original's loop does not have: 2^60 is no Lipschitz constant).
	sagMaxDoublings = 60
	// sagMaxRun caps SAG-NUS*'s run count k_i, so that 2^(k_i−1) skips
	// stays an int (2^30 skips outlast any run).
	sagMaxRun = 31
)

// SAG is the stochastic average gradient method with the Lipschitz line
// search and non-uniform sampling of Schmidt et al. (2015). The zero value
// of each field is its documented default.
type SAG struct {
	// Variant is SAGUniform, SAGNUS or SAGNUSStar; "" means
	// DefaultSAGVariant.
	Variant string
	// InitialL is every L_i and Lmax before the first test; 0 means
	// DefaultSAGInitialL.
	InitialL float64
	// Seed seeds the sampling; the same seed gives the same weights bit
	// for bit.
	Seed uint64

	p       *Problem
	variant string
	rng     *rand.Rand
	rows    *sentenceRows
	lat     *crf.Lattice // the oracle at w
	lat2    *crf.Lattice // the Lipschitz test's oracle at w − g/L
	v, d    []float64    // w = s·v; d = Σ_seen g_i
	s       float64
	acc     float64   // A = Σ_k α_k/(m_k s_{k+1})
	last    []float64 // per attribute: the A its row was brought up to
	g       []float64 // scratch d-vector: g_i on sentence i's rows and the tail
	w       []float64 // Weights' buffer
	certW   []float64 // the last certificate's weights
	// The stored marginals: sentence i's T×K node marginals and, for
	// T ≥ 2, its K×K summed edge marginals at marg[off[i]:off[i+1]].
	marg []float64
	off  []int
	// order holds the seen sentences in order[:m] and the unseen ones in
	// order[m:]; pos[i] is i's place in it.
	order, pos []int
	m          int       // sentences seen
	li         []float64 // L_i
	lmax       float64   // Lmax
	tree       *sumTree  // L_i of the seen sentences (0 for the unseen)
	decay      float64   // 2^(−1/n)
	run        []uint8   // SAG-NUS*: k_i
	skip       []int32   // SAG-NUS*: line searches of i still to skip
	iters      int64
	tests      int64     // Lipschitz evaluations (oracle calls)
	searches   int64     // line searches made
	skipped    int64     // line searches skipped (SAG-NUS*)
	thg        []float64 // scratch: θ(g) node scores
	estAt      int64     // iters when est was computed; −1 never
	est        float64
	nodeBuf    []float64
	newSum     []float64 // scratch: ν's summed edge marginals
	edges      []float64 // scratch: ν's edge marginals
	// lastAlpha is the step size of the last iteration (tests).
	lastAlpha float64
	// stuck is the first Lipschitz test that did not pass, if any.
	stuck *sagStuck
}

// SAGBytes returns the bytes of SAG's stored gradients on d: every
// sentence's node marginals and summed edge marginals (sagOffsets).
func SAGBytes(d *crf.Dataset) int64 {
	off := sagOffsets(d)
	return 8 * int64(off[len(off)-1])
}

// sagOffsets returns where each sentence's node marginals (T×K) and, for
// T ≥ 2, summed edge marginals (K×K) start in a flat array (len n+1; the
// last entry is the total size).
func sagOffsets(d *crf.Dataset) []int {
	K := d.NumLabels
	off := make([]int, d.Len()+1)
	for i := 0; i < d.Len(); i++ {
		T := d.SentStart[i+1] - d.SentStart[i]
		sz := T * K
		if T >= 2 {
			sz += K * K
		}
		off[i+1] = off[i] + sz
	}
	return off
}

// Describe declares SAG: its settings, and none of the options some
// methods read (it samples by its Variant's rule; its gradients stay in
// memory; it cannot resume).
func (m *SAG) Describe() Description {
	return Description{Name: "sag", Title: "SAG", Loss: LossLog,
		Summary: "stochastic average gradient (Schmidt et al. 2015), certified by ‖∇P‖²/(2λ)",
		Settings: []Setting{
			{Field: "Variant", Name: "sag-variant", Default: DefaultSAGVariant, Label: true,
				Help: "SAG: nus (SAG-NUS: Schmidt et al. 2015 non-uniform sampling and Lipschitz line search), nus-star (SAG-NUS*: skips 2^(k−1) line searches of a sentence after its k-th in a row passing at once) or uniform",
				Want: "want one of " + SAGNUS + ", " + SAGNUSStar + ", " + SAGUniform, Valid: oneOf(SAGNUS, SAGNUSStar, SAGUniform)},
			{Field: "InitialL", Name: "sag-initial-l", Default: DefaultSAGInitialL,
				Help: "SAG: every sentence's Lipschitz estimate L_i and their maximum before the first test, > 0",
				Want: "want a finite L > 0", Valid: floatIn(0, math.Inf(1), true, true)},
			seedSetting("the sampling"),
		}}
}

// Check refuses a setting out of range with an *option.Error naming it
// (CheckSettings); a zero that stands for a default passes. Init checks
// too.
func (m *SAG) Check() error { return CheckSettings(m, nil) }

// Facts returns what a model records of SAG: its seed and variant.
func (m *SAG) Facts(p *Problem) map[string]any {
	return map[string]any{"seed": m.Seed, "sag_variant": cmp.Or(m.Variant, DefaultSAGVariant)}
}

// Init starts at w = 0 with no sentence seen.
func (m *SAG) Init(p *Problem) error {
	if err := m.Check(); err != nil {
		return err
	}
	if err := refuseL1(p, "SAG"); err != nil {
		return err
	}
	m.p = p
	m.variant = m.Variant
	if m.variant == "" {
		m.variant = DefaultSAGVariant
	}
	L0 := m.InitialL
	if L0 == 0 {
		L0 = DefaultSAGInitialL
	}
	d := p.Data
	n := d.Len()
	K := p.Layout.NumLabels
	dim := p.Layout.Dim()
	m.rng = rand.New(rand.NewPCG(m.Seed, 0x5a6))
	m.rows = newSentenceRows(d)
	m.lat, m.lat2 = crf.NewLattice(K), crf.NewLattice(K)
	m.v, m.d, m.g = make([]float64, dim), make([]float64, dim), make([]float64, dim)
	m.w = nil
	m.s, m.acc = 1, 0
	m.last = make([]float64, d.NumAttrs)
	m.off = sagOffsets(d)
	m.marg = make([]float64, m.off[n])
	m.order, m.pos = make([]int, n), make([]int, n)
	for i := range m.order {
		m.order[i], m.pos[i] = i, i
	}
	m.m = 0
	// sag_adaptive.c takes Li and Lmax from its caller; Schmidt's
	// examples start them all at 1 (DefaultSAGInitialL).
	m.li = make([]float64, n)
	for i := range m.li {
		m.li[i] = L0
	}
	m.lmax = L0
	m.tree = newSumTree(n) // no sentence seen: all leaves 0
	m.decay = math.Exp2(-1 / float64(n))
	m.run, m.skip = nil, nil
	if m.variant == SAGNUSStar {
		m.run, m.skip = make([]uint8, n), make([]int32, n)
	}
	m.iters, m.tests, m.searches, m.skipped = 0, 0, 0, 0
	m.estAt = -1
	m.stuck = nil
	return nil
}

// Epoch runs n iterations. When ctx is cancelled it returns its error
// between two iterations.
func (m *SAG) Epoch(ctx context.Context) error {
	n := m.p.N()
	for k := 0; k < n; k++ {
		if k&255 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		m.iterate(m.draw())
		if m.stuck != nil {
			return m.stuckError()
		}
	}
	return nil
}

// draw picks the next sentence. Rule 1 (sag_adaptive.c, sample_index):
// with probability (n−m)/n an unseen sentence uniformly, else a seen one
// with probability ∝ L_i + L̄ + 2λ. That weight's total over the seen is
// S + m(L̄ + 2λ) = 2S + 2λm with S = Σ L_i, so the draw is ∝ L_i (from
// the tree) with probability S/(2S + 2λm) and uniform among the seen
// otherwise. The uniform variant draws among all n.
func (m *SAG) draw() int {
	n := m.p.N()
	if m.variant == SAGUniform {
		return m.rng.IntN(n)
	}
	if m.rng.Float64()*float64(n) < float64(n-m.m) {
		return m.order[m.m+m.rng.IntN(n-m.m)]
	}
	S := m.tree.total()
	if m.rng.Float64()*(2*S+2*m.p.Lambda*float64(m.m)) < S {
		if i := m.tree.sample(m.rng.Float64()); i >= 0 {
			return i
		}
	}
	return m.order[m.rng.IntN(m.m)]
}

// see records sentence i as seen: it moves to the seen part of order and
// its L_i enters the tree.
func (m *SAG) see(i int) {
	j := m.pos[i]
	k := m.order[m.m]
	m.order[j], m.order[m.m] = k, i
	m.pos[k], m.pos[i] = j, m.m
	m.m++
}

// catchUp brings the rows of attributes attrs up to the running sum A.
func (m *SAG) catchUp(attrs []int32) {
	lay := m.p.Layout
	for _, a := range attrs {
		delta := m.acc - m.last[a]
		if delta == 0 {
			continue
		}
		lo, hi := lay.Span(a)
		v, d := m.v[lo:hi], m.d[lo:hi]
		for y, x := range d {
			v[y] -= x * delta
		}
		m.last[a] = m.acc
	}
}

// iterate makes one SAG iteration on sentence i.
func (m *SAG) iterate(i int) {
	p := m.p
	lay := p.Layout
	K := lay.NumLabels
	s := p.Data.Sentence(i)
	T := s.Len()
	rows := m.rows.of(i)
	m.catchUp(rows)
	m.iters++
	seen := m.pos[i] < m.m

	// Oracle at w = s·v: the scores are linear in w.
	lat := m.lat
	lat.SetScores(lay, m.v, s)
	scaleAll(lat.Node()[:T*K], m.s)
	scaleAll(lat.Trans(), m.s)
	logZ := lat.ForwardBackward()
	f := logZ - lat.Score(s.Labels)
	m.nodeBuf = grow(m.nodeBuf, T*K)
	node := m.nodeBuf
	lat.NodeMarginals(node)
	var sum []float64
	if T >= 2 {
		sum = m.marg[m.off[i]+T*K : m.off[i+1]] // filled below, after the old marginals are used
	}
	m.newSum = grow(m.newSum, K*K)
	newSum := m.newSum
	clear(newSum)
	if T >= 2 {
		m.edges = grow(m.edges, crf.BlockLen(T, K))
		lat.MarginalsSum(m.edges, newSum)
	}

	// g_i = E_ν[F] − F_i (the loss's gradient, no regulariser: rule 2)
	// into the scratch vector, on i's rows and the tail.
	g := m.g
	addExpectedSum(g, lay, s, node, newSum, 1)
	crf.AddFeatures(g, lay, s, s.Labels, -1)
	m.maskSentence(g, rows)
	gg := 0.0
	for _, a := range rows {
		lo, hi := lay.Span(a)
		gg += dot(g[lo:hi], g[lo:hi])
	}
	tail := g[lay.Trans():]
	gg += dot(tail, tail)

	// Rule 2 (sag_adaptive.c: d += (grad − g[i])x_i, g[i] = grad, before
	// the line search): d ← d − g_i^old + g_i = d + E_ν[F] − (E_old[F],
	// or F_i if unseen); the marginals stand for g_i.
	addExpectedSum(m.d, lay, s, node, newSum, 1)
	if seen {
		old := m.marg[m.off[i] : m.off[i]+T*K]
		addExpectedSum(m.d, lay, s, old, sum, -1)
	} else {
		crf.AddFeatures(m.d, lay, s, s.Labels, -1)
	}
	m.maskSentence(m.d, rows)
	copy(m.marg[m.off[i]:m.off[i]+T*K], node)
	copy(sum, newSum)

	// Rule 3, the line search on L_i, or SAG-NUS*'s skip.
	m.lineSearch(i, s, seen, f, gg)
	for _, a := range rows {
		lo, hi := lay.Span(a)
		clear(g[lo:hi])
	}
	clear(tail)

	// sag_adaptive.c: the sentence counts as seen (m, L̄) before the step.
	if !seen {
		m.see(i)
	}
	m.tree.set(i, m.li[i])

	// Rule 4, the step size; rule 5, w ← (1 − αλ)w − (α/m)d.
	alpha := m.stepSize()
	m.lastAlpha = alpha
	s1 := m.s * (1 - alpha*p.Lambda)
	step := alpha / (float64(m.m) * s1)
	m.acc += step
	vt, dt := m.v[lay.Trans():], m.d[lay.Trans():]
	for j, x := range dt {
		vt[j] -= x * step
	}
	m.s = s1
	// Rule 6 (sag_adaptive.c, "Decrease value of max Lipschitz
	// constant"): Lmax ← Lmax·2^(−1/n), the L_i unchanged.
	m.lmax *= m.decay
	if m.s < sagMinScale {
		m.renormalise()
	}
}

// stepSize is rule 4 (sag_adaptive.c, "Compute step size"): with m the
// sentences seen (i included) and L̄ their mean L_i,
// α = ((n−m)/n)/(Lmax + λ) + (m/n)·(1/(2(Lmax + λ)) + 1/(2(L̄ + λ))).
// The uniform variant steps 1/(Lmax + λ).
func (m *SAG) stepSize() float64 {
	lam := m.p.Lambda
	if m.variant == SAGUniform {
		return 1 / (m.lmax + lam)
	}
	n, seen := float64(m.p.N()), float64(m.m)
	mean := m.tree.total() / seen
	return (n-seen)/n/(m.lmax+lam) + seen/n*(1/(2*(m.lmax+lam))+1/(2*(mean+lam)))
}

// lineSearch is rule 3 on sentence i (g_i in m.g, ‖g_i‖² = gg,
// f_i(w) = f), with SAG-NUS*'s skip rule.
func (m *SAG) lineSearch(i int, s crf.Sentence, seen bool, f, gg float64) {
	star := m.variant == SAGNUSStar
	if star && gg > sagPrecision && m.skip[i] > 0 {
		// sag_nus.lua: a skipped search decrements the count, L_i kept.
		m.skip[i]--
		m.skipped++
		return
	}
	// sag_adaptive.c: "if (increasing && covered[i]) Li[i] /= 2", then the
	// doubling loop, which its own test of ‖g_i‖² > precision guards.
	if seen {
		m.li[i] /= 2
	}
	doublings := 0
	if gg > sagPrecision {
		m.searches++
		doublings = m.lipschitz(i, s, f, gg)
		if star {
			// sag_nus.lua: accepted without backtracking → k_i += 1 and
			// skip the next 2^(k_i−1) searches; a backtrack resets k_i.
			if doublings == 0 {
				m.run[i] = min(m.run[i]+1, sagMaxRun)
				m.skip[i] = 1 << (m.run[i] - 1)
			} else {
				m.run[i] = 0
			}
		}
	}
	m.lmax = max(m.lmax, m.li[i])
}

// lipschitz doubles L_i until f_i(w − g_i/L_i) ≤ f_i(w) − ‖g_i‖²/(2L_i)
// (g_i in m.g, ‖g_i‖² = gg, f_i(w) = f), one oracle call per evaluation,
// and returns the number of doublings.
func (m *SAG) lipschitz(i int, s crf.Sentence, f, gg float64) int {
	lay := m.p.Layout
	K := lay.NumLabels
	T := s.Len()
	// θ(g): the scores of g (linear in the weights), kept apart.
	m.lat2.SetScores(lay, m.g, s)
	m.thg = grow(m.thg, T*K+K*K)
	copy(m.thg, m.lat2.Node()[:T*K])
	copy(m.thg[T*K:], m.lat2.Trans())
	thw, trw := m.lat.Node()[:T*K], m.lat.Trans()
	L := m.li[i]
	L0 := L
	it := 0
	for ; it < sagMaxDoublings; it++ {
		node, tr := m.lat2.Node()[:T*K], m.lat2.Trans()
		for j := range node {
			node[j] = thw[j] - m.thg[j]/L
		}
		for j := range tr {
			tr[j] = trw[j] - m.thg[T*K+j]/L
		}
		f2 := m.lat2.ForwardBackward() - m.lat2.Score(s.Labels)
		m.tests++
		if f2 <= f-gg/(2*L) {
			break
		}
		L *= 2
	}
	if it == sagMaxDoublings && m.stuck == nil {
		m.stuck = &sagStuck{sentence: i, from: L0}
	}
	m.li[i] = L
	return it
}

// sagStuck is a Lipschitz test that did not pass within sagMaxDoublings
// doublings: the step it would allow is no step.
type sagStuck struct {
	sentence int
	from     float64 // L_i before the doublings
}

// stuckError is the error of a Lipschitz test that did not pass.
func (m *SAG) stuckError() error {
	L0 := m.InitialL
	if L0 == 0 {
		L0 = DefaultSAGInitialL
	}
	return fmt.Errorf("train: SAG's Lipschitz test of sentence %d did not pass with L_i doubled %d times from %g: %w",
		m.stuck.sentence, sagMaxDoublings, m.stuck.from,
		&option.Error{Field: "SAG.InitialL", Value: strconv.FormatFloat(L0, 'g', -1, 64),
			Msg: fmt.Sprintf("too small for this data (every L_i starts there); give a larger one (default %g)", DefaultSAGInitialL)})
}

// LineSearches returns the line searches made on L_i and those SAG-NUS*
// skipped, since Init.
func (m *SAG) LineSearches() (made, skipped int64) { return m.searches, m.skipped }

// renormalise brings every row up to date and folds s into v, so that it
// does not underflow.
func (m *SAG) renormalise() {
	lay := m.p.Layout
	for a := range m.last {
		delta := m.acc - m.last[a]
		lo, hi := lay.Span(int32(a))
		v, d := m.v[lo:hi], m.d[lo:hi]
		for y, x := range d {
			v[y] -= x * delta
		}
		m.last[a] = 0
	}
	m.acc = 0
	scaleAll(m.v, m.s)
	m.s = 1
}

// maskSentence zeroes the masked-out entries of x on the rows rows and the
// transitions.
func (m *SAG) maskSentence(x []float64, rows []int32) {
	p := m.p
	if p.Mask != nil {
		K := p.Layout.NumLabels
		for _, a := range rows {
			off := p.Layout.Row(a)
			p.maskRow(x[off:off+K], a)
		}
	}
	p.maskTrans(x[p.Layout.Trans() : p.Layout.Trans()+p.Layout.NumLabels*p.Layout.NumLabels])
}

// Weights returns w = s·v with every row brought up to date, in a buffer
// the method owns (the state is not changed).
func (m *SAG) Weights() []float64 {
	lay := m.p.Layout
	if m.w == nil {
		m.w = make([]float64, len(m.v))
	}
	tr := lay.Trans()
	for a := range m.last {
		delta := m.acc - m.last[a]
		lo, hi := lay.Span(int32(a))
		for j := lo; j < hi; j++ {
			m.w[j] = m.s * (m.v[j] - m.d[j]*delta)
		}
	}
	for j := tr; j < len(m.v); j++ {
		m.w[j] = m.s * m.v[j]
	}
	return m.w
}

// Certify computes P(w) and ∇P(w) with a full pass; the certificate is
// that of L-BFGS (primalCertificate).
func (m *SAG) Certify(ctx context.Context) (Certificate, error) {
	m.certW = append(m.certW[:0], m.Weights()...) // the buffer of the certificate before (Certificate.Weights)
	w := m.certW
	r, err := m.p.pass(ctx, w, nil, true)
	if err != nil {
		return Certificate{}, err
	}
	return primalCertificate(m.p, r.Primal, dot(r.Grad, r.Grad), w), nil
}

// Counters reports the line searches made as steps (SAG-NUS* skips some:
// its iterations less its steps are the skipped ones and those whose
// gradient was too small to test), iterations as updates, the Lipschitz
// evaluations as line-search evaluations, iterations and evaluations as
// oracle calls, and SAG's own estimate of the gap, ‖λw + d/n‖²/(2λ) (its
// estimate of ‖∇P‖²/(2λ)), once every sentence has been seen (+Inf
// before).
func (m *SAG) Counters() Counters {
	return Counters{Steps: m.searches, LineSearch: m.tests, GapEstimate: m.estimate(),
		OracleCalls: m.iters + m.tests, Updates: m.iters, CertifyCalls: int64(m.p.N())}
}

// estimate returns ‖λw + d/m‖²/(2λ), computed once per iteration count.
func (m *SAG) estimate() float64 {
	if m.m < m.p.N() {
		return math.Inf(1)
	}
	if m.estAt == m.iters {
		return m.est
	}
	w := m.Weights()
	lam, inv := m.p.Lambda, 1/float64(m.m)
	ss := 0.0
	for j, x := range w {
		e := lam*x + m.d[j]*inv
		ss += e * e
	}
	m.est, m.estAt = ss/(2*lam), m.iters
	return m.est
}

// addExpectedSum adds scale·E_μ[F] to g from μ's node marginals (T×K) and
// its edge marginals summed over the positions (K×K; ignored for T = 1):
// what crf.AddExpected adds, with the edges already summed.
func addExpectedSum(g []float64, lay crf.Layout, s crf.Sentence, node, sum []float64, scale float64) {
	crf.AddExpectedNodes(g, lay, s, node, scale)
	K := lay.NumLabels
	T := s.Len()
	if T < 2 {
		return
	}
	tr := g[lay.Trans() : lay.Trans()+K*K]
	for j, v := range sum[:K*K] {
		tr[j] += scale * v
	}
}

// scaleAll multiplies x by c.
func scaleAll(x []float64, c float64) {
	for j := range x {
		x[j] *= c
	}
}

var _ Describer = (*SAG)(nil)
