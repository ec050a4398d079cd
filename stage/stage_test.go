package stage_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/dualcrf/dualcrf/arrowio"
	"github.com/dualcrf/dualcrf/featurize"
	"github.com/dualcrf/dualcrf/schemas"
	"github.com/dualcrf/dualcrf/stage"
	"github.com/dualcrf/dualcrf/tables"
	"github.com/dualcrf/dualcrf/train"
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
	tab, sum, err := stage.FeaturizeTable(ctx, stage.File(demo+"train.txt.gz"), stage.FeaturizeOptions{MinCount: 3})
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
		{"lbfgs-short", stage.TrainOptions{Method: &train.LBFGS{}, MaxEpochs: 5}, false, 0.5},
		{"oeg-short", stage.TrainOptions{Method: &train.OEG{}, MaxEpochs: 3}, false, 0.8},
		{"sag-short", stage.TrainOptions{Method: &train.SAG{}, MaxEpochs: 3}, false, 0.8},
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
	m, err := stage.ReadModel(context.Background(), stage.Reader(&mb, "model"))
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{schemas.KeyTemplates, schemas.KeyLambda, schemas.KeySolver, schemas.KeyTraining, featurize.KeyInput} {
		if m.Meta[k] == "" {
			t.Errorf("the model has no metadata %s", k)
		}
	}
	like, err := featurize.FromModel(m, "model")
	if err != nil {
		t.Fatalf("featurize --model refuses the model: %v", err)
	}
	var test, pred bytes.Buffer
	if _, err := stage.Featurize(ctx, stage.File(demo+"test.txt.gz"), &test, stage.FeaturizeOptions{Like: like}); err != nil {
		t.Fatal(err)
	}
	if _, err := stage.Decode(ctx, m, stage.Reader(&test, "test"), &pred, stage.DecodeOptions{}); err != nil {
		t.Fatal(err)
	}
	ev, err := stage.Eval(ctx, stage.Reader(&pred, "pred"), stage.EvalOptions{})
	if err != nil {
		t.Fatal(err)
	}
	s := ev.Result()
	if s.Tokens == 0 || s.Chunks == nil || !(s.Chunks.F1 > 0) {
		t.Fatalf("scores %+v: want tokens and chunks", s)
	}
	return s.Accuracy
}

// TestTrainOptionsCheck: options out of range are refused with an
// *OptionError naming the option's field and showing the value; zero
// values are the defaults and pass. (The command's flags, their words and
// the zeros it gives are checked by its golden cases.)
func TestTrainOptionsCheck(t *testing.T) {
	if err := (stage.TrainOptions{}).Check(); err != nil {
		t.Fatalf("zero options: %v", err)
	}
	sampler, err := train.NewSampler(train.SamplerGap, 2, train.SamplerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		o            stage.TrainOptions
		field, value string
	}{
		{stage.TrainOptions{Sampler: stage.Sampler{Kind: "random"}}, "Sampler.Kind", `"random"`},
		{stage.TrainOptions{Sampler: stage.Sampler{NonUniform: 1.5}}, "Sampler.NonUniform", "1.5"},
		{stage.TrainOptions{Method: &train.SDCA{Epsilon: -1}}, "SDCA.Epsilon", "-1"},
		{stage.TrainOptions{Method: &train.SDCA{SubPrecision: 1}}, "SDCA.SubPrecision", "1"},
		{stage.TrainOptions{GapTol: -1}, "GapTol", "-1"},
		{stage.TrainOptions{GapEvery: -1}, "GapEvery", "-1"},
		{stage.TrainOptions{Method: &train.SDCA{Workers: -2}}, "SDCA.Workers", "-2"},
		{stage.TrainOptions{Method: &train.SDCA{RoundSize: -1}}, "SDCA.RoundSize", "-1"},
		{stage.TrainOptions{Method: &train.SDCA{Async: "fast"}}, "SDCA.Async", `"fast"`},
		{stage.TrainOptions{Method: &train.SDCA{Async: train.AsyncWild}, Duals: stage.Duals{Place: stage.DualsStream}}, "SDCA.Async", `"wild"`},
		{stage.TrainOptions{Loss: stage.LossHinge, Method: &train.SDCA{Async: train.AsyncAtomic}}, "SDCA.Async", ""},
		{stage.TrainOptions{MaxEpochs: -2}, "MaxEpochs", "-2"},
		{stage.TrainOptions{FeatureSpace: 7}, "FeatureSpace", "7"},
		{stage.TrainOptions{Duals: stage.Duals{Place: stage.DualsFile}}, "Duals", ""},
		{stage.TrainOptions{Method: &train.LBFGS{}, Checkpoint: "dir"}, "Checkpoint", `"dir"`},
		{stage.TrainOptions{Method: &train.OEG{}, Resume: "dir"}, "Resume", `"dir"`},
		{stage.TrainOptions{Method: &train.SAG{}, Duals: stage.Duals{Place: stage.DualsStream}}, "Duals", `"stream"`},
		{stage.TrainOptions{Method: &train.SAG{}, Sampler: stage.Sampler{Kind: "max"}}, "Sampler.Kind", `"max"`},
		{stage.TrainOptions{Method: &train.LBFGS{}, RefreshEvery: 2}, "RefreshEvery", "2"},
		{stage.TrainOptions{Method: &train.BCFW{}, KeepDuals: "k"}, "KeepDuals", `"k"`},
		{stage.TrainOptions{Loss: stage.LossHinge, WarmStart: "k"}, "WarmStart", `"k"`},
		{stage.TrainOptions{Sampler: stage.Sampler{Kind: "uniform", NonUniform: 0.5}}, "Sampler.NonUniform", ""},
		// Given: options a program's user gave, whatever their values.
		{stage.TrainOptions{Method: &train.LBFGS{}, Given: [][]string{{"SAG.InitialL"}}}, "SAG.InitialL", ""},
		{stage.TrainOptions{Method: &train.OEG{}, Given: [][]string{{"Sampler.NonUniform"}}}, "Sampler.NonUniform", "0"},
		{stage.TrainOptions{Method: &train.SAG{}, Given: [][]string{{"CheckpointEvery"}}}, "CheckpointEvery", "0"},
		{stage.TrainOptions{Loss: stage.LossHinge, Given: [][]string{{"SDCA.Epsilon"}}}, "SDCA.Epsilon", ""},
		{stage.TrainOptions{Method: &train.SDCA{Async: train.AsyncAtomic, RoundSize: 4}, Given: [][]string{{"SDCA.RoundSize"}}}, "SDCA.RoundSize", ""},
		{stage.TrainOptions{Method: &train.SDCA{Async: train.AsyncAtomic}, Duals: stage.Duals{Place: stage.DualsStream}}, "SDCA.Async", `"atomic"`},
		{stage.TrainOptions{Method: &train.LBFGS{}, Given: [][]string{{"SDCA.Seed", "OEG.Seed", "SAG.Seed", "BCFW.Seed"}}}, "SDCA.Seed", ""},
		{stage.TrainOptions{Method: &train.SAG{Variant: "saga"}}, "SAG.Variant", `"saga"`},
		{stage.TrainOptions{Method: &train.SAG{InitialL: -1}}, "SAG.InitialL", "-1"},
		{stage.TrainOptions{Method: &train.OEG{Eta: 2}}, "OEG.Eta", "2"},
		{stage.TrainOptions{Method: &train.LBFGS{Store: -1}}, "LBFGS.Store", "-1"},
		// A zero given stands for no default: it must be in range itself.
		{stage.TrainOptions{Method: &train.SDCA{Workers: 2}, Given: [][]string{{"SDCA.RoundSize"}}}, "SDCA.RoundSize", "0"},
		{stage.TrainOptions{Method: &train.OEG{}, Given: [][]string{{"OEG.Eta"}}}, "OEG.Eta", "0"},
		{stage.TrainOptions{Method: &train.SAG{}, Given: [][]string{{"SAG.Variant"}}}, "SAG.Variant", `""`},
		// The fields a run makes are left nil.
		{stage.TrainOptions{Method: &train.BCFW{Sampler: sampler}}, "BCFW.Sampler", ""},
	} {
		err := c.o.Check()
		var oe *stage.OptionError
		if !errors.As(err, &oe) || oe.Field != c.field || oe.Value != c.value {
			t.Errorf("%+v: error %#v, want an *OptionError for %s %s", c.o, err, c.field, c.value)
		}
	}
	given := stage.TrainOptions{Lambda: stage.LambdaPerSentence(1), Method: &train.SDCA{Epsilon: 1e-9, SubPrecision: 1e-3, Workers: 1, RoundSize: 4},
		Sampler: stage.Sampler{Kind: "gap", NonUniform: 0.8}, GapTol: 1e-3, MaxEpochs: 100, Duals: stage.Duals{Place: stage.DualsAuto}}
	if err := given.Check(); err != nil {
		t.Fatalf("the command's defaults: %v", err)
	}
	for _, m := range []train.Method{&train.LBFGS{Store: 10}, &train.SAG{Variant: "nus", InitialL: 1}, &train.OEG{Eta: 0.5}} {
		if err := (stage.TrainOptions{Method: m}).Check(); err != nil {
			t.Fatalf("%T's defaults: %v", m, err)
		}
	}
	// An option given that one of its fields' methods reads passes: the
	// seed to SAG, the sampler to BCFW, the round length to two workers.
	for _, o := range []stage.TrainOptions{
		{Method: &train.SAG{}, GapTol: 1e-3, Given: [][]string{{"SDCA.Seed", "OEG.Seed", "SAG.Seed", "BCFW.Seed"}, {"Method"}, {"GapTol"}}},
		{Loss: stage.LossHinge, Sampler: stage.Sampler{Kind: "gap"}, Given: [][]string{{"Sampler.Kind"}, {"RefreshEvery"}, {"Checkpoint"}, {"BCFW.Hamming"}}},
		{Method: &train.SDCA{Workers: 2, RoundSize: 8}, Sampler: stage.Sampler{NonUniform: 0.8}, Given: [][]string{{"SDCA.RoundSize"}, {"Sampler.NonUniform"}, {"KeepDuals"}}},
		{Method: &train.SDCA{Workers: 1, RoundSize: 2}, Given: [][]string{{"SDCA.RoundSize"}, {"SDCA.Workers"}}},
	} {
		if err := o.Check(); err != nil {
			t.Errorf("%+v: %v", o, err)
		}
	}
}

// TestOptionErrorFormat: an option's error names the options by the
// program's words.
func TestOptionErrorFormat(t *testing.T) {
	e := &stage.OptionError{Field: "SDCA.Workers", Value: "2", Msg: "use {SDCA.Workers} 1, or {Duals} memory"}
	if got, want := e.Error(), "SDCA.Workers 2: use SDCA.Workers 1, or Duals memory"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	flag := func(field string) string { return "--" + strings.ToLower(strings.TrimPrefix(field, "SDCA.")) }
	if got, want := e.Format(flag), "--workers 2: use --workers 1, or --duals memory"; got != want {
		t.Errorf("Format = %q, want %q", got, want)
	}
}

// TestTrainRefusesUnlabelled: a table without gold labels is refused with
// its name, before any work.
func TestTrainRefusesUnlabelled(t *testing.T) {
	ctx := context.Background()
	in := featurize.InputOptions{LabelColumn: -1}
	tab, _, err := stage.FeaturizeTable(ctx, stage.File("../cmd/dualcrf/testdata/test50.txt"), stage.FeaturizeOptions{Input: &in})
	if err != nil {
		t.Fatal(err)
	}
	_, err = stage.Train(ctx, tab, "test50", stage.TrainOptions{})
	if err == nil || !strings.Contains(err.Error(), "test50: no token has a gold label") {
		t.Fatalf("error %v", err)
	}
}

// TestInputs: the zero Input is refused (no stage reads the process's
// standard input unless handed it), and a reader's name is the one
// messages give.
func TestInputs(t *testing.T) {
	ctx := context.Background()
	if _, err := stage.Eval(ctx, stage.Input{}, stage.EvalOptions{}); err == nil || !strings.Contains(err.Error(), "no input") {
		t.Errorf("zero Input: error %v, want a refusal", err)
	}
	_, err := stage.Eval(ctx, stage.Reader(strings.NewReader("not a table\n"), "preds.txt"), stage.EvalOptions{})
	if err == nil || !strings.Contains(err.Error(), "preds.txt") {
		t.Errorf("a reader named preds.txt: error %v, want one naming it", err)
	}
}

// TestRecordsInput: a table handed over as Arrow records (stage.Records)
// reads as its bytes do — the feature table, its decoding and the scores
// of the predictions are the same — and the stages that read text refuse
// records.
func TestRecordsInput(t *testing.T) {
	ctx := context.Background()
	res := model(ctx)
	like, err := featurize.FromModel(res.Model, "model")
	if err != nil {
		t.Fatal(err)
	}
	var feats bytes.Buffer
	if _, err := stage.Featurize(ctx, stage.File(corpus), &feats, stage.FeaturizeOptions{Like: like}); err != nil {
		t.Fatal(err)
	}
	records := func(b []byte) array.RecordReader {
		t.Helper()
		rr, err := ipc.NewReader(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(rr.Release)
		return rr
	}

	fromBytes, err := stage.ReadFeatureTable(ctx, stage.Reader(bytes.NewReader(feats.Bytes()), "feats"), false)
	if err != nil {
		t.Fatal(err)
	}
	fromRecords, err := stage.ReadFeatureTable(ctx, stage.Records(records(feats.Bytes()), "feats"), false)
	if err != nil {
		t.Fatal(err)
	}
	if fromBytes.Data.Len() != fromRecords.Data.Len() || fromBytes.Data.NumTokens() != fromRecords.Data.NumTokens() ||
		!slices.Equal(fromBytes.Data.Labels, fromRecords.Data.Labels) || !slices.Equal(fromBytes.Data.AttrNames, fromRecords.Data.AttrNames) {
		t.Errorf("ReadFeatureTable: records give %d sentences, %d tokens; bytes %d, %d (or other labels or attributes)",
			fromRecords.Data.Len(), fromRecords.Data.NumTokens(), fromBytes.Data.Len(), fromBytes.Data.NumTokens())
	}

	var predBytes, predRecords bytes.Buffer
	if _, err := stage.Decode(ctx, res.Model, stage.Reader(bytes.NewReader(feats.Bytes()), "feats"), &predBytes, stage.DecodeOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := stage.Decode(ctx, res.Model, stage.Records(records(feats.Bytes()), "feats"), &predRecords, stage.DecodeOptions{}); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(predBytes.Bytes(), predRecords.Bytes()) {
		t.Errorf("Decode: records give %d bytes of predictions, bytes %d; want the same", predRecords.Len(), predBytes.Len())
	}

	evBytes, err := stage.Eval(ctx, stage.Reader(bytes.NewReader(predBytes.Bytes()), "preds"), stage.EvalOptions{})
	if err != nil {
		t.Fatal(err)
	}
	evRecords, err := stage.Eval(ctx, stage.Records(records(predBytes.Bytes()), "preds"), stage.EvalOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if b, r := evBytes.Result(), evRecords.Result(); b.Accuracy != r.Accuracy || b.Tokens != r.Tokens || b.Tokens == 0 {
		t.Errorf("Eval: records score %d tokens at %v, bytes %d at %v", r.Tokens, r.Accuracy, b.Tokens, b.Accuracy)
	}

	_, err = stage.Decode(ctx, res.Model, stage.Records(records(feats.Bytes()), "feats"), io.Discard, stage.DecodeOptions{Text: true})
	if err == nil || !strings.Contains(err.Error(), "not Arrow records") {
		t.Errorf("Decode of text from records: error %v, want a refusal", err)
	}
	_, _, err = stage.FeaturizeTable(ctx, stage.Records(records(feats.Bytes()), "feats"), stage.FeaturizeOptions{})
	if err == nil || !strings.Contains(err.Error(), "not Arrow records") {
		t.Errorf("FeaturizeTable from records: error %v, want a refusal", err)
	}
}

// TestModelRecordsWorkers: a model records the schedule that made it: a
// sequential run nothing (its bytes as they were), the rounds their size
// and not the workers (the model does not depend on them), asynchronous
// steps their kind and workers.
func TestModelRecordsWorkers(t *testing.T) {
	ctx := context.Background()
	tab, _, err := stage.FeaturizeTable(ctx, stage.File(corpus), stage.FeaturizeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	facts := func(m *train.SDCA) map[string]any {
		t.Helper()
		res, err := stage.Train(ctx, tab, "test50", stage.TrainOptions{Method: m, MaxEpochs: 2})
		if err != nil {
			t.Fatal(err)
		}
		var f map[string]any
		if err := json.Unmarshal([]byte(res.Model.Meta[schemas.KeyTraining]), &f); err != nil {
			t.Fatal(err)
		}
		return f
	}
	for _, c := range []struct {
		m                 *train.SDCA
		schedule, workers any
		round             any
	}{
		{&train.SDCA{Seed: 1, Workers: 1}, nil, nil, nil},
		{&train.SDCA{Seed: 1, Workers: 2, RoundSize: 3}, "rounds", nil, 3.0},
		{&train.SDCA{Seed: 1, Workers: 3}, "rounds", nil, float64(train.DefaultRoundSize)},
		{&train.SDCA{Seed: 1, Workers: 2, Async: train.AsyncWild}, "async-wild", 2.0, nil},
	} {
		if c.m.Async != "" && raceDetector {
			continue // asynchronous steps race by design
		}
		f := facts(c.m)
		if f["schedule"] != c.schedule || f["workers"] != c.workers || f["round_size"] != c.round {
			t.Errorf("%+v: training facts schedule %v, workers %v, round_size %v; want %v, %v, %v",
				c.m, f["schedule"], f["workers"], f["round_size"], c.schedule, c.workers, c.round)
		}
	}
}
