package stage_test

import (
	"bytes"
	"context"
	"fmt"
	"strings"

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

// Featurize a CoNLL file into an Arrow feature table in memory, then
// summarise the table as dualcrf inspect does.
func ExampleFeaturize() {
	ctx := context.Background()
	var table bytes.Buffer
	sum, err := stage.Featurize(ctx, pipeline.Source{Path: "../cmd/dualcrf/testdata/test50.txt"}, &table, stage.FeaturizeOptions{})
	if err != nil {
		panic(err)
	}
	fmt.Printf("%d sentences, %d tokens, %d labels\n", sum.Sentences, sum.Tokens, len(sum.Labels))
	summary, err := stage.Inspect(ctx, pipeline.Source{Stdin: &table})
	if err != nil {
		panic(err)
	}
	fmt.Println(strings.SplitN(summary, "\n", 2)[0])
	// Output:
	// 50 sentences, 1171 tokens, 11 labels
	// feature table <stdin> (format version 1)
}

// Options are checked as the command checks its flags; a zero field is
// the default.
func ExampleTrainOptions_Check() {
	fmt.Println(stage.TrainOptions{}.Check())
	fmt.Println(stage.TrainOptions{Solver: "newton"}.Check())
	fmt.Println(stage.TrainOptions{Solver: "lbfgs", Checkpoint: "ck"}.Check())
	// Output:
	// <nil>
	// --solver "newton": want one of sdca, lbfgs, oeg, sag
	// --checkpoint, --resume and --duals apply to --solver sdca only
}

// λ is a number or c/n, c divided by the number of training sentences.
func ExampleParseLambda() {
	for _, s := range []string{"1/n", "4/n", "0.001"} {
		v, err := stage.ParseLambda(s, 1000)
		fmt.Println(s, v, err)
	}
	// Output:
	// 1/n 0.001 <nil>
	// 4/n 0.004 <nil>
	// 0.001 0.001 <nil>
}
