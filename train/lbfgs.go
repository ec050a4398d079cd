package train

import (
	"context"
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/optimize"
)

// LBFGS minimises P(w) with gonum's L-BFGS and More–Thuente line search —
// the classic CRF trainer (CRFsuite's default) — with the gradient from the
// same oracle as SDCA, starting at w = 0. One Epoch is one L-BFGS iteration
// (usually one or two full passes). Its certificate is the gap between w
// and the dual point α̂(w): P(w) − D(α̂(w)) = ‖∇P(w)‖²/(2λ) (paper, eq. 7–8),
// which bounds P(w) − P*. With an ℓ1 term (Problem.L1 > 0) it runs OWL-QN
// (owlqn.go) instead, with its Fenchel–Young certificate.
type LBFGS struct {
	// Store is the number of correction pairs kept; 0 means
	// DefaultLBFGSStore.
	Store int

	dense bool // keep the dense vector even with a Mask (tests compare the two)

	p     *Problem
	ls    *optimize.LinesearchMethod
	loc   *optimize.Location
	op    optimize.Operation
	best  []float64 // last accepted point
	bestF float64
	bestG []float64
	evals int64
	iters int64 // accepted iterations
	// With a Mask, the vectors above are compact (freeSpace): fs lays them
	// out, gold is the compact Σ_i F_i, w the dense weights Weights returns.
	fs   *freeSpace
	gold []float64
	w    []float64
	// owl runs the elastic net (Problem.L1 > 0); nil otherwise.
	owl *owlqn
}

// Describe declares L-BFGS: its one setting, and of the options some
// methods read the elastic net's λ₁ only (OWL-QN; no sampler, no duals, no
// checkpoints: a deterministic method started at w = 0).
func (m *LBFGS) Describe() Description {
	return Description{Name: "lbfgs", Title: "L-BFGS", Loss: LossLog, Summary: "limited-memory BFGS on the primal (OWL-QN with an ℓ1 term)", Reads: []string{RunL1},
		Settings: []Setting{
			{Field: "Store", Name: "lbfgs-store", Default: DefaultLBFGSStore, Help: "L-BFGS: correction pairs kept, ≥ 1",
				Want: "want at least 1 correction pair", Valid: intAtLeast(1)},
		}}
}

// Check refuses a setting out of range with an *option.Error naming it
// (CheckSettings); a zero that stands for a default passes. Init checks
// too.
func (m *LBFGS) Check() error { return CheckSettings(m, nil) }

// Facts returns what a model records of L-BFGS: nothing beyond the run's
// facts (it is deterministic).
func (m *LBFGS) Facts(p *Problem) map[string]any { return nil }

// Init evaluates w = 0 and starts the first line search.
func (m *LBFGS) Init(p *Problem) error {
	m.p = p
	if err := m.Check(); err != nil {
		return err
	}
	if err := p.checkL1(); err != nil {
		return err
	}
	store := m.Store
	if store == 0 {
		store = DefaultLBFGSStore
	}
	m.owl = nil
	if p.L1 > 0 {
		var err error
		m.owl, err = newOWLQN(context.Background(), p, store, m.dense)
		return err
	}
	var dir optimize.NextDirectioner = &optimize.LBFGS{Store: store}
	d := p.Layout.Dim()
	m.fs, m.gold, m.w = nil, nil, nil
	if (p.Mask != nil || p.Layout.Free != nil) && !m.dense {
		m.fs = newFreeSpace(p, dotLanes())
		m.gold = m.fs.compact(p.GoldFeatures())
		d = m.fs.dim
		dir = freeLBFGS{LBFGS: dir.(*optimize.LBFGS), fs: m.fs}
	}
	m.evals, m.iters = 0, 0
	m.ls = &optimize.LinesearchMethod{NextDirectioner: dir, Linesearcher: &optimize.MoreThuente{}}
	m.loc = &optimize.Location{X: make([]float64, d), Gradient: make([]float64, d)}
	if err := m.evaluate(context.Background()); err != nil {
		return err
	}
	m.accept()
	op, err := m.ls.Init(m.loc)
	if err != nil {
		return fmt.Errorf("lbfgs: %w", err)
	}
	m.op = op
	return nil
}

func (m *LBFGS) accept() {
	m.best = append(m.best[:0], m.loc.X...)
	m.bestG = append(m.bestG[:0], m.loc.Gradient...)
	m.bestF = m.loc.F
}

// evaluate fills loc.F and loc.Gradient at loc.X.
func (m *LBFGS) evaluate(ctx context.Context) error {
	if m.fs != nil {
		return m.evaluateFree(ctx)
	}
	r, err := m.p.pass(ctx, m.loc.X, nil, true)
	if err != nil {
		return err
	}
	m.evals++
	if !finite(r.Primal) {
		return fmt.Errorf("%w: the primal is %g", ErrNonFinite, r.Primal)
	}
	m.loc.F = r.Primal
	copy(m.loc.Gradient, r.Grad)
	return nil
}

// evaluateFree is evaluate on the compact vector of the free weights.
func (m *LBFGS) evaluateFree(ctx context.Context) error {
	f, err := m.p.freeGradient(ctx, m.fs, m.loc.X, m.gold, m.loc.Gradient)
	if err != nil {
		return err
	}
	m.evals++
	if !finite(f) {
		return fmt.Errorf("%w: the primal is %g", ErrNonFinite, f)
	}
	m.loc.F = f
	return nil
}

// Epoch serves the line search's evaluations until it accepts a new point.
func (m *LBFGS) Epoch(ctx context.Context) error {
	if m.owl != nil {
		return m.owl.iterate(ctx)
	}
	for {
		if m.op&(optimize.FuncEvaluation|optimize.GradEvaluation) != 0 {
			if err := m.evaluate(ctx); err != nil {
				return err
			}
		}
		op, err := m.ls.Iterate(m.loc)
		if err != nil {
			if errors.Is(err, optimize.ErrNoProgress) || errors.Is(err, optimize.ErrNonDescentDirection) ||
				errors.Is(err, optimize.ErrLinesearcherFailure) {
				return fmt.Errorf("%w: %v", ErrNoProgress, err)
			}
			return fmt.Errorf("lbfgs: %w", err)
		}
		m.op = op
		if op == optimize.MajorIteration {
			m.iters++
			m.accept()
			return nil
		}
	}
}

// Weights returns the last accepted point. With a Mask it is its dense
// expansion, in a slice the next Certify hands to its certificate (so that
// a run holds one dense copy of the weights, not two).
func (m *LBFGS) Weights() []float64 {
	if m.owl != nil {
		return m.owl.weights()
	}
	if m.fs != nil {
		if m.w == nil {
			m.w = make([]float64, m.p.Layout.Dim())
		}
		m.fs.expand(m.best, m.w)
		return m.w
	}
	return m.best
}

// Certify returns P(w) and the gap ‖∇P(w)‖²/(2λ) at the last accepted point,
// both known from its evaluation (primalCertificate).
func (m *LBFGS) Certify(ctx context.Context) (Certificate, error) {
	if m.owl != nil {
		return m.owl.certify(), nil
	}
	var gsq float64
	if m.fs != nil {
		gsq = m.fs.dot(m.bestG, m.bestG)
	} else {
		gsq = dot(m.bestG, m.bestG)
	}
	var w []float64
	if m.fs != nil {
		w = m.Weights()
		m.w = nil // the certificate's now
	} else {
		w = append([]float64(nil), m.best...)
	}
	return primalCertificate(m.p, m.bestF, gsq, w), nil
}

// primalCertificate is the certificate of a primal method at weights w
// with P(w) = primal and ‖∇P(w)‖² = gsq: the gap P(w) − D(α̂(w)) =
// ‖∇P(w)‖²/(2λ) (paper, eq. 7–8), which bounds P(w) − P*, and the dual
// bound P(w) − gap. A primal method has no gap identity to check, so the
// residual is NaN.
func primalCertificate(p *Problem, primal, gsq float64, w []float64) Certificate {
	gap := gsq / (2 * p.Lambda)
	return Certificate{Primal: primal, Dual: primal - gap, Gap: gap, Residual: math.NaN(), Weights: w}
}

// Counters reports the oracle calls of the full passes (n each, the
// initial evaluation included) as steps and oracle calls, and the accepted
// iterations as updates; LBFGS has no gap estimate, and its certificate
// reuses the last evaluation (no oracle call).
func (m *LBFGS) Counters() Counters {
	evals, iters := m.evals, m.iters
	if m.owl != nil {
		evals, iters = m.owl.evals, m.owl.iters
	}
	calls := evals * int64(m.p.N())
	return Counters{Steps: calls, GapEstimate: nan(), OracleCalls: calls, Updates: iters}
}

var _ Describer = (*LBFGS)(nil)
