package stage_test

import (
	"bytes"
	"context"
	"fmt"

	"github.com/dualcrf/dualcrf/pipeline"
	"github.com/dualcrf/dualcrf/stage"
)

// The whole pipeline in one process, on the CoNLL-2000 slice embedded in
// the command: featurize the training text, train to a certified duality
// gap of 1e-3 (the default), decode the test text with the model's own
// features, and score the predictions.
func Example() {
	ctx := context.Background()
	demo := "../cmd/dualcrf/demodata/"
	t, _, err := stage.FeaturizeTable(ctx, pipeline.Source{Path: demo + "train.txt.gz"}, stage.FeaturizeOptions{MinCount: 3})
	if err != nil {
		panic(err)
	}
	res, err := stage.Train(ctx, t, "train", stage.TrainOptions{})
	if err != nil {
		panic(err)
	}
	var pred bytes.Buffer
	if _, err := stage.Decode(ctx, res.Model, pipeline.Source{Path: demo + "test.txt.gz"}, &pred, stage.DecodeOptions{Text: true}); err != nil {
		panic(err)
	}
	ev, err := stage.Eval(ctx, pipeline.Source{Stdin: &pred}, stage.EvalOptions{})
	if err != nil {
		panic(err)
	}
	fmt.Printf("certified gap below target: %v\ntoken accuracy: %.2f\n", res.Train.TargetMet(), ev.Result().Accuracy)
	// Output:
	// certified gap below target: true
	// token accuracy: 0.95
}
