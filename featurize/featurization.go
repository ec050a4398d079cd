package featurize

// A model's or a training table's featurization, read back from the
// metadata featurize wrote into it.

import (
	"fmt"
	"strconv"

	"github.com/dualcrf/dualcrf/crf"
	"github.com/dualcrf/dualcrf/schemas"
	"github.com/dualcrf/dualcrf/tables"
)

// Featurization is how a model or a training table's features were made:
// what featurizing test data like it takes.
type Featurization struct {
	Name      string       // the model or table, in messages
	Templates *TemplateSet // nil: the input's own attributes
	MinCount  int
	Input     InputOptions
	Vocab     *Vocabulary // the attribute vocabulary, fixed
	Labels    []string    // the known labels, in id order
	// Columns are the token columns of the text it was made from
	// (KeyColumns); nil when it does not record them.
	Columns []string
}

// FromModel returns the featurization model m (read from name) records.
// A model without templates (trained on a table made without text, such
// as dualcrf synth's) records none: that is an error.
func FromModel(m *crf.Model, name string) (*Featurization, error) {
	return fromMetadata(m.Meta, m.AttrNames, m.LabelNames, name)
}

// FromTable returns the featurization training table t (read from name)
// records.
func FromTable(t *tables.FeatureTable, name string) (*Featurization, error) {
	return fromMetadata(t.Metadata, t.Data.AttrNames, t.Data.LabelNames, name)
}

// RunOptions are the options that featurize text like f: its templates,
// min-count, input settings, vocabulary and labels.
func (f *Featurization) RunOptions() RunOptions {
	return RunOptions{Templates: f.Templates, MinCount: f.MinCount, Input: f.Input, Vocab: f.Vocab, Labels: f.Labels,
		TrainedColumns: f.Columns}
}

// fromMetadata reads a featurization from metadata and names.
func fromMetadata(md map[string]string, attrs, labels []string, name string) (*Featurization, error) {
	s, err := settingsFrom(md, name)
	if err != nil {
		return nil, err
	}
	vocab, err := NewVocabulary(attrs)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	f := &Featurization{Name: name, Templates: s.templates, MinCount: s.minCount, Input: s.input, Vocab: vocab, Labels: labels}
	if v, ok := md[KeyColumns]; ok {
		if f.Columns, err = ParseColumns(v); err != nil {
			return nil, fmt.Errorf("%s: metadata %s: %w", name, KeyColumns, err)
		}
	}
	return f, nil
}

// RecordedTemplates checks the featurization metadata md of a table or
// model (read from name) and returns its templates; nil, with no error,
// when it records none (a table made without text, such as dualcrf
// synth's).
func RecordedTemplates(md map[string]string, name string) (*TemplateSet, error) {
	if _, ok := md[schemas.KeyTemplates]; !ok {
		return nil, nil
	}
	s, err := settingsFrom(md, name)
	return s.templates, err
}

// settings are what a model or a training table records about how its
// features were made.
type settings struct {
	templates *TemplateSet
	minCount  int
	input     InputOptions
}

// settingsFrom parses the featurization metadata of a table or model; what
// names the file for errors.
func settingsFrom(md map[string]string, what string) (settings, error) {
	var s settings
	text, ok := md[schemas.KeyTemplates]
	if !ok {
		return s, fmt.Errorf("%s records no feature templates (metadata %s)", what, schemas.KeyTemplates)
	}
	set, err := ParseTemplateString(text)
	if err != nil {
		return s, fmt.Errorf("%s: its templates: %w", what, err)
	}
	s.templates = set
	if v, ok := md[schemas.KeyMinCount]; ok {
		if s.minCount, err = strconv.Atoi(v); err != nil || s.minCount < 0 {
			return s, fmt.Errorf("%s: metadata %s=%q: want a count ≥ 0", what, schemas.KeyMinCount, v)
		}
	}
	if v, ok := md[KeyInput]; ok {
		if s.input, err = ParseInputOptions(v); err != nil {
			return s, fmt.Errorf("%s: metadata %s: %w", what, KeyInput, err)
		}
	}
	return s, nil
}
