package decode_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

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

// TestStreamMatchesDecode streams chunks of another vocabulary through the
// decoder and checks, chunk by chunk and in order, the same predictions as
// Decode of the whole dataset in the model's ids, and the coverage counts.
func TestStreamMatchesDecode(t *testing.T) {
	for _, real := range []bool{false, true} {
		for _, workers := range []int{1, 3} {
			c := newStreamCase(uint64(workers), real)
			opts := decode.Options{Marginals: true, Workers: workers}
			want, err := decode.Decode(context.Background(), c.m, c.d, opts)
			if err != nil {
				t.Fatal(err)
			}
			next := 0 // sentences written so far
			cov, err := decode.Stream(context.Background(), c.m, &sliceSource{chunks: c.chunks}, opts,
				func(tab *tables.FeatureTable, p *tables.Predictions) error {
					if tab.FirstSentence != next {
						return fmt.Errorf("chunk of sentence %d written after %d sentences", tab.FirstSentence, next)
					}
					off := c.d.SentStart[next]
					for tok, y := range p.Labels {
						if y != want.Labels[off+tok] || p.Confidence[tok] != want.Confidence[off+tok] {
							return fmt.Errorf("sentence %d…: token %d predicted %d (%v), want %d (%v)", next, tok,
								y, p.Confidence[tok], want.Labels[off+tok], want.Confidence[off+tok])
						}
					}
					for i, lp := range p.LogProb {
						if lp != want.LogProb[next+i] {
							return fmt.Errorf("sentence %d: log p %v, want %v", next+i, lp, want.LogProb[next+i])
						}
					}
					if tab.Data.NumAttrs != c.m.Layout.NumAttrs {
						return fmt.Errorf("chunk given to write has %d attributes, not the model's %d", tab.Data.NumAttrs, c.m.Layout.NumAttrs)
					}
					next += tab.Data.Len()
					return nil
				})
			if err != nil {
				t.Fatalf("real %v workers %d: %v", real, workers, err)
			}
			if next != c.d.Len() {
				t.Fatalf("%d sentences written, want %d", next, c.d.Len())
			}
			wantCov := tables.Coverage{Tokens: c.d.NumTokens(), Attrs: len(c.d.Attrs) + c.unknownAttrs, UnknownAttrs: c.unknownAttrs,
				Labelled: c.d.NumTokens(), UnknownLabels: map[string]int{"new": c.unknownLabel}}
			if fmt.Sprint(cov) != fmt.Sprint(wantCov) {
				t.Fatalf("coverage %+v, want %+v", cov, wantCov)
			}
		}
	}
}

// TestStreamErrors checks that an error of the writer, of the source or of
// the context stops the stream and is returned.
func TestStreamErrors(t *testing.T) {
	c := newStreamCase(5, false)
	if len(c.chunks) < 4 {
		t.Fatalf("%d chunks", len(c.chunks))
	}
	stop := errors.New("disk full")
	calls := 0
	_, err := decode.Stream(context.Background(), c.m, &sliceSource{chunks: c.chunks}, decode.Options{},
		func(*tables.FeatureTable, *tables.Predictions) error {
			if calls++; calls == 2 {
				return stop
			}
			return nil
		})
	if !errors.Is(err, stop) || calls != 2 {
		t.Fatalf("writer failing at chunk 2: %v after %d calls", err, calls)
	}
	bad := errors.New("truncated input")
	calls = 0
	_, err = decode.Stream(context.Background(), c.m, &sliceSource{chunks: c.chunks[:2], err: bad}, decode.Options{},
		func(*tables.FeatureTable, *tables.Predictions) error { calls++; return nil })
	if !errors.Is(err, bad) || calls != 2 {
		t.Fatalf("source failing after 2 chunks: %v after %d calls", err, calls)
	}
	ctx, cancel := context.WithCancel(context.Background())
	calls = 0
	_, err = decode.Stream(ctx, c.m, &sliceSource{chunks: c.chunks}, decode.Options{},
		func(*tables.FeatureTable, *tables.Predictions) error {
			calls++
			cancel()
			return nil
		})
	if !errors.Is(err, context.Canceled) || calls == len(c.chunks) {
		t.Fatalf("cancelled at the first chunk: %v after %d of %d chunks", err, calls, len(c.chunks))
	}
}

// TestPredictionWriterLateGold checks that gold labels appearing after a
// first chunk without any are an error, not a silently dropped column.
func TestPredictionWriterLateGold(t *testing.T) {
	c := newStreamCase(7, false)
	var chunks []*tables.FeatureTable
	var preds []*tables.Predictions
	_, err := decode.Stream(context.Background(), c.m, &sliceSource{chunks: c.chunks[:2]}, decode.Options{},
		func(tab *tables.FeatureTable, p *tables.Predictions) error {
			chunks, preds = append(chunks, tab), append(preds, p)
			return nil
		})
	if err != nil {
		t.Fatal(err)
	}
	for i := range chunks[0].Data.Labels {
		chunks[0].Data.Labels[i] = -1
	}
	pw, err := tables.NewPredictionWriter(&bytes.Buffer{}, c.m, tables.PredictionOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer pw.Abort()
	if err := pw.Write(chunks[0], preds[0]); err != nil {
		t.Fatal(err)
	}
	err = pw.Write(chunks[1], preds[1])
	if err == nil || !strings.Contains(err.Error(), "has gold labels") {
		t.Fatalf("gold labels after an unlabelled first chunk: %v", err)
	}
}

// TestStreamTableReader streams a feature table whose label dictionary
// grows by deltas through FeatureReader in small chunks, and checks the
// predictions and gold labels against the whole table decoded at once.
func TestStreamTableReader(t *testing.T) {
	c := newStreamCase(8, true)
	d := c.d
	// Write the dataset as a feature table in which label "d" is left out
	// of the first half, so that it first appears in a later batch as a
	// dictionary delta.
	late := func(i, tok int) bool { return i < d.Len()/2 && d.LabelNames[d.Labels[tok]] == "d" }
	gold := make([]string, d.NumTokens())
	var buf bytes.Buffer
	w, err := tables.NewFeatureWriter(&buf, tables.FeatureOptions{AttrNames: d.AttrNames, BatchTokens: 50})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < d.Len(); i++ {
		lo, hi := d.SentStart[i], d.SentStart[i+1]
		s := &tables.FeatureSentence{}
		for tok := lo; tok < hi; tok++ {
			if !late(i, tok) {
				gold[tok] = d.LabelNames[d.Labels[tok]]
			}
			s.Labels = append(s.Labels, gold[tok])
			s.Attrs = append(s.Attrs, d.Attrs[d.AttrStart[tok]:d.AttrStart[tok+1]])
			s.Values = append(s.Values, d.Values[d.AttrStart[tok]:d.AttrStart[tok+1]])
		}
		if err := w.Write(s); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	want, err := decode.Decode(context.Background(), c.m, d, decode.Options{Marginals: true})
	if err != nil {
		t.Fatal(err)
	}
	rr, err := tables.OpenRecordReader(bytes.NewReader(buf.Bytes()), "t.arrow", arrowio.ReaderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer rr.Release()
	tr, err := tables.NewFeatureReader(rr, "t.arrow", tables.FeatureReadOptions{ChunkTokens: 30})
	if err != nil {
		t.Fatal(err)
	}
	tok, chunks := 0, 0
	cov, err := decode.Stream(context.Background(), c.m, tr, decode.Options{Marginals: true, Workers: 2},
		func(tab *tables.FeatureTable, p *tables.Predictions) error {
			for j, y := range p.Labels {
				if y != want.Labels[tok] || p.Confidence[j] != want.Confidence[tok] {
					return fmt.Errorf("token %d: predicted %d, want %d", tok, y, want.Labels[tok])
				}
				g := ""
				if y := tab.Data.Labels[j]; y >= 0 {
					g = tab.Data.LabelNames[y]
				}
				if g != gold[tok] {
					return fmt.Errorf("token %d: gold %q, want %q", tok, g, gold[tok])
				}
				tok++
			}
			chunks++
			return nil
		})
	if err != nil {
		t.Fatal(err)
	}
	labelled := 0
	for _, g := range gold {
		if g != "" {
			labelled++
		}
	}
	if tok != d.NumTokens() || chunks < 20 || cov.UnknownAttrs != 0 || cov.UnknownLabelled() != 0 || cov.Labelled != labelled {
		t.Fatalf("%d tokens of %d in %d chunks; coverage %+v", tok, d.NumTokens(), chunks, cov)
	}
}
