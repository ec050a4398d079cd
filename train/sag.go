package train

// SAG for CRFs (Schmidt, Babanezhad, Ahmed, Defazio, Clifton & Sarkar,
// AISTATS 2015, arXiv 1504.04406), one of the paper's peers (Le Priol et
// al. 2018, §6.4).
//
// The primal is P(w) = λ/2‖w‖² + (1/n) Σ_i f_i(w) with f_i the log-loss of
// sentence i. SAG keeps the last gradient g_i = E_{p_i}[F] − F(x_i,y_i) of
// every sentence it has seen, as the node marginals and summed edge
// marginals of p_i (E_p[F] depends on nothing else), and their sum d. One
// iteration on sentence i:
//
//  1. oracle: the marginals ν of p(·|x_i; w), f_i(w), g_i = E_ν[F] − F_i;
//  2. Lipschitz test (each evaluation one oracle call): L_i doubles until
//     f_i(w − g_i/L_i) ≤ f_i(w) − ‖g_i‖²/(2L_i);
//  3. d ← d − g_i^old + g_i (only sentence i's attribute rows and the dense
//     tail change), the marginals of i replace the old ones;
//  4. every L_j decays by 2^(−1/n);
//  5. w ← w − α(λw + d/m), m the number of sentences seen so far, with
//     α = 1/(L + λ): L = max_j L_j (uniform sampling), (max_j L_j + mean_j
//     L_j)/2 with non-uniform sampling.
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
// Sampling: "uniform" draws i uniformly; "nus" and "nus-star" (SAG-NUS and
// SAG-NUS*) draw i ∝ L_i half of the time and uniformly otherwise.
// SAG-NUS* skips the Lipschitz test of a sentence whose gradient is tiny
// (‖g_i‖² ≤ sagSkipNorm), keeping its L_i — a reconstruction of the paper's
// line-search skipping, not checked against its text: a sentence's
// gradient does not vanish at the optimum (only their sum does), so on
// CoNLL-2000 the rule never fires and SAG-NUS* runs as SAG-NUS.

import (
	"context"
	"math"
	"math/rand/v2"

	"github.com/dualcrf/dualcrf/crf"
)

// SAG's constants.
const (
	// sagSkipNorm: SAG-NUS* skips the Lipschitz test of a sentence whose
	// ‖g_i‖² is at most this.
	sagSkipNorm = 1e-8
	// sagMinScale: below it the lazy scale s is folded into the weights.
	sagMinScale = 1e-9
	// sagMaxDoublings bounds the doublings of one Lipschitz test.
	sagMaxDoublings = 60
)

// SAG is the stochastic average gradient method with the Lipschitz line
// search and non-uniform sampling of Schmidt et al. (2015). The zero value
// of each field is its documented default.
type SAG struct {
	// Variant is SAGUniform, SAGNUS or SAGNUSStar; "" means
	// DefaultSAGVariant.
	Variant string
	// InitialL is every L_i before its first test; 0 means
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
	// The stored marginals: sentence i's T×K node marginals and, for
	// T ≥ 2, its K×K summed edge marginals at marg[off[i]:off[i+1]].
	marg    []float64
	off     []int
	seen    []bool
	m       int       // sentences seen
	lst     []float64 // L_i / c
	c       float64   // the global decay factor of the L_i
	lmaxSt  float64   // max of lst
	tree    *sumTree  // lst, for the draws ∝ L_i
	decay   float64   // 2^(−1/n)
	iters   int64
	tests   int64
	thg     []float64 // scratch: θ(g) node scores
	estAt   int64     // iters when est was computed; −1 never
	est     float64
	nodeBuf []float64
	newSum  []float64 // scratch: ν's summed edge marginals
	edges   []float64 // scratch: ν's edge marginals
	// lastAlpha is the step size of the last iteration (tests).
	lastAlpha float64
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

// Check refuses a setting out of range with a *FieldError; a zero that
// stands for a default passes. Init checks too.
func (m *SAG) Check() error {
	switch m.Variant {
	case "", SAGNUS, SAGNUSStar, SAGUniform:
	default:
		return &FieldError{Method: "SAG", Field: "Variant", Value: m.Variant, Want: "want one of " + SAGNUS + ", " + SAGNUSStar + ", " + SAGUniform}
	}
	if !(m.InitialL >= 0) || math.IsInf(m.InitialL, 0) {
		return &FieldError{Method: "SAG", Field: "InitialL", Value: m.InitialL, Want: "want a finite L > 0"}
	}
	return nil
}

// Init starts at w = 0 with no sentence seen.
func (m *SAG) Init(p *Problem) error {
	if err := m.Check(); err != nil {
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
	m.seen = make([]bool, n)
	m.m = 0
	m.lst = make([]float64, n)
	for i := range m.lst {
		m.lst[i] = L0
	}
	m.c, m.lmaxSt = 1, L0
	m.tree = newSumTree(n)
	m.tree.fill(m.lst)
	m.decay = math.Exp2(-1 / float64(n))
	m.iters, m.tests = 0, 0
	m.estAt = -1
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
	}
	return nil
}

// draw picks the next sentence.
func (m *SAG) draw() int {
	n := m.p.N()
	if m.variant == SAGUniform || m.rng.Float64() < 0.5 {
		return m.rng.IntN(n)
	}
	if i := m.tree.sample(m.rng.Float64()); i >= 0 {
		return i
	}
	return m.rng.IntN(n)
}

// catchUp brings the rows of attributes attrs up to the running sum A.
func (m *SAG) catchUp(attrs []int32) {
	K := m.p.Layout.NumLabels
	for _, a := range attrs {
		delta := m.acc - m.last[a]
		if delta == 0 {
			continue
		}
		off := int(a) * K
		v, d := m.v[off:off+K], m.d[off:off+K]
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

	// 1. Oracle at w = s·v: the scores are linear in w.
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

	// g_i = E_ν[F] − F_i into the scratch vector, on i's rows and the tail.
	g := m.g
	addExpectedSum(g, lay, s, node, newSum, 1)
	crf.AddFeatures(g, lay, s, s.Labels, -1)
	m.maskSentence(g, rows)
	gg := 0.0
	for _, a := range rows {
		off := lay.Row(a)
		gg += dot(g[off:off+K], g[off:off+K])
	}
	tail := g[lay.Trans():]
	gg += dot(tail, tail)

	// 2. Lipschitz test.
	if !(m.variant == SAGNUSStar && gg <= sagSkipNorm) && gg > 0 {
		m.lipschitz(i, s, f, gg)
	}

	// 3. d ← d − g_i^old + g_i = d + E_ν[F] − (E_old[F], or F_i if unseen).
	addExpectedSum(m.d, lay, s, node, newSum, 1)
	if m.seen[i] {
		old := m.marg[m.off[i] : m.off[i]+T*K]
		addExpectedSum(m.d, lay, s, old, sum, -1)
	} else {
		crf.AddFeatures(m.d, lay, s, s.Labels, -1)
		m.seen[i] = true
		m.m++
	}
	m.maskSentence(m.d, rows)
	copy(m.marg[m.off[i]:m.off[i]+T*K], node)
	copy(sum, newSum)
	for _, a := range rows {
		off := lay.Row(a)
		clear(g[off : off+K])
	}
	clear(tail)

	// 4–5. Decay the L_i, then step.
	m.c *= m.decay
	L := m.lmaxSt * m.c
	if m.variant != SAGUniform {
		L = (L + m.tree.total()/float64(p.N())*m.c) / 2
	}
	alpha := 1 / (L + p.Lambda)
	m.lastAlpha = alpha
	s1 := m.s * (1 - alpha*p.Lambda)
	step := alpha / (float64(m.m) * s1)
	m.acc += step
	vt, dt := m.v[lay.Trans():], m.d[lay.Trans():]
	for j, x := range dt {
		vt[j] -= x * step
	}
	m.s = s1
	if m.s < sagMinScale || m.c < 1e-100 {
		m.renormalise()
	}
}

// lipschitz doubles L_i until the sufficient-decrease test passes at
// w − g_i/L_i (g_i in m.g, ‖g_i‖² = gg, f_i(w) = f), one oracle call per
// evaluation.
func (m *SAG) lipschitz(i int, s crf.Sentence, f, gg float64) {
	lay := m.p.Layout
	K := lay.NumLabels
	T := s.Len()
	// θ(g): the scores of g (linear in the weights), kept apart.
	m.lat2.SetScores(lay, m.g, s)
	m.thg = grow(m.thg, T*K+K*K)
	copy(m.thg, m.lat2.Node()[:T*K])
	copy(m.thg[T*K:], m.lat2.Trans())
	thw, trw := m.lat.Node()[:T*K], m.lat.Trans()
	L := m.lst[i] * m.c
	for it := 0; it < sagMaxDoublings; it++ {
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
	m.lst[i] = L / m.c
	m.lmaxSt = max(m.lmaxSt, m.lst[i])
	m.tree.set(i, m.lst[i])
}

// renormalise brings every row up to date and folds s into v (and the
// decay factor c into the stored L_i), so that neither underflows.
func (m *SAG) renormalise() {
	K := m.p.Layout.NumLabels
	for a := range m.last {
		delta := m.acc - m.last[a]
		off := a * K
		v, d := m.v[off:off+K], m.d[off:off+K]
		for y, x := range d {
			v[y] -= x * delta
		}
		m.last[a] = 0
	}
	m.acc = 0
	scaleAll(m.v, m.s)
	m.s = 1
	scaleAll(m.lst, m.c)
	m.lmaxSt *= m.c
	m.c = 1
	m.tree.fill(m.lst)
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
	K := m.p.Layout.NumLabels
	if m.w == nil {
		m.w = make([]float64, len(m.v))
	}
	tr := m.p.Layout.Trans()
	for a := range m.last {
		delta := m.acc - m.last[a]
		off := a * K
		for j := off; j < off+K; j++ {
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
	w := append([]float64(nil), m.Weights()...)
	r, err := m.p.pass(ctx, w, nil, true)
	if err != nil {
		return Certificate{}, err
	}
	return primalCertificate(m.p, r.Primal, dot(r.Grad, r.Grad), w), nil
}

// Counters reports iterations as steps and updates, the Lipschitz tests as
// line-search evaluations, both as oracle calls, and SAG's own estimate of
// the gap, ‖λw + d/n‖²/(2λ) (its estimate of ‖∇P‖²/(2λ)), once every
// sentence has been seen (+Inf before).
func (m *SAG) Counters() Counters {
	return Counters{Steps: m.iters, LineSearch: m.tests, GapEstimate: m.estimate(),
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

var _ Method = (*SAG)(nil)
