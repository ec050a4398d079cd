package train

import (
	"context"
	"math"
	"runtime"
	"testing"
)

// TestLBFGSFreeMatchesDense trains L-BFGS on the compact vector of the
// free weights and on the dense vector, in every feature space with a Mask
// (dense lengths with and without a len mod 4 tail), and requires the same
// weights and certificates bit for bit: the compact layout keeps every sum
// in the dense order (freespace.go).
func TestLBFGSFreeMatchesDense(t *testing.T) {
	ctx := context.Background()
	for _, tc := range maskCases {
		if !tc.mask {
			continue
		}
		for _, A := range []int{40, 41} {
			p := maskedProblem(t, 85, 40, A, 0, tc.noBias, tc.mask, tc.trans)
			set := Settings{MaxEpochs: 12, GapTol: 1e-300}
			free, err := Train(ctx, p, set, &LBFGS{})
			if err != nil {
				t.Fatal(err)
			}
			dense, err := Train(ctx, p, set, &LBFGS{dense: true})
			if err != nil {
				t.Fatal(err)
			}
			if free.Epochs != dense.Epochs || free.Last.Primal != dense.Last.Primal || free.Last.Gap != dense.Last.Gap {
				t.Fatalf("%s A=%d: compact %d iterations, P %.17g, gap %.17g; dense %d, %.17g, %.17g", tc.name, A,
					free.Epochs, free.Last.Primal, free.Last.Gap, dense.Epochs, dense.Last.Primal, dense.Last.Gap)
			}
			for j, w := range dense.Weights {
				if math.Float64bits(w) != math.Float64bits(free.Weights[j]) {
					t.Fatalf("%s A=%d (d mod 4 = %d): weight %d dense %.17g, compact %.17g", tc.name, A,
						p.Layout.Dim()%4, j, w, free.Weights[j])
				}
			}
		}
	}
}

// TestLBFGSMaskedEpochAllocation: with a sparse Mask an L-BFGS iteration
// allocates less than one dense weight vector — its vectors are the free
// weights' and its gradient pass packs rows (formerly a pass allocated the
// dense gradient, the gold features and a dense buffer per worker).
func TestLBFGSMaskedEpochAllocation(t *testing.T) {
	p := maskedProblem(t, 86, 200, 20000, 0, true, true, true)
	dim := p.Layout.Dim()
	m := &LBFGS{}
	if err := m.Init(p); err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	if err := m.Epoch(context.Background()); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	if got := after.TotalAlloc - before.TotalAlloc; got >= uint64(8*dim) {
		t.Fatalf("an iteration allocated %d bytes, a dense vector is %d (d = %d, %d free)", got, 8*dim, dim, p.FreeWeights())
	}
	if n := len(m.loc.X); n >= dim/4 {
		t.Fatalf("L-BFGS's vectors have %d entries for %d free weights of %d", n, p.FreeWeights(), dim)
	}
}

// TestFreeDim: the estimate's length of the compact vector is the one
// newFreeSpace lays out.
func TestFreeDim(t *testing.T) {
	for _, tc := range maskCases {
		p := maskedProblem(t, 87, 30, 37, 0, tc.noBias, tc.mask, tc.trans)
		for _, lanes := range []int{1, 4} {
			fs := newFreeSpace(p, lanes)
			if got := freeDim(p, lanes); got != fs.dim || len(fs.dense) != p.FreeWeights() {
				t.Fatalf("%s, %d lanes: freeDim %d, laid out %d for %d free weights", tc.name, lanes, got, fs.dim, p.FreeWeights())
			}
		}
	}
}
