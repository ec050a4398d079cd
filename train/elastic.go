package train

// The elastic net by proximal SDCA (Shalev-Shwartz & Zhang, "Accelerated
// proximal stochastic dual coordinate ascent for regularized loss
// minimization", Math. Programming 2016, §2–§4).
//
// The primal is P(w) = (1/n) Σ_i ℓ_i(w) + g(w) with the log loss
// ℓ_i(w) = log Z_i(w) − w·F_i and the regulariser
//
//	g(w) = (λ/2)‖w‖² + λ₁‖w‖₁,
//
// which is λ-strongly convex. Its conjugate is separable: with
// soft(x, t) = sign(x)·max(|x| − t, 0),
//
//	g*(v) = ‖soft(v, λ₁)‖²/(2λ),   ∇g*(v) = soft(v, λ₁)/λ,
//
// piecewise quadratic and C¹ (its derivative soft(·)/λ is continuous and
// piecewise linear). The dual of P over the clique marginals μ is
//
//	D(μ) = (1/n) Σ_i H̃(μ_i) − g*(v(μ)),   v(μ) = (1/n) Σ_i (F_i − E_μ_i[F]),
//
// and its primal point is w(μ) = ∇g*(v(μ)). λ₁ = 0 gives the ℓ2 problem of
// sdca.go: g* = ‖v‖²/(2λ), w = v/λ = ŵ(μ).
//
// Units. The code keeps u = v/λ, which is ŵ(μ) — what the ℓ2 SDCA keeps as
// its weights and Problem.What computes — and the threshold τ = λ₁/λ:
//
//	w = soft(u, τ),   g*(v) = (λ/2)‖w‖²,   D(μ) = (1/n) Σ_i H̃(μ_i) − (λ/2)‖w‖².
//
// So the dual has the ℓ2 form with the primal point in place of ŵ(μ), and
// the certificate pass (pass) needs only P's extra term λ₁‖w‖₁.
//
// The gap identity. With ν_i the marginals of p(·|x_i; w) for this w,
// D̃(μ_i‖ν_i) = −H̃(μ_i) − ⟨μ_i, log ν_i⟩ and
// ⟨μ_i, log ν_i⟩ = w·E_μ_i[F] − log Z_i(w), so
//
//	(1/n) Σ_i D̃(μ_i‖ν_i) = −(1/n) Σ_i H̃(μ_i) + (1/n) Σ_i ℓ_i(w) + λ⟨w, u⟩,
//
// and ⟨w, u⟩ = Σ_j soft(u_j, τ)·u_j = ‖w‖² + τ‖w‖₁ (u_j and w_j have one
// sign, and |u_j| = |w_j| + τ where w_j ≠ 0). Hence
//
//	P(w) − D(μ) = (1/n) Σ_i D̃(μ_i‖ν_i) + [g(w) + g*(v) − ⟨w, v⟩],
//
// and the Fenchel–Young gap in brackets is zero exactly at w = ∇g*(v): the
// identity "P − D = mean block gap" holds as for ℓ2, and the certificate
// checks it as always (TestElasticGapIdentity checks it after every step).
// The block gaps D̃(μ_i‖ν_i) are thus the elastic net's too — each is what
// sentence i contributes to P − D — and gap sampling draws by them
// unchanged: a step computes its block's gap at the oracle, as for ℓ2.
//
// The step on sentence i. The oracle, the block gap and the directions
// δ = ν − μ_i and d = −(1/(λn)) E_δ[F] (in the units of u) are sdca.go's,
// with the oracle at the primal point w. Along μ_i + γδ, u moves to u + γd,
// and n·D is, up to a constant,
//
//	φ(γ) = H̃(μ_i + γδ) − λn·h(γ),   h(γ) = ½ Σ_j soft(u_j + γd_j, τ)²,
//
// with the sum over the direction's support only (the attribute rows of
// sentence i and the dense tail). Each term of h is the square of a
// continuous piecewise-linear function that vanishes where it changes
// slope, so h is C¹ and convex with
//
//	h'(γ)  = Σ_j soft(u_j + γd_j, τ)·d_j,   h'(0) = ⟨w, d⟩ = a,
//	h''(γ) = Σ_j d_j²·[|u_j + γd_j| > τ]   (≥ 0, one-sided at the breakpoints).
//
// H̃ is concave on the marginal polytope and −λn·h concave, so φ is concave
// and C¹ on [0,1], and its maximiser is the root of φ' (or an end of the
// interval) — the safeguarded Newton search of step.go, with
//
//	φ'(γ)  = −[S(γ) − S_sep(γ)] − λn·(a + q(γ)),
//	φ''(γ) = −[S'(γ) − S'_sep(γ)] − λn·q'(γ),
//
// where q(γ) = h'(γ) − h'(0) is 0 at γ = 0, non-decreasing and piecewise
// linear. For ℓ2 (τ = 0) q(γ) = γ‖d‖², the search of sdca.go. As there,
// φ'(0) = ⟨δ, log ν − log μ⟩ = KL(μ‖ν) + KL(ν‖μ) ≥ g_i (the oracle ran at
// w, and h'(0) = ⟨w, d⟩), and φ'(1) = −λn·q(1) ≤ 0 costs nothing: at γ = 1,
// μ_i + δ = ν and S(1) − S_sep(1) = ⟨δ, log ν⟩ = ⟨w, E_δ[F]⟩ = −λn·a.
//
// Breakpoints. Coordinate j changes between active (|u_j + γd_j| > τ) and
// not at γ = (±τ − u_j)/d_j; only those in (0,1) matter. Once per step
// (prepareElastic) the coordinates of the support are scanned: q'(0⁺) =
// Σ d_j² over those active just after 0, and each breakpoint b_k in (0,1)
// with the jump Δ_k = ±d_j² of q' there (+ entering, − leaving).
// Then, q being continuous,
//
//	q(γ) = γ·q'(0⁺) + Σ_{b_k < γ} Δ_k·(γ − b_k),   q'(γ) = q'(0⁺) + Σ_{b_k < γ} Δ_k,
//
// so an evaluation of the search costs O(breakpoints), usually a few, on
// top of the entropy terms; the scan is allocation-free (its slices are
// the step's scratch, grown once).
//
// The commit moves u by γd on the support and keeps ‖w‖² (that is
// 2g*(v)/λ) by adding the change of each soft(u_j, τ)².
//
// Memory: the stepper holds u only, one d-vector as the ℓ2 SDCA holds w.
// A step soft-thresholds its sentence's rows of u (and the dense tail) into
// packed rows, scores the sentence with them (the sentence's attributes
// numbered by packed row: the same terms in the same order as scoring
// with the whole primal point, so the same bits), and reads the tail's
// bias, start and end there. Soft-thresholding is a function of u_j alone,
// so the primal point is the same bits however u was reached; a whole one
// is made only where a full pass needs it (refreshes, Weights). Keeping w
// beside u instead would double the weights' cache traffic of every step
// (the oracle reading w's rows, the line search and the commit u's).
// Checkpoints store u; the model holds soft(u, τ).

import (
	"math"
	"strconv"

	"github.com/dualcrf/dualcrf/crf"
	"github.com/dualcrf/dualcrf/option"
)

// threshold returns τ = λ₁/λ, the soft threshold of u = ŵ(μ).
func (p *Problem) threshold() float64 { return p.L1 / p.Lambda }

// soft returns soft(x, t) = sign(x)·max(|x| − t, 0) for t ≥ 0, as
// x − clamp(x, −t, t): x − t above t, x + t below −t, and +0 between (the
// same bits as the three cases written out), without a branch on which
// case it is.
func soft(x, t float64) float64 { return x - max(-t, min(t, x)) }

// primalOf turns u = ŵ(μ) into the primal point w(μ) = soft(u, τ), in
// place, and returns it; without an ℓ1 term w = u.
func (p *Problem) primalOf(u []float64) []float64 {
	if p.L1 == 0 {
		return u
	}
	tau := p.threshold()
	for j, x := range u {
		u[j] = soft(x, tau)
	}
	return u
}

// l1Term returns λ₁‖w‖₁ (0 without an ℓ1 term).
func (p *Problem) l1Term(w []float64) float64 {
	if p.L1 == 0 {
		return 0
	}
	s := 0.0
	for _, x := range w {
		s += math.Abs(x)
	}
	return p.L1 * s
}

// checkL1 refuses an ℓ1 weight that is not a finite number ≥ 0.
func (p *Problem) checkL1() error {
	if !(p.L1 >= 0) || math.IsInf(p.L1, 0) {
		return &option.Error{Field: "L1", Value: strconv.FormatFloat(p.L1, 'g', -1, 64), Msg: "want a finite λ₁ ≥ 0", Err: ErrBadProblem}
	}
	return nil
}

// refuseL1 refuses an ℓ1 term for a method that minimises the ℓ2 objective
// only.
func refuseL1(p *Problem, method string) error {
	if p.L1 != 0 {
		return &option.Error{Field: "L1", Value: strconv.FormatFloat(p.L1, 'g', -1, 64), Err: ErrBadProblem,
			Msg: method + " minimises the ℓ2-regularised objective only: the elastic net is trained by SDCA or L-BFGS (OWL-QN)"}
	}
	return nil
}

// fenchelYoungL1 returns Σ_j [g_j(w_j) + g*_j(v_j) − w_j·v_j] for the
// regulariser g = (λ/2)‖·‖² + λ₁‖·‖₁ summed over the entries of w and v
// (equal lengths): the gap P(w) − D(α̂(w)) of a primal method at w with
// v = −∇(loss)(w), each term ≥ 0 (rounded below zero: zero).
func fenchelYoungL1(lambda, l1 float64, w, v []float64) float64 {
	s := 0.0
	for j, x := range w {
		sv := soft(v[j], l1)
		t := lambda/2*x*x + l1*math.Abs(x) + sv*sv/(2*lambda) - x*v[j]
		s += max(t, 0)
	}
	return s
}

// elasticLine is what a step's line search needs of h (the file's
// comment): q'(0⁺) and the breakpoints in (0,1) with the jumps of q' there.
type elasticLine struct {
	slope0 float64   // q'(0⁺)
	at     []float64 // breakpoints in (0,1), in the order met
	jump   []float64 // the change of q' at each
	cross  []int32   // addRun's scratch: the coordinates of a run that cross ±τ
}

// reset empties the line for a new direction.
func (l *elasticLine) reset() {
	l.slope0 = 0
	l.at, l.jump = l.at[:0], l.jump[:0]
}

// add adds coordinate j with u_j = u and d_j = d at threshold tau.
func (l *elasticLine) add(u, d, tau float64) {
	if d == 0 {
		return
	}
	dd := d * d
	if u > tau || u < -tau || (u == tau && d > 0) || (u == -tau && d < 0) {
		l.slope0 += dd
	}
	// Crossing +τ: going up it enters, going down it leaves; −τ the other
	// way round.
	if g := (tau - u) / d; g > 0 && g < 1 {
		l.at = append(l.at, g)
		if d > 0 {
			l.jump = append(l.jump, dd)
		} else {
			l.jump = append(l.jump, -dd)
		}
	}
	if g := (-tau - u) / d; g > 0 && g < 1 {
		l.at = append(l.at, g)
		if d < 0 {
			l.jump = append(l.jump, dd)
		} else {
			l.jump = append(l.jump, -dd)
		}
	}
}

// eval returns q(γ) and q'(γ) (the right derivative at a breakpoint), both
// ≥ 0.
func (l *elasticLine) eval(g float64) (q, dq float64) {
	q, dq = g*l.slope0, l.slope0
	for k, b := range l.at {
		if b < g {
			q += l.jump[k] * (g - b)
			dq += l.jump[k]
		}
	}
	return max(q, 0), max(dq, 0)
}

// addRun adds the coordinates u, d (equal lengths) at threshold tau. Most
// coordinates stay on one side of ±τ for γ in [0,1]: the segment [lo, hi]
// from u_j to u_j + d_j lies above τ or below −τ (active all along) or
// within [−τ, τ] (in the dead zone all along). The signs of τ − lo,
// hi + τ, lo + τ and τ − hi tell them apart without a branch — a
// difference is zero exactly when its terms are equal, and its sign is
// exact otherwise — which matters as the side a coordinate is on depends
// on the data and a branch on it would be mispredicted often; the others,
// which cross ±τ or start on it, go through add.
func (l *elasticLine) addRun(u, d []float64, tau float64) {
	u = u[:len(d)]
	if cap(l.cross) < len(d) {
		l.cross = make([]int32, len(d), 2*len(d))
	}
	cross := l.cross[:len(d)]
	n := 0
	slope := 0.0 // the active-all-along part of q'(0⁺), added at the end
	for j, dj := range d {
		uj := u[j]
		x1 := uj + dj
		lo, hi := min(uj, x1), max(uj, x1)
		active := (math.Float64bits(tau-lo) | math.Float64bits(hi+tau)) >> 63
		dead := (math.Float64bits(lo+tau)|math.Float64bits(tau-hi))>>63 ^ 1
		slope += float64(int64(active)) * (dj * dj)
		cross[n] = int32(j)
		n += int(1 &^ (active | dead))
	}
	l.slope0 += slope
	for _, j := range cross[:n] {
		l.add(u[j], d[j], tau)
	}
}

// prepareElastic scans the support of ws's direction against the stepper's
// u: the breakpoints of its line (elasticLine). It only reads sp.u.
func (sp *stepper) prepareElastic(ws *stepWork) {
	lay := sp.p.Layout
	K := lay.NumLabels
	tau := sp.tau
	l := &ws.elastic
	l.reset()
	for r, a := range ws.rows {
		l.addRun(sp.uRow(ws, a), ws.vr[r*K:r*K+K], tau)
	}
	l.addRun(sp.u[lay.Trans():], ws.vt, tau)
}

// uRow returns attribute a's K weights of u: its row of a dense layout, or
// for a sparse one the row laid out densely in ws.urow (zero where a label
// is not free, as the direction is: the same numbers as the dense layout's
// row under a Mask).
func (sp *stepper) uRow(ws *stepWork, a int32) []float64 {
	lay := sp.p.Layout
	lo, hi := lay.Span(a)
	if lay.Free == nil {
		return sp.u[lo:hi]
	}
	ws.urow = grow(ws.urow, lay.NumLabels)
	clear(ws.urow)
	for k, y := range lay.RowLabels(a) {
		ws.urow[y] = sp.u[lo+k]
	}
	return ws.urow
}

// commitElastic is commitPrimal for the elastic net: u ← u + γd on the
// direction's support, and ‖w‖² by the change of each soft(u_j, τ)²; it
// clears the direction's tail for the next step.
func (sp *stepper) commitElastic(ws *stepWork, gamma float64) {
	if gamma > 0 {
		lay := sp.p.Layout
		K := lay.NumLabels
		tau := sp.tau
		change := 0.0
		for r, a := range ws.rows {
			lo, hi := lay.Span(a)
			if lay.Free != nil {
				change += moveElasticSparse(sp.u[lo:hi], lay.RowLabels(a), ws.vr[r*K:r*K+K], gamma, tau)
				continue
			}
			change += moveElastic(sp.u[lo:hi], ws.vr[r*K:r*K+K], gamma, tau)
		}
		change += moveElastic(sp.u[lay.Trans():], ws.vt, gamma, tau)
		sp.wsq = max(sp.wsq+change, 0)
	}
	clear(ws.vt)
}

// moveElastic sets u ← u + γd where d is not zero (u and d of equal
// lengths) and returns the change of Σ soft(u_j, τ)².
func moveElastic(u, d []float64, gamma, tau float64) (change float64) {
	u = u[:len(d)]
	for j, x := range d {
		if x == 0 {
			continue
		}
		nu := u[j] + gamma*x
		o, n := soft(u[j], tau), soft(nu, tau)
		change += n*n - o*o
		u[j] = nu
	}
	return change
}

// moveElasticSparse is moveElastic for a row of a sparse layout: u holds
// the weights of the labels in labels (increasing), d is the row's K
// entries. Its terms are moveElastic's on the dense row, in the same
// order, the others being zero: the same bits.
func moveElasticSparse(u []float64, labels []int32, d []float64, gamma, tau float64) (change float64) {
	u = u[:len(labels)]
	for k, y := range labels {
		x := d[y]
		if x == 0 {
			continue
		}
		nu := u[k] + gamma*x
		o, n := soft(u[k], tau), soft(nu, tau)
		change += n*n - o*o
		u[k] = nu
	}
	return change
}

// packPrimal writes into ws.pw the primal weights soft(u, τ) of sentence
// i's rows (ws.rows: row r is attribute ws.rows[r]) and of the dense tail,
// and returns the layout and the sentence (s with its attributes numbered
// by row: sentenceRows.slot) that score with them as s scores with the
// whole primal point — the same terms in the same order, so the same bits.
func (sp *stepper) packPrimal(ws *stepWork, i int, s crf.Sentence) (crf.Layout, crf.Sentence) {
	lay := sp.p.Layout
	K := lay.NumLabels
	tau := sp.tau
	ws.rows = sp.rows.of(i)
	pl := crf.Layout{NumAttrs: len(ws.rows), NumLabels: K, NoBias: lay.NoBias}
	ws.pw = grow(ws.pw, pl.Dim())
	for r, a := range ws.rows {
		dst := ws.pw[r*K : r*K+K]
		if lay.Free != nil {
			clear(dst)
			lo, _ := lay.Span(a)
			for k, y := range lay.RowLabels(a) {
				dst[y] = soft(sp.u[lo+k], tau)
			}
			continue
		}
		softInto(dst, sp.u[lay.Row(a):lay.Row(a)+K], tau)
	}
	softInto(ws.pw[pl.Trans():], sp.u[lay.Trans():], tau)
	s.Attrs = sp.rows.slot
	return pl, s
}

// softInto sets dst = soft(src, τ) (equal lengths).
func softInto(dst, src []float64, tau float64) {
	src = src[:len(dst)]
	for j, x := range src {
		dst[j] = soft(x, tau)
	}
}

// primalTail returns the transition, bias, start and end weights of the
// oracle's primal point: w's, or for the elastic net those packed by
// packPrimal.
func (sp *stepper) primalTail(ws *stepWork) []float64 {
	if sp.u != nil {
		return ws.pw[len(ws.rows)*sp.p.Layout.NumLabels:]
	}
	return sp.w[sp.p.Layout.Trans():]
}

// dotPrimal returns ⟨soft(u, τ), d⟩ over ws's direction at the current u
// (the elastic net's redirect).
func (sp *stepper) dotPrimal(ws *stepWork) float64 {
	lay := sp.p.Layout
	K := lay.NumLabels
	s := 0.0
	dotSoft := func(u, d []float64) {
		u = u[:len(d)]
		for j, x := range d {
			s += soft(u[j], sp.tau) * x
		}
	}
	for r, a := range ws.rows {
		dotSoft(sp.uRow(ws, a), ws.vr[r*K:r*K+K])
	}
	dotSoft(sp.u[lay.Trans():], ws.vt)
	return s
}

// setElastic makes the stepper's point the duals' ŵ(μ) u, which it takes:
// its weights w = u, or for the elastic net u itself with the primal point
// soft(u, τ); and ‖w‖² of the primal point.
func (sp *stepper) setElastic(u []float64) {
	if sp.p.L1 == 0 {
		sp.w, sp.u = u, nil
	} else {
		sp.tau = sp.p.threshold()
		sp.w, sp.u = nil, u
	}
	sp.wsq = sp.primalSq()
}

// dualVector returns ŵ(μ) as the stepper keeps it: u for the elastic net,
// else w (the stepper's own slice).
func (sp *stepper) dualVector() []float64 {
	if sp.u != nil {
		return sp.u
	}
	return sp.w
}

// primal returns the primal point: w (the stepper's own slice), or for the
// elastic net a new slice soft(u, τ).
func (sp *stepper) primal() []float64 {
	if sp.u == nil {
		return sp.w
	}
	return sp.primalInto(nil)
}

// primalInto returns the primal point in buf (grown as needed; the
// stepper's own w without an ℓ1 term).
func (sp *stepper) primalInto(buf []float64) []float64 {
	if sp.u == nil {
		return sp.w
	}
	buf = grow(buf, len(sp.u))
	softInto(buf, sp.u, sp.tau)
	return buf
}

// primalSq returns ‖w‖² of the primal point, from scratch.
func (sp *stepper) primalSq() float64 {
	if sp.u == nil {
		return dot(sp.w, sp.w)
	}
	s := 0.0
	for _, x := range sp.u {
		x = soft(x, sp.tau)
		s += x * x
	}
	return s
}
