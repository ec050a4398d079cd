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
//	logprob     float64  log p(predicted path | x) of the token's sentence, with --marginals
const (
	PredictionFormat  = "predictions"
	PredictionVersion = "1"

	ColGold       = "gold"
	ColPred       = "pred"
	ColConfidence = "confidence"
	ColLogProb    = "logprob"
)

// PredictionSchema returns the prediction-table schema.
func PredictionSchema(textColumns []string, gold, marginals bool, md map[string]string) (*arrow.Schema, error) {
	m, err := buildMetadata(PredictionFormat, PredictionVersion, md)
	if err != nil {
		return nil, err
	}
	fields := []arrow.Field{
		{Name: ColSentence, Type: arrow.PrimitiveTypes.Int64},
		{Name: ColPosition, Type: arrow.PrimitiveTypes.Int32},
	}
	for _, c := range textColumns {
		if c == ColGold || c == ColPred || c == ColConfidence || c == ColLogProb {
			return nil, fmt.Errorf("prediction schema: text column %q clashes with a fixed column", c)
		}
		fields = append(fields, arrow.Field{Name: c, Type: arrow.BinaryTypes.String, Nullable: true})
	}
	if gold {
		fields = append(fields, arrow.Field{Name: ColGold, Type: arrow.BinaryTypes.String, Nullable: true})
	}
	fields = append(fields, arrow.Field{Name: ColPred, Type: arrow.BinaryTypes.String})
	if marginals {
		fields = append(fields,
			arrow.Field{Name: ColConfidence, Type: arrow.PrimitiveTypes.Float64},
			arrow.Field{Name: ColLogProb, Type: arrow.PrimitiveTypes.Float64})
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
	if needGold {
		if len(s.FieldIndices(ColGold)) == 0 {
			p.addf("no %q column: the input had no gold labels, so there is nothing to score", ColGold)
		} else {
			checkColumn(p, s, ColGold, isType(arrow.STRING, "utf8"))
		}
	}
	return p.err()
}
