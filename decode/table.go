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
// sentence by sentence) into ev. name is used in errors. The table is
// checked as it is read: damaged batches, rows out of order, a token
// without a gold or predicted label and an empty table are errors naming
// name and the row.
func EvaluateReader(rr array.RecordReader, name string, ev *Evaluator) error {
	return readPredictions(rr, name, true, func(s *predSentence) error {
		if err := ev.Add(s.gold, s.pred); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		return nil
	})
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
