package stage_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"testing"

	"github.com/dualcrf/dualcrf/schemas"
	"github.com/dualcrf/dualcrf/stage"
	"github.com/dualcrf/dualcrf/train"
)

// TestHingeLoss: Loss hinge runs BCFW with the run's seed and sampler —
// the same weights as the method given itself — to a certified gap, and
// the model records solver bcfw and loss hinge; the log loss's other
// methods and BCFW with Loss log are refused by their fields.
func TestHingeLoss(t *testing.T) {
	ctx := context.Background()
	tab, _, err := stage.FeaturizeTable(ctx, stage.File(corpus), stage.FeaturizeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	o := stage.TrainOptions{Loss: stage.LossHinge, Method: &train.SDCA{Seed: 4}, Sampler: stage.Sampler{Kind: train.SamplerUniform},
		GapTol: 1e-2, MaxEpochs: 2000, RefreshEvery: 3}
	res, err := stage.Train(ctx, tab, "test50", o)
	if err != nil {
		t.Fatal(err)
	}
	if res.Solver != "bcfw" || res.Model.Meta[schemas.KeySolver] != "bcfw" || !res.Train.TargetMet() {
		t.Fatalf("solver %q (model %q), gap %g", res.Solver, res.Model.Meta[schemas.KeySolver], res.Train.Last.Gap)
	}
	var facts struct {
		Loss    string `json:"loss"`
		Sampler string `json:"sampler"`
		Seed    uint64 `json:"seed"`
	}
	if err := json.Unmarshal([]byte(res.Model.Meta[schemas.KeyTraining]), &facts); err != nil {
		t.Fatal(err)
	}
	if facts.Loss != "hinge" || facts.Sampler != train.SamplerUniform || facts.Seed != 4 {
		t.Fatalf("training facts %+v", facts)
	}
	o.Loss, o.Method = "", &train.BCFW{Seed: 4}
	again, err := stage.Train(ctx, tab, "test50", o)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(again.Model.Weights, res.Model.Weights) {
		t.Fatal("Method *train.BCFW and Loss hinge trained different weights")
	}

	for _, tc := range []struct {
		o     stage.TrainOptions
		field string
	}{
		{stage.TrainOptions{Loss: "squared"}, "Loss"},
		{stage.TrainOptions{Loss: stage.LossHinge, Method: &train.LBFGS{}}, "Method"},
		{stage.TrainOptions{Loss: stage.LossLog, Method: &train.BCFW{}}, "Method"},
		{stage.TrainOptions{Loss: stage.LossHinge, Method: &train.SDCA{Epsilon: 0.1}}, "SDCA.Epsilon"},
		{stage.TrainOptions{Loss: stage.LossHinge, Method: &train.SDCA{Workers: 2}}, "SDCA.Workers"},
		{stage.TrainOptions{Loss: stage.LossHinge, Duals: stage.Duals{Place: stage.DualsStream}}, "Duals"},
	} {
		var oe *stage.OptionError
		if err := tc.o.Check(); !errors.As(err, &oe) || oe.Field != tc.field {
			t.Errorf("%+v: %v, want an error on %s", tc.o, err, tc.field)
		}
	}
}
