package tables_test

// PredictionWriter's chunked output against the whole-table writers.

import (
	"bytes"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"

	"github.com/dualcrf/dualcrf/arrowio"
	"github.com/dualcrf/dualcrf/crf"
	"github.com/dualcrf/dualcrf/crf/crftest"
	"github.com/dualcrf/dualcrf/tables"
)

// predictedChunks is a random model, and a random dataset in its ids cut
// into chunks of 1–60 sentences, with a gold label the model lacks ("new")
// on some tokens and random predictions (labels, confidences, and log
// probabilities) for every chunk: what decode hands the writer.
func predictedChunks(seed uint64) (*crf.Model, []*tables.FeatureTable, []*tables.Predictions, int) {
	rng := rand.New(rand.NewPCG(seed, 1))
	const A, K = 20, 4
	d := crftest.RandomDataset(rng, 400, 8, A, K, false)
	lay := crf.Layout{NumAttrs: A, NumLabels: K}
	m := &crf.Model{Layout: lay, Weights: crftest.RandomWeights(rng, lay, 1.5), AttrNames: d.AttrNames, LabelNames: d.LabelNames}
	labels := append(slices.Clone(d.LabelNames), "new")
	var chunks []*tables.FeatureTable
	var preds []*tables.Predictions
	for i := 0; i < d.Len(); {
		hi := min(i+1+rng.IntN(60), d.Len())
		cd := &crf.Dataset{SentStart: []int{0}, AttrStart: []int{0}, AttrNames: d.AttrNames, NumAttrs: A, LabelNames: labels, NumLabels: K + 1}
		p := &tables.Predictions{}
		for s := i; s < hi; s++ {
			for tok := d.SentStart[s]; tok < d.SentStart[s+1]; tok++ {
				cd.Attrs = append(cd.Attrs, d.Attrs[d.AttrStart[tok]:d.AttrStart[tok+1]]...)
				cd.AttrStart = append(cd.AttrStart, len(cd.Attrs))
				y := d.Labels[tok]
				if rng.IntN(10) == 0 {
					y = K
				}
				cd.Labels = append(cd.Labels, y)
				p.Labels = append(p.Labels, int32(rng.IntN(K)))
				p.Confidence = append(p.Confidence, rng.Float64())
			}
			cd.SentStart = append(cd.SentStart, len(cd.Labels))
			p.LogProb = append(p.LogProb, -10*rng.Float64())
		}
		chunks = append(chunks, &tables.FeatureTable{Data: cd, FirstSentence: i})
		preds = append(preds, p)
		i = hi
	}
	return m, chunks, preds, d.NumTokens()
}

// TestPredictionWriterChunks writes predictions chunk by chunk and checks
// the output against the whole-table writers: the same Arrow bytes (batches
// cut across chunks at the same rows), the same CoNLL text, and a Parquet
// file of every row.
func TestPredictionWriterChunks(t *testing.T) {
	m, chunks, preds, tokens := predictedChunks(6)
	whole := &tables.FeatureTable{Data: &crf.Dataset{SentStart: []int{0}, LabelNames: chunks[0].Data.LabelNames}}
	all := &tables.Predictions{}
	for k, tab := range chunks {
		d := tab.Data
		base := whole.Data.NumTokens()
		for i := 1; i <= d.Len(); i++ {
			whole.Data.SentStart = append(whole.Data.SentStart, base+d.SentStart[i])
		}
		whole.Data.Labels = append(whole.Data.Labels, d.Labels...)
		all.Labels = append(all.Labels, preds[k].Labels...)
		all.Confidence = append(all.Confidence, preds[k].Confidence...)
		all.LogProb = append(all.LogProb, preds[k].LogProb...)
	}
	md := map[string]string{"dualcrf.source": "m.arrow"}
	var wantArrow bytes.Buffer
	rw := (arrowio.RecordWriter)(nil)
	_, err := tables.PredictionBatches(whole, m, all, md, nil, func(rec arrow.RecordBatch) error {
		if rw == nil {
			var err error
			if rw, err = arrowio.NewRecordWriter(&wantArrow, rec.Schema(), arrowio.WriterOptions{}); err != nil {
				return err
			}
		}
		return rw.Write(rec)
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := rw.Close(); err != nil {
		t.Fatal(err)
	}
	var wantCoNLL bytes.Buffer
	if err := tables.WriteCoNLL(&wantCoNLL, whole, m, all); err != nil {
		t.Fatal(err)
	}
	for _, format := range tables.PredictionFormats() {
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		var got bytes.Buffer
		pw, err := tables.NewPredictionWriter(&got, m, tables.PredictionOptions{Format: format, Metadata: md, Mem: mem})
		if err != nil {
			t.Fatal(err)
		}
		for k := range chunks {
			if err := pw.Write(chunks[k], preds[k]); err != nil {
				t.Fatalf("%s: %v", format, err)
			}
		}
		if err := pw.Close(); err != nil {
			t.Fatalf("%s: %v", format, err)
		}
		mem.AssertSize(t, 0)
		switch format {
		case tables.PredictionArrow:
			if !bytes.Equal(got.Bytes(), wantArrow.Bytes()) {
				t.Errorf("arrow: chunked output (%d bytes) differs from the whole table's (%d bytes)", got.Len(), wantArrow.Len())
			}
		case tables.PredictionCoNLL:
			if got.String() != wantCoNLL.String() {
				t.Errorf("conll: chunked output differs from the whole table's")
			}
		case tables.PredictionParquet:
			pf, err := file.NewParquetReader(bytes.NewReader(got.Bytes()))
			if err != nil {
				t.Fatal(err)
			}
			if n := pf.NumRows(); n != int64(tokens) {
				t.Errorf("parquet: %d rows, want %d", n, tokens)
			}
			pf.Close()
		}
	}
}
