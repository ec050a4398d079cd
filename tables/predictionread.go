package tables

// Reading prediction tables (schemas.PredictionSchema) back: the rows of
// each sentence, checked, for scoring (decode.EvaluateReader) and for
// summaries (InspectPredictions).

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/dualcrf/dualcrf/arrowio"
	"github.com/dualcrf/dualcrf/schemas"
)

// PredictedSentence is one sentence of a prediction table, as
// ReadPredictions hands it out.
type PredictedSentence struct {
	Pred []string // per token, the predicted label
	Gold []string // per token, the gold label, "" where there is none
	// HasGold tells the tokens with a gold label (none when the table has
	// no gold column).
	HasGold []bool
	Conf    []float64 // per token, the confidence of the prediction (nil without marginals)
	// ChunkConf is, per token, the probability of the predicted chunk it
	// is in, NaN outside chunks (nil without a chunk_confidence column).
	ChunkConf []float64
}

func (s *PredictedSentence) reset() {
	s.Gold, s.Pred, s.HasGold, s.Conf, s.ChunkConf = s.Gold[:0], s.Pred[:0], s.HasGold[:0], s.Conf[:0], s.ChunkConf[:0]
}

// predColumns are the indices of a prediction table's columns; gold, conf,
// chunk and rank are -1 when absent.
type predColumns struct{ sent, pos, gold, pred, conf, chunk, rank int }

// ReadPredictions reads the prediction table of rr sentence by sentence,
// calling fn with each (valid until fn returns; its label strings stay
// valid). Every batch is validated before it is read; the rows of a
// sentence must be contiguous with positions 0, 1, 2, …, and a sentence
// ends where the sentence id changes or, in concatenated streams, the
// stream does. With needGold a token
// without a gold label is an error. Errors name the input and the row.
// Of an n-best table (a rank column) only the best labelling of each
// sentence, rank 1, is read.
func ReadPredictions(rr array.RecordReader, name string, needGold bool, fn func(*PredictedSentence) error) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%s: corrupt prediction table: %v", name, p)
		}
	}()
	schema := rr.Schema()
	if err := schemas.ValidatePredictionSchema(schema, needGold); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	cols := predColumns{
		sent: schema.FieldIndices(schemas.ColSentence)[0],
		pos:  schema.FieldIndices(schemas.ColPosition)[0],
		gold: -1, conf: -1, chunk: -1, rank: -1,
		pred: schema.FieldIndices(schemas.ColPred)[0],
	}
	if idx := schema.FieldIndices(schemas.ColGold); len(idx) == 1 && schema.Field(idx[0]).Type.ID() == arrow.STRING {
		cols.gold = idx[0]
	}
	if idx := schema.FieldIndices(schemas.ColConfidence); len(idx) == 1 && schema.Field(idx[0]).Type.ID() == arrow.FLOAT64 {
		cols.conf = idx[0]
	}
	if idx := schema.FieldIndices(schemas.ColChunkConf); len(idx) == 1 {
		cols.chunk = idx[0]
	}
	if idx := schema.FieldIndices(schemas.ColRank); len(idx) == 1 {
		cols.rank = idx[0]
	}
	streams, _ := rr.(arrowio.Streamer)
	// Labels are interned: Value aliases the batch's buffer, and a sentence
	// may outlive its batch.
	labels := map[string]string{}
	intern := func(v string) string {
		if l, ok := labels[v]; ok {
			return l
		}
		l := strings.Clone(v)
		labels[l] = l
		return l
	}
	var s PredictedSentence
	cur, stream, row := int64(-1), 0, 0
	flush := func() error {
		if len(s.Pred) == 0 {
			return nil
		}
		err := fn(&s)
		s.reset()
		return err
	}
	for batch := 0; rr.Next(); batch++ {
		rec := rr.RecordBatch()
		if err := arrowio.ValidateBatch(rec); err != nil {
			return fmt.Errorf("%s: batch %d: %w", name, batch, err)
		}
		if streams != nil && streams.Stream() != stream {
			if err := flush(); err != nil {
				return err
			}
			stream, cur = streams.Stream(), -1
		}
		ss := rec.Column(cols.sent).(*array.Int64)
		ps := rec.Column(cols.pos).(*array.Int32)
		preds := rec.Column(cols.pred).(*array.String)
		var golds *array.String
		var confs, chunks *array.Float64
		var ranks *array.Int32
		if cols.chunk >= 0 {
			chunks = rec.Column(cols.chunk).(*array.Float64)
		}
		if cols.rank >= 0 {
			ranks = rec.Column(cols.rank).(*array.Int32)
		}
		if cols.gold >= 0 {
			golds = rec.Column(cols.gold).(*array.String)
		}
		if cols.conf >= 0 {
			confs = rec.Column(cols.conf).(*array.Float64)
		}
		for j := 0; j < int(rec.NumRows()); j, row = j+1, row+1 {
			if ss.IsNull(j) || ps.IsNull(j) || preds.IsNull(j) {
				return fmt.Errorf("%s: row %d: null sentence, position or predicted label", name, row)
			}
			sent, pos := ss.Value(j), ps.Value(j)
			where := func() string { return fmt.Sprintf("%s: row %d (sentence %d position %d)", name, row, sent, pos) }
			if ranks != nil {
				if ranks.IsNull(j) || ranks.Value(j) < 1 {
					return fmt.Errorf("%s: rank %d, want 1 or more", where(), ranks.Value(j))
				}
				if ranks.Value(j) != 1 {
					continue // an alternative labelling: the best one is scored
				}
			}
			if sent != cur {
				if err := flush(); err != nil {
					return err
				}
				cur = sent
			}
			if int(pos) != len(s.Pred) {
				return fmt.Errorf("%s: position %d where %d was due (the rows of a sentence are contiguous with positions 0, 1, 2, …)",
					where(), pos, len(s.Pred))
			}
			s.Pred = append(s.Pred, intern(preds.Value(j)))
			has := golds != nil && golds.IsValid(j)
			if !has && needGold {
				return fmt.Errorf("%s: no gold label to score", where())
			}
			g := ""
			if has {
				g = intern(golds.Value(j))
			}
			s.Gold, s.HasGold = append(s.Gold, g), append(s.HasGold, has)
			if confs != nil {
				c := confs.Value(j)
				if confs.IsNull(j) || !(c >= 0 && c <= 1) {
					return fmt.Errorf("%s: confidence %v, want a probability in [0, 1]", where(), c)
				}
				s.Conf = append(s.Conf, c)
			}
			if chunks != nil {
				c := math.NaN()
				if chunks.IsValid(j) {
					if c = chunks.Value(j); !(c >= 0 && c <= 1) {
						return fmt.Errorf("%s: chunk confidence %v, want a probability in [0, 1] or null", where(), c)
					}
				}
				s.ChunkConf = append(s.ChunkConf, c)
			}
		}
	}
	if err := rr.Err(); err != nil {
		return err // the reader's errors name the input already
	}
	if err := flush(); err != nil {
		return err
	}
	if row == 0 {
		return fmt.Errorf("%s: no rows", name)
	}
	return nil
}

// PredictionSummary describes a prediction table.
type PredictionSummary struct {
	Version   string            // layout version (schemas.KeyVersion)
	Columns   []string          // pass-through text columns
	Sentences int               // sentences
	Tokens    int               // tokens
	MaxLen    int               // tokens in the longest sentence
	Gold      bool              // the table has a gold column
	Labelled  int               // tokens with a gold label
	Correct   int               // labelled tokens predicted right
	Marginals bool              // the table has confidence and logprob
	Ranked    bool              // the table has a rank column (n-best); the figures are of rank 1
	MeanConf  float64           // mean confidence of the predictions (with Marginals)
	Predicted map[string]int    // tokens per predicted label
	Metadata  map[string]string // schema metadata
}

// Accuracy is Correct / Labelled, a fraction in [0, 1]; NaN without labels.
func (s PredictionSummary) Accuracy() float64 {
	if s.Labelled == 0 {
		return math.NaN()
	}
	return float64(s.Correct) / float64(s.Labelled)
}

// PredLabels returns the predicted labels, most frequent first.
func (s PredictionSummary) PredLabels() []string {
	labels := make([]string, 0, len(s.Predicted))
	for l := range s.Predicted {
		labels = append(labels, l)
	}
	sort.Slice(labels, func(i, j int) bool {
		a, b := s.Predicted[labels[i]], s.Predicted[labels[j]]
		return a > b || a == b && labels[i] < labels[j]
	})
	return labels
}

// InspectPredictions reads a prediction table from rr, checking it as
// ReadPredictions does (gold labels may be missing), and summarises it.
func InspectPredictions(rr array.RecordReader, name string) (PredictionSummary, error) {
	schema := rr.Schema()
	md := schemas.MetadataMap(schema)
	s := PredictionSummary{Version: md[schemas.KeyVersion], Metadata: md, Predicted: map[string]int{},
		Gold: len(schema.FieldIndices(schemas.ColGold)) > 0, Marginals: len(schema.FieldIndices(schemas.ColConfidence)) > 0,
		Ranked: len(schema.FieldIndices(schemas.ColRank)) > 0}
	for _, f := range schema.Fields() {
		switch f.Name {
		case schemas.ColSentence, schemas.ColPosition, schemas.ColGold, schemas.ColPred, schemas.ColConfidence, schemas.ColLogProb,
			schemas.ColChunkConf, schemas.ColRank:
		default:
			s.Columns = append(s.Columns, f.Name)
		}
	}
	var confSum float64
	err := ReadPredictions(rr, name, false, func(ps *PredictedSentence) error {
		s.Sentences++
		s.Tokens += len(ps.Pred)
		s.MaxLen = max(s.MaxLen, len(ps.Pred))
		for _, p := range ps.Pred {
			s.Predicted[p]++
		}
		for i, has := range ps.HasGold {
			if has {
				s.Labelled++
				if ps.Gold[i] == ps.Pred[i] {
					s.Correct++
				}
			}
		}
		for _, c := range ps.Conf {
			confSum += c
		}
		return nil
	})
	if err != nil {
		return s, err
	}
	if s.Marginals && s.Tokens > 0 {
		s.MeanConf = confSum / float64(s.Tokens)
	}
	return s, nil
}
