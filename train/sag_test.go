package train

import (
	"context"
	"math"
	"reflect"
	"testing"
)

// TestSAGConverges trains the same problems with every SAG variant and with
// L-BFGS to a small certified gap and compares the optima: P within 1e-6
// relative, and the SAG certificate (‖∇P‖²/(2λ) from a full pass) small.
// One problem has real attribute values, no bias and an observed feature
// space (masks), the lazy updates' hardest case.
func TestSAGConverges(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		p    func(t *testing.T) *Problem
	}{
		{"binary", func(t *testing.T) *Problem { return randomProblem(t, 41, 40, 7, 20, 4, false, 0) }},
		{"real-masked", func(t *testing.T) *Problem { return maskedProblem(t, 5, 30, 12, 0.05, true, true, true) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := tc.p(t)
			rl, err := Train(ctx, p, Settings{MaxEpochs: 500, GapTol: 1e-12}, &LBFGS{})
			if err != nil {
				t.Fatal(err)
			}
			for _, v := range []string{SAGNUS, SAGNUSStar, SAGUniform} {
				rs, err := Train(ctx, p, Settings{MaxEpochs: 400, GapTol: 1e-9}, &SAG{Variant: v, Seed: 3})
				if err != nil {
					t.Fatal(err)
				}
				ps, pl := rs.Last.Primal, rl.Last.Primal
				t.Logf("%s: P %.15g gap %.3g after %d epochs (%s); L-BFGS P %.15g", v, ps, rs.Last.Gap, rs.Epochs, rs.Stopped, pl)
				if rs.Stopped != GapReached {
					t.Errorf("%s stopped by %s at gap %g", v, rs.Stopped, rs.Last.Gap)
				}
				if math.Abs(ps-pl) > 1e-6*math.Abs(pl) {
					t.Errorf("%s: P* %.12g, L-BFGS %.12g", v, ps, pl)
				}
				if rs.Last.Dual > pl+1e-12 {
					t.Errorf("%s: its dual bound %.15g exceeds L-BFGS's P %.15g", v, rs.Last.Dual, pl)
				}
				for j, ok := range p.Mask {
					if !ok && rs.Weights[j] != 0 {
						t.Fatalf("%s: masked weight %d is %g", v, j, rs.Weights[j])
					}
				}
			}
		})
	}
}

// TestSAGLazyEqualsDense checks the lazy updates (w = s·v, rows brought up
// to date when drawn) against the plain SAG iteration
// w ← (1 − αλ)w − (α/m)d computed densely, iteration by iteration, with
// the same draws and step sizes, through renormalisations of s.
func TestSAGLazyEqualsDense(t *testing.T) {
	p := randomProblem(t, 17, 12, 5, 10, 3, true, 0.3)
	m := &SAG{Variant: SAGNUS, Seed: 5}
	if err := m.Init(p); err != nil {
		t.Fatal(err)
	}
	dense := make([]float64, p.Layout.Dim())
	renorms := 0
	for it := 0; it < 600; it++ {
		i := m.draw()
		before := m.acc
		m.iterate(i)
		// The dense step from the step size the lazy one took.
		step := m.acc - before
		if m.acc == 0 { // renormalised: A restarted
			renorms++
			step = math.NaN()
		}
		if math.IsNaN(step) {
			copy(dense, m.Weights())
			continue
		}
		// w_{k+1} = (1−αλ) w_k − (α/m) d, with α/(m s') = step and s'/s = 1−αλ.
		sNew := m.s
		sOld := sNew / (1 - m.lastAlpha*p.Lambda)
		_ = sOld
		for j := range dense {
			dense[j] = (1-m.lastAlpha*p.Lambda)*dense[j] - step*sNew*m.d[j]
		}
		got := m.Weights()
		for j := range dense {
			if math.Abs(got[j]-dense[j]) > 1e-9*(1+math.Abs(dense[j])) {
				t.Fatalf("iteration %d, weight %d: lazy %.15g, dense %.15g", it, j, got[j], dense[j])
			}
		}
	}
	t.Logf("%d renormalisations", renorms)
}

// TestSAGDeterministic: the same seed gives the same weights bit for bit.
func TestSAGDeterministic(t *testing.T) {
	p := randomProblem(t, 23, 30, 6, 12, 3, false, 0)
	run := func() []float64 {
		r, err := Train(context.Background(), p, Settings{MaxEpochs: 3, GapTol: 1e-300}, &SAG{Seed: 9})
		if err != nil {
			t.Fatal(err)
		}
		return r.Weights
	}
	if a, b := run(), run(); !reflect.DeepEqual(a, b) {
		t.Fatal("two runs with the same seed differ")
	}
}

// TestSAGCounters: every iteration is one update and one oracle call, every
// Lipschitz evaluation one more; SAG-NUS tests every iteration (gradients
// are never 0 here), a certificate is n oracle calls.
func TestSAGCounters(t *testing.T) {
	p := randomProblem(t, 7, 3, 4, 6, 3, false, 0)
	m := &SAG{Variant: SAGNUS, Seed: 1}
	res, err := Train(context.Background(), p, Settings{MaxEpochs: 2, GapTol: 1e-300, GapEvery: 1}, m)
	if err != nil {
		t.Fatal(err)
	}
	c := m.Counters()
	if c.Updates != 6 || c.Steps != 6 || c.OracleCalls != 6+c.LineSearch || c.LineSearch < 6 {
		t.Errorf("counters %+v: want 6 updates and steps, oracle calls = 6 + tests, ≥ 6 tests", c)
	}
	last := res.Records[len(res.Records)-1]
	if last.OracleCalls != c.OracleCalls || last.CertOracleCalls != 3*3 || last.Updates != 6 {
		t.Errorf("last record: oracle %d, cert %d, updates %d; want %d, 9, 6", last.OracleCalls, last.CertOracleCalls, last.Updates, c.OracleCalls)
	}
}

// TestSAGRefusesBadSettings: an unknown variant or a bad initial L.
func TestSAGRefusesBadSettings(t *testing.T) {
	p := randomProblem(t, 7, 3, 4, 6, 3, false, 0)
	for _, m := range []*SAG{{Variant: "nus*"}, {InitialL: -1}, {InitialL: math.Inf(1)}, {InitialL: math.NaN()}} {
		if err := m.Init(p); err == nil {
			t.Errorf("%+v accepted", *m)
		}
	}
}
