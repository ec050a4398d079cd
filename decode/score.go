package decode

import (
	"errors"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/dualcrf/dualcrf/crf"
	"github.com/dualcrf/dualcrf/schemas"
	"github.com/dualcrf/dualcrf/tables"
)

// EvaluateReader scores a prediction table read from rr (gold against pred,
// sentence by sentence) into ev. name is used in errors. The table is
// checked as it is read (tables.ReadPredictions): damaged batches, rows out
// of order, a token without a gold or predicted label and an empty table
// are errors naming name and the row. Calibrating (EvalOptions.Calibration)
// labels none of which is a chunk tag is ErrNoChunks.
func EvaluateReader(rr array.RecordReader, name string, ev *Evaluator) error {
	err := tables.ReadPredictions(rr, name, true, func(s *tables.PredictedSentence) error {
		add := ev.Add
		if ev.opts.Calibration {
			if s.ChunkConf == nil {
				return fmt.Errorf("%s: no %s column to calibrate: decode with --chunk-confidence", name, schemas.ColChunkConf)
			}
			add = func(gold, pred []string) error { return ev.AddConfidence(gold, pred, s.ChunkConf) }
		}
		if err := add(s.Gold, s.Pred); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		return nil
	})
	if err == nil && ev.opts.Calibration && ev.tokens > 0 && !ev.anyChunkPrefix() {
		err = fmt.Errorf("%s: %w", name, ErrNoChunks)
	}
	return err
}

// ErrNoChunks refuses a calibration of chunk confidence on labels that are
// not chunk tags.
var ErrNoChunks = errors.New("no gold or predicted label has a chunk prefix (O, B-, I-, E-, S-), so there are no chunks to calibrate: " +
	"score tags such as part-of-speech tags without --calibration (token accuracy)")

// Score evaluates predictions p of dataset d (gold labels named by
// d.LabelNames, predictions by the model's labels) with ev's options. It
// fails when d has no gold labels.
func Score(d *crf.Dataset, modelLabels []string, p *tables.Predictions, ev *Evaluator) error {
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

// Row returns the overall figures of s as the row of a scores table
// (tables.WriteScores); the per-label and per-type figures are not in it.
func (s Scores) Row() tables.ScoresRow {
	r := tables.ScoresRow{Scheme: s.Scheme, Sentences: s.Sentences, Tokens: s.Tokens, CorrectTokens: s.CorrectTokens,
		Accuracy: s.Accuracy}
	if c := s.Chunks; c != nil {
		r.Chunks = &tables.ChunkFigures{Gold: c.Gold, Predicted: c.Predicted, Correct: c.Correct,
			Precision: c.Precision, Recall: c.Recall, F1: c.F1}
	}
	return r
}
