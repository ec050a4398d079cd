package decode

import (
	"bytes"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/dualcrf/dualcrf/pipeline"
	"github.com/dualcrf/dualcrf/schemas"
)

// writeScoresTable writes s as a scores table and returns the file.
func writeScoresTable(t *testing.T, s Scores) []byte {
	t.Helper()
	rec, err := ScoresRecord(memory.DefaultAllocator, s, map[string]string{schemas.KeySource: "pred.arrow"})
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Release()
	var buf bytes.Buffer
	w, err := pipeline.NewRecordWriter(&buf, rec.Schema(), pipeline.WriterOptions{Format: pipeline.FormatFile})
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

func readScoresBytes(t *testing.T, data []byte) (Scores, error) {
	t.Helper()
	rr, err := pipeline.OpenRecordReader(bytes.NewReader(data), "scores.arrow", pipeline.ReaderOptions{})
	if err != nil {
		return Scores{}, err
	}
	defer rr.Release()
	return ReadScores(rr, "scores.arrow")
}

// TestScoresTableRoundTrip: the scores table carries its format, version,
// scheme and units, and reads back as the overall figures.
func TestScoresTableRoundTrip(t *testing.T) {
	for _, opts := range []EvalOptions{{}, {NoChunks: true}} {
		want := evaluate(t, opts, predSample...)
		data := writeScoresTable(t, want)
		rr, err := pipeline.OpenRecordReader(bytes.NewReader(data), "scores.arrow", pipeline.ReaderOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if err := schemas.ValidateScoresSchema(rr.Schema()); err != nil {
			t.Error(err)
		}
		for _, col := range []string{schemas.ColAccuracy, schemas.ColPrecision, schemas.ColRecall, schemas.ColF1} {
			f := rr.Schema().Field(rr.Schema().FieldIndices(col)[0])
			if u, _ := f.Metadata.GetValue(schemas.KeyUnit); u != schemas.UnitFraction {
				t.Errorf("column %s states unit %q", col, u)
			}
		}
		rr.Release()
		got, err := readScoresBytes(t, data)
		if err != nil {
			t.Fatal(err)
		}
		if got.Scheme != want.Scheme || got.Sentences != want.Sentences || got.Tokens != want.Tokens ||
			got.CorrectTokens != want.CorrectTokens || got.Accuracy != want.Accuracy || (got.Chunks == nil) != (want.Chunks == nil) {
			t.Fatalf("read back %+v, want %+v", got, want)
		}
		if want.Chunks != nil && got.Chunks.Tally != want.Chunks.Tally {
			t.Errorf("chunks read back %+v, want %+v", got.Chunks.Tally, want.Chunks.Tally)
		}
	}
}

// TestReadScoresRefuses: scores out of [0, 1], inconsistent counts and a
// table of another kind are refused, naming the file.
func TestReadScoresRefuses(t *testing.T) {
	good := evaluate(t, EvalOptions{}, predSample...)
	for _, c := range []struct {
		name string
		edit func(*Scores)
		want string
	}{
		{"percent", func(s *Scores) { s.Chunks.F1 = 80 }, "score 80 out of [0, 1]"},
		{"counts", func(s *Scores) { s.CorrectTokens = s.Tokens + 1 }, "counts out of range"},
		{"chunks", func(s *Scores) { s.Chunks.Correct = s.Chunks.Gold + 1 }, "chunk counts out of range"},
	} {
		s := good
		c2 := *good.Chunks
		s.Chunks = &c2
		c.edit(&s)
		if _, err := readScoresBytes(t, writeScoresTable(t, s)); err == nil || !strings.Contains(err.Error(), "scores.arrow: "+c.want) {
			t.Errorf("%s: error %v, want %q", c.name, err, c.want)
		}
	}
	pred := predTable(t, predRows(predSample...), false, pipeline.FormatFile)
	if _, err := readScoresBytes(t, pred); err == nil || !strings.Contains(err.Error(), `dualcrf.format is "predictions", want "scores"`) {
		t.Errorf("a prediction table read as scores: %v", err)
	}
}
