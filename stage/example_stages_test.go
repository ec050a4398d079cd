package stage_test

import (
	"bytes"
	"context"
	"fmt"
	"strings"

	"github.com/dualcrf/dualcrf/arrowio"
	"github.com/dualcrf/dualcrf/schemas"
	"github.com/dualcrf/dualcrf/stage"
	"github.com/dualcrf/dualcrf/tables"
	"github.com/dualcrf/dualcrf/train"
)

// The CoNLL file the examples below train and decode: 50 sentences of
// CoNLL-2000 chunking.
const corpus = "../cmd/dualcrf/testdata/test50.txt"

// model trains the model the Decode, Eval and Inspect examples use.
func model(ctx context.Context) *stage.TrainResult {
	t, _, err := stage.FeaturizeTable(ctx, stage.File(corpus), stage.FeaturizeOptions{})
	if err != nil {
		panic(err)
	}
	res, err := stage.Train(ctx, t, "test50", stage.TrainOptions{Method: &train.SDCA{Seed: 1}})
	if err != nil {
		panic(err)
	}
	return res
}

// Train a feature table held in memory with SDCA-GAP until the certified
// duality gap is at most the default tolerance, 1e-3; the model carries its
// featurization, so featurize --model and decode --text accept it.
func ExampleTrain() {
	ctx := context.Background()
	t, _, err := stage.FeaturizeTable(ctx, stage.File(corpus), stage.FeaturizeOptions{})
	if err != nil {
		panic(err)
	}
	res, err := stage.Train(ctx, t, "test50", stage.TrainOptions{Method: &train.SDCA{Seed: 1}})
	if err != nil {
		panic(err)
	}
	fmt.Println("stopped:", res.Train.Stopped)
	fmt.Println("certified gap ≤ 1e-3:", res.Train.TargetMet(), res.Train.Last.Gap <= 1e-3)
	fmt.Println("labels:", len(res.Model.LabelNames))
	fmt.Println("templates recorded:", res.Model.Meta[schemas.KeyTemplates] != "")
	// Output:
	// stopped: gap
	// certified gap ≤ 1e-3: true true
	// labels: 11
	// templates recorded: true
}

// Decode raw text with a model, featurized with the model's own templates,
// into CoNLL columns: the token's columns, then the gold and the predicted
// label.
func ExampleDecode() {
	ctx := context.Background()
	m := model(ctx).Model
	var out bytes.Buffer
	cov, err := stage.Decode(ctx, m, stage.File(corpus), &out, stage.DecodeOptions{Text: true, Format: tables.PredictionCoNLL})
	if err != nil {
		panic(err)
	}
	fmt.Println("tokens:", cov.Tokens, "unknown labels:", len(cov.UnknownLabels))
	fmt.Print(strings.Join(strings.SplitN(out.String(), "\n", 4)[:3], "\n"), "\n")
	// Output:
	// tokens: 1171 unknown labels: 0
	// Rockwell NNP B-NP B-NP
	// International NNP I-NP I-NP
	// Corp. NNP I-NP I-NP
}

// Score a prediction table (an Arrow IPC stream, as decode writes it) by
// conlleval's rules.
func ExampleEval() {
	ctx := context.Background()
	m := model(ctx).Model
	var pred bytes.Buffer
	if _, err := stage.Decode(ctx, m, stage.File(corpus), &pred, stage.DecodeOptions{Text: true}); err != nil {
		panic(err)
	}
	ev, err := stage.Eval(ctx, stage.Reader(&pred, "pred"), stage.EvalOptions{})
	if err != nil {
		panic(err)
	}
	s := ev.Result()
	fmt.Printf("tokens %d, accuracy above 0.95: %v\n", s.Tokens, s.Accuracy > 0.95)
	// Output:
	// tokens 1171, accuracy above 0.95: true
}

// Inspect says what a file is: here a model, written by tables.WriteModel as
// dualcrf train -o writes it.
func ExampleInspect() {
	ctx := context.Background()
	m := model(ctx).Model
	var file bytes.Buffer
	if err := tables.WriteModel(&file, m, arrowio.WriterOptions{}); err != nil {
		panic(err)
	}
	summary, err := stage.Inspect(ctx, stage.Reader(&file, "model.arrow"))
	if err != nil {
		panic(err)
	}
	fmt.Println(strings.SplitN(summary, "\n", 2)[0])
	// Output:
	// model model.arrow (format version 3)
}
