package tables

import (
	"fmt"
	"io"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/dualcrf/dualcrf/arrowio"
	"github.com/dualcrf/dualcrf/schemas"
)

// ScoresRow is the one row of a scores table (schemas.ScoresSchema): the
// overall figures of an evaluation, every score a fraction in [0, 1].
type ScoresRow struct {
	Scheme        string // the chunk scheme, or "none" (schema metadata schemas.KeyScheme)
	Sentences     int
	Tokens        int
	CorrectTokens int
	Accuracy      float64 // CorrectTokens / Tokens
	// Chunks holds the chunk figures; nil when the table has none (eval
	// --no-chunks).
	Chunks *ChunkFigures
}

// ChunkFigures are the chunk counts and scores of a scores table.
type ChunkFigures struct {
	Gold, Predicted, Correct int     // chunks in the gold labels, in the predictions, in both
	Precision, Recall, F1    float64 // Correct/Predicted, Correct/Gold and their harmonic mean
}

// scoresRecord returns s as the one-row scores table (schemas.ScoresSchema),
// its buffers from mem (memory.DefaultAllocator when nil); md is added to
// the schema metadata with the scheme (schemas.KeyScheme). The caller
// releases the record.
func scoresRecord(mem memory.Allocator, s ScoresRow, md map[string]string) (arrow.RecordBatch, error) {
	if mem == nil {
		mem = memory.DefaultAllocator
	}
	all := map[string]string{schemas.KeyScheme: s.Scheme}
	for k, v := range md {
		all[k] = v
	}
	schema, err := schemas.ScoresSchema(all)
	if err != nil {
		return nil, err
	}
	b := array.NewRecordBuilder(mem, schema)
	defer b.Release()
	i64 := func(name string, v int, valid bool) {
		fb := b.Field(schema.FieldIndices(name)[0]).(*array.Int64Builder)
		if valid {
			fb.Append(int64(v))
		} else {
			fb.AppendNull()
		}
	}
	f64 := func(name string, v float64, valid bool) {
		fb := b.Field(schema.FieldIndices(name)[0]).(*array.Float64Builder)
		if valid {
			fb.Append(v)
		} else {
			fb.AppendNull()
		}
	}
	i64(schemas.ColSentences, s.Sentences, true)
	i64(schemas.ColTokens, s.Tokens, true)
	i64(schemas.ColCorrectTokens, s.CorrectTokens, true)
	f64(schemas.ColAccuracy, s.Accuracy, true)
	c, ok := ChunkFigures{}, s.Chunks != nil
	if ok {
		c = *s.Chunks
	}
	i64(schemas.ColChunksGold, c.Gold, ok)
	i64(schemas.ColChunksPredicted, c.Predicted, ok)
	i64(schemas.ColChunksCorrect, c.Correct, ok)
	f64(schemas.ColPrecision, c.Precision, ok)
	f64(schemas.ColRecall, c.Recall, ok)
	f64(schemas.ColF1, c.F1, ok)
	return b.NewRecordBatch(), nil
}

// WriteScores writes s as a scores table (see scoresRecord) to w, in the
// IPC file format unless opts says otherwise, with opts.Mem's buffers.
func WriteScores(w io.Writer, s ScoresRow, md map[string]string, opts arrowio.WriterOptions) error {
	rec, err := scoresRecord(opts.Mem, s, md)
	if err != nil {
		return err
	}
	defer rec.Release()
	return writeRecord(w, rec, opts)
}

// writeRecord writes one record batch as a table, in the IPC file format
// unless opts says otherwise.
func writeRecord(w io.Writer, rec arrow.RecordBatch, opts arrowio.WriterOptions) error {
	if opts.Format == "" {
		opts.Format = arrowio.FormatFile
	}
	rw, err := arrowio.NewRecordWriter(w, rec.Schema(), opts)
	if err != nil {
		return err
	}
	if err := rw.Write(rec); err != nil {
		rw.Abort()
		return err
	}
	return rw.Close()
}

// ReadScores reads a scores table written by scoresRecord. name is used in
// errors. A damaged table, one with another number of rows than one,
// inconsistent counts or a score outside [0, 1] is refused. The record
// batches come from rr, with its allocator.
func ReadScores(rr array.RecordReader, name string) (s ScoresRow, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%s: corrupt scores table: %v", name, p)
		}
	}()
	schema := rr.Schema()
	if err := schemas.ValidateScoresSchema(schema); err != nil {
		return s, fmt.Errorf("%s: %w", name, err)
	}
	s.Scheme = schemas.MetadataMap(schema)[schemas.KeyScheme]
	rows := 0
	for batch := 0; rr.Next(); batch++ {
		rec := rr.RecordBatch()
		if err := arrowio.ValidateBatch(rec); err != nil {
			return s, fmt.Errorf("%s: batch %d: %w", name, batch, err)
		}
		if rows += int(rec.NumRows()); rows > 1 || rec.NumRows() == 0 {
			continue
		}
		if err := readScoresRow(rec, &s); err != nil {
			return s, fmt.Errorf("%s: %w", name, err)
		}
	}
	if err := rr.Err(); err != nil {
		return s, err
	}
	if rows != 1 {
		return s, fmt.Errorf("%s: a scores table has one row, this one %d", name, rows)
	}
	return s, nil
}

// readScoresRow reads row 0 of rec into s and checks it.
func readScoresRow(rec arrow.RecordBatch, s *ScoresRow) error {
	col := func(name string) arrow.Array { return rec.Column(rec.Schema().FieldIndices(name)[0]) }
	i64 := func(name string) (int, bool) {
		a := col(name).(*array.Int64)
		return int(a.Value(0)), a.IsValid(0)
	}
	f64 := func(name string) (float64, bool) {
		a := col(name).(*array.Float64)
		return a.Value(0), a.IsValid(0)
	}
	var ok [4]bool
	s.Sentences, ok[0] = i64(schemas.ColSentences)
	s.Tokens, ok[1] = i64(schemas.ColTokens)
	s.CorrectTokens, ok[2] = i64(schemas.ColCorrectTokens)
	s.Accuracy, ok[3] = f64(schemas.ColAccuracy)
	if ok != [4]bool{true, true, true, true} {
		return fmt.Errorf("null sentences, tokens, correct_tokens or accuracy")
	}
	if s.Sentences < 0 || s.Tokens < 0 || s.CorrectTokens < 0 || s.CorrectTokens > s.Tokens {
		return fmt.Errorf("counts out of range: %d sentences, %d tokens, %d correct", s.Sentences, s.Tokens, s.CorrectTokens)
	}
	var c ChunkFigures
	var valid [6]bool
	c.Gold, valid[0] = i64(schemas.ColChunksGold)
	c.Predicted, valid[1] = i64(schemas.ColChunksPredicted)
	c.Correct, valid[2] = i64(schemas.ColChunksCorrect)
	c.Precision, valid[3] = f64(schemas.ColPrecision)
	c.Recall, valid[4] = f64(schemas.ColRecall)
	c.F1, valid[5] = f64(schemas.ColF1)
	switch valid {
	case [6]bool{}:
	case [6]bool{true, true, true, true, true, true}:
		if c.Gold < 0 || c.Predicted < 0 || c.Correct < 0 || c.Correct > min(c.Gold, c.Predicted) {
			return fmt.Errorf("chunk counts out of range: %d gold, %d predicted, %d correct", c.Gold, c.Predicted, c.Correct)
		}
		s.Chunks = &c
	default:
		return fmt.Errorf("chunk columns partly null")
	}
	for _, v := range []float64{s.Accuracy, c.Precision, c.Recall, c.F1} {
		if !(v >= 0 && v <= 1) || math.IsNaN(v) {
			return fmt.Errorf("score %v out of [0, 1]", v)
		}
	}
	return nil
}
