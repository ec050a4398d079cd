package schemas

import "github.com/apache/arrow-go/v18/arrow"

// The training log: one row per epoch (epoch 0 is the initial point).
// Certified quantities are null in epochs without a certificate pass;
// held-out metrics are null without --valid.
//
//	epoch              int32    0 for the initial point
//	steps              int64    steps so far (SDCA: sentence updates; SAG: line searches made; L-BFGS: iterations)
//	seconds            float64  training time of the epoch, certificate passes excluded
//	total_seconds      float64  training time so far
//	cert_seconds       float64  time of the epoch's certificate pass
//	primal             float64  P(w), when certified
//	dual               float64  D(μ), when certified
//	gap                float64  the certified duality gap, when certified
//	identity_residual  float64  residual of the gap identity P − D = mean block gap, when certified
//	gap_estimate       float64  the sampler's running gap estimate
//	line_search        int64    line-search evaluations in the epoch
//	valid_accuracy     float64  held-out token accuracy, a fraction in [0, 1]
//	valid_f1           float64  held-out chunk F1, a fraction in [0, 1]
//	oracle_calls       int64    oracle calls so far (forward–backward passes over one sentence), certificates excluded
//	cert_oracle_calls  int64    oracle calls of the certificate passes so far
//	updates            int64    parameter updates so far (SDCA, OEG, SAG: sentence steps; L-BFGS: iterations)
//
// The last three columns (LogOptional) were added within version 2: logs
// written before them lack them and still read, with the counts null.
//
// Version 2: valid_f1 became a fraction (it was a percentage), and columns
// carry their units in field metadata (KeyUnit).
const (
	LogFormat  = "training-log"
	LogVersion = "2"
)

// LogFields returns the columns of the training log, in order.
func LogFields() []arrow.Field {
	f64 := arrow.PrimitiveTypes.Float64
	sec, frac := unit(UnitSeconds), unit(UnitFraction)
	return []arrow.Field{
		{Name: "epoch", Type: arrow.PrimitiveTypes.Int32},
		{Name: "steps", Type: arrow.PrimitiveTypes.Int64},
		{Name: "seconds", Type: f64, Metadata: sec},
		{Name: "total_seconds", Type: f64, Metadata: sec},
		{Name: "cert_seconds", Type: f64, Metadata: sec},
		{Name: "primal", Type: f64, Nullable: true},
		{Name: "dual", Type: f64, Nullable: true},
		{Name: "gap", Type: f64, Nullable: true},
		{Name: "identity_residual", Type: f64, Nullable: true},
		{Name: "gap_estimate", Type: f64, Nullable: true},
		{Name: "line_search", Type: arrow.PrimitiveTypes.Int64},
		{Name: "valid_accuracy", Type: f64, Nullable: true, Metadata: frac},
		{Name: "valid_f1", Type: f64, Nullable: true, Metadata: frac},
		{Name: "oracle_calls", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "cert_oracle_calls", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "updates", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	}
}

// LogOptional reports whether a training-log column may be absent: the
// counters added within version 2 (older logs lack them).
func LogOptional(name string) bool {
	switch name {
	case "oracle_calls", "cert_oracle_calls", "updates":
		return true
	}
	return false
}

// LogSchema returns the training-log schema with the free metadata md.
func LogSchema(md map[string]string) (*arrow.Schema, error) {
	m, err := buildMetadata(LogFormat, LogVersion, md)
	if err != nil {
		return nil, err
	}
	return arrow.NewSchema(LogFields(), &m), nil
}

// ValidateLogSchema says precisely what is wrong with a training-log
// schema: another table or version, a missing or mistyped column.
func ValidateLogSchema(s *arrow.Schema) error {
	p := &problems{table: "training log"}
	if !checkFormat(p, s, LogFormat, LogVersion) {
		return p.err()
	}
	for _, f := range LogFields() {
		if LogOptional(f.Name) && len(s.FieldIndices(f.Name)) == 0 {
			continue
		}
		checkColumn(p, s, f.Name, isType(f.Type.ID(), f.Type.String()))
	}
	return p.err()
}
