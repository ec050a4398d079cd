package schemas

import "github.com/apache/arrow-go/v18/arrow"

// The scores table (`eval --arrow`): one row with the overall figures of an
// evaluation. Every score is a fraction in [0, 1], stated in each score
// column's field metadata (KeyUnit = UnitFraction); only conlleval's text
// report prints percentages.
//
//	sentences         int64    sentences scored
//	tokens            int64    tokens scored
//	correct_tokens    int64    tokens whose predicted label is the gold one
//	accuracy          float64  correct_tokens / tokens
//	chunks_gold       int64    gold chunks (null with --no-chunks)
//	chunks_predicted  int64    predicted chunks (null with --no-chunks)
//	chunks_correct    int64    chunks both gold and predicted (null with --no-chunks)
//	precision         float64  chunks_correct / chunks_predicted (null with --no-chunks)
//	recall            float64  chunks_correct / chunks_gold (null with --no-chunks)
//	f1                float64  harmonic mean of precision and recall (null with --no-chunks)
//
// The metadata holds the chunk scheme (KeyScheme) and the prediction table
// scored (KeySource).
const (
	ScoresFormat  = "scores"
	ScoresVersion = "1"

	// KeyScheme holds the chunk rules of the evaluation ("conlleval",
	// "iobes", …, or "none" for token accuracy only).
	KeyScheme = "dualcrf.scheme"

	ColSentences       = "sentences"
	ColTokens          = "tokens"
	ColCorrectTokens   = "correct_tokens"
	ColAccuracy        = "accuracy"
	ColChunksGold      = "chunks_gold"
	ColChunksPredicted = "chunks_predicted"
	ColChunksCorrect   = "chunks_correct"
	ColPrecision       = "precision"
	ColRecall          = "recall"
	ColF1              = "f1"
)

// scoresFields are the columns of the scores table.
func scoresFields() []arrow.Field {
	i64, f64 := arrow.PrimitiveTypes.Int64, arrow.PrimitiveTypes.Float64
	return []arrow.Field{
		{Name: ColSentences, Type: i64},
		{Name: ColTokens, Type: i64},
		{Name: ColCorrectTokens, Type: i64},
		{Name: ColAccuracy, Type: f64, Metadata: unit(UnitFraction)},
		{Name: ColChunksGold, Type: i64, Nullable: true},
		{Name: ColChunksPredicted, Type: i64, Nullable: true},
		{Name: ColChunksCorrect, Type: i64, Nullable: true},
		{Name: ColPrecision, Type: f64, Nullable: true, Metadata: unit(UnitFraction)},
		{Name: ColRecall, Type: f64, Nullable: true, Metadata: unit(UnitFraction)},
		{Name: ColF1, Type: f64, Nullable: true, Metadata: unit(UnitFraction)},
	}
}

// ScoresSchema returns the scores-table schema with the free metadata md.
func ScoresSchema(md map[string]string) (*arrow.Schema, error) {
	m, err := buildMetadata(ScoresFormat, ScoresVersion, md)
	if err != nil {
		return nil, err
	}
	return arrow.NewSchema(scoresFields(), &m), nil
}

// ValidateScoresSchema says precisely what is wrong with a scores-table
// schema: another table or version, a missing or mistyped column.
func ValidateScoresSchema(s *arrow.Schema) error {
	p := &problems{table: "scores table"}
	if !checkFormat(p, s, ScoresFormat, ScoresVersion) {
		return p.err()
	}
	for _, f := range scoresFields() {
		checkColumn(p, s, f.Name, isType(f.Type.ID(), f.Type.String()))
	}
	return p.err()
}
