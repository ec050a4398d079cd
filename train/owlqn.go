package train

// OWL-QN: L-BFGS for the elastic net (Andrew & Gao, "Scalable training of
// L1-regularized log-linear models", ICML 2007) — CRFsuite's and Wapiti's
// method for c1 > 0, which LBFGS runs when Problem.L1 > 0.
//
// P(x) = f(x) + λ₁‖x‖₁ with the smooth part f(x) = (1/n) Σ_i ℓ_i(x) +
// (λ/2)‖x‖². P is differentiable inside each orthant, and its directional
// derivatives are those of the pseudo-gradient ◇P:
//
//	◇_j P = ∂_j f + λ₁·sign(x_j)                     where x_j ≠ 0,
//	        ∂_j f + λ₁ if ∂_j f + λ₁ < 0, ∂_j f − λ₁ if ∂_j f − λ₁ > 0, else 0   where x_j = 0.
//
// An iteration: the L-BFGS two-loop recursion applied to ◇P with the pairs
// (s, y) of the smooth part (y the change of ∇f, so the quasi-Newton model
// is f's); the direction d = −H◇P zeroed where it disagrees in sign with
// −◇P; the orthant ξ_j = sign(x_j), or sign(−◇_j P) where x_j = 0; and a
// backtracking line search along the projected path x(α) = π(x + αd; ξ),
// which zeroes the coordinates that leave the orthant, until
// P(x(α)) ≤ P(x) + c·⟨◇P, x(α) − x⟩ (c = 1e-4, α halved from 1; from 1/‖d‖
// at the first iteration, as liblbfgs starts). Each trial is one full pass
// of the oracle (P and ∇f at once). One Epoch is one accepted iteration.
//
// Certificate. At x, the dual point α̂(x) — every sentence's marginals
// under x — has v = −∇((1/n)Σℓ_i)(x) = λx − ∇f(x), and
//
//	P(x) − D(α̂(x)) = Σ_j [g_j(x_j) + g*_j(v_j) − x_j·v_j],
//
// the Fenchel–Young gap of g = (λ/2)‖·‖² + λ₁‖·‖₁ (elastic.go), which for
// λ₁ = 0 is LBFGS's ‖∇P‖²/(2λ). It bounds P(x) − P* like any duality gap,
// and costs no pass: the last evaluation has ∇f.
//
// With a Mask the vector is freeSpace's compact one: masked weights are
// not in it, and so not in g (g = +∞ off the free subspace, whose
// conjugate sees the free coordinates only).

import (
	"context"
	"errors"
	"fmt"
	"math"
)

// owlqnArmijo is c of the sufficient decrease test, owlqnMaxTrials the
// trials of a line search before the iteration gives up.
const (
	owlqnArmijo    = 1e-4
	owlqnMaxTrials = 40
)

// owlqn is the state of an OWL-QN run on a problem with an ℓ1 term.
type owlqn struct {
	p     *Problem
	store int // correction pairs kept
	fs    *freeSpace
	gold  []float64 // compact Σ_i F_i (with fs)
	x, g  []float64 // the point and ∇f there
	obj   float64   // P(x)
	pg, d []float64 // pseudo-gradient and direction (scratch)
	xn    []float64 // trial point (scratch)
	gn    []float64 // ∇f at the trial point (scratch)
	// The correction pairs, oldest first: s, y and 1/⟨s,y⟩.
	s, y  [][]float64
	rho   []float64
	alpha []float64 // the two-loop's scratch
	evals int64
	iters int64
	w     []float64 // the dense weights (Weights) with fs
}

// newOWLQN evaluates x = 0 on p and returns the method there.
func newOWLQN(ctx context.Context, p *Problem, store int, dense bool) (*owlqn, error) {
	o := &owlqn{p: p, store: store}
	dim := p.Layout.Dim()
	if p.Mask != nil && !dense {
		o.fs = newFreeSpace(p, 1)
		o.gold = o.fs.compact(p.GoldFeatures())
		dim = o.fs.dim
	}
	o.x, o.g = make([]float64, dim), make([]float64, dim)
	o.pg, o.d, o.xn, o.gn = make([]float64, dim), make([]float64, dim), make([]float64, dim), make([]float64, dim)
	obj, err := o.evaluate(ctx, o.x, o.g)
	if err != nil {
		return nil, err
	}
	o.obj = obj
	return o, nil
}

// evaluate returns P(x) and writes ∇f(x) into g: one full pass.
func (o *owlqn) evaluate(ctx context.Context, x, g []float64) (float64, error) {
	p := o.p
	var obj float64
	if o.fs != nil {
		f, err := p.freeGradient(ctx, o.fs, x, o.gold, g)
		if err != nil {
			return 0, err
		}
		obj = f + p.l1Term(x)
	} else {
		r, err := p.pass(ctx, x, nil, true)
		if err != nil {
			return 0, err
		}
		copy(g, r.Grad)
		obj = r.Primal
	}
	o.evals++
	if !finite(obj) {
		return 0, fmt.Errorf("%w: the primal is %g", ErrNonFinite, obj)
	}
	return obj, nil
}

// pseudoGradient writes ◇P(x) into o.pg.
func (o *owlqn) pseudoGradient() {
	c := o.p.L1
	for j, x := range o.x {
		g := o.g[j]
		switch {
		case x > 0:
			o.pg[j] = g + c
		case x < 0:
			o.pg[j] = g - c
		case g+c < 0:
			o.pg[j] = g + c
		case g-c > 0:
			o.pg[j] = g - c
		default:
			o.pg[j] = 0
		}
	}
}

// direction writes d = −H◇P (two-loop recursion over the pairs), zeroed
// where its sign disagrees with −◇P, and returns ‖d‖.
func (o *owlqn) direction() float64 {
	q := o.d
	copy(q, o.pg)
	k := len(o.s)
	o.alpha = o.alpha[:0]
	for i := k - 1; i >= 0; i-- {
		a := o.rho[i] * dot(o.s[i], q)
		o.alpha = append(o.alpha, a)
		axpy(q, -a, o.y[i])
	}
	if k > 0 {
		sy, yy := dot(o.s[k-1], o.y[k-1]), dot(o.y[k-1], o.y[k-1])
		scale := sy / yy
		for j := range q {
			q[j] *= scale
		}
	}
	for i := 0; i < k; i++ {
		b := o.rho[i] * dot(o.y[i], q)
		axpy(q, o.alpha[k-1-i]-b, o.s[i])
	}
	nd := 0.0
	for j, v := range q {
		v = -v
		if v*o.pg[j] >= 0 {
			v = 0
		}
		q[j] = v
		nd += v * v
	}
	return math.Sqrt(nd)
}

// iterate makes one OWL-QN iteration: it returns ErrNoProgress (wrapped)
// when no descent is left in floating point. When the quasi-Newton
// direction is lost to the sign projection, or its line search finds no
// decrease, the history is dropped and the iteration tried again from the
// steepest descent direction of the pseudo-gradient.
func (o *owlqn) iterate(ctx context.Context) error {
	err := o.try(ctx)
	if errors.Is(err, ErrNoProgress) && len(o.s) > 0 {
		o.s, o.y, o.rho = o.s[:0], o.y[:0], o.rho[:0]
		err = o.try(ctx)
	}
	return err
}

// try makes one iteration from the current history.
func (o *owlqn) try(ctx context.Context) error {
	o.pseudoGradient()
	norm := o.direction()
	if norm == 0 {
		return fmt.Errorf("%w: no descent direction left (the pseudo-gradient vanishes at the optimum)", ErrNoProgress)
	}
	step := 1.0
	if len(o.s) == 0 {
		step = 1 / norm
	}
	for trial := 0; trial < owlqnMaxTrials; trial++ {
		decrease := 0.0 // ⟨◇P, x(α) − x⟩
		for j, x := range o.x {
			xn := x + step*o.d[j]
			// The orthant of x, or of −◇P where x is zero.
			xi := x
			if xi == 0 {
				xi = -o.pg[j]
			}
			if xn*xi <= 0 {
				xn = 0
			}
			o.xn[j] = xn
			decrease += o.pg[j] * (xn - x)
		}
		obj, err := o.evaluate(ctx, o.xn, o.gn)
		if err != nil {
			return err
		}
		if obj <= o.obj+owlqnArmijo*decrease {
			o.accept(obj)
			return nil
		}
		step *= 0.5
	}
	return fmt.Errorf("%w: OWL-QN's line search found no decrease in %d trials", ErrNoProgress, owlqnMaxTrials)
}

// accept moves to the trial point and keeps its correction pair.
func (o *owlqn) accept(obj float64) {
	var s, y []float64
	if len(o.s) == o.store {
		s, y = o.s[0], o.y[0]
		o.s, o.y, o.rho = o.s[1:], o.y[1:], o.rho[1:]
	} else {
		s, y = make([]float64, len(o.x)), make([]float64, len(o.x))
	}
	sy := 0.0
	for j := range o.x {
		s[j] = o.xn[j] - o.x[j]
		y[j] = o.gn[j] - o.g[j]
		sy += s[j] * y[j]
	}
	if sy > 0 {
		o.s, o.y, o.rho = append(o.s, s), append(o.y, y), append(o.rho, 1/sy)
	}
	o.x, o.xn = o.xn, o.x
	o.g, o.gn = o.gn, o.g
	o.obj = obj
	o.iters++
}

// weights returns the point in the dense layout: o.x itself, or its
// expansion into a slice kept for the next call.
func (o *owlqn) weights() []float64 {
	if o.fs == nil {
		return o.x
	}
	if o.w == nil {
		o.w = make([]float64, o.p.Layout.Dim())
	}
	o.fs.expand(o.x, o.w)
	return o.w
}

// certify returns the certificate at x: P(x) from its evaluation and the
// Fenchel–Young gap of the file's comment (no pass).
func (o *owlqn) certify() Certificate {
	p := o.p
	v := make([]float64, len(o.x))
	for j, x := range o.x {
		v[j] = p.Lambda*x - o.g[j]
	}
	gap := fenchelYoungL1(p.Lambda, p.L1, o.x, v)
	w := append([]float64(nil), o.weights()...)
	return Certificate{Primal: o.obj, Dual: o.obj - gap, Gap: gap, Residual: math.NaN(), Weights: w}
}

// axpy adds a·x to y.
func axpy(y []float64, a float64, x []float64) {
	for j, v := range x {
		y[j] += a * v
	}
}
