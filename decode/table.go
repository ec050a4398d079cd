package decode

import (
	"bufio"
	"fmt"
	"io"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/dualcrf/dualcrf/crf"
	"github.com/dualcrf/dualcrf/featurize"
	"github.com/dualcrf/dualcrf/pipeline"
	"github.com/dualcrf/dualcrf/schemas"
)

// batchTokens is the target number of rows per prediction record batch;
// batches are cut on sentence boundaries.
const batchTokens = 1 << 16

// PredictionBatches calls emit with the prediction table of t and p in
// record batches cut on sentence boundaries (the record is released after
// emit returns). Gold labels are written when t has any.
func PredictionBatches(t *featurize.Table, m *crf.Model, p *Predictions, md map[string]string, emit func(arrow.RecordBatch) error) (*arrow.Schema, error) {
	d := t.Data
	gold := false
	for _, y := range d.Labels {
		if y >= 0 {
			gold = true
			break
		}
	}
	marg := p.Confidence != nil
	schema, err := schemas.PredictionSchema(t.Columns, gold, marg, md)
	if err != nil {
		return nil, err
	}
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	nc := len(t.Columns)
	sent := b.Field(0).(*array.Int64Builder)
	pos := b.Field(1).(*array.Int32Builder)
	col := 2 + nc
	var goldB *array.StringBuilder
	if gold {
		goldB = b.Field(col).(*array.StringBuilder)
		col++
	}
	predB := b.Field(col).(*array.StringBuilder)
	rows := 0
	flush := func() error {
		if rows == 0 {
			return nil
		}
		rec := b.NewRecordBatch()
		defer rec.Release()
		rows = 0
		return emit(rec)
	}
	for i := 0; i < d.Len(); i++ {
		for tok := d.SentStart[i]; tok < d.SentStart[i+1]; tok++ {
			sent.Append(int64(i))
			pos.Append(int32(tok - d.SentStart[i]))
			for c := 0; c < nc; c++ {
				sb := b.Field(2 + c).(*array.StringBuilder)
				if t.Text != nil {
					sb.Append(t.Text[c][tok])
				} else {
					sb.AppendNull()
				}
			}
			if gold {
				if y := d.Labels[tok]; y >= 0 {
					goldB.Append(d.LabelNames[y])
				} else {
					goldB.AppendNull()
				}
			}
			predB.Append(m.LabelNames[p.Labels[tok]])
			if marg {
				b.Field(col + 1).(*array.Float64Builder).Append(p.Confidence[tok])
				b.Field(col + 2).(*array.Float64Builder).Append(p.LogProb[i])
			}
			rows++
		}
		if rows >= batchTokens {
			if err := flush(); err != nil {
				return schema, err
			}
		}
	}
	return schema, flush()
}

// WriteCoNLL writes the predictions as CoNLL text: per token the pass-through
// columns, the gold label when present, and the predicted label, separated
// by spaces; a blank line after each sentence.
func WriteCoNLL(w io.Writer, t *featurize.Table, m *crf.Model, p *Predictions) error {
	bw := bufio.NewWriterSize(w, 1<<16)
	d := t.Data
	var fields []string
	for i := 0; i < d.Len(); i++ {
		for tok := d.SentStart[i]; tok < d.SentStart[i+1]; tok++ {
			fields = fields[:0]
			if t.Text != nil {
				for c := range t.Columns {
					fields = append(fields, t.Text[c][tok])
				}
			}
			if y := d.Labels[tok]; y >= 0 {
				fields = append(fields, d.LabelNames[y])
			}
			fields = append(fields, m.LabelNames[p.Labels[tok]])
			if _, err := bw.WriteString(strings.Join(fields, " ") + "\n"); err != nil {
				return err
			}
		}
		if err := bw.WriteByte('\n'); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// EvaluateReader scores a prediction table read from rr (gold against pred,
// sentence by sentence) into ev. name is used in errors.
func EvaluateReader(rr array.RecordReader, name string, ev *Evaluator) error {
	schema := rr.Schema()
	if err := schemas.ValidatePredictionSchema(schema, true); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	si := schema.FieldIndices(schemas.ColSentence)[0]
	gi := schema.FieldIndices(schemas.ColGold)[0]
	pi := schema.FieldIndices(schemas.ColPred)[0]
	var gold, pred []string
	cur := int64(-1)
	row := 0
	flush := func() error {
		if len(gold) == 0 {
			return nil
		}
		err := ev.Add(gold, pred)
		gold, pred = gold[:0], pred[:0]
		return err
	}
	stream := 0
	for rr.Next() {
		if s := pipeline.StreamOf(rr); s != stream {
			// Concatenated tables number their sentences from 0 each.
			if err := flush(); err != nil {
				return err
			}
			stream, cur = s, -1
		}
		rec := rr.RecordBatch()
		ss := rec.Column(si).(*array.Int64)
		gs := rec.Column(gi).(*array.String)
		ps := rec.Column(pi).(*array.String)
		for j := 0; j < int(rec.NumRows()); j, row = j+1, row+1 {
			if s := ss.Value(j); s != cur {
				if err := flush(); err != nil {
					return err
				}
				cur = s
			}
			if gs.IsNull(j) {
				return fmt.Errorf("%s: row %d: no gold label to score", name, row)
			}
			if ps.IsNull(j) {
				return fmt.Errorf("%s: row %d: no predicted label", name, row)
			}
			gold = append(gold, gs.Value(j))
			pred = append(pred, ps.Value(j))
		}
	}
	if err := rr.Err(); err != nil {
		return err // the reader's errors name the input already
	}
	if err := flush(); err != nil {
		return err
	}
	if row == 0 {
		return fmt.Errorf("%s: no rows to score", name)
	}
	return nil
}

// Score evaluates predictions p of dataset d (gold labels named by
// d.LabelNames, predictions by the model's labels) with ev's options. It
// fails when d has no gold labels.
func Score(d *crf.Dataset, modelLabels []string, p *Predictions, ev *Evaluator) error {
	var gold, pred []string
	for i := 0; i < d.Len(); i++ {
		gold, pred = gold[:0], pred[:0]
		for tok := d.SentStart[i]; tok < d.SentStart[i+1]; tok++ {
			y := d.Labels[tok]
			if y < 0 {
				return fmt.Errorf("sentence %d token %d: no gold label to score", i, tok-d.SentStart[i])
			}
			gold = append(gold, d.LabelNames[y])
			pred = append(pred, modelLabels[p.Labels[tok]])
		}
		if err := ev.Add(gold, pred); err != nil {
			return err
		}
	}
	return nil
}
