package dualcrfbeam

import (
	"bufio"
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"

	"github.com/dualcrf/dualcrf/arrowio"
	"github.com/dualcrf/dualcrf/crf"
	"github.com/dualcrf/dualcrf/pipeline"
	"github.com/dualcrf/dualcrf/schemas"
	"github.com/dualcrf/dualcrf/stage"
	"github.com/dualcrf/dualcrf/tables"
	"github.com/dualcrf/dualcrf/train"
)

// The small slice CI runs on: 150 sentences of CoNLL-2000 chunking, and a
// model trained on it.
const slice = "../../cmd/dualcrf/testdata/train150.txt"

// splitCoNLL writes the sentences of the CoNLL file corpus into n shard
// files in dir (sentence i to shard i·n/sentences), whose concatenation is
// the corpus with one blank line after every sentence, and returns the
// shards' glob and that concatenation.
func splitCoNLL(t testing.TB, corpus string, n int, dir string) (glob, whole string) {
	t.Helper()
	r, _, err := pipeline.OpenInput(corpus)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var sents []string
	var cur strings.Builder
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.TrimSpace(line) == "" {
			if cur.Len() > 0 {
				sents = append(sents, cur.String())
				cur.Reset()
			}
			continue
		}
		cur.WriteString(line)
		cur.WriteByte('\n')
	}
	if cur.Len() > 0 {
		sents = append(sents, cur.String())
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(sents) < n {
		t.Fatalf("%s: %d sentences for %d shards", corpus, len(sents), n)
	}
	if err := os.MkdirAll(filepath.Join(dir, "shards"), 0o777); err != nil {
		t.Fatal(err)
	}
	var all bytes.Buffer
	for i := range n {
		var b bytes.Buffer
		for _, s := range sents[i*len(sents)/n : (i+1)*len(sents)/n] {
			b.WriteString(s)
			b.WriteByte('\n')
		}
		all.Write(b.Bytes())
		if err := os.WriteFile(filepath.Join(dir, "shards", fmt.Sprintf("s%03d.txt", i)), b.Bytes(), 0o666); err != nil {
			t.Fatal(err)
		}
	}
	whole = filepath.Join(dir, "whole.txt")
	if err := os.WriteFile(whole, all.Bytes(), 0o666); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(dir, "shards", "s*.txt"), whole
}

// runPipeline builds a pipeline with build and runs it on Prism.
func runPipeline(t testing.TB, build func(s beam.Scope) error) {
	t.Helper()
	p, s := beam.NewPipelineWithRoot()
	if err := build(s); err != nil {
		t.Fatal(err)
	}
	if err := Run(context.Background(), p); err != nil {
		t.Fatal(err)
	}
}

// readTable reads the feature table at path.
func readTable(t testing.TB, path string) *tables.FeatureTable {
	t.Helper()
	ft, err := stage.ReadFeatureTable(context.Background(), stage.File(path), false)
	if err != nil {
		t.Fatal(err)
	}
	return ft
}

// equalTables checks that the tables parts, read in order, hold the rows
// of whole with its vocabulary, labels and featurization metadata.
func equalTables(t testing.TB, whole *tables.FeatureTable, parts []string) {
	t.Helper()
	w := whole.Data
	tok, sent := 0, 0
	for i, path := range parts {
		p := readTable(t, path) // one at a time: a scale run's tables are large
		d := p.Data
		if !reflect.DeepEqual(d.AttrNames, w.AttrNames) {
			t.Fatalf("part %d: %d attributes, the CLI's table %d (or in another order)", i, len(d.AttrNames), len(w.AttrNames))
		}
		if !reflect.DeepEqual(d.LabelNames, w.LabelNames) {
			t.Fatalf("part %d: labels %v, the CLI's %v", i, d.LabelNames, w.LabelNames)
		}
		for _, k := range []string{schemas.KeyTemplates, schemas.KeyMinCount, "dualcrf.input"} {
			if p.Metadata[k] != whole.Metadata[k] {
				t.Fatalf("part %d: metadata %s=%q, the CLI's %q", i, k, p.Metadata[k], whole.Metadata[k])
			}
		}
		if !reflect.DeepEqual(p.Columns, whole.Columns) {
			t.Fatalf("part %d: columns %v, the CLI's %v", i, p.Columns, whole.Columns)
		}
		for s := range d.Len() {
			if n, m := d.SentStart[s+1]-d.SentStart[s], w.SentStart[sent+1]-w.SentStart[sent]; n != m {
				t.Fatalf("part %d sentence %d: %d tokens, the CLI's sentence %d has %d", i, s, n, sent, m)
			}
			sent++
		}
		for k := range d.NumTokens() {
			if d.Labels[k] != w.Labels[tok] {
				t.Fatalf("part %d token %d: label %d, the CLI's token %d: %d", i, k, d.Labels[k], tok, w.Labels[tok])
			}
			a, b := d.AttrStart[k], d.AttrStart[k+1]
			c, e := w.AttrStart[tok], w.AttrStart[tok+1]
			if !slices.Equal(d.Attrs[a:b], w.Attrs[c:e]) || !slices.Equal(values(d, a, b), values(w, c, e)) {
				t.Fatalf("part %d token %d: attributes %v, the CLI's token %d: %v", i, k, d.Attrs[a:b], tok, w.Attrs[c:e])
			}
			for col := range p.Text {
				if p.Text[col][k] != whole.Text[col][tok] {
					t.Fatalf("part %d token %d column %d: %q, the CLI's %q", i, k, col, p.Text[col][k], whole.Text[col][tok])
				}
			}
			tok++
		}
	}
	if tok != w.NumTokens() || sent != w.Len() {
		t.Fatalf("parts hold %d tokens in %d sentences, the CLI's table %d in %d", tok, sent, w.NumTokens(), w.Len())
	}
}

// values returns the values of attributes a..b of d (1 when d has none).
func values(d *crf.Dataset, a, b int) []float64 {
	out := make([]float64, b-a)
	for i := range out {
		out[i] = 1
		if d.Values != nil {
			out[i] = d.Values[a+i]
		}
	}
	return out
}

// readPredictions reads every sentence of the prediction table at path
// (Arrow IPC or Parquet).
func readPredictions(t testing.TB, path string) []tables.PredictedSentence {
	t.Helper()
	var out []tables.PredictedSentence
	fn := func(s *tables.PredictedSentence) error {
		out = append(out, tables.PredictedSentence{Pred: slices.Clone(s.Pred), Gold: slices.Clone(s.Gold),
			HasGold: slices.Clone(s.HasGold), Conf: slices.Clone(s.Conf)})
		return nil
	}
	if err := readPredictionFile(context.Background(), path, fn); err != nil {
		t.Fatal(err)
	}
	return out
}

// equalPredictions checks that the prediction tables parts, in order, hold
// the sentences of the whole table.
func equalPredictions(t testing.TB, whole string, parts []string) {
	t.Helper()
	want := readPredictions(t, whole)
	var got []tables.PredictedSentence
	for _, p := range parts {
		got = append(got, readPredictions(t, p)...)
	}
	if len(got) != len(want) {
		t.Fatalf("%d predicted sentences, the CLI's %d", len(got), len(want))
	}
	for i := range got {
		if !reflect.DeepEqual(got[i], want[i]) {
			t.Fatalf("sentence %d: %+v, the CLI's %+v", i, got[i], want[i])
		}
	}
}

// cliEval returns dualcrf eval's text report of the predictions at path.
func cliEval(t testing.TB, path string, o stage.EvalOptions) string {
	t.Helper()
	ev, err := stage.Eval(context.Background(), stage.File(path), o)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := ev.WriteConlleval(&b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// featurizeBoth featurizes whole with the CLI's library call and the
// shards of glob with the Beam pipeline, checks the tables equal, and
// returns the CLI's table's path and the parts' paths.
func featurizeBoth(t testing.TB, dir, glob, whole string, minCount int) (string, []string) {
	t.Helper()
	ctx := context.Background()
	cliPath := filepath.Join(dir, "cli.arrow")
	writeFile(t, cliPath, func(out *pipeline.Output) error {
		_, err := stage.Featurize(ctx, stage.File(whole), out, stage.FeaturizeOptions{MinCount: minCount})
		return err
	})
	shards, err := Shards([]string{glob})
	if err != nil {
		t.Fatal(err)
	}
	outDir := filepath.Join(dir, "features")
	runPipeline(t, func(s beam.Scope) error {
		_, err := Featurize(s, FeaturizeConfig{Shards: shards, OutDir: outDir, MinCount: minCount})
		return err
	})
	var parts []string
	for i := range shards {
		parts = append(parts, OutputPath(outDir, i, "arrow"))
	}
	equalTables(t, readTable(t, cliPath), parts)
	return cliPath, parts
}

// writeFile writes path atomically through fn.
func writeFile(t testing.TB, path string, fn func(*pipeline.Output) error) {
	t.Helper()
	if err := writeAtomic(context.Background(), path, fn); err != nil {
		t.Fatal(err)
	}
}

// decodeAndEval decodes the CLI's input (a feature table, or text) with
// the CLI's library call and Beam's shards with the pipeline, checks the
// predictions and the reports equal, and returns the report.
func decodeAndEval(t testing.TB, dir, modelPath, cliInput string, beamInputs []string, text bool) string {
	t.Helper()
	ctx := context.Background()
	m, err := stage.ReadModel(context.Background(), stage.File(modelPath))
	if err != nil {
		t.Fatal(err)
	}
	cliPred := filepath.Join(dir, "cli-pred.arrow")
	writeFile(t, cliPred, func(out *pipeline.Output) error {
		_, err := stage.Decode(ctx, m, stage.File(cliInput), out, stage.DecodeOptions{Text: text, ModelName: modelPath})
		return err
	})
	shards, err := Shards(beamInputs)
	if err != nil {
		t.Fatal(err)
	}
	predDir := filepath.Join(dir, "pred")
	runPipeline(t, func(s beam.Scope) error {
		_, err := Decode(s, DecodeConfig{Shards: shards, OutDir: predDir, Model: modelPath, Text: text})
		return err
	})
	var preds []string
	for i := range shards {
		preds = append(preds, OutputPath(predDir, i, "parquet"))
	}
	equalPredictions(t, cliPred, preds)

	want := cliEval(t, cliPred, stage.EvalOptions{})
	predShards, err := Shards([]string{filepath.Join(predDir, "part-*.parquet")})
	if err != nil {
		t.Fatal(err)
	}
	report := filepath.Join(dir, "report.txt")
	runPipeline(t, func(s beam.Scope) error {
		c, err := Eval(s, EvalConfig{Shards: predShards})
		if err != nil {
			return err
		}
		return WriteReport(s, c, predShards, ReportText, report)
	})
	got, err := os.ReadFile(report)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		t.Fatalf("Beam's eval report:\n%s\ndualcrf eval's:\n%s", got, want)
	}
	return want
}

// trainModel trains a model on the feature table at path with the
// defaults and writes it to dir/model.arrow.
func trainModel(t testing.TB, dir, path string) string {
	t.Helper()
	res, err := stage.Train(context.Background(), readTable(t, path), path, stage.TrainOptions{Method: &train.SDCA{Seed: 1}})
	if err != nil {
		t.Fatal(err)
	}
	modelPath := filepath.Join(dir, "model.arrow")
	writeFile(t, modelPath, func(out *pipeline.Output) error {
		return tables.WriteModel(out, res.Model, arrowio.WriterOptions{})
	})
	return modelPath
}

// TestSliceEqualsCLI: on the CI slice cut into 3 shards, Beam's featurize
// gives the CLI's vocabulary, labels and rows (with and without a
// min-count cut-off), Beam's decode of its tables the CLI's predictions,
// and Beam's eval the CLI's report, byte for byte.
func TestSliceEqualsCLI(t *testing.T) {
	dir := t.TempDir()
	glob, whole := splitCoNLL(t, slice, 3, dir)
	featurizeBoth(t, filepath.Join(dir, "min2"), glob, whole, 2)
	cliTable, parts := featurizeBoth(t, dir, glob, whole, 0)
	model := trainModel(t, dir, cliTable)
	report := decodeAndEval(t, dir, model, cliTable, parts, false)
	if !strings.HasPrefix(report, "processed ") {
		t.Errorf("report %q", report)
	}
	// Raw text, featurized with the model's vocabulary.
	decodeAndEval(t, filepath.Join(dir, "text"), model, whole, []string{glob}, true)
}

// TestScaleEqualsCLI is TestSliceEqualsCLI on a large corpus, run by
// experiments/beam-scale.sh: the corpus -beam.scale, cut into -beam.shards
// shards, featurized by both; then decoded as raw text with a model
// trained on the CI slice, and scored, by both.
func TestScaleEqualsCLI(t *testing.T) {
	if *scale == "" {
		t.Skip("a scale run: give -beam.scale CORPUS (experiments/beam-scale.sh)")
	}
	dir := *scaleDir
	if dir == "" {
		dir = t.TempDir()
	}
	glob, whole := splitCoNLL(t, *scale, *scaleShards, dir)
	featurizeBoth(t, dir, glob, whole, *scaleMinCount)
	sliceDir := filepath.Join(dir, "slice")
	sliceTable := filepath.Join(sliceDir, "slice.arrow")
	writeFile(t, sliceTable, func(out *pipeline.Output) error {
		_, err := stage.Featurize(context.Background(), stage.File(slice), out, stage.FeaturizeOptions{})
		return err
	})
	model := trainModel(t, sliceDir, sliceTable)
	report := decodeAndEval(t, filepath.Join(dir, "decode"), model, whole, []string{glob}, true)
	t.Logf("equal on %s in %d shards; report:\n%s", *scale, *scaleShards, report)
}

var scaleDir = flag.String("beam.dir", "", "working directory of TestScaleEqualsCLI (default: a temporary one)")
var scaleMinCount = flag.Int("beam.mincount", 2, "min-count of TestScaleEqualsCLI's featurize")
var scale = flag.String("beam.scale", "", "run TestScaleEqualsCLI on this CoNLL corpus (experiments/beam-scale.sh)")
var scaleShards = flag.Int("beam.shards", 8, "shards of the -beam.scale corpus")

// TestParquetShardsEqualCLI: Parquet token shards — here the prediction
// tables Beam's decode writes, one row per token with its text columns and
// gold label — featurized by Beam give the vocabulary, labels and rows the
// CLI's featurize gives on their directory.
func TestParquetShardsEqualCLI(t *testing.T) {
	dir := t.TempDir()
	glob, whole := splitCoNLL(t, slice, 3, dir)
	cliTable, _ := featurizeBoth(t, dir, glob, whole, 0)
	model := trainModel(t, dir, cliTable)
	decodeAndEval(t, filepath.Join(dir, "text"), model, whole, []string{glob}, true)
	lake := filepath.Join(dir, "text", "pred")
	out := filepath.Join(dir, "lake")
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, minCount := range []int{0, 2} {
		featurizeBoth(t, filepath.Join(out, fmt.Sprint(minCount)), filepath.Join(lake, "part-*.parquet"), lake, minCount)
	}
}
