package train

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
)

// FormatRecord renders a record as the one-line human summary printed on
// stderr after each epoch.
func FormatRecord(r EpochRecord) string {
	s := fmt.Sprintf("epoch %3d  %7.3fs", r.Epoch, r.Seconds)
	if r.Certified {
		s += fmt.Sprintf("  primal %.10g  dual %.10g  gap %.4g", r.Primal, r.Dual, r.Gap)
	}
	if !math.IsNaN(r.GapEstimate) && !math.IsInf(r.GapEstimate, 0) {
		s += fmt.Sprintf("  est %.4g", r.GapEstimate)
	}
	if r.LineSearch > 0 {
		s += fmt.Sprintf("  ls %d", r.LineSearch)
	}
	if r.OracleCalls > 0 || r.Updates > 0 {
		s += fmt.Sprintf("  oracle %d  upd %d", r.OracleCalls, r.Updates)
	}
	if v, ok := r.Metrics[MetricAccuracy]; ok {
		s += fmt.Sprintf("  acc %.2f%%", 100*v)
	}
	if v, ok := r.Metrics[MetricF1]; ok {
		s += fmt.Sprintf("  F1 %.2f", 100*v)
	}
	if r.CertSeconds > 0 {
		s += fmt.Sprintf("  (cert %.2fs)", r.CertSeconds)
	}
	return s
}

// recordJSON is EpochRecord in JSON: values that are NaN (uncertified,
// no estimate) are absent, never NaN, which JSON cannot hold.
type recordJSON struct {
	Epoch       int                `json:"epoch"`
	Steps       int64              `json:"steps"`
	Seconds     float64            `json:"seconds"`
	Total       float64            `json:"total_seconds"`
	CertSeconds float64            `json:"cert_seconds"`
	Certified   bool               `json:"certified"`
	Primal      *float64           `json:"primal,omitempty"`
	Dual        *float64           `json:"dual,omitempty"`
	Gap         *float64           `json:"gap,omitempty"`
	Residual    *float64           `json:"identity_residual,omitempty"`
	GapEstimate *float64           `json:"gap_estimate,omitempty"`
	LineSearch  int64              `json:"line_search"`
	OracleCalls int64              `json:"oracle_calls,omitempty"`
	CertCalls   int64              `json:"cert_oracle_calls,omitempty"`
	Updates     int64              `json:"updates,omitempty"`
	Metrics     map[string]float64 `json:"metrics,omitempty"`
}

// optional returns &x, or nil when x is NaN or infinite.
func optional(x float64) *float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return nil
	}
	return &x
}

// orNaN returns *p, or NaN for nil.
func orNaN(p *float64) float64 {
	if p == nil {
		return math.NaN()
	}
	return *p
}

// MarshalJSON writes the record with absent values for NaN ones.
func (r EpochRecord) MarshalJSON() ([]byte, error) {
	metrics := map[string]float64{}
	for k, v := range r.Metrics {
		if !math.IsNaN(v) && !math.IsInf(v, 0) {
			metrics[k] = v
		}
	}
	return json.Marshal(recordJSON{Epoch: r.Epoch, Steps: r.Steps, Seconds: r.Seconds, Total: r.Total,
		CertSeconds: r.CertSeconds, Certified: r.Certified, Primal: optional(r.Primal), Dual: optional(r.Dual),
		Gap: optional(r.Gap), Residual: optional(r.Residual), GapEstimate: optional(r.GapEstimate),
		LineSearch: r.LineSearch, OracleCalls: r.OracleCalls, CertCalls: r.CertOracleCalls, Updates: r.Updates,
		Metrics: metrics})
}

// UnmarshalJSON reads a record written by MarshalJSON; a certified record
// must carry its primal, dual and gap.
func (r *EpochRecord) UnmarshalJSON(b []byte) error {
	var j recordJSON
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&j); err != nil {
		return err
	}
	if j.Certified && (j.Primal == nil || j.Dual == nil || j.Gap == nil) {
		return fmt.Errorf("epoch %d: certified record without its primal, dual and gap", j.Epoch)
	}
	*r = EpochRecord{Epoch: j.Epoch, Steps: j.Steps, Seconds: j.Seconds, Total: j.Total, CertSeconds: j.CertSeconds,
		Certified: j.Certified, Primal: orNaN(j.Primal), Dual: orNaN(j.Dual), Gap: orNaN(j.Gap),
		Residual: orNaN(j.Residual), GapEstimate: orNaN(j.GapEstimate), LineSearch: j.LineSearch,
		OracleCalls: j.OracleCalls, CertOracleCalls: j.CertCalls, Updates: j.Updates, Metrics: j.Metrics}
	if len(r.Metrics) == 0 {
		r.Metrics = nil
	}
	return nil
}
