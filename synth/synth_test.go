package synth_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"math"
	"reflect"
	"strconv"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/dualcrf/dualcrf/arrowio"
	"github.com/dualcrf/dualcrf/crf"
	"github.com/dualcrf/dualcrf/crf/crftest"
	"github.com/dualcrf/dualcrf/duals"
	"github.com/dualcrf/dualcrf/synth"
	"github.com/dualcrf/dualcrf/tables"
	"github.com/dualcrf/dualcrf/train"
)

// synthTable writes a synthetic table and reads it back.
func synthTable(t *testing.T, opts synth.Options, wopts arrowio.WriterOptions) (*tables.FeatureTable, synth.Summary, []byte) {
	t.Helper()
	var buf bytes.Buffer
	sum, err := synth.Generate(context.Background(), &buf, opts, wopts)
	if err != nil {
		t.Fatalf("Generate(%+v): %v", opts, err)
	}
	tab, err := tables.ReadFeatureTable(bytes.NewReader(buf.Bytes()), "synth", tables.FeatureReadOptions{})
	if err != nil {
		t.Fatalf("read back: %v", err)
	}
	return tab, sum, buf.Bytes()
}

// synthWeights returns the true weights of opts, checking that the table's
// attribute and label ids are the weights'.
func synthWeights(t *testing.T, opts synth.Options, d *crf.Dataset) (crf.Layout, []float64) {
	t.Helper()
	lay, w, err := synth.Weights(opts)
	if err != nil {
		t.Fatal(err)
	}
	if d.NumAttrs != lay.NumAttrs || d.NumLabels != lay.NumLabels {
		t.Fatalf("table has %d attributes and %d labels, weights %d and %d", d.NumAttrs, d.NumLabels, lay.NumAttrs, lay.NumLabels)
	}
	for a, name := range d.AttrNames {
		if want := "a" + strconv.Itoa(a); name != want {
			t.Fatalf("attribute %d is named %q, want %q", a, name, want)
		}
	}
	for y, name := range d.LabelNames {
		if want := "L" + strconv.Itoa(y); name != want {
			t.Fatalf("label %d is named %q, want %q", y, name, want)
		}
	}
	return lay, w
}

func TestSynthDeterministic(t *testing.T) {
	base := synth.Options{Sentences: 300, MinLen: 1, MaxLen: 12, Labels: 4, Attrs: 50, PerToken: 5,
		Seed: 7, BatchTokens: 400}
	for _, real := range []bool{false, true} {
		opts := base
		opts.Real = real
		opts.Workers = 1
		_, sum, one := synthTable(t, opts, arrowio.WriterOptions{})
		opts.Workers = 3
		_, _, three := synthTable(t, opts, arrowio.WriterOptions{})
		_, _, again := synthTable(t, opts, arrowio.WriterOptions{})
		if !bytes.Equal(one, three) || !bytes.Equal(three, again) {
			t.Errorf("real=%v: the same options gave different bytes (%d, %d, %d bytes)", real, len(one), len(three), len(again))
		}
		opts.Seed++
		_, _, other := synthTable(t, opts, arrowio.WriterOptions{})
		if bytes.Equal(one, other) {
			t.Errorf("real=%v: seeds %d and %d gave the same table", real, base.Seed, opts.Seed)
		}
		if sum.Sentences != base.Sentences || sum.RealValued == 0 != !real {
			t.Errorf("real=%v: summary %d sentences, %d real-valued tokens", real, sum.Sentences, sum.RealValued)
		}
	}
}

// TestSynthFirst checks that a table is a window on the seed's sequence:
// sentences [0,25) and [25,40) make sentences [0,40).
func TestSynthFirst(t *testing.T) {
	opts := synth.Options{Sentences: 40, MinLen: 2, MaxLen: 9, Labels: 3, Attrs: 30, PerToken: 4, Seed: 3, Real: true}
	whole, _, _ := synthTable(t, opts, arrowio.WriterOptions{})
	opts.Sentences = 25
	head, _, _ := synthTable(t, opts, arrowio.WriterOptions{})
	opts.First, opts.Sentences = 25, 15
	tail, _, _ := synthTable(t, opts, arrowio.WriterOptions{})
	w, h, tl := whole.Data, head.Data, tail.Data
	cat := func(a, b []int32) []int32 { return append(append([]int32(nil), a...), b...) }
	if !reflect.DeepEqual(w.Labels, cat(h.Labels, tl.Labels)) || !reflect.DeepEqual(w.Attrs, cat(h.Attrs, tl.Attrs)) ||
		!reflect.DeepEqual(w.Values, append(append([]float64(nil), h.Values...), tl.Values...)) {
		t.Fatalf("sentences [0,40) differ from [0,25) followed by [25,40)")
	}
	if w.Len() != 40 || h.Len() != 25 || tl.Len() != 15 {
		t.Fatalf("sentence counts %d, %d, %d", w.Len(), h.Len(), tl.Len())
	}
}

// pathIndex numbers a label path in crftest.Enumerate's lexicographic order.
func pathIndex(labels []int32, K int) int {
	i := 0
	for _, y := range labels {
		i = i*K + int(y)
	}
	return i
}

// chiSquare returns Pearson's statistic of observed against expected
// counts, pooling the bins expected fewer than 5 times, and its degrees of
// freedom.
func chiSquare(obs []int, exp []float64) (float64, int) {
	stat, bins := 0.0, 0
	po, pe := 0.0, 0.0
	for i, e := range exp {
		if e < 5 {
			po += float64(obs[i])
			pe += e
			continue
		}
		d := float64(obs[i]) - e
		stat += d * d / e
		bins++
	}
	if pe > 0 {
		stat += (po - pe) * (po - pe) / pe
		bins++
	}
	return stat, bins - 1
}

// synthCheckPaths tests the sampled label paths of the table against the
// exact p(y|x) by enumeration. Expected counts sum p_i(path) over the
// sentences of each length; for sentences with different x the counts are
// Poisson-binomial with variance below the mean, so the χ² bound is
// conservative.
func synthCheckPaths(t *testing.T, opts synth.Options) {
	t.Helper()
	tab, _, _ := synthTable(t, opts, arrowio.WriterOptions{})
	d := tab.Data
	lay, w := synthWeights(t, opts, d)
	K := opts.Labels
	obs := map[int][]int{}
	exp := map[int][]float64{}
	for i := 0; i < d.Len(); i++ {
		s := d.Sentence(i)
		T := s.Len()
		j := crftest.Enumerate(lay, w, s)
		if obs[T] == nil {
			obs[T], exp[T] = make([]int, len(j.Prob)), make([]float64, len(j.Prob))
		}
		obs[T][pathIndex(s.Labels, K)]++
		for p, pr := range j.Prob {
			exp[T][p] += pr
		}
	}
	for T := opts.MinLen; T <= opts.MaxLen; T++ {
		stat, dof := chiSquare(obs[T], exp[T])
		if dof < 1 {
			t.Fatalf("length %d: %d degrees of freedom; the test has too few sentences", T, dof)
		}
		limit := distuv.ChiSquared{K: float64(dof)}.Quantile(0.999)
		t.Logf("length %d: %d paths, χ² = %.1f on %d dof (0.999 quantile %.1f)", T, len(obs[T]), stat, dof, limit)
		if stat > limit {
			t.Errorf("length %d: label paths do not follow p(y|x): χ² = %.1f > %.1f on %d dof", T, stat, limit, dof)
		}
	}
}

// TestSynthSamplerFixedInput checks forward filtering–backward sampling on
// a single x: with as many attributes as attributes per token every token
// has all of them, so every sentence of a length has the same p(y|x).
func TestSynthSamplerFixedInput(t *testing.T) {
	synthCheckPaths(t, synth.Options{Sentences: 200000, MinLen: 3, MaxLen: 3, Labels: 3, Attrs: 2, PerToken: 2,
		Seed: 11})
	synthCheckPaths(t, synth.Options{Sentences: 6000, MinLen: 1, MaxLen: 2, Labels: 4, Attrs: 3, PerToken: 3,
		Seed: 12, Noise: 1.5})
}

// TestSynthSamplerVaried checks the sampler over varied inputs, binary and
// real-valued, and lengths 1 to 4.
func TestSynthSamplerVaried(t *testing.T) {
	for _, real := range []bool{false, true} {
		synthCheckPaths(t, synth.Options{Sentences: 12000, MinLen: 1, MaxLen: 4, Labels: 3, Attrs: 12, PerToken: 3,
			Seed: 5, Noise: 1.5, Real: real})
	}
}

// accuracy decodes d with weights w by crf.Lattice.Viterbi and returns the
// token accuracy.
func accuracy(d *crf.Dataset, lay crf.Layout, w []float64) float64 {
	lat := crf.NewLattice(lay.NumLabels)
	path := make([]int32, 0)
	correct := 0
	for i := 0; i < d.Len(); i++ {
		s := d.Sentence(i)
		lat.SetScores(lay, w, s)
		path = append(path[:0], make([]int32, s.Len())...)
		lat.Viterbi(path)
		for t, y := range s.Labels {
			if path[t] == y {
				correct++
			}
		}
	}
	return float64(correct) / float64(d.NumTokens())
}

// TestSynthCeiling checks the summary's and the metadata's figures against
// Viterbi decoding by package crf, and the dual size against duals.Bytes.
func TestSynthCeiling(t *testing.T) {
	for _, real := range []bool{false, true} {
		opts := synth.Options{Sentences: 300, MinLen: 1, MaxLen: 20, Labels: 6, Attrs: 100, PerToken: 8,
			Seed: 9, Real: real}
		tab, sum, _ := synthTable(t, opts, arrowio.WriterOptions{Format: arrowio.FormatFile, Compression: arrowio.CompressZstd})
		d := tab.Data
		lay, w := synthWeights(t, opts, d)
		if acc := accuracy(d, lay, w); acc != sum.TrueAccuracy {
			t.Errorf("real=%v: summary says the true weights' accuracy is %v, crf.Lattice.Viterbi gives %v", real, sum.TrueAccuracy, acc)
		}
		if got := duals.Bytes(d, duals.Float64); got != sum.DualBytes {
			t.Errorf("real=%v: dual bytes %d, duals.Bytes %d", real, sum.DualBytes, got)
		}
		if sum.Tokens != d.NumTokens() || sum.AttrOccurrences != opts.PerToken*d.NumTokens() {
			t.Errorf("real=%v: summary has %d tokens and %d attributes, the table %d and %d",
				real, sum.Tokens, sum.AttrOccurrences, d.NumTokens(), len(d.Attrs))
		}
		var md struct {
			Options         synth.Options `json:"options"`
			CeilingEstimate float64       `json:"ceiling_estimate"`
		}
		if err := json.Unmarshal([]byte(tab.Metadata[synth.MetadataKey]), &md); err != nil {
			t.Fatalf("metadata %s: %v", synth.MetadataKey, err)
		}
		want := opts
		want.Noise = 1
		if md.Options != want {
			t.Errorf("metadata options %+v, want %+v", md.Options, want)
		}
		if md.CeilingEstimate != sum.CeilingEstimate || math.Abs(sum.CeilingEstimate-sum.TrueAccuracy) > 0.1 {
			t.Errorf("ceiling estimate %v in the metadata, %v in the summary, accuracy on the table %v",
				md.CeilingEstimate, sum.CeilingEstimate, sum.TrueAccuracy)
		}
		if sum.TrueAccuracy < 2.0/float64(opts.Labels) {
			t.Errorf("real=%v: true weights' accuracy %v is near chance", real, sum.TrueAccuracy)
		}
	}
}

// TestSynthZipf checks the attribute law: one attribute per group per token,
// rank r drawn with probability ∝ 1/(r+1).
func TestSynthZipf(t *testing.T) {
	const A, P = 40, 4
	opts := synth.Options{Sentences: 1000, MinLen: 10, MaxLen: 10, Labels: 2, Attrs: A, PerToken: P, Seed: 2}
	tab, _, _ := synthTable(t, opts, arrowio.WriterOptions{})
	d := tab.Data
	R := A / P
	obs := make([]int, R)
	for tok := 0; tok < d.NumTokens(); tok++ {
		row := d.Attrs[d.AttrStart[tok]:d.AttrStart[tok+1]]
		for g, a := range row {
			if int(a)%P != g {
				t.Fatalf("token %d: attribute %d in group slot %d", tok, a, g)
			}
			obs[int(a)/P]++
		}
	}
	h := 0.0
	for r := 0; r < R; r++ {
		h += 1 / float64(r+1)
	}
	exp := make([]float64, R)
	for r := range exp {
		exp[r] = float64(d.NumTokens()*P) / (float64(r+1) * h)
	}
	stat, dof := chiSquare(obs, exp)
	if limit := (distuv.ChiSquared{K: float64(dof)}).Quantile(0.999); stat > limit {
		t.Errorf("rank counts %v do not follow Zipf: χ² = %.1f > %.1f", obs, stat, limit)
	}
}

// TestSynthLearnable trains on a synthetic set and decodes a fresh one from
// the same CRF: the learnt model must be far above chance and near the true
// weights' accuracy.
func TestSynthLearnable(t *testing.T) {
	opts := synth.Options{Sentences: 300, MinLen: 5, MaxLen: 15, Labels: 5, Attrs: 200, PerToken: 10, Seed: 1}
	trainTab, _, _ := synthTable(t, opts, arrowio.WriterOptions{})
	opts.First, opts.Sentences = 300, 300
	testTab, testSum, _ := synthTable(t, opts, arrowio.WriterOptions{})
	p, err := train.NewProblem(trainTab.Data, 1/float64(trainTab.Data.Len()), false)
	if err != nil {
		t.Fatal(err)
	}
	res, err := train.Train(context.Background(), p, train.Settings{MaxEpochs: 30, GapTol: 1e-3}, &train.SDCA{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	lay, wTrue := synthWeights(t, opts, testTab.Data)
	ceiling := accuracy(testTab.Data, lay, wTrue)
	learnt := accuracy(testTab.Data, p.Layout, res.Weights)
	chance := 0.0 // accuracy of always answering the most frequent label
	for _, c := range testSum.LabelCounts {
		chance = max(chance, float64(c)/float64(testSum.Tokens))
	}
	t.Logf("after %d epochs (gap %.2g, %s): learnt accuracy %.4f, true weights %.4f, majority label %.4f",
		res.Epochs, res.Last.Gap, res.Stopped, learnt, ceiling, chance)
	if learnt < chance+0.5*(ceiling-chance) || learnt < ceiling-0.1 {
		t.Errorf("learnt accuracy %.4f: want within 0.1 of the ceiling %.4f and well above the majority label's %.4f",
			learnt, ceiling, chance)
	}
}

func TestSynthBadOptions(t *testing.T) {
	ok := synth.Options{Sentences: 10, MinLen: 1, MaxLen: 5, Labels: 3, Attrs: 10, PerToken: 2}
	for name, edit := range map[string]func(*synth.Options){
		"negative sentences": func(o *synth.Options) { o.Sentences = -1 },
		"zero length":        func(o *synth.Options) { o.MinLen = 0 },
		"max below min":      func(o *synth.Options) { o.MaxLen = 0 },
		"one label":          func(o *synth.Options) { o.Labels = 1 },
		"no attributes":      func(o *synth.Options) { o.Attrs = 0 },
		"per token > attrs":  func(o *synth.Options) { o.PerToken = 11 },
		"negative noise":     func(o *synth.Options) { o.Noise = -1 },
		"NaN noise":          func(o *synth.Options) { o.Noise = math.NaN() },
		"tiny noise":         func(o *synth.Options) { o.Noise = 1e-3 },
		"negative first":     func(o *synth.Options) { o.First = -5 },
		"huge vocabulary":    func(o *synth.Options) { o.Attrs = math.MaxInt32 },
		"huge lattice":       func(o *synth.Options) { o.Labels, o.MaxLen = 4000, 1<<20 },
		"first overflows":    func(o *synth.Options) { o.First = math.MaxInt64 - 5 },
		"too many workers":   func(o *synth.Options) { o.Workers = 1 << 20 },
	} {
		o := ok
		edit(&o)
		var buf bytes.Buffer
		if _, err := synth.Generate(context.Background(), &buf, o, arrowio.WriterOptions{}); err == nil {
			t.Errorf("%s: no error", name)
		} else if buf.Len() > 0 {
			t.Errorf("%s: %v, but %d bytes written", name, err, buf.Len())
		}
	}
	if _, err := synth.Generate(context.Background(), io.Discard, ok, arrowio.WriterOptions{}); err != nil {
		t.Errorf("valid options: %v", err)
	}
	ok.Sentences = 0
	tab, sum, _ := synthTable(t, ok, arrowio.WriterOptions{})
	if tab.Data.Len() != 0 || sum.Sentences != 0 || len(tab.Data.LabelNames) != ok.Labels || tab.Data.NumAttrs != ok.Attrs {
		t.Errorf("no sentences: read %d sentences, %d labels, %d attributes", tab.Data.Len(), len(tab.Data.LabelNames), tab.Data.NumAttrs)
	}
}

// failWriter fails once n bytes have been written.
type failWriter struct{ n int }

var errFull = errors.New("disk full")

func (f *failWriter) Write(p []byte) (int, error) {
	if len(p) > f.n {
		return 0, errFull
	}
	f.n -= len(p)
	return len(p), nil
}

func TestSynthErrors(t *testing.T) {
	opts := synth.Options{Sentences: 5000, MinLen: 5, MaxLen: 10, Labels: 3, Attrs: 100, PerToken: 3, BatchTokens: 500}
	if _, err := synth.Generate(context.Background(), &failWriter{n: 20000}, opts, arrowio.WriterOptions{}); !errors.Is(err, errFull) {
		t.Errorf("failing writer: got %v, want %v", err, errFull)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := synth.Generate(ctx, io.Discard, opts, arrowio.WriterOptions{}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled context: got %v", err)
	}
}

// BenchmarkSynth measures generation at Penn Treebank scale: K = 45,
// lengths 20–30, 20 attributes per token.
func BenchmarkSynth(b *testing.B) {
	opts := synth.Options{Sentences: 20000, MinLen: 20, MaxLen: 30, Labels: 45, Attrs: 10000, PerToken: 20, Seed: 1}
	tokens := 0
	for b.Loop() {
		sum, err := synth.Generate(context.Background(), io.Discard, opts, arrowio.WriterOptions{})
		if err != nil {
			b.Fatal(err)
		}
		tokens += sum.Tokens
	}
	b.ReportMetric(float64(tokens)/b.Elapsed().Seconds(), "tokens/s")
}
