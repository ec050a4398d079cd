package stage_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/dualcrf/dualcrf/arrowio"
	"github.com/dualcrf/dualcrf/featurize"
	"github.com/dualcrf/dualcrf/pipeline"
	"github.com/dualcrf/dualcrf/schemas"
	"github.com/dualcrf/dualcrf/stage"
	"github.com/dualcrf/dualcrf/tables"
)

// demo is the CoNLL-2000 slice the command embeds.
const demo = "../cmd/dualcrf/demodata/"

// TestPipelineInMemory runs featurize → train → decode → eval in one
// process on the embedded slice, with no file written: the certificate
// holds, the model is complete (it survives the model codec, and
// featurizing and decoding with it work as featurize --model and decode
// do), and the scores are those of a working chunker.
func TestPipelineInMemory(t *testing.T) {
	ctx := context.Background()
	tab, sum, err := stage.FeaturizeTable(ctx, pipeline.Source{Path: demo + "train.txt.gz"}, stage.FeaturizeOptions{MinCount: 3})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Sentences != 1000 || tab.Data.Len() != 1000 || tab.Data.NumAttrs != sum.Attributes {
		t.Fatalf("featurized %d sentences (table %d), %d attributes (table %d); the slice has 1000",
			sum.Sentences, tab.Data.Len(), sum.Attributes, tab.Data.NumAttrs)
	}
	for _, c := range []struct {
		name      string
		opts      stage.TrainOptions
		targetMet bool
		minAcc    float64
	}{
		{"sdca", stage.TrainOptions{GapTol: 1e-3}, true, 0.93},
		{"lbfgs-short", stage.TrainOptions{Solver: "lbfgs", MaxEpochs: 5}, false, 0.5},
		{"oeg-short", stage.TrainOptions{Solver: "oeg", MaxEpochs: 3}, false, 0.8},
		{"sag-short", stage.TrainOptions{Solver: "sag", MaxEpochs: 3}, false, 0.8},
	} {
		t.Run(c.name, func(t *testing.T) {
			var log bytes.Buffer
			c.opts.Log, c.opts.Quiet = &log, true
			res, err := stage.Train(ctx, tab, "train", c.opts)
			if err != nil {
				t.Fatal(err)
			}
			r := res.Train
			if r.TargetMet() != c.targetMet || (c.targetMet && !(r.Last.Gap <= 1e-3 && r.Last.Gap >= 0)) {
				t.Fatalf("certified gap %g (target met %v), want met %v", r.Last.Gap, r.TargetMet(), c.targetMet)
			}
			if warned := strings.Contains(log.String(), "the target was not reached"); warned == c.targetMet {
				t.Errorf("missed-target warning %v with target met %v; log:\n%s", warned, c.targetMet, log.String())
			}
			if last := r.Records[len(r.Records)-1]; last.OracleCalls <= 0 || last.Updates <= 0 || last.Updates > last.OracleCalls {
				t.Errorf("last record: %d oracle calls, %d updates", last.OracleCalls, last.Updates)
			}
			acc := decodeAndScore(t, res)
			t.Logf("token accuracy %.4f", acc)
			if acc < c.minAcc || acc > 1 {
				t.Errorf("token accuracy %g, want ≥ %g", acc, c.minAcc)
			}
		})
	}
}

// decodeAndScore writes the model through the codec and reads it back,
// featurizes the test slice with it (featurize --model), decodes that
// table, and returns the token accuracy eval gives.
func decodeAndScore(t *testing.T, res *stage.TrainResult) float64 {
	t.Helper()
	ctx := context.Background()
	var mb bytes.Buffer
	if err := tables.WriteModel(&mb, res.Model, arrowio.WriterOptions{Format: arrowio.FormatFile}); err != nil {
		t.Fatal(err)
	}
	m, err := stage.ReadModel(pipeline.Source{Stdin: &mb})
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{schemas.KeyTemplates, schemas.KeyLambda, schemas.KeySolver, schemas.KeyTraining, featurize.KeyInput} {
		if m.Meta[k] == "" {
			t.Errorf("the model has no metadata %s", k)
		}
	}
	like, err := stage.ModelFeaturization(m, "model")
	if err != nil {
		t.Fatalf("featurize --model refuses the model: %v", err)
	}
	var test, pred bytes.Buffer
	if _, err := stage.Featurize(ctx, pipeline.Source{Path: demo + "test.txt.gz"}, &test, stage.FeaturizeOptions{Like: like}); err != nil {
		t.Fatal(err)
	}
	if _, err := stage.Decode(ctx, m, pipeline.Source{Stdin: &test}, &pred, stage.DecodeOptions{}); err != nil {
		t.Fatal(err)
	}
	ev, err := stage.Eval(ctx, pipeline.Source{Stdin: &pred}, stage.EvalOptions{})
	if err != nil {
		t.Fatal(err)
	}
	s := ev.Result()
	if s.Tokens == 0 || s.Chunks == nil || !(s.Chunks.F1 > 0) {
		t.Fatalf("scores %+v: want tokens and chunks", s)
	}
	return s.Accuracy
}

// TestTrainOptionsCheck: options out of range are refused, naming the
// command's flag; zero values are the defaults and pass, except where the
// command gave them (CheckGiven).
func TestTrainOptionsCheck(t *testing.T) {
	if err := (stage.TrainOptions{}).Check(); err != nil {
		t.Fatalf("zero options: %v", err)
	}
	for _, c := range []struct {
		o    stage.TrainOptions
		want string
	}{
		{stage.TrainOptions{Solver: "newton"}, `--solver "newton"`},
		{stage.TrainOptions{Sampler: "random"}, `--sampler "random"`},
		{stage.TrainOptions{NonUniform: 1.5}, "--nonuniform 1.5"},
		{stage.TrainOptions{Epsilon: -1}, "--epsilon -1"},
		{stage.TrainOptions{SubPrecision: 1}, "--subprecision 1"},
		{stage.TrainOptions{GapTol: -1}, "--gap-tol -1"},
		{stage.TrainOptions{GapEvery: -1}, "--gap-every -1"},
		{stage.TrainOptions{Workers: -2}, "--workers -2"},
		{stage.TrainOptions{RoundSteps: -1}, "--round-steps -1"},
		{stage.TrainOptions{MaxEpochs: -2}, "--max-epochs -2"},
		{stage.TrainOptions{Lambda: "1/m"}, `--lambda "1/m"`},
		{stage.TrainOptions{FeatureSpace: "sparse"}, `--feature-space "sparse"`},
		{stage.TrainOptions{Solver: "lbfgs", Checkpoint: "dir"}, "apply to --solver sdca only"},
		{stage.TrainOptions{Solver: "lbfgs", Workers: 2}, "--workers and --round-steps apply to --solver sdca only"},
		{stage.TrainOptions{Solver: "lbfgs", RoundSteps: 8}, "--workers and --round-steps apply to --solver sdca only"},
		{stage.TrainOptions{Solver: "sag", SAGVariant: "saga"}, `--sag-variant "saga"`},
		{stage.TrainOptions{Solver: "sag", SAGInitialL: -1}, "--sag-initial-l -1"},
		{stage.TrainOptions{Solver: "oeg", OEGEta: 2}, "--oeg-eta 2"},
		{stage.TrainOptions{SAGVariant: "uniform"}, "apply to --solver sag only"},
		{stage.TrainOptions{Solver: "lbfgs", OEGEta: 0.1}, "--oeg-eta applies to --solver oeg only"},
		{stage.TrainOptions{Solver: "oeg", Resume: "dir"}, "apply to --solver sdca only"},
		{stage.TrainOptions{Solver: "sag", Workers: 2}, "--workers and --round-steps apply to --solver sdca only"},
	} {
		if err := c.o.Check(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: error %v, want %q", c.o, err, c.want)
		}
	}
	given := stage.TrainOptions{Lambda: "1/n", Solver: "sdca", FeatureSpace: "full", Transitions: "all", Sampler: "gap",
		NonUniform: 0.8, Epsilon: 1e-9, SubPrecision: 1e-3, GapTol: 1e-3, MaxEpochs: 100, LBFGSStore: 10, Duals: "auto",
		Workers: 1, RoundSteps: 64, SAGVariant: "nus", SAGInitialL: 1, OEGEta: 0.5}
	if err := given.CheckGiven(); err != nil {
		t.Fatalf("the command's defaults: %v", err)
	}
	given.Epsilon = 0
	if err := given.CheckGiven(); err == nil || !strings.Contains(err.Error(), "--epsilon 0") {
		t.Errorf("--epsilon 0 given: error %v", err)
	}
}

// TestTrainRefusesUnlabelled: a table without gold labels is refused with
// its name, before any work.
func TestTrainRefusesUnlabelled(t *testing.T) {
	ctx := context.Background()
	in := featurize.InputOptions{LabelColumn: -1}
	tab, _, err := stage.FeaturizeTable(ctx, pipeline.Source{Path: "../cmd/dualcrf/testdata/test50.txt"}, stage.FeaturizeOptions{Input: &in})
	if err != nil {
		t.Fatal(err)
	}
	_, err = stage.Train(ctx, tab, "test50", stage.TrainOptions{})
	if err == nil || !strings.Contains(err.Error(), "test50: no token has a gold label") {
		t.Fatalf("error %v", err)
	}
}
