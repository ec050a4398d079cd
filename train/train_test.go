package train

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"runtime"
	"strings"
	"testing"

	"github.com/dualcrf/dualcrf/crf"
	"github.com/dualcrf/dualcrf/duals"
)

// TestSDCAAgreesWithLBFGS trains the same problem with both methods to a
// certified gap of 1e-10 and compares the optima and the weights.
func TestSDCAAgreesWithLBFGS(t *testing.T) {
	p := randomProblem(t, 41, 60, 7, 20, 4, true, 0)
	ctx := context.Background()
	set := Settings{MaxEpochs: 500, GapTol: 1e-10}
	rs, err := Train(ctx, p, set, &SDCA{Seed: 1, Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	rl, err := Train(ctx, p, set, &LBFGS{})
	if err != nil {
		t.Fatal(err)
	}
	if rs.Stopped != GapReached {
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
	set := Settings{MaxEpochs: 3, GapTol: 1e-300, GapEvery: 1, Record: func(r EpochRecord) error { recs = append(recs, r); return nil }}
	res, err := Train(context.Background(), p, set, &SDCA{Seed: 2})
	if err != nil {
		t.Fatal(err)
	}
	if res.Stopped != EpochLimit || res.Epochs != 3 || len(recs) != 4 {
		t.Fatalf("stopped %v after %d epochs with %d records", res.Stopped, res.Epochs, len(recs))
	}
	for i, r := range recs {
		if r.Epoch != i || !r.Certified || !(r.Gap >= 0) || r.Residual > 1e-9 {
			t.Fatalf("record %d: %+v", i, r)
		}
		if i > 0 && (r.Steps != int64(i*p.N()) || r.Dual < recs[i-1].Dual) {
			t.Fatalf("record %d: steps %d, dual %g after %g", i, r.Steps, r.Dual, recs[i-1].Dual)
		}
	}
	// Cancellation ends training with the context's error, and a result
	// that says so and holds the log so far.
	ctx, cancel := context.WithCancel(context.Background())
	set.Record = func(r EpochRecord) error {
		if r.Epoch == 1 {
			cancel()
		}
		return nil
	}
	set.MaxEpochs = 5
	res, err = Train(ctx, p, set, &SDCA{Seed: 2})
	var ie *InterruptedError
	if !errors.As(err, &ie) || !errors.Is(err, context.Canceled) || res == nil || res.Stopped != Interrupted ||
		res.Epochs != 1 || len(res.Records) != 2 || res.Weights != nil {
		t.Fatalf("cancelled after epoch 1: err %v, result %+v", err, res)
	}
}

// TestCertifyWhenItCanMatter checks the default certificate policy
// (GapEvery 0): the initial point, every epoch whose gap estimate is at
// most EstimateSlack·GapTol, and the last epoch are certified, and no
// other; certifying changes nothing in the training (the run with a
// certificate every epoch has the same estimates and ends on the same
// weights), and a certificate that misses the target lets training go on.
func TestCertifyWhenItCanMatter(t *testing.T) {
	p := randomProblem(t, 47, 60, 7, 20, 4, true, 0)
	ctx := context.Background()
	every, err := Train(ctx, p, Settings{MaxEpochs: 200, GapTol: 1e-6, GapEvery: 1}, &SDCA{Seed: 4, Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	res, err := Train(ctx, p, Settings{MaxEpochs: 200, GapTol: 1e-6}, &SDCA{Seed: 4, Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	if res.Stopped != GapReached || every.Stopped != GapReached {
		t.Fatalf("stopped by %s and (every epoch) %s", res.Stopped, every.Stopped)
	}
	missed := 0
	for _, r := range res.Records {
		want := r.Epoch == 0 || r.GapEstimate <= EstimateSlack*1e-6 || r.Epoch == res.Epochs
		if r.Certified != want {
			t.Fatalf("epoch %d (estimate %g): certified %v, want %v", r.Epoch, r.GapEstimate, r.Certified, want)
		}
		if r.Certified && r.Gap > 1e-6 && r.Epoch > 0 {
			missed++
		}
		if e := every.Records[r.Epoch]; e.GapEstimate != r.GapEstimate || e.Steps != r.Steps {
			t.Fatalf("epoch %d: estimate %g after %d steps, with a certificate every epoch %g after %d",
				r.Epoch, r.GapEstimate, r.Steps, e.GapEstimate, e.Steps)
		}
	}
	t.Logf("%d epochs, %d certified of which %d missed the target; certified every epoch: %d epochs",
		res.Epochs, len(certified(res.Records)), missed, every.Epochs)
	if len(certified(res.Records)) >= res.Epochs/2 {
		t.Fatalf("%d of %d epochs certified", len(certified(res.Records)), res.Epochs+1)
	}
	if res.Epochs < every.Epochs {
		t.Fatalf("stopped after %d epochs, before the first certified gap ≤ tol (epoch %d)", res.Epochs, every.Epochs)
	}
	if res.Epochs == every.Epochs {
		sameBits(t, "final weights", res.Weights, every.Weights)
	}
}

// certified returns the certified records.
func certified(recs []EpochRecord) []EpochRecord {
	var out []EpochRecord
	for _, r := range recs {
		if r.Certified {
			out = append(out, r)
		}
	}
	return out
}

// TestStatus checks the statuses' names: the CLI prints them and models
// record them as "stopped", so they must not change.
func TestStatus(t *testing.T) {
	for s, want := range map[Status]string{NotStopped: "not-stopped", GapReached: "gap", EpochLimit: "epochs",
		TimeLimit: "time", NoProgress: "no-progress", Interrupted: "interrupted", Status(-1): "Status(-1)", Interrupted + 1: "Status(6)"} {
		if s.String() != want {
			t.Errorf("%d: %q, want %q", int(s), s.String(), want)
		}
	}
	b, err := json.Marshal(map[string]any{"stopped": TimeLimit})
	if err != nil || string(b) != `{"stopped":"time"}` {
		t.Fatalf("JSON: %s %v", b, err)
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

// TestAbsurdInputsRefused: a λ below the floor the data allows and an
// attribute value beyond maxAttrValue are refused up front, naming the
// cause; training that turns non-finite anyway stops with ErrNonFinite
// (defect 10).
func TestAbsurdInputsRefused(t *testing.T) {
	p := randomProblem(t, 45, 20, 5, 8, 3, true, 0)
	d := p.Data
	if _, err := NewProblem(d, 1e-300, false); err == nil || !strings.Contains(err.Error(), "below the floor") {
		t.Fatalf("λ = 1e-300: %v", err)
	}
	huge := *d
	huge.Values = append([]float64(nil), d.Values...)
	huge.Values[7] = 1e308
	if _, err := NewProblem(&huge, 0.05, false); err == nil || !strings.Contains(err.Error(), "token row") {
		t.Fatalf("value 1e308: %v", err)
	}
	// Just above the floor the weights overflow: training stops with the cause.
	r2, _ := maxSentenceNorm(d)
	q, err := NewProblem(d, 2*lambdaFloorFactor*r2, false)
	if err != nil {
		t.Fatal(err)
	}
	_, err = Train(context.Background(), q, Settings{MaxEpochs: 3}, &SDCA{})
	if !errors.Is(err, ErrNonFinite) && !errors.Is(err, ErrIdentity) {
		t.Fatalf("λ at the floor: %v, want a non-finite or identity error", err)
	}
}

// TestEstimateMemory checks the memory estimate's parts on a dataset with
// 1,259 labels (the case that died in a Go fatal out-of-memory): L-BFGS's
// history is 2·store·d·8 bytes and dominates, SDCA's duals are DualBytes.
func TestEstimateMemory(t *testing.T) {
	K, A := 1259, 100000
	d := &crf.Dataset{NumAttrs: A, NumLabels: K, SentStart: []int{0, 3, 5}, AttrStart: []int{0, 2, 4, 5, 6, 8},
		Attrs: []int32{0, 1, 2, 3, 4, 5, 6, 7}, Labels: []int32{0, 1, 2, 3, 4}}
	p := &Problem{Data: d, Layout: crf.Layout{NumAttrs: A, NumLabels: K}, Lambda: 1}
	dim := int64(p.Layout.Dim())
	e := EstimateMemory(p, MemoryOptions{Method: &LBFGS{Store: 10}, Workers: 2})
	if e.LBFGS != (2*10+8)*dim*8 || e.Total() < 24<<30 {
		t.Fatalf("L-BFGS: %+v (total %d, d = %d)", e, e.Total(), dim)
	}
	s := EstimateMemory(p, MemoryOptions{Method: &SDCA{Workers: 1, DualPrecision: duals.Float64}, DualsInMemory: true, Workers: 2})
	if s.Duals != duals.Bytes(d, duals.Float64) || s.Duals != 8*int64(2+1)*int64(K*K) || s.LBFGS != 0 || s.Weights < 2*dim*8 {
		t.Fatalf("SDCA: %+v", s)
	}
	// The default float32 duals take half the bytes; BCFW's are float64.
	if c := EstimateMemory(p, MemoryOptions{Method: &SDCA{Workers: 1}, DualsInMemory: true, Workers: 2}); c.Duals != s.Duals/2 || c.Total() != s.Total()-s.Duals/2 {
		t.Fatalf("SDCA, float32 duals: %+v", c)
	}
	if b := EstimateMemory(p, MemoryOptions{Method: &BCFW{}, DualsInMemory: true, Workers: 2}); b.Duals != s.Duals {
		t.Fatalf("BCFW: %+v", b)
	}
	// The heap's headroom is GCPercent of what is on it: the duals are
	// off the heap where the system allows.
	onHeap := s.Dataset + s.Weights + s.Scratch
	if !duals.OffHeap {
		onHeap += s.Duals
	}
	if s.GC != onHeap*GCPercent/100+gcFloor || s.GoHeap() != onHeap+s.GC {
		t.Fatalf("SDCA: GC headroom %d, Go heap %d for %d on the heap", s.GC, s.GoHeap(), onHeap)
	}
	if f := EstimateMemory(p, MemoryOptions{Method: &SDCA{Workers: 1}, Workers: 2}); f.Duals != 0 || f.Total() >= s.Total() {
		t.Fatalf("SDCA with mapped duals: %+v", f)
	}
	if !strings.Contains(e.String(), "L-BFGS history") {
		t.Fatalf("String: %s", e)
	}
}
