package train_test

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/dualcrf/dualcrf/crf/crftest"
	"github.com/dualcrf/dualcrf/train"
)

// refreshCounter is a method written outside the package: SDCA with a
// Refresh and a RefreshPeriod of its own, which Train reaches through the
// exported Refresher as it reaches SDCA's.
type refreshCounter struct {
	*train.SDCA
	refreshes int
}

func (m *refreshCounter) Refresh(ctx context.Context) error {
	m.refreshes++
	return m.SDCA.Refresh(ctx)
}

func (m *refreshCounter) RefreshPeriod() int { return 2 }

// TestCapabilitiesOutsideThePackage checks that Train asks a method
// written outside the package for its capabilities: its own refresh
// period and refreshes are used, and the model is SDCA's with the same
// refreshes asked through Settings.RefreshEvery, bit for bit.
func TestCapabilitiesOutsideThePackage(t *testing.T) {
	d := crftest.RandomDataset(rand.New(rand.NewPCG(3, 4)), 20, 6, 10, 3, false)
	p, err := train.NewProblem(d, 1/float64(d.Len()), false)
	if err != nil {
		t.Fatal(err)
	}
	set := train.Settings{MaxEpochs: 6, GapTol: 1e-300}
	outside := &refreshCounter{SDCA: &train.SDCA{Seed: 5, Workers: 1}}
	var _ train.Refresher = outside
	got, err := train.Train(context.Background(), p, set, outside)
	if err != nil {
		t.Fatal(err)
	}
	if outside.refreshes != 2 { // before epochs 3 and 5 (after epochs 2 and 4)
		t.Errorf("the outside method refreshed %d times in 6 epochs with period 2, want 2", outside.refreshes)
	}
	set.RefreshEvery = 2
	want, err := train.Train(context.Background(), p, set, &train.SDCA{Seed: 5, Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Weights) != len(want.Weights) {
		t.Fatalf("%d weights, want %d", len(got.Weights), len(want.Weights))
	}
	for j := range got.Weights {
		if math.Float64bits(got.Weights[j]) != math.Float64bits(want.Weights[j]) {
			t.Fatalf("weight %d: %v from the outside method, %v from SDCA with RefreshEvery 2", j, got.Weights[j], want.Weights[j])
		}
	}
}
