package crf

import "fmt"

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

// Check reports an inconsistent model.
func (m *Model) Check() error {
	switch {
	case len(m.AttrNames) != m.Layout.NumAttrs:
		return fmt.Errorf("model has %d attribute names for %d attributes", len(m.AttrNames), m.Layout.NumAttrs)
	case len(m.LabelNames) != m.Layout.NumLabels:
		return fmt.Errorf("model has %d label names for %d labels", len(m.LabelNames), m.Layout.NumLabels)
	case len(m.Weights) != m.Layout.Dim():
		return fmt.Errorf("model has %d weights, its layout needs %d", len(m.Weights), m.Layout.Dim())
	}
	return nil
}
