package schemas

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
)

// The prediction table: the feature table's sentence, position and
// pass-through columns, then
//
//	gold        utf8     the gold label, when the input had labels (null when unknown)
//	pred        utf8     the predicted label
//	confidence  float64  p(y_t = pred | x), with --marginals
//	logprob     float64  log p(predicted path | x) of the token's sentence, with --marginals or --nbest
//	chunk_confidence float64 the marginal probability of the predicted chunk the token is in
//	                     (null outside chunks), with --chunk-confidence
//	rank        int32    with --nbest: 1 for the best labelling of the sentence, 2 for the next, …;
//	                     a sentence's rows are its rank 1 tokens, then its rank 2 tokens, …
const (
	PredictionFormat  = "predictions"
	PredictionVersion = "1"

	ColGold       = "gold"
	ColPred       = "pred"
	ColConfidence = "confidence"
	ColLogProb    = "logprob"
	ColChunkConf  = "chunk_confidence"
	ColRank       = "rank"
)

// PredictionColumns says which optional columns a prediction table has.
type PredictionColumns struct {
	Gold            bool // gold
	Confidence      bool // confidence
	LogProb         bool // logprob
	ChunkConfidence bool // chunk_confidence
	Rank            bool // rank
}

// PredictionSchema returns the prediction-table schema with a gold column
// when gold, and confidence and logprob when marginals.
func PredictionSchema(textColumns []string, gold, marginals bool, md map[string]string) (*arrow.Schema, error) {
	return PredictionSchemaFor(textColumns, PredictionColumns{Gold: gold, Confidence: marginals, LogProb: marginals}, md)
}

// PredictionSchemaFor returns the prediction-table schema with the
// optional columns of cols.
func PredictionSchemaFor(textColumns []string, cols PredictionColumns, md map[string]string) (*arrow.Schema, error) {
	m, err := buildMetadata(PredictionFormat, PredictionVersion, md)
	if err != nil {
		return nil, err
	}
	fields := []arrow.Field{
		{Name: ColSentence, Type: arrow.PrimitiveTypes.Int64},
		{Name: ColPosition, Type: arrow.PrimitiveTypes.Int32},
	}
	for _, c := range textColumns {
		if c == ColGold || c == ColPred || c == ColConfidence || c == ColLogProb || c == ColChunkConf || c == ColRank {
			return nil, fmt.Errorf("prediction schema: text column %q clashes with a fixed column", c)
		}
		fields = append(fields, arrow.Field{Name: c, Type: arrow.BinaryTypes.String, Nullable: true})
	}
	if cols.Gold {
		fields = append(fields, arrow.Field{Name: ColGold, Type: arrow.BinaryTypes.String, Nullable: true})
	}
	fields = append(fields, arrow.Field{Name: ColPred, Type: arrow.BinaryTypes.String})
	if cols.Confidence {
		fields = append(fields, arrow.Field{Name: ColConfidence, Type: arrow.PrimitiveTypes.Float64})
	}
	if cols.LogProb {
		fields = append(fields, arrow.Field{Name: ColLogProb, Type: arrow.PrimitiveTypes.Float64})
	}
	if cols.ChunkConfidence {
		fields = append(fields, arrow.Field{Name: ColChunkConf, Type: arrow.PrimitiveTypes.Float64, Nullable: true})
	}
	if cols.Rank {
		fields = append(fields, arrow.Field{Name: ColRank, Type: arrow.PrimitiveTypes.Int32})
	}
	return arrow.NewSchema(fields, &m), nil
}

// ValidatePredictionSchema checks the columns eval needs: sentence, position
// and pred, and gold when needGold (the error then says there is nothing to
// score).
func ValidatePredictionSchema(s *arrow.Schema, needGold bool) error {
	p := &problems{table: "prediction table"}
	if !checkFormat(p, s, PredictionFormat, PredictionVersion) {
		return p.err()
	}
	checkColumn(p, s, ColSentence, isType(arrow.INT64, "int64"))
	checkColumn(p, s, ColPosition, isType(arrow.INT32, "int32"))
	checkColumn(p, s, ColPred, isType(arrow.STRING, "utf8"))
	if len(s.FieldIndices(ColRank)) > 0 {
		checkColumn(p, s, ColRank, isType(arrow.INT32, "int32"))
	}
	if len(s.FieldIndices(ColChunkConf)) > 0 {
		checkColumn(p, s, ColChunkConf, isType(arrow.FLOAT64, "float64"))
	}
	if needGold {
		if len(s.FieldIndices(ColGold)) == 0 {
			p.addf("no %q column: the input had no gold labels, so there is nothing to score", ColGold)
		} else {
			checkColumn(p, s, ColGold, isType(arrow.STRING, "utf8"))
		}
	}
	return p.err()
}
