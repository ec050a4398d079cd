package schemas

import (
	"github.com/apache/arrow-go/v18/arrow"
)

// The model file: an Arrow IPC file with one row per parameter group, so any
// Arrow tool can read a model as a plain table:
//
//	kind     utf8   "attr", "trans", "bias", "start" or "end"
//	name     utf8   the attribute name (attr), the previous label (trans), "" otherwise
//	weights  fixed_size_list<float64>[K]  one weight per label, in label order
//
// Rows come in weight-vector order: every attribute (its id is its row
// number), then K transition rows, then bias, start and end unless the model
// has none. Label names, λ and the training statistics are in the schema
// metadata.
const (
	ModelFormat  = "model"
	ModelVersion = "1"

	ModelKind    = "kind"
	ModelName    = "name"
	ModelWeights = "weights"

	KindAttr  = "attr"
	KindTrans = "trans"
	KindBias  = "bias"
	KindStart = "start"
	KindEnd   = "end"

	// Model metadata keys.
	KeyLabels       = "dualcrf.labels"        // JSON array of label names
	KeyLambda       = "dualcrf.lambda"        // λ, decimal
	KeyN            = "dualcrf.n"             // training sentences
	KeySolver       = "dualcrf.solver"        // sdca or lbfgs
	KeyFeatureSpace = "dualcrf.feature_space" // full or observed
	KeyTransitions  = "dualcrf.transitions"   // all or observed
	KeyBias         = "dualcrf.bias"          // "true" or "false"
	KeyTraining     = "dualcrf.training"      // JSON object of training statistics
)

// ModelSchema returns the model schema for K labels with the free metadata
// md added to the identifying keys.
func ModelSchema(K int, md map[string]string) (*arrow.Schema, error) {
	m, err := buildMetadata(ModelFormat, ModelVersion, md)
	if err != nil {
		return nil, err
	}
	return arrow.NewSchema([]arrow.Field{
		{Name: ModelKind, Type: arrow.BinaryTypes.String},
		{Name: ModelName, Type: arrow.BinaryTypes.String},
		{Name: ModelWeights, Type: arrow.FixedSizeListOf(int32(K), arrow.PrimitiveTypes.Float64)},
	}, &m), nil
}

// ValidateModelSchema says precisely what is wrong with a model schema.
func ValidateModelSchema(s *arrow.Schema) error {
	p := &problems{table: "model"}
	if !checkFormat(p, s, ModelFormat, ModelVersion) {
		return p.err()
	}
	want := map[string]arrow.Type{ModelKind: arrow.STRING, ModelName: arrow.STRING, ModelWeights: arrow.FIXED_SIZE_LIST}
	for _, name := range []string{ModelKind, ModelName, ModelWeights} {
		idx := s.FieldIndices(name)
		if len(idx) == 0 {
			p.addf("missing column %q", name)
			continue
		}
		if got := s.Field(idx[0]).Type; got.ID() != want[name] {
			p.addf("column %q has type %s, want %s", name, got, want[name])
		}
	}
	if md := s.Metadata(); md.FindKey(KeyLabels) < 0 {
		p.addf("schema metadata has no %s key", KeyLabels)
	}
	return p.err()
}
