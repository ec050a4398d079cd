package schemas

import "github.com/apache/arrow-go/v18/arrow"

// The training log: one row per epoch (epoch 0 is the initial point).
// Certified quantities are null in epochs without a certificate pass;
// held-out metrics are null without --valid.
const (
	LogFormat  = "training-log"
	LogVersion = "1"
)

// LogSchema returns the training-log schema with the free metadata md.
func LogSchema(md map[string]string) (*arrow.Schema, error) {
	m, err := buildMetadata(LogFormat, LogVersion, md)
	if err != nil {
		return nil, err
	}
	f64 := arrow.PrimitiveTypes.Float64
	return arrow.NewSchema([]arrow.Field{
		{Name: "epoch", Type: arrow.PrimitiveTypes.Int32},
		{Name: "steps", Type: arrow.PrimitiveTypes.Int64},
		{Name: "seconds", Type: f64},       // training time of the epoch, certificates excluded
		{Name: "total_seconds", Type: f64}, // cumulative training time
		{Name: "cert_seconds", Type: f64},  // time of the certificate pass
		{Name: "primal", Type: f64, Nullable: true},
		{Name: "dual", Type: f64, Nullable: true},
		{Name: "gap", Type: f64, Nullable: true},
		{Name: "identity_residual", Type: f64, Nullable: true},
		{Name: "gap_estimate", Type: f64, Nullable: true},
		{Name: "line_search", Type: arrow.PrimitiveTypes.Int64},
		{Name: "valid_accuracy", Type: f64, Nullable: true},
		{Name: "valid_f1", Type: f64, Nullable: true},
	}, &m), nil
}
