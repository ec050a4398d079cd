package tables

import (
	"bytes"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/dualcrf/dualcrf/arrowio"
	"github.com/dualcrf/dualcrf/schemas"
)

// sampleScores are the figures of a small evaluation.
func sampleScores(chunks bool) ScoresRow {
	s := ScoresRow{Scheme: "iob2", Sentences: 3, Tokens: 8, CorrectTokens: 6, Accuracy: 0.75}
	if chunks {
		s.Chunks = &ChunkFigures{Gold: 5, Predicted: 4, Correct: 3, Precision: 0.75, Recall: 0.6, F1: 2 * 0.75 * 0.6 / 1.35}
	} else {
		s.Scheme = "none"
	}
	return s
}

// writeScoresTable writes s as a scores table, from mem, and returns the
// file.
func writeScoresTable(t *testing.T, s ScoresRow, mem memory.Allocator) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := WriteScores(&buf, s, map[string]string{schemas.KeySource: "pred.arrow"}, arrowio.WriterOptions{Mem: mem}); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// readScoresBytes reads a scores table with ReadScores, from mem.
func readScoresBytes(t *testing.T, data []byte, mem memory.Allocator) (ScoresRow, error) {
	t.Helper()
	rr, err := OpenRecordReader(bytes.NewReader(data), "scores.arrow", arrowio.ReaderOptions{Mem: mem})
	if err != nil {
		return ScoresRow{}, err
	}
	defer rr.Release()
	return ReadScores(rr, "scores.arrow")
}

// TestScoresTableRoundTrip: the scores table is an IPC file that carries
// its format, version, scheme and units, and reads back as the figures
// written, with and without chunk figures; written and read from a checked
// allocator that ends empty.
func TestScoresTableRoundTrip(t *testing.T) {
	for _, chunks := range []bool{true, false} {
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		want := sampleScores(chunks)
		data := writeScoresTable(t, want, mem)
		if string(data[:6]) != "ARROW1" {
			t.Errorf("the scores table is not an IPC file")
		}
		rr, err := OpenRecordReader(bytes.NewReader(data), "scores.arrow", arrowio.ReaderOptions{Mem: mem})
		if err != nil {
			t.Fatal(err)
		}
		if err := schemas.ValidateScoresSchema(rr.Schema()); err != nil {
			t.Error(err)
		}
		md := schemas.MetadataMap(rr.Schema())
		if md[schemas.KeyScheme] != want.Scheme || md[schemas.KeySource] != "pred.arrow" || md[schemas.KeyVersion] != schemas.ScoresVersion {
			t.Errorf("metadata %v", md)
		}
		for _, col := range []string{schemas.ColAccuracy, schemas.ColPrecision, schemas.ColRecall, schemas.ColF1} {
			f := rr.Schema().Field(rr.Schema().FieldIndices(col)[0])
			if u, _ := f.Metadata.GetValue(schemas.KeyUnit); u != schemas.UnitFraction {
				t.Errorf("column %s states unit %q", col, u)
			}
		}
		rr.Release()
		got, err := readScoresBytes(t, data, mem)
		if err != nil {
			t.Fatal(err)
		}
		if got.Scheme != want.Scheme || got.Sentences != want.Sentences || got.Tokens != want.Tokens ||
			got.CorrectTokens != want.CorrectTokens || got.Accuracy != want.Accuracy || (got.Chunks == nil) != (want.Chunks == nil) {
			t.Fatalf("read back %+v, want %+v", got, want)
		}
		if want.Chunks != nil && *got.Chunks != *want.Chunks {
			t.Errorf("chunks read back %+v, want %+v", *got.Chunks, *want.Chunks)
		}
		mem.AssertSize(t, 0)
	}
}

// TestReadScoresRefuses: scores out of [0, 1], inconsistent counts and a
// table of another kind are refused, naming the file.
func TestReadScoresRefuses(t *testing.T) {
	for _, c := range []struct {
		name string
		edit func(*ScoresRow)
		want string
	}{
		{"percent", func(s *ScoresRow) { s.Chunks.F1 = 80 }, "score 80 out of [0, 1]"},
		{"counts", func(s *ScoresRow) { s.CorrectTokens = s.Tokens + 1 }, "counts out of range"},
		{"chunks", func(s *ScoresRow) { s.Chunks.Correct = s.Chunks.Gold + 1 }, "chunk counts out of range"},
	} {
		s := sampleScores(true)
		c.edit(&s)
		if _, err := readScoresBytes(t, writeScoresTable(t, s, nil), nil); err == nil || !strings.Contains(err.Error(), "scores.arrow: "+c.want) {
			t.Errorf("%s: error %v, want %q", c.name, err, c.want)
		}
	}
	pred := newPredCase(false).write(t, PredictionOptions{IPC: arrowio.WriterOptions{Format: arrowio.FormatFile}})
	if _, err := readScoresBytes(t, pred, nil); err == nil || !strings.Contains(err.Error(), `dualcrf.format is "predictions", want "scores"`) {
		t.Errorf("a prediction table read as scores: %v", err)
	}
}
