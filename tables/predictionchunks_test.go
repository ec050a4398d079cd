package tables_test

// PredictionWriter's chunked output against the whole-table writers, with
// predictions from decode.Stream (hence an external test).

import (
	"bytes"
	"context"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"

	"github.com/dualcrf/dualcrf/arrowio"
	"github.com/dualcrf/dualcrf/crf"
	"github.com/dualcrf/dualcrf/crf/crftest"
	"github.com/dualcrf/dualcrf/decode"
	"github.com/dualcrf/dualcrf/tables"
)

// sliceSource hands out prepared chunks, then err.
type sliceSource struct {
	chunks []*tables.FeatureTable
	next   int
	err    error
}

func (s *sliceSource) Next() bool {
	if s.next >= len(s.chunks) {
		return false
	}
	s.next++
	return true
}

func (s *sliceSource) Chunk() *tables.FeatureTable { return s.chunks[s.next-1] }
func (s *sliceSource) Err() error                  { return s.err }

// streamCase is a random model and dataset, and the same dataset cut into
// chunks whose attribute vocabulary is the model's shuffled, with unknown
// attributes and an unknown label mixed in.
type streamCase struct {
	m            *crf.Model
	d            *crf.Dataset // in the model's ids
	chunks       []*tables.FeatureTable
	unknownAttrs int // occurrences of attributes the model lacks, in the chunks
	unknownLabel int // tokens labelled "new", which the model lacks
}

func newStreamCase(seed uint64, real bool) streamCase {
	rng := rand.New(rand.NewPCG(seed, 1))
	const A, K = 20, 4
	d := crftest.RandomDataset(rng, 400, 8, A, K, real)
	lay := crf.Layout{NumAttrs: A, NumLabels: K}
	m := &crf.Model{Layout: lay, Weights: crftest.RandomWeights(rng, lay, 1.5), AttrNames: d.AttrNames, LabelNames: d.LabelNames}
	// The table's vocabulary: five names the model lacks, then the model's
	// shuffled.
	names := []string{"zz0", "zz1", "zz2", "zz3", "zz4"}
	perm := rng.Perm(A)
	tableID := make([]int32, A)
	for _, a := range perm {
		tableID[a] = int32(len(names))
		names = append(names, d.AttrNames[a])
	}
	labels := append(slices.Clone(d.LabelNames), "new")
	c := streamCase{m: m, d: d}
	for i := 0; i < d.Len(); {
		n := 1 + rng.IntN(60)
		hi := min(i+n, d.Len())
		cd := &crf.Dataset{SentStart: []int{0}, AttrStart: []int{0}}
		if real {
			cd.Values = []float64{}
		}
		for s := i; s < hi; s++ {
			for tok := d.SentStart[s]; tok < d.SentStart[s+1]; tok++ {
				for j := d.AttrStart[tok]; j < d.AttrStart[tok+1]; j++ {
					cd.Attrs = append(cd.Attrs, tableID[d.Attrs[j]])
					if real {
						cd.Values = append(cd.Values, d.Values[j])
					}
					if rng.IntN(4) == 0 { // an unknown attribute beside it
						cd.Attrs = append(cd.Attrs, int32(rng.IntN(5)))
						if real {
							cd.Values = append(cd.Values, rng.NormFloat64())
						}
						c.unknownAttrs++
					}
				}
				cd.AttrStart = append(cd.AttrStart, len(cd.Attrs))
				y := d.Labels[tok]
				if rng.IntN(10) == 0 {
					y = int32(K)
					c.unknownLabel++
				}
				cd.Labels = append(cd.Labels, y)
			}
			cd.SentStart = append(cd.SentStart, len(cd.Labels))
		}
		// Chunks name what they have met so far; every name is met by now.
		cd.AttrNames, cd.NumAttrs = names, len(names)
		cd.LabelNames, cd.NumLabels = labels, len(labels)
		c.chunks = append(c.chunks, &tables.FeatureTable{Data: cd, FirstSentence: i})
		i = hi
	}
	return c
}

// TestPredictionWriterChunks writes predictions chunk by chunk and checks
// the output against the whole-table writers: the same Arrow bytes (batches
// cut across chunks at the same rows), the same CoNLL text, and a Parquet
// file of every row.
func TestPredictionWriterChunks(t *testing.T) {
	c := newStreamCase(6, false)
	// The chunks after decoding (model ids), and the whole table.
	var chunks []*tables.FeatureTable
	var preds []*tables.Predictions
	_, err := decode.Stream(context.Background(), c.m, &sliceSource{chunks: c.chunks}, decode.Options{Marginals: true},
		func(tab *tables.FeatureTable, p *tables.Predictions) error {
			chunks, preds = append(chunks, tab), append(preds, p)
			return nil
		})
	if err != nil {
		t.Fatal(err)
	}
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
	_, err = tables.PredictionBatches(whole, c.m, all, md, nil, func(rec arrow.RecordBatch) error {
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
	if err := tables.WriteCoNLL(&wantCoNLL, whole, c.m, all); err != nil {
		t.Fatal(err)
	}
	for _, format := range tables.PredictionFormats() {
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		var got bytes.Buffer
		pw, err := tables.NewPredictionWriter(&got, c.m, tables.PredictionOptions{Format: format, Metadata: md, Mem: mem})
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
			if n := pf.NumRows(); n != int64(c.d.NumTokens()) {
				t.Errorf("parquet: %d rows, want %d", n, c.d.NumTokens())
			}
			pf.Close()
		}
	}
}
