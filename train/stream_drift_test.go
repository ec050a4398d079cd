package train

import (
	"context"
	"math"
	"path/filepath"
	"testing"

	"github.com/dualcrf/dualcrf/duals"
)

// TestStreamKeepsWeightsOfDuals: on many blocks, the incrementally kept
// weights stay ŵ(μ) of the duals on disk.
func TestStreamKeepsWeightsOfDuals(t *testing.T) {
	p := randomProblem(t, 76, 300, 6, 15, 3, true, 0)
	s := newStream(t, p, filepath.Join(t.TempDir(), "d"), duals.Bytes(p.Data, duals.DefaultPrecision)/9, 0)
	m := &SDCA{Sampler: kindSampler(t, SamplerGap, p), Seed: 5, Duals: s}
	if err := m.Init(p); err != nil {
		t.Fatal(err)
	}
	for e := 0; e < 4; e++ {
		if err := m.Epoch(context.Background()); err != nil {
			t.Fatal(err)
		}
		w := mustWhat(t, p, s)
		diff, scale := 0.0, 1.0
		for j := range w {
			diff = max(diff, math.Abs(w[j]-m.st.w[j]))
			scale = max(scale, math.Abs(w[j]))
		}
		if diff > 1e-9*scale {
			t.Fatalf("epoch %d: kept weights differ from ŵ(μ) by %g", e+1, diff)
		}
	}
}
