package decode_test

import (
	"bytes"
	"context"
	"io"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"

	"github.com/dualcrf/dualcrf/arrowio"
	"github.com/dualcrf/dualcrf/crf"
	"github.com/dualcrf/dualcrf/decode"
	"github.com/dualcrf/dualcrf/featurize"
	"github.com/dualcrf/dualcrf/internal/datatest"
	"github.com/dualcrf/dualcrf/pipeline"
	"github.com/dualcrf/dualcrf/tables"
	"github.com/dualcrf/dualcrf/train"
)

// conll2000Model featurizes CoNLL-2000 (chunking templates, cut-off 3),
// trains 3 SDCA-GAP epochs and returns the model, the test set in its
// vocabulary and that test set's feature table (an Arrow stream).
func conll2000Model(b *testing.B) (*crf.Model, *crf.Dataset, []byte) {
	b.Helper()
	dir := filepath.Dir(datatest.Path(b, "conll2000", "test.txt.gz"))
	set, err := featurize.Builtin("chunking")
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	var te bytes.Buffer
	trainT, _, err := featurize.Table(ctx, pipeline.Source{Path: filepath.Join(dir, "train.txt.gz")}, featurize.RunOptions{Templates: set, MinCount: 3})
	if err != nil {
		b.Fatal(err)
	}
	vocab, err := featurize.NewVocabulary(trainT.Data.AttrNames)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := featurize.Run(ctx, pipeline.Source{Path: filepath.Join(dir, "test.txt.gz")}, &te, featurize.RunOptions{Templates: set, Vocab: vocab, Labels: trainT.Data.LabelNames}); err != nil {
		b.Fatal(err)
	}
	testBytes := bytes.Clone(te.Bytes())
	testT, err := tables.ReadFeatureTable(&te, "test", tables.FeatureReadOptions{SkipText: true})
	if err != nil {
		b.Fatal(err)
	}
	d := trainT.Data
	p, err := train.NewProblem(d, 1/float64(d.Len()), false)
	if err != nil {
		b.Fatal(err)
	}
	res, err := train.Train(ctx, p, train.Settings{MaxEpochs: 3, GapEvery: -1}, &train.SDCA{Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	m := &crf.Model{Layout: p.Layout, Weights: res.Weights, AttrNames: d.AttrNames, LabelNames: d.LabelNames}
	return m, decode.Apply(testT.Data, decode.Remap(m, testT.Data), m.Layout.NumAttrs, m.AttrNames), testBytes
}

// BenchmarkDecodeConll2000 decodes the CoNLL-2000 test set (2,012
// sentences, 47,377 tokens) with 1 and with all workers and reports
// sentences/s and tokens/s; run with -benchtime 20x.
func BenchmarkDecodeConll2000(b *testing.B) {
	m, test, _ := conll2000Model(b)
	for _, workers := range []int{1, runtime.GOMAXPROCS(0)} {
		for _, marg := range []bool{false, true} {
			name := "workers=" + strconv.Itoa(workers)
			if marg {
				name += "/marginals"
			}
			b.Run(name, func(b *testing.B) {
				for b.Loop() {
					if _, err := decode.Decode(context.Background(), m, test, decode.Options{Workers: workers, Marginals: marg}); err != nil {
						b.Fatal(err)
					}
				}
				sec := b.Elapsed().Seconds() / float64(b.N)
				b.ReportMetric(float64(test.Len())/sec, "sentences/s")
				b.ReportMetric(float64(test.NumTokens())/sec, "tokens/s")
			})
		}
	}
}

// BenchmarkDecodeStage decodes the CoNLL-2000 test set as the decode stage
// does, from the feature table's bytes to an Arrow prediction stream:
// FeatureReader, Stream (reader, decoders and writer overlapping) and
// PredictionWriter, with 1 and with all workers; run with -benchtime 20x.
func BenchmarkDecodeStage(b *testing.B) {
	m, test, table := conll2000Model(b)
	for _, workers := range []int{1, runtime.GOMAXPROCS(0)} {
		b.Run("workers="+strconv.Itoa(workers), func(b *testing.B) {
			for b.Loop() {
				if err := decodeStage(m, table, workers); err != nil {
					b.Fatal(err)
				}
			}
			sec := b.Elapsed().Seconds() / float64(b.N)
			b.ReportMetric(float64(test.Len())/sec, "sentences/s")
			b.ReportMetric(float64(test.NumTokens())/sec, "tokens/s")
		})
	}
}

// decodeStage is runDecode's work without the command line.
func decodeStage(m *crf.Model, table []byte, workers int) error {
	rr, err := tables.OpenRecordReader(bytes.NewReader(table), "test", arrowio.ReaderOptions{})
	if err != nil {
		return err
	}
	defer rr.Release()
	tr, err := tables.NewFeatureReader(rr, "test", tables.FeatureReadOptions{})
	if err != nil {
		return err
	}
	pw, err := tables.NewPredictionWriter(io.Discard, m, tables.PredictionOptions{})
	if err != nil {
		return err
	}
	if _, err := decode.Stream(context.Background(), m, tr, decode.Options{Workers: workers}, pw.Write); err != nil {
		pw.Abort()
		return err
	}
	return pw.Close()
}
