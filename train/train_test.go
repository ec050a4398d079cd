package train

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"testing"
)

// TestSDCAAgreesWithLBFGS trains the same problem with both methods to a
// certified gap of 1e-10 and compares the optima and the weights.
func TestSDCAAgreesWithLBFGS(t *testing.T) {
	p := randomProblem(t, 41, 60, 7, 20, 4, true, 0)
	ctx := context.Background()
	set := Settings{MaxEpochs: 500, GapTol: 1e-10}
	rs, err := Train(ctx, p, set, &SDCA{Sampler: "gap", Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	rl, err := Train(ctx, p, set, &LBFGS{})
	if err != nil {
		t.Fatal(err)
	}
	if rs.Stopped != "gap" {
		t.Fatalf("SDCA stopped by %s at gap %g", rs.Stopped, rs.Last.Gap)
	}
	if rl.Last.Gap > 1e-8 {
		t.Fatalf("L-BFGS stopped by %s at gap %g", rl.Stopped, rl.Last.Gap)
	}
	ps, pl := rs.Last.Primal, rl.Last.Primal
	t.Logf("P* SDCA %.15g (gap %.3g, %d epochs), L-BFGS %.15g (gap %.3g, %d iterations)", ps, rs.Last.Gap, rs.Epochs, pl, rl.Last.Gap, rl.Epochs)
	if math.Abs(ps-pl) > 1e-6*math.Abs(pl) {
		t.Fatalf("P* SDCA %.12g vs L-BFGS %.12g", ps, pl)
	}
	// Both certificates bound the suboptimality: each P − gap ≤ the other's P.
	if rs.Last.Dual > pl+1e-12 || rl.Last.Dual > ps+1e-12 {
		t.Fatalf("a dual bound exceeds a primal value: D_sdca %.15g P_lbfgs %.15g D_lbfgs %.15g P_sdca %.15g",
			rs.Last.Dual, pl, rl.Last.Dual, ps)
	}
	// λ-strong convexity: ‖w − w*‖² ≤ 2(P(w) − P*)/λ.
	diff := 0.0
	for j := range rs.Weights {
		d := rs.Weights[j] - rl.Weights[j]
		diff += d * d
	}
	if bound := 2 * (rs.Last.Gap + rl.Last.Gap) / p.Lambda; diff > bound*1.0001+1e-18 {
		t.Fatalf("‖w_sdca − w_lbfgs‖² = %g exceeds the strong-convexity bound %g", diff, bound)
	}
}

// TestTrainStopsAndRecords checks the log records and stop reasons.
func TestTrainStopsAndRecords(t *testing.T) {
	p := randomProblem(t, 43, 30, 6, 12, 3, false, 0)
	var recs []EpochRecord
	set := Settings{MaxEpochs: 3, GapTol: 1e-300, Record: func(r EpochRecord) error { recs = append(recs, r); return nil }}
	res, err := Train(context.Background(), p, set, &SDCA{Seed: 2})
	if err != nil {
		t.Fatal(err)
	}
	if res.Stopped != "epochs" || res.Epochs != 3 || len(recs) != 4 {
		t.Fatalf("stopped %q after %d epochs with %d records", res.Stopped, res.Epochs, len(recs))
	}
	for i, r := range recs {
		if r.Epoch != i || !r.Certified || !(r.Gap >= 0) || r.Residual > 1e-9 {
			t.Fatalf("record %d: %+v", i, r)
		}
		if i > 0 && (r.Steps != int64(i*p.N()) || r.Dual < recs[i-1].Dual) {
			t.Fatalf("record %d: steps %d, dual %g after %g", i, r.Steps, r.Dual, recs[i-1].Dual)
		}
	}
	// Cancellation ends training with the context's error.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Train(ctx, p, Settings{MaxEpochs: 5}, &SDCA{}); err == nil {
		t.Fatal("cancelled context: no error")
	}
}

func TestBadProblems(t *testing.T) {
	p := randomProblem(t, 1, 5, 3, 4, 2, false, 0)
	d := p.Data
	if _, err := NewProblem(d, 0, false); err == nil {
		t.Error("λ = 0 accepted")
	}
	if _, err := NewProblem(d, math.NaN(), false); err == nil {
		t.Error("λ = NaN accepted")
	}
	one := *d
	one.NumLabels = 1
	if _, err := NewProblem(&one, 1, false); err == nil {
		t.Error("one label accepted")
	}
	nolab := *d
	nolab.Labels = append([]int32(nil), d.Labels...)
	nolab.Labels[2] = -1
	if _, err := NewProblem(&nolab, 1, false); err == nil {
		t.Error("unlabelled token accepted")
	}
}

// TestLBFGSDeterministic trains with L-BFGS under 1, 2 and 3 cores and
// twice under 2: the weights must be equal bit for bit (defect 13: the
// gradient was summed per worker over dynamically claimed chunks).
func TestLBFGSDeterministic(t *testing.T) {
	p := randomProblem(t, 44, 700, 6, 40, 4, true, 0)
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	var ref []float64
	for _, procs := range []int{1, 2, 2, 3} {
		runtime.GOMAXPROCS(procs)
		res, err := Train(context.Background(), p, Settings{MaxEpochs: 15, GapTol: 1e-300}, &LBFGS{})
		if err != nil {
			t.Fatal(err)
		}
		if ref == nil {
			ref = res.Weights
			continue
		}
		sameBits(t, fmt.Sprintf("GOMAXPROCS %d vs 1", procs), ref, res.Weights)
	}
}
