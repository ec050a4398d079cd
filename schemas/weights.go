package schemas

import "github.com/apache/arrow-go/v18/arrow"

// The weights table (`explain -o FILE`): one row per weight of a model, for
// SQL over what a model learnt.
//
//	kind        string   as in the model file: attr (attribute × label), trans (label → next label), bias, start or end
//	label       string   the label the weight scores (a transition's next label)
//	from_label  string   a transition's previous label (null for other kinds)
//	attribute   string   an attr weight's attribute (null for other kinds)
//	template    string   the feature template that made the attribute (null when the model's
//	                     attribute names do not name one, e.g. attributes read from CRFsuite files)
//	weight      float64  the weight
//
// Attribute weights that are zero are left out (in the observed feature space
// they are the pairs never seen in training); transitions, bias, start and
// end are all there. The metadata holds the model's source (KeySource).
const (
	WeightsFormat  = "weights"
	WeightsVersion = "1"

	// The columns; the label column is ColLabel, "label".
	ColKind      = "kind"
	ColFromLabel = "from_label"
	ColAttribute = "attribute"
	ColTemplate  = "template"
	ColWeight    = "weight"
)

// weightsFields are the columns of the weights table.
func weightsFields() []arrow.Field {
	str := arrow.BinaryTypes.String
	return []arrow.Field{
		{Name: ColKind, Type: str},
		{Name: ColLabel, Type: str},
		{Name: ColFromLabel, Type: str, Nullable: true},
		{Name: ColAttribute, Type: str, Nullable: true},
		{Name: ColTemplate, Type: str, Nullable: true},
		{Name: ColWeight, Type: arrow.PrimitiveTypes.Float64},
	}
}

// WeightsSchema returns the weights-table schema with the free metadata md.
func WeightsSchema(md map[string]string) (*arrow.Schema, error) {
	m, err := buildMetadata(WeightsFormat, WeightsVersion, md)
	if err != nil {
		return nil, err
	}
	return arrow.NewSchema(weightsFields(), &m), nil
}

// ValidateWeightsSchema says precisely what is wrong with a weights-table
// schema: another table or version, a missing or mistyped column.
func ValidateWeightsSchema(s *arrow.Schema) error {
	p := &problems{table: "weights table"}
	if !checkFormat(p, s, WeightsFormat, WeightsVersion) {
		return p.err()
	}
	for _, f := range weightsFields() {
		checkColumn(p, s, f.Name, isType(f.Type.ID(), f.Type.String()))
	}
	return p.err()
}
