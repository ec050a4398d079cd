package tables

import (
	"bytes"
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/dualcrf/dualcrf/arrowio"
	"github.com/dualcrf/dualcrf/crf"
	"github.com/dualcrf/dualcrf/schemas"
)

// nbestCase is predCase with two alternatives for the first sentence, one
// for the second, none for the third, and chunk confidences (NaN on O).
func nbestCase() predCase {
	c := newPredCase(false)
	nan := math.NaN()
	c.preds[0].LogProb = []float64{-0.1, -0.2}
	c.preds[0].ChunkConfidence = []float64{0.9, 0.8, 0.7, 0.6, 0.95, 0.85}
	c.preds[0].Alternatives = [][]Alternative{
		{{Labels: []int32{0, 2, 0, 1}, LogProb: -2, ChunkConfidence: []float64{0.9, 0.8, 0.3, 0.3}},
			{Labels: []int32{3, 2, 0, 0}, LogProb: -3, ChunkConfidence: []float64{nan, 0.8, 0.7, 0.6}}},
		{{Labels: []int32{0, 3}, LogProb: -4, ChunkConfidence: []float64{0.5, nan}}},
	}
	c.preds[1].LogProb = []float64{-0.3}
	c.preds[1].ChunkConfidence = []float64{nan}
	c.preds[1].Alternatives = [][]Alternative{{}}
	return c
}

// TestPredictionNBest writes an n-best table with chunk confidence: the
// rows of each sentence's best labelling, then its alternatives by rank;
// ReadPredictions reads the best labelling only, with its chunk
// confidences (NaN where null); CoNLL text has CRF++'s "# RANK P" blocks.
func TestPredictionNBest(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	c := nbestCase()
	data := c.write(t, PredictionOptions{Mem: mem})
	rr, err := OpenRecordReader(bytes.NewReader(data), "pred.arrow", arrowio.ReaderOptions{Mem: mem})
	if err != nil {
		t.Fatal(err)
	}
	var ranks, sents []int
	var preds []string
	var nulls int
	for rr.Next() {
		rec := rr.RecordBatch()
		s := rec.Schema()
		rk := rec.Column(s.FieldIndices(schemas.ColRank)[0]).(*array.Int32)
		se := rec.Column(s.FieldIndices(schemas.ColSentence)[0]).(*array.Int64)
		pr := rec.Column(s.FieldIndices(schemas.ColPred)[0]).(*array.String)
		cc := rec.Column(s.FieldIndices(schemas.ColChunkConf)[0]).(*array.Float64)
		if len(s.FieldIndices(schemas.ColLogProb)) != 1 || len(s.FieldIndices(schemas.ColConfidence)) != 0 {
			t.Fatalf("schema %v: want logprob and no confidence", s)
		}
		for j := 0; j < int(rec.NumRows()); j++ {
			ranks, sents, preds = append(ranks, int(rk.Value(j))), append(sents, int(se.Value(j))), append(preds, pr.Value(j))
			if cc.IsNull(j) {
				nulls++
			}
		}
	}
	rr.Release()
	wantRanks := []int{1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 1, 1, 2, 2, 1}
	wantSents := []int{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2}
	if !reflect.DeepEqual(ranks, wantRanks) || !reflect.DeepEqual(sents, wantSents) || nulls != 3 {
		t.Fatalf("ranks %v sentences %v nulls %d, want %v %v 3", ranks, sents, nulls, wantRanks, wantSents)
	}
	if got := strings.Join(preds[4:8], " "); got != "B-NP B-VP B-NP I-NP" {
		t.Fatalf("rank 2 of sentence 0: %s", got)
	}
	rr, err = OpenRecordReader(bytes.NewReader(data), "pred.arrow", arrowio.ReaderOptions{Mem: mem})
	if err != nil {
		t.Fatal(err)
	}
	defer rr.Release()
	var got []PredictedSentence
	var confs [][]float64
	err = ReadPredictions(rr, "pred.arrow", false, func(s *PredictedSentence) error {
		got = append(got, PredictedSentence{Pred: append([]string(nil), s.Pred...), Gold: append([]string(nil), s.Gold...),
			HasGold: append([]bool(nil), s.HasGold...)})
		confs = append(confs, append([]float64(nil), s.ChunkConf...))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, wantSentences) {
		t.Fatalf("read %+v, want the best labellings %+v", got, wantSentences)
	}
	if confs[0][3] != 0.6 || !math.IsNaN(confs[2][0]) {
		t.Fatalf("chunk confidences %v", confs)
	}

	conll := string(c.write(t, PredictionOptions{Format: PredictionCoNLL}))
	want := "# 0 0.904837\nHe B-NP B-NP\nreckons B-VP B-VP\nthe B-NP B-NP\ndeficit I-NP B-NP\n\n" +
		"# 1 0.135335\nHe B-NP B-NP\nreckons B-VP B-VP\nthe B-NP B-NP\ndeficit I-NP I-NP\n\n" +
		"# 2 0.049787\nHe B-NP O\nreckons B-VP B-VP\nthe B-NP B-NP\ndeficit I-NP B-NP\n\n" +
		"# 0 0.818731\nIt B-NP B-NP\nrose B-VP\n\n# 1 0.018316\nIt B-NP B-NP\nrose O\n\n" +
		"# 0 0.740818\n. O O\n\n"
	if conll != want {
		t.Fatalf("CoNLL\n%s\nwant\n%s", conll, want)
	}
}

// TestNBestTableIsNoTokenTable: an n-best prediction table given where a
// token table is read (featurize, decode --text) is refused saying what it
// holds and what reads it, where it was refused as "sentence 0 has
// position 0 twice"; the same table without ranks reads as a token table.
func TestNBestTableIsNoTokenTable(t *testing.T) {
	data := nbestCase().write(t, PredictionOptions{})
	_, err := OpenTokenReader(bytes.NewReader(data), "pred.arrow", TokenColumns{})
	if !errors.Is(err, ErrRankedLabellings) || !strings.HasPrefix(err.Error(), "pred.arrow: a prediction table of ranked labellings (decode --nbest") {
		t.Fatalf("n-best table read as a token table: %v", err)
	}
	r, err := OpenTokenReader(bytes.NewReader(newPredCase(false).write(t, PredictionOptions{})), "pred.arrow", TokenColumns{})
	if err != nil {
		t.Fatalf("a prediction table without ranks: %v", err)
	}
	r.Release()
}

// TestNBestBatchesBounded: the labellings of a long n-best sentence are
// cut into batches of at most twice the target rows and a labelling (one
// batch held all 300 labellings of 1,000 tokens, 300,000 rows: n·T rows
// at once, however large), and the table reads back whole.
func TestNBestBatchesBounded(t *testing.T) {
	const T, n = 1000, 300
	m := &crf.Model{LabelNames: []string{"A", "B"}}
	d := &crf.Dataset{NumLabels: 2, LabelNames: m.LabelNames, AttrStart: make([]int, T+1), SentStart: []int{0, T}, Labels: make([]int32, T)}
	tab := &FeatureTable{Data: d}
	p := &Predictions{Labels: make([]int32, T), LogProb: []float64{-0.5}, Alternatives: [][]Alternative{make([]Alternative, n-1)}}
	for r := range p.Alternatives[0] {
		a := &p.Alternatives[0][r]
		a.Labels, a.LogProb = make([]int32, T), -1-float64(r)
		a.Labels[r%T] = 1
	}
	var buf bytes.Buffer
	w, err := NewPredictionWriter(&buf, m, PredictionOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(tab, p); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	rr, err := OpenRecordReader(bytes.NewReader(buf.Bytes()), "pred.arrow", arrowio.ReaderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rows, batches := 0, 0
	for rr.Next() {
		got := int(rr.RecordBatch().NumRows())
		if got > 2*batchTokens+T {
			t.Fatalf("a batch of %d rows, more than %d", got, 2*batchTokens+T)
		}
		rows += got
		batches++
	}
	rr.Release()
	if rows != n*T || batches < 2 {
		t.Fatalf("%d rows in %d batches, want %d rows", rows, batches, n*T)
	}
	rr, err = OpenRecordReader(bytes.NewReader(buf.Bytes()), "pred.arrow", arrowio.ReaderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer rr.Release()
	sentences := 0
	if err := ReadPredictions(rr, "pred.arrow", true, func(s *PredictedSentence) error {
		sentences++
		if len(s.Pred) != T {
			t.Fatalf("rank 1 has %d tokens", len(s.Pred))
		}
		return nil
	}); err != nil || sentences != 1 {
		t.Fatalf("read back: %d sentences, %v", sentences, err)
	}
}
