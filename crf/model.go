package crf

import (
	"fmt"
	"math"
)

// Model is a trained chain CRF: weights in the layout of Layout, the names
// of its attributes and labels, and free-form metadata (training
// statistics, the featurization settings needed to featurize new text).
type Model struct {
	Layout     Layout
	Weights    []float64
	AttrNames  []string
	LabelNames []string
	Meta       map[string]string
}

// Check reports an inconsistent model: names that do not fit the layout,
// labels that are empty or repeated, a repeated attribute name, a weight
// vector of the wrong length, or a weight that is not a finite number (the
// error names its row, label and value).
func (m *Model) Check() error {
	switch {
	case m.Layout.NumLabels < 1:
		return fmt.Errorf("model has %d labels, want at least 1", m.Layout.NumLabels)
	case len(m.AttrNames) != m.Layout.NumAttrs:
		return fmt.Errorf("model has %d attribute names for %d attributes", len(m.AttrNames), m.Layout.NumAttrs)
	case len(m.LabelNames) != m.Layout.NumLabels:
		return fmt.Errorf("model has %d label names for %d labels", len(m.LabelNames), m.Layout.NumLabels)
	case m.Layout.Free != nil:
		return fmt.Errorf("model has a sparse layout; a model's weights are dense (crf.Layout.Expand)")
	case len(m.Weights) != m.Layout.Dim():
		return fmt.Errorf("model has %d weights, its layout needs %d", len(m.Weights), m.Layout.Dim())
	}
	if err := distinct(m.LabelNames, "label", false); err != nil {
		return err
	}
	if err := distinct(m.AttrNames, "attribute", true); err != nil {
		return err
	}
	for i, w := range m.Weights {
		if math.IsNaN(w) || math.IsInf(w, 0) {
			return fmt.Errorf("model weight %d (%s, label %q) is %v, want a finite number",
				i, m.RowName(i/m.Layout.NumLabels), m.LabelNames[i%m.Layout.NumLabels], w)
		}
	}
	return nil
}

// distinct reports a repeated name, or an empty one unless allowEmpty.
func distinct(names []string, what string, allowEmpty bool) error {
	seen := make(map[string]int, len(names))
	for i, n := range names {
		if n == "" && !allowEmpty {
			return fmt.Errorf("model %s %d has an empty name", what, i)
		}
		if j, ok := seen[n]; ok {
			return fmt.Errorf("model %ss %d and %d are both named %q", what, j, i, n)
		}
		seen[n] = i
	}
	return nil
}

// RowName describes row r of the weight vector (weights r·K … r·K+K-1) as
// a model file names it: `attr "NAME"`, `trans "PREVIOUS LABEL"`, "bias",
// "start" or "end".
func (m *Model) RowName(r int) string {
	A, K := m.Layout.NumAttrs, m.Layout.NumLabels
	switch {
	case r < 0:
	case r < A && r < len(m.AttrNames):
		return fmt.Sprintf("attr %q", m.AttrNames[r])
	case r >= A && r < A+K && r-A < len(m.LabelNames):
		return fmt.Sprintf("trans %q", m.LabelNames[r-A])
	case !m.Layout.NoBias && r >= A+K && r < A+K+3:
		return [...]string{"bias", "start", "end"}[r-A-K]
	}
	return fmt.Sprintf("row %d", r)
}
