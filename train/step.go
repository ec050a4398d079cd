package train

import (
	"math"
	"math/rand/v2"

	"github.com/dualcrf/dualcrf/crf"
	"github.com/dualcrf/dualcrf/duals"
	"github.com/dualcrf/dualcrf/internal/num"
)

// stepper makes SDCA steps (sdca.go's steps 1–4: the oracle at w, the
// direction, the line search, and the commit of μ_i, w and ‖w‖²) on the
// weights w, with its scratch space. The sequential and streamed schedulers
// step with SDCA's own stepper on the run's weights; the ordered one
// (ordered.go) runs its phases separately, on a scratch space per slot of
// its rounds.
//
// A step loads μ_i from the store into its scratch space (oracle) and puts
// μ_i + γδ back (commit). A store that rounds what it keeps (exact false:
// duals.Float32) returns the block as stored; the weights then move by the
// primal direction of the block's actual change, stored − loaded, not by
// γv, so that w = ŵ(μ) of the stored duals after every step, to rounding.
type stepper struct {
	p     *Problem
	duals duals.Store
	exact bool // the store keeps a block as it is put (duals.Float64)
	rows  *sentenceRows
	sub   float64   // the line search's sub-precision
	w     []float64 // the weights the steps move (nil for the elastic net: u below)
	wsq   float64   // ‖w‖², kept by the steps; NaN when unknown (normSq)
	ws    *stepWork
	// steps and lsIters count the steps made and their line-search
	// evaluations.
	steps, lsIters int64
	sink           float64 // what prefetchWeights read
	// u, for the elastic net (Problem.L1 > 0), is ŵ(μ), which the steps
	// move; the primal point is soft(u, tau), made for each step's rows
	// (elastic.go). nil for the ℓ2 objective, whose w is ŵ(μ).
	u   []float64
	tau float64
	// wbuf is a whole primal point soft(u, tau) the streamed scheduler's
	// gap refreshes read (primalInto), kept between them.
	wbuf []float64
}

// newStepper returns a stepper for p on the dual store, with no weights yet.
func newStepper(p *Problem, store duals.Store, rows *sentenceRows, sub float64) *stepper {
	return &stepper{p: p, duals: store, exact: store.Precision() == duals.Float64, rows: rows, sub: sub, ws: newStepWork(p)}
}

// draws is where a run of steps takes its sentences: a sampler over
// indices j that stand for the sentences sents[j] (nil: j itself), and the
// random numbers it draws with.
type draws struct {
	sampler Sampler
	rng     *rand.Rand
	sents   []int
}

// sentence returns the sentence of the sampler's index j.
func (d *draws) sentence(j int) int {
	if d.sents == nil {
		return j
	}
	return d.sents[j]
}

// run makes count ≥ 1 steps, drawing each sentence from d as the
// sequential epoch does: each step but the last hands its block gap to the
// sampler and draws the next sentence as soon as the gap is known.
func (sp *stepper) run(d *draws, count int) {
	j := d.sampler.Next(d.rng)
	for range count - 1 {
		_, j = sp.step(d, j, true)
	}
	st, _ := sp.step(d, j, false)
	d.sampler.Update(j, st.Gap)
}

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
	// The step in progress: its sentence i and block μ_i loaded from the
	// store into muBuf (oracle), and ⟨w,v⟩ and ‖v‖² at the weights of its
	// oracle (direct).
	i     int
	mu    []float64
	muBuf []float64
	a, b  float64
	// elastic is the line of h for the elastic net (elastic.go), and pw
	// the primal weights of the step's rows, packed as vr, then the tail.
	elastic elasticLine
	pw      []float64
	urow    []float64 // a row of u laid out densely (sparse layouts: uRow)
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

// stepStats describes one SDCA step.
type stepStats struct {
	Sentence int
	Gap      float64 // block gap before the step
	Gamma    float64 // step size taken
	Iters    int     // line-search evaluations
	Slope0   float64 // φ'(0)
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

func newStepWork(p *Problem) *stepWork {
	K := p.Layout.NumLabels
	return &stepWork{
		lat: crf.NewLattice(K),
		vt:  make([]float64, p.Layout.Dim()-p.Layout.Trans()),
	}
}

// step performs one SDCA step on d's sentence j. With draw, it also hands
// the block gap to d's sampler once it is known, draws the next sentence,
// starts fetching that sentence's weight rows, and returns it. It is the
// step's two phases one after the other: the oracle and the direction
// (oracle, direct), then the line search and the commit (search, commit);
// the ordered scheduler runs the first on many sentences at once.
func (sp *stepper) step(d *draws, j int, draw bool) (stepStats, int) {
	ws := sp.ws
	sp.steps++
	st := sp.oracle(ws, d.sentence(j))
	next := -1
	if draw {
		d.sampler.Update(j, st.Gap)
		next = d.sampler.Next(d.rng)
		sp.sink += sp.prefetch(sp.rows.of(d.sentence(next)))
		if ms, ok := sp.duals.(duals.MarginalStore); ok {
			ms.Prefetch(d.sentence(next))
		}
	}
	sp.direct(ws)
	st.Slope0, st.Gamma, st.Iters = sp.search(ws, ws.a, -1)
	sp.lsIters += int64(st.Iters)
	sp.commit(ws, st.Gamma, ws.a)
	return st, next
}

// prefetch starts fetching the weight rows of a coming step: w's, which
// its oracle reads, or for the elastic net u's.
func (sp *stepper) prefetch(rows []int32) (sink float64) {
	return prefetchWeights(sp.dualVector(), sp.p.Layout, rows)
}

// oracle is step 1 on sentence i into ws: the oracle at sp.w, and the
// block gap D̃(μ‖ν) = Σ_e KL(μ_e‖ν_e) − Σ_s KL(μ_s‖ν_s). It only reads
// sp.w and μ_i.
func (sp *stepper) oracle(ws *stepWork, i int) stepStats {
	p := sp.p
	lay := p.Layout
	K := lay.NumLabels
	s := p.Data.Sentence(i)
	T := s.Len()
	bl := crf.BlockLen(T, K)
	ws.muBuf = grow(ws.muBuf, bl)
	mu := ws.muBuf
	ws.i, ws.mu = i, mu

	ws.nu = grow(ws.nu, bl)
	ws.muN = grow(ws.muN, T*K)
	ws.nuN = grow(ws.nuN, T*K)
	ws.dN = grow(ws.dN, T*K)
	ws.lmuN = grow(ws.lmuN, T*K)
	ws.lnuN = grow(ws.lnuN, T*K)
	if sp.u != nil {
		pl, ps := sp.packPrimal(ws, i, s)
		ws.lat.SetScores(pl, ws.pw, ps)
	} else {
		ws.lat.SetScores(lay, sp.w, s)
	}
	ws.lat.ForwardBackward()
	ws.nuSum = grow(ws.nuSum, K*K)
	ws.muSum = grow(ws.muSum, K*K)
	ws.lat.MarginalsSum(ws.nu, ws.nuSum)
	ws.lat.NodeMarginals(ws.nuN)
	muB := sp.load(i, T, K, mu, ws.muN, ws.muSum, ws.lat.Trans())
	// Separators are the inner nodes 1..T-2; few, so their logs are taken here.
	sepLo, sepHi := K, max(T-1, 1)*K
	muS, nuS, lmuS := ws.muN[sepLo:sepHi], ws.nuN[sepLo:sepHi], ws.lmuN[sepLo:sepHi]
	lnuS := ws.lnuN[sepLo:sepHi]
	num.LogInto(lmuS, muS)
	num.LogInto(lnuS, nuS)
	e := &ws.edges
	e.prepare(mu, ws.nu, muS, lmuS, nuS)
	gap := e.xlogx - muLogNu(ws, T, K, mu, muB)
	for j, x := range muS {
		if x > 0 {
			gap -= x * (lmuS[j] - lnuS[j])
		}
	}
	return stepStats{Sentence: i, Gap: max(gap, 0)}
}

// direct is step 2 after oracle: the directions δ = ν − μ_i and v into ws,
// with ws.a = ⟨w,v⟩ at sp.w and ws.b = ‖v‖². It only reads sp.w.
func (sp *stepper) direct(ws *stepWork) {
	for j := range ws.dN {
		ws.dN[j] = ws.nuN[j] - ws.muN[j]
	}
	ws.a, ws.b = sp.direction(ws, ws.i, sp.p.Data.Sentence(ws.i))
	if sp.u != nil {
		sp.prepareElastic(ws)
	}
}

// redirect returns ⟨w,v⟩ for ws's direction at the stepper's current
// weights, which other steps moved since ws's oracle, and prepares the
// elastic net's line against them: what a search at those weights needs.
// row is a scratch row for a sparse layout (dotRows).
func (sp *stepper) redirect(ws *stepWork, row *[]float64) float64 {
	if sp.u != nil {
		sp.prepareElastic(ws)
		return sp.dotPrimal(ws)
	}
	return dotRows(sp.w, ws.rows, ws.vr, ws.vt, sp.p.Layout, row)
}

// search is step 3 after direct: the line search on
// φ'(γ) = −[S(γ) − S_sep(γ)] − λn(⟨w,v⟩ + γ‖v‖²) for ⟨w,v⟩ = a, ‖v‖² =
// ws.b, starting from γ = g0 when g0 is in (0,1) (the secant root of [0,1]
// otherwise). It returns φ'(0), the step and the evaluations of φ'.
func (sp *stepper) search(ws *stepWork, a, g0 float64) (d0, gamma float64, iters int) {
	p := sp.p
	e := &ws.edges
	ln := p.Lambda * float64(p.N())
	d0 = -(e.s0 - e.s0S) - ln*a
	if d0 > 0 && !math.IsNaN(d0) {
		gamma, iters = sp.lineSearch(ws, ws.mu, d0, a, ws.b, ln, g0)
	}
	return d0, gamma, iters
}

// commit is step 4 after search: μ_i ← μ_i + γδ, w ← w + γv and
// ‖w‖² ← ‖w‖² + 2γa + γ²‖v‖² for ⟨w,v⟩ = a at the w it moves; it leaves
// ws ready for the next step.
func (sp *stepper) commit(ws *stepWork, gamma, a float64) {
	sp.moveDual(ws, sp.commitPrimal(ws, gamma, a))
}

// commitPrimal is commit's move of the weights: w ← w + γv and ‖w‖², for
// ⟨w,v⟩ = a at the w it moves; it clears the direction's tail for the
// next step. It returns the step the duals still owe (moveDual): γ for an
// exact store, whose move a scheduler may make later, elsewhere; 0 for a
// store that rounds, whose move it makes now (commitRounded): the weights
// follow the block as stored.
func (sp *stepper) commitPrimal(ws *stepWork, gamma, a float64) (owed float64) {
	if !sp.exact {
		if gamma > 0 {
			sp.commitRounded(ws, gamma)
		}
		clear(ws.vt)
		return 0
	}
	if sp.u != nil {
		sp.commitElastic(ws, gamma) // clears the tail
		return gamma
	}
	if gamma > 0 {
		sp.applyPrimal(ws, gamma)
		sp.wsq += 2*gamma*a + gamma*gamma*ws.b
	}
	clear(ws.vt)
	return gamma
}

// moveDual is commit's move of the duals, μ_i ← μ_i + γδ into the store:
// it only needs ws's block and oracle, so a scheduler may make it later,
// elsewhere (commitPrimal says what it owes).
func (sp *stepper) moveDual(ws *stepWork, gamma float64) {
	if gamma > 0 {
		ws.edges.update(gamma, ws.mu, ws.nu)
		sp.duals.Put(ws.i, ws.mu)
	}
}

// commitRounded is the commit on a store that rounds: μ_i + γδ is put into
// the store and ws.mu becomes the block as stored, μ'; then w moves by the
// primal direction of δ' = μ' − μ_i (its node marginals and summed edges
// against those of the oracle's μ_i, in ws.muN and ws.muSum) — added
// straight into w's rows, attribute occurrence by occurrence, and into its
// tail, without forming the direction's packed rows (with a Mask or a
// sparse layout, through them: masked weights stay zero, a sparse row is
// not a·K). ‖w‖² is then left to normSq.
func (sp *stepper) commitRounded(ws *stepWork, gamma float64) {
	p := sp.p
	lay := p.Layout
	K := lay.NumLabels
	s := p.Data.Sentence(ws.i)
	T := s.Len()
	ws.edges.update(gamma, ws.mu, ws.nu)
	// δ' on the nodes into dN, summed over the edges into nuSum (which the
	// direction takes less muSum).
	if ms, ok := sp.duals.(duals.MarginalStore); ok {
		ms.PutMarginals(ws.i, ws.mu, ws.dN[:T*K], ws.nuSum)
	} else {
		sp.duals.Put(ws.i, ws.mu)
		blockNodesDot(ws.mu, T, K, ws.lat.Trans(), ws.dN, ws.nuSum)
	}
	for j, x := range ws.muN[:T*K] {
		ws.dN[j] -= x
	}
	sp.wsq = math.NaN()
	clear(ws.vt)
	c := -1 / (p.Lambda * float64(p.N()))
	if p.Mask != nil || lay.Free != nil {
		sp.direction(ws, ws.i, s)
		sp.applyPrimal(ws, 1)
		return
	}
	lo, hi := s.AttrStart[0], s.AttrStart[T]
	var values []float64
	if s.Values != nil {
		values = s.Values[lo:hi]
	}
	axpyRows(sp.w, s.Attrs[lo:hi], ws.dN, ws.tokOf, values, c, K)
	sp.fillTail(ws, T, c)
	w, v := sp.w[lay.Trans():], ws.vt
	for j := range w {
		w[j] += v[j]
	}
}

// normSq returns ‖w‖²: kept by the steps on an exact store, recomputed
// when a step on a store that rounds left it unknown (commitRounded).
func (sp *stepper) normSq() float64 {
	if math.IsNaN(sp.wsq) {
		sp.wsq = sp.primalSq()
	}
	return sp.wsq
}

// load loads μ_i (T tokens, K labels) into mu with its node marginals
// into node and its edges summed over the positions into sum, and returns
// Σ_e μ_e·B_e for the transition scores B (0 when T = 1): from a store
// that rounds, in the decoding's pass (duals.MarginalStore); from an exact
// one, in a pass of its own after the load (blockNodesDot), as it has
// always been computed.
func (sp *stepper) load(i, T, K int, mu, node, sum, B []float64) (muB float64) {
	ms, ok := sp.duals.(duals.MarginalStore)
	if sp.exact || !ok {
		sp.duals.Load(i, mu)
		return blockNodesDot(mu, T, K, B, node, sum)
	}
	ms.LoadMarginals(i, mu, node[:T*K], sum)
	if T == 1 {
		clear(sum[:K*K])
		return 0
	}
	return dot(sum[:K*K], B[:K*K])
}

// muLogNu returns Σ_e μ_e log ν_e over the block's entries for the ν of
// ws's lattice (logNuDot).
func muLogNu(ws *stepWork, T, K int, mu []float64, muB float64) float64 {
	return logNuDot(ws.lat, T, K, mu, ws.muN, muB, &ws.fa, &ws.fc)
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
func (sp *stepper) direction(ws *stepWork, i int, s crf.Sentence) (wv, vv float64) {
	p := sp.p
	lay := p.Layout
	K := lay.NumLabels
	T := s.Len()
	c := -1 / (p.Lambda * float64(p.N()))
	ws.rows = sp.rows.of(i)
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
	axpyRows(ws.vr, sp.rows.slot[lo:hi], ws.dN, ws.tokOf, values, c, K)
	if p.Mask != nil || lay.Free != nil {
		for r, a := range ws.rows {
			p.maskRow(ws.vr[r*K:r*K+K], a)
		}
	}
	vv = dotKernel(ws.vr, ws.vr)
	// ⟨w, v⟩ on the attribute rows is c·Σ_t Σ_j x_j⟨U[a_j], δ_t⟩ = c·Σ_t ⟨θ_t − bias − start/end, δ_t⟩
	// with the node scores θ of the oracle (masked-out weights are zero, so
	// the mask changes nothing here).
	th := ws.lat.Node()
	wt := sp.primalTail(ws) // B, bias, start, end of the oracle's weights
	for t := 0; t < T; t++ {
		row, dn := th[t*K:(t+1)*K], ws.dN[t*K:(t+1)*K]
		if lay.NoBias {
			wv += dot(row, dn)
			continue
		}
		bias := wt[lay.Bias()-lay.Trans() : lay.Bias()-lay.Trans()+K]
		start, end := wt[lay.Start()-lay.Trans():lay.Start()-lay.Trans()+K], wt[lay.End()-lay.Trans():lay.End()-lay.Trans()+K]
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
	sp.fillTail(ws, T, c)
	tail := ws.vt
	wv += dot(wt, tail)
	vv += dot(tail, tail)
	return wv, vv
}

// fillTail adds into ws.vt (zero, or holding what is to be added to) the
// direction's dense tail for the node δ in ws.dN and the summed edge δ
// ws.nuSum − ws.muSum of a sentence of T tokens, scaled by c: B (Σ_t δ_e),
// then bias (Σ_t δ_t), start (δ_0) and end (δ_{T-1}).
func (sp *stepper) fillTail(ws *stepWork, T int, c float64) {
	p := sp.p
	lay := p.Layout
	K := lay.NumLabels
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
}

// applyPrimal adds γv to w on the touched rows and the dense tail.
func (sp *stepper) applyPrimal(ws *stepWork, gamma float64) {
	lay := sp.p.Layout
	K := lay.NumLabels
	if lay.Free != nil {
		axpySparseRows(sp.w, lay, ws.rows, ws.vr, gamma)
	} else {
		axpyRows(sp.w, ws.rows, ws.vr, nil, nil, gamma, K)
	}
	w, v := sp.w[lay.Trans():], ws.vt
	for j := range w {
		w[j] += gamma * v[j]
	}
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
// A first point g0 in (0,1) replaces the secant root: the step of the same
// search against nearby weights, a warm start.
func (sp *stepper) lineSearch(ws *stepWork, mu []float64, d0, a, b, ln, g0 float64) (float64, int) {
	tol := sp.sub
	eval := func(g float64) (d, dd float64) {
		s, s2 := ws.edges.eval(g, mu, ws.nu) // edges less separators
		return -s - ln*(a+g*b), -s2 - ln*b
	}
	if sp.u != nil {
		// The elastic net: λn‖v‖²·γ becomes λn·q(γ) (elastic.go).
		eval = func(g float64) (d, dd float64) {
			s, s2 := ws.edges.eval(g, mu, ws.nu)
			q, dq := ws.elastic.eval(g)
			return -s - ln*(a+q), -s2 - ln*dq
		}
		b, _ = ws.elastic.eval(1)
	}
	// φ'(1) = −λn‖v‖² < 0 unless v = 0, in which case the full step is
	// optimal (elastic net: −λn·q(1), 0 when no coordinate of the
	// direction leaves the threshold's dead zone).
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
	g := g0
	if !(g > 0 && g < 1) {
		g = secant()
	}
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
