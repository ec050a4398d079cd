package stage_test

import (
	"bytes"
	"context"
	"fmt"
	"strings"

	"github.com/dualcrf/dualcrf/stage"
	"github.com/dualcrf/dualcrf/train"
)

// The whole pipeline in one process, on the CoNLL-2000 slice embedded in
// the command: featurize the training text, train to a certified duality
// gap of 1e-3 (the default), decode the test text with the model's own
// features, and score the predictions.
func Example() {
	ctx := context.Background()
	demo := "../cmd/dualcrf/demodata/"
	t, _, err := stage.FeaturizeTable(ctx, stage.File(demo+"train.txt.gz"), stage.FeaturizeOptions{MinCount: 3})
	if err != nil {
		panic(err)
	}
	res, err := stage.Train(ctx, t, "train", stage.TrainOptions{})
	if err != nil {
		panic(err)
	}
	var pred bytes.Buffer
	if _, err := stage.Decode(ctx, res.Model, stage.File(demo+"test.txt.gz"), &pred, stage.DecodeOptions{Text: true}); err != nil {
		panic(err)
	}
	ev, err := stage.Eval(ctx, stage.Reader(&pred, "pred"), stage.EvalOptions{})
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
	sum, err := stage.Featurize(ctx, stage.File("../cmd/dualcrf/testdata/test50.txt"), &table, stage.FeaturizeOptions{})
	if err != nil {
		panic(err)
	}
	fmt.Printf("%d sentences, %d tokens, %d labels\n", sum.Sentences, sum.Tokens, len(sum.Labels))
	summary, err := stage.Inspect(ctx, stage.Reader(&table, "test50.arrow"))
	if err != nil {
		panic(err)
	}
	fmt.Println(strings.SplitN(summary, "\n", 2)[0])
	// Output:
	// 50 sentences, 1171 tokens, 11 labels
	// feature table test50.arrow (format version 1)
}

// Options are checked before any work; a zero field is the default, and
// an error names the option's field.
func ExampleTrainOptions_Check() {
	fmt.Println(stage.TrainOptions{}.Check())
	fmt.Println(stage.TrainOptions{Sampler: stage.Sampler{Kind: "random"}}.Check())
	fmt.Println(stage.TrainOptions{Method: &train.LBFGS{}, Checkpoint: "ck"}.Check())
	// A program says which options its user gave: one not read is
	// refused, whatever its value.
	fmt.Println(stage.TrainOptions{Method: &train.SAG{}, Given: [][]string{{"SDCA.Epsilon"}}}.Check())
	// Output:
	// <nil>
	// Sampler.Kind "random": want one of uniform, gap, importance, gap-importance, max
	// Checkpoint "ck": not used by Method lbfgs (only by Method sdca and Loss hinge)
	// SDCA.Epsilon: not used by Method sag (only by Method sdca)
}

// λ is a number or c/n, c divided by the number of training sentences.
func ExampleLambda() {
	for _, l := range []stage.Lambda{{}, stage.LambdaPerSentence(4), stage.LambdaValue(0.001)} {
		fmt.Println(l, l.For(1000))
	}
	// Output:
	// 1/n 0.001
	// 4/n 0.004
	// 0.001 0.001
}
