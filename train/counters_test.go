package train

import (
	"context"
	"testing"
)

// TestCountersByHand checks the oracle-call and update columns on n = 3
// sentences against counts made by hand. SDCA: one oracle call and one
// update per step, n steps an epoch, n oracle calls per certificate (every
// epoch certified with GapEvery 1), n per refresh pass (at the start of
// epochs 2 and 3 with RefreshEvery 1). L-BFGS: n oracle calls per
// evaluation, its certificate free, one update per iteration.
func TestCountersByHand(t *testing.T) {
	p := randomProblem(t, 7, 3, 4, 6, 3, false, 0)
	ctx := context.Background()
	res, err := Train(ctx, p, Settings{MaxEpochs: 3, GapTol: 1e-300, GapEvery: 1, RefreshEvery: 1}, &SDCA{Seed: 1, Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	// epoch e: 3e step calls, plus 3 per refresh before it (epochs 2..e start
	// with one), plus 3 per certificate of epochs 0..e.
	want := []struct{ oracle, cert, upd int64 }{{0, 3, 0}, {3, 6, 3}, {3*2 + 3, 9, 6}, {3*3 + 6, 12, 9}}
	if len(res.Records) != len(want) {
		t.Fatalf("%d records, want %d", len(res.Records), len(want))
	}
	for e, r := range res.Records {
		if w := want[e]; r.OracleCalls != w.oracle || r.CertOracleCalls != w.cert || r.Updates != w.upd {
			t.Errorf("SDCA epoch %d: oracle %d, cert %d, updates %d; want %d, %d, %d",
				e, r.OracleCalls, r.CertOracleCalls, r.Updates, w.oracle, w.cert, w.upd)
		}
	}

	m := &LBFGS{}
	res, err = Train(ctx, p, Settings{MaxEpochs: 2, GapTol: 1e-300}, m)
	if err != nil {
		t.Fatal(err)
	}
	for e, r := range res.Records {
		if r.OracleCalls != r.Steps || r.OracleCalls%3 != 0 || r.CertOracleCalls != 0 || r.Updates != int64(e) {
			t.Errorf("L-BFGS epoch %d: oracle %d (steps %d), cert %d, updates %d; want steps = oracle calls, a multiple of 3, no cert calls, %d updates",
				e, r.OracleCalls, r.Steps, r.CertOracleCalls, r.Updates, e)
		}
	}
	if r := res.Records[0]; r.OracleCalls != 3 {
		t.Errorf("L-BFGS's initial point took %d oracle calls, want 3 (one evaluation)", r.OracleCalls)
	}
}
