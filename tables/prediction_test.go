package tables

import (
	"bytes"
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/dualcrf/dualcrf/arrowio"
	"github.com/dualcrf/dualcrf/crf"
	"github.com/dualcrf/dualcrf/schemas"
)

// predCase is a small decoded table: three sentences of a word column with
// gold labels (one token unlabelled), in two chunks, and its predictions.
type predCase struct {
	m      *crf.Model
	chunks []*FeatureTable
	preds  []*Predictions
}

// newPredCase builds the case; marginals adds confidences and
// log-probabilities.
func newPredCase(marginals bool) predCase {
	labels := []string{"B-NP", "B-VP", "I-NP", "O"} // the table's gold label ids
	m := &crf.Model{LabelNames: []string{"B-NP", "I-NP", "B-VP", "O"}}
	mk := func(first int, words [][]string, gold [][]int32, pred [][]int32) (*FeatureTable, *Predictions) {
		d := &crf.Dataset{NumLabels: len(labels), LabelNames: labels, AttrStart: []int{0}}
		t := &FeatureTable{Data: d, Columns: []string{"word"}, Text: [][]string{nil}, FirstSentence: first}
		p := &Predictions{}
		for i := range words {
			d.SentStart = append(d.SentStart, len(d.Labels))
			for k, w := range words[i] {
				d.Labels = append(d.Labels, gold[i][k])
				d.AttrStart = append(d.AttrStart, 0)
				t.Text[0] = append(t.Text[0], w)
				p.Labels = append(p.Labels, pred[i][k])
				if marginals {
					p.Confidence = append(p.Confidence, 0.5+0.1*float64(k))
				}
			}
			if marginals {
				p.LogProb = append(p.LogProb, -0.25*float64(first+i+1))
			}
		}
		d.SentStart = append(d.SentStart, len(d.Labels))
		return t, p
	}
	// gold: B-NP B-VP B-NP I-NP | B-NP - | O; predicted: B-NP B-VP B-NP B-NP | B-NP B-VP | O
	t0, p0 := mk(0, [][]string{{"He", "reckons", "the", "deficit"}, {"It", "rose"}}, [][]int32{{0, 1, 0, 2}, {0, -1}}, [][]int32{{0, 2, 0, 0}, {0, 2}})
	t1, p1 := mk(2, [][]string{{"."}}, [][]int32{{3}}, [][]int32{{3}})
	return predCase{m: m, chunks: []*FeatureTable{t0, t1}, preds: []*Predictions{p0, p1}}
}

// write writes the case with a PredictionWriter.
func (c predCase) write(t *testing.T, opts PredictionOptions) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := NewPredictionWriter(&buf, c.m, opts)
	if err != nil {
		t.Fatal(err)
	}
	for i := range c.chunks {
		if err := w.Write(c.chunks[i], c.preds[i]); err != nil {
			w.Abort()
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// wantSentences are the sentences ReadPredictions must hand out.
var wantSentences = []PredictedSentence{
	{Pred: []string{"B-NP", "B-VP", "B-NP", "B-NP"}, Gold: []string{"B-NP", "B-VP", "B-NP", "I-NP"}, HasGold: []bool{true, true, true, true}},
	{Pred: []string{"B-NP", "B-VP"}, Gold: []string{"B-NP", ""}, HasGold: []bool{true, false}},
	{Pred: []string{"O"}, Gold: []string{"O"}, HasGold: []bool{true}},
}

// readSentences reads a prediction table with ReadPredictions, its Arrow
// buffers from mem.
func readSentences(t *testing.T, data []byte, mem memory.Allocator, needGold bool) ([]PredictedSentence, error) {
	t.Helper()
	rr, err := OpenRecordReader(bytes.NewReader(data), "pred.arrow", arrowio.ReaderOptions{Mem: mem})
	if err != nil {
		t.Fatal(err)
	}
	defer rr.Release()
	var out []PredictedSentence
	err = ReadPredictions(rr, "pred.arrow", needGold, func(s *PredictedSentence) error {
		c := PredictedSentence{Pred: append([]string(nil), s.Pred...), Gold: append([]string(nil), s.Gold...),
			HasGold: append([]bool(nil), s.HasGold...)}
		if len(s.Conf) > 0 {
			c.Conf = append([]float64(nil), s.Conf...)
		}
		out = append(out, c)
		return nil
	})
	return out, err
}

// TestPredictionRoundTrip writes a prediction table in chunks (both IPC
// formats, with and without marginals) and reads it back with
// ReadPredictions and InspectPredictions, every Arrow buffer from a checked
// allocator that must end empty.
func TestPredictionRoundTrip(t *testing.T) {
	for _, format := range []arrowio.Format{arrowio.FormatStream, arrowio.FormatFile} {
		for _, marg := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/marginals=%v", format, marg), func(t *testing.T) {
				mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
				defer mem.AssertSize(t, 0)
				c := newPredCase(marg)
				data := c.write(t, PredictionOptions{IPC: arrowio.WriterOptions{Format: format},
					Metadata: map[string]string{schemas.KeySource: "test.arrow"}, Mem: mem})
				got, err := readSentences(t, data, mem, false)
				if err != nil {
					t.Fatal(err)
				}
				want := append([]PredictedSentence(nil), wantSentences...)
				if marg {
					for i, n := range []int{4, 2, 1} {
						for k := 0; k < n; k++ {
							want[i].Conf = append(want[i].Conf, 0.5+0.1*float64(k))
						}
					}
				}
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("sentences\n%+v\nwant\n%+v", got, want)
				}
				if _, err := readSentences(t, data, mem, true); err == nil || !strings.Contains(err.Error(), "no gold label to score") {
					t.Errorf("needGold: error %v, want one about the unlabelled token", err)
				}
				rr, err := OpenRecordReader(bytes.NewReader(data), "pred.arrow", arrowio.ReaderOptions{Mem: mem})
				if err != nil {
					t.Fatal(err)
				}
				defer rr.Release()
				s, err := InspectPredictions(rr, "pred.arrow")
				if err != nil {
					t.Fatal(err)
				}
				if s.Version != schemas.PredictionVersion || s.Sentences != 3 || s.Tokens != 7 || s.MaxLen != 4 || !s.Gold ||
					s.Labelled != 6 || s.Correct != 5 || s.Marginals != marg || s.Predicted["B-NP"] != 4 ||
					strings.Join(s.Columns, ",") != "word" || s.Metadata[schemas.KeySource] != "test.arrow" {
					t.Errorf("summary %+v", s)
				}
				if marg && math.Abs(s.MeanConf-(0.5+0.6+0.7+0.8+0.5+0.6+0.5)/7) > 1e-12 {
					t.Errorf("mean confidence %v", s.MeanConf)
				}
				if got := strings.Join(s.PredLabels(), " "); got != "B-NP B-VP O" {
					t.Errorf("labels by frequency: %s", got)
				}
			})
		}
	}
}

// TestPredictionCoNLLAndParquet: the CoNLL text is the token's columns,
// gold (when present) and pred, a blank line after each sentence; Parquet
// is written whole (PAR1 at both ends) from a checked allocator that ends
// empty; PredictionBatches gives the rows of the Arrow writer in one go.
func TestPredictionCoNLLAndParquet(t *testing.T) {
	c := newPredCase(true)
	conll := string(c.write(t, PredictionOptions{Format: PredictionCoNLL}))
	want := "He B-NP B-NP\nreckons B-VP B-VP\nthe B-NP B-NP\ndeficit I-NP B-NP\n\nIt B-NP B-NP\nrose B-VP\n\n. O O\n\n"
	if conll != want {
		t.Errorf("CoNLL\n%q\nwant\n%q", conll, want)
	}
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	pq := c.write(t, PredictionOptions{Format: PredictionParquet, Mem: mem})
	if len(pq) < 8 || string(pq[:4]) != "PAR1" || string(pq[len(pq)-4:]) != "PAR1" {
		t.Errorf("Parquet output of %d bytes lacks PAR1 at its ends", len(pq))
	}
	rows := 0
	_, err := PredictionBatches(c.chunks[0], c.m, c.preds[0], nil, mem, func(rec arrow.RecordBatch) error {
		rows += int(rec.NumRows())
		return nil
	})
	if err != nil || rows != 6 {
		t.Errorf("PredictionBatches: %d rows, %v", rows, err)
	}
}

// TestPredictionWriterAbort: a writer given up after a chunk releases its
// memory, in every output format.
func TestPredictionWriterAbort(t *testing.T) {
	for _, format := range PredictionFormats() {
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		c := newPredCase(false)
		var buf bytes.Buffer
		w, err := NewPredictionWriter(&buf, c.m, PredictionOptions{Format: format, Mem: mem})
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Write(c.chunks[0], c.preds[0]); err != nil {
			t.Fatal(err)
		}
		w.Abort()
		mem.AssertSize(t, 0)
	}
}
