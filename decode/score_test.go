package decode

import (
	"bytes"
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/dualcrf/dualcrf/arrowio"
	"github.com/dualcrf/dualcrf/schemas"
	"github.com/dualcrf/dualcrf/tables"
)

// predRow is one row of a hand-made prediction table.
type predRow struct {
	sent      int64
	pos       int32
	word      string
	gold      string // "" = null
	pred      string
	confident float64
}

// predRows lays sentences out as prediction-table rows, with confidence 0.9.
func predRows(sents ...sentence) []predRow {
	var rows []predRow
	for i, s := range sents {
		for t := range s.pred {
			rows = append(rows, predRow{sent: int64(i), pos: int32(t), word: "w", gold: s.gold[t], pred: s.pred[t], confident: 0.9})
		}
	}
	return rows
}

// predTable writes rows as a prediction table (a word column, gold, pred
// and with marginals confidence and logprob) in the given IPC format.
func predTable(t testing.TB, rows []predRow, marginals bool, format arrowio.Format) []byte {
	t.Helper()
	schema, err := schemas.PredictionSchema([]string{"word"}, true, marginals, nil)
	if err != nil {
		t.Fatal(err)
	}
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	for _, r := range rows {
		b.Field(0).(*array.Int64Builder).Append(r.sent)
		b.Field(1).(*array.Int32Builder).Append(r.pos)
		b.Field(2).(*array.StringBuilder).Append(r.word)
		if r.gold == "" {
			b.Field(3).(*array.StringBuilder).AppendNull()
		} else {
			b.Field(3).(*array.StringBuilder).Append(r.gold)
		}
		b.Field(4).(*array.StringBuilder).Append(r.pred)
		if marginals {
			b.Field(5).(*array.Float64Builder).Append(r.confident)
			b.Field(6).(*array.Float64Builder).Append(-0.5)
		}
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	var buf bytes.Buffer
	w, err := arrowio.NewRecordWriter(&buf, schema, arrowio.WriterOptions{Format: format})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// evalBytes scores the prediction table data as EvaluateReader reads it
// from a file named "pred.arrow"; a panic fails the test.
func evalBytes(t *testing.T, data []byte) (s Scores, err error) {
	return evalBytesWith(t, data, EvalOptions{})
}

// evalBytesWith is evalBytes with the evaluator's options.
func evalBytesWith(t *testing.T, data []byte, opts EvalOptions) (s Scores, err error) {
	t.Helper()
	defer func() {
		if p := recover(); p != nil {
			t.Fatalf("EvaluateReader panicked on %d bytes: %v", len(data), p)
		}
	}()
	rr, err := tables.OpenRecordReader(bytes.NewReader(data), "pred.arrow", arrowio.ReaderOptions{})
	if err != nil {
		return s, err
	}
	defer rr.Release()
	ev := NewEvaluator(opts)
	if err := EvaluateReader(rr, "pred.arrow", ev); err != nil {
		return s, err
	}
	return ev.Result(), nil
}

var predSample = []sentence{
	{tags("B-NP I-NP B-VP O"), tags("B-NP I-NP B-VP O")},
	{tags("B-PP B-NP I-NP"), tags("B-PP B-NP B-NP")},
	{tags("O"), tags("B-NP")},
}

// TestEvaluateReaderRows: rows that are not a sentence's positions 0, 1, 2,
// … in order, and tokens without a gold or predicted label, are errors
// naming the file and the row.
func TestEvaluateReaderRows(t *testing.T) {
	good := predRows(predSample...)
	if s, err := evalBytes(t, predTable(t, good, false, arrowio.FormatStream)); err != nil || s.Sentences != 3 || s.Tokens != 8 {
		t.Fatalf("intact table: %d sentences, %d tokens, error %v", s.Sentences, s.Tokens, err)
	}
	for _, c := range []struct {
		name string
		edit func([]predRow) []predRow
		want string
	}{
		{"position skipped", func(r []predRow) []predRow { r[2].pos = 3; return r }, "pred.arrow: row 2 (sentence 0 position 3): position 3 where 2 was due"},
		{"sentence split", func(r []predRow) []predRow { r[1].sent = 7; return r }, "pred.arrow: row 1 (sentence 7 position 1)"},
		{"no gold", func(r []predRow) []predRow { r[5].gold = ""; return r }, "pred.arrow: row 5 (sentence 1 position 1): no gold label to score"},
	} {
		rows := c.edit(append([]predRow(nil), good...))
		_, err := evalBytes(t, predTable(t, rows, false, arrowio.FormatFile))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.name, err, c.want)
		}
	}
}

// TestEvaluateReaderCorrupt damages prediction tables (stream and file,
// with and without marginals) at random: EvaluateReader returns an error
// naming the file or scores, and never panics.
func TestEvaluateReaderCorrupt(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, format := range []arrowio.Format{arrowio.FormatStream, arrowio.FormatFile} {
		for _, marg := range []bool{false, true} {
			data := predTable(t, predRows(predSample...), marg, format)
			for i := 0; i < 1000; i++ {
				b := append([]byte(nil), data...)
				for k := 1 + rng.IntN(3); k > 0; k-- {
					b[rng.IntN(len(b))] ^= byte(1 + rng.IntN(255))
				}
				if _, err := evalBytes(t, b); err != nil && !strings.HasPrefix(err.Error(), "pred.arrow") {
					t.Fatalf("error %q does not name the file", err)
				}
			}
		}
	}
}

// streamReader is a RecordReader over several readers, one after the
// other, that tells with Stream which one the current batch came from, as
// arrowio's reader does for concatenated IPC streams.
type streamReader struct {
	array.RecordReader
	rest   []array.RecordReader
	stream int
}

func (s *streamReader) Stream() int { return s.stream }

func (s *streamReader) Next() bool {
	for {
		if s.RecordReader.Next() {
			return true
		}
		if len(s.rest) == 0 {
			return false
		}
		s.RecordReader, s.rest = s.rest[0], s.rest[1:]
		s.stream++
	}
}

// TestEvaluateReaderStreams: in concatenated streams, sentence ids restart,
// so a change of stream ends a sentence even when the id stays the same.
func TestEvaluateReaderStreams(t *testing.T) {
	var readers []array.RecordReader
	for _, s := range []sentence{predSample[0], predSample[0]} {
		rr, err := tables.OpenRecordReader(bytes.NewReader(predTable(t, predRows(s), false, arrowio.FormatStream)), "pred.arrow", arrowio.ReaderOptions{})
		if err != nil {
			t.Fatal(err)
		}
		defer rr.Release()
		readers = append(readers, rr)
	}
	ev := NewEvaluator(EvalOptions{})
	if err := EvaluateReader(&streamReader{RecordReader: readers[0], rest: readers[1:]}, "pred.arrow", ev); err != nil {
		t.Fatal(err)
	}
	if s := ev.Result(); s.Sentences != 2 || s.Tokens != 8 {
		t.Errorf("two streams of one sentence each (both sentence 0): %d sentences, %d tokens; want 2, 8", s.Sentences, s.Tokens)
	}
}

// FuzzEvaluateReader feeds arbitrary bytes, seeded with prediction tables
// in both IPC formats, to EvaluateReader: an error naming the file or
// scores, never a panic.
func FuzzEvaluateReader(f *testing.F) {
	for _, format := range []arrowio.Format{arrowio.FormatStream, arrowio.FormatFile} {
		for _, marg := range []bool{false, true} {
			f.Add(predTable(f, predRows(predSample...), marg, format))
		}
	}
	f.Add(nbestTable(f))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, opts := range []EvalOptions{{}, {Calibration: true}} {
			s, err := evalBytesWith(t, data, opts)
			if err != nil {
				if !strings.HasPrefix(err.Error(), "pred.arrow") {
					t.Fatalf("error %q does not name the file", err)
				}
				continue
			}
			if s.Tokens == 0 || s.Accuracy < 0 || s.Accuracy > 1 || opts.Calibration && (s.Calibration == nil || s.Calibration.ECE < 0 || s.Calibration.ECE > 1) {
				t.Fatalf("scores of an accepted table: %+v", s)
			}
		}
	})
}

// nbestTable is a prediction table decoded with n-best, constraints and
// chunk confidence from a random BIO model.
func nbestTable(tb testing.TB) []byte {
	m, d := bioModel(21, 6, 5)
	d.Labels = make([]int32, d.NumTokens()) // gold: O
	tab := &tables.FeatureTable{Data: d}
	p, err := decodeFeatureTable(context.Background(), m, tab, Options{NBest: 3, ChunkConfidence: true, Marginals: true, Constraints: ConstraintsBIO})
	if err != nil {
		tb.Fatal(err)
	}
	var buf bytes.Buffer
	w, err := tables.NewPredictionWriter(&buf, m, tables.PredictionOptions{})
	if err != nil {
		tb.Fatal(err)
	}
	if err := w.Write(tab, p); err != nil {
		tb.Fatal(err)
	}
	if err := w.Close(); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

// TestNBestTableEvaluates: eval scores an n-best table's best labellings
// and calibrates their chunk confidence.
func TestNBestTableEvaluates(t *testing.T) {
	s, err := evalBytesWith(t, nbestTable(t), EvalOptions{Calibration: true})
	if err != nil {
		t.Fatal(err)
	}
	if s.Sentences != 6 || s.Calibration == nil || s.Calibration.Chunks != s.Chunks.Predicted {
		t.Fatalf("scores %+v", s)
	}
}

// TestScoresRow: the row of the scores table holds the overall figures.
func TestScoresRow(t *testing.T) {
	for _, opts := range []EvalOptions{{}, {NoChunks: true}} {
		s := evaluate(t, opts, predSample...)
		r := s.Row()
		if r.Scheme != s.Scheme || r.Sentences != s.Sentences || r.Tokens != s.Tokens || r.CorrectTokens != s.CorrectTokens ||
			r.Accuracy != s.Accuracy || (r.Chunks == nil) != (s.Chunks == nil) {
			t.Fatalf("row %+v of %+v", r, s)
		}
		if c := s.Chunks; c != nil && *r.Chunks != (tables.ChunkFigures{Gold: c.Gold, Predicted: c.Predicted, Correct: c.Correct,
			Precision: c.Precision, Recall: c.Recall, F1: c.F1}) {
			t.Errorf("chunk figures %+v of %+v", *r.Chunks, c.Tally)
		}
	}
}

// TestCalibrationWithoutChunks: calibrating tags that are not chunk tags
// (part-of-speech tags, decoded with chunk confidence) is refused saying
// there are no chunks to calibrate, and chunk tags without a predicted
// chunk print that there is none, where the report printed "precision
// NaN%".
func TestCalibrationWithoutChunks(t *testing.T) {
	m, d := bioModel(51, 5, 4)
	m.LabelNames = []string{"NN", "VB", "DT", "IN", "JJ"}
	d.LabelNames = m.LabelNames
	tab := &tables.FeatureTable{Data: d}
	p, err := decodeFeatureTable(context.Background(), m, tab, Options{ChunkConfidence: true})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	w, err := tables.NewPredictionWriter(&buf, m, tables.PredictionOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(tab, p); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := evalBytesWith(t, buf.Bytes(), EvalOptions{Calibration: true}); !errors.Is(err, ErrNoChunks) ||
		!strings.HasPrefix(err.Error(), "pred.arrow: no gold or predicted label has a chunk prefix") {
		t.Fatalf("part-of-speech tags calibrated: %v", err)
	}
	if _, err := evalBytesWith(t, buf.Bytes(), EvalOptions{AutoNoChunks: true}); err != nil {
		t.Fatalf("without calibration: %v", err)
	}

	ev := NewEvaluator(EvalOptions{Calibration: true})
	nan := math.NaN()
	if err := ev.AddConfidence(tags("B-NP I-NP O"), tags("O O O"), []float64{nan, nan, nan}); err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	if err := ev.WriteConlleval(&out); err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(out.String(), "\nchunk confidence calibration: no predicted chunks to calibrate\n") || strings.Contains(out.String(), "NaN") {
		t.Fatalf("report without predicted chunks:\n%s", out.String())
	}
}
