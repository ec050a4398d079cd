package main

import (
	"fmt"
	"io"
	"os"
	"strconv"

	"github.com/dualcrf/dualcrf/crf"
	"github.com/dualcrf/dualcrf/featurize"
	"github.com/dualcrf/dualcrf/pipeline"
	"github.com/dualcrf/dualcrf/schemas"
	"github.com/dualcrf/dualcrf/tables"
)

// withOutput runs fn on the output for path ("" or "-" = standard output)
// and commits it only when fn succeeds, so a failing stage leaves no file.
func withOutput(path string, fn func(w io.Writer, name string) error) error {
	out, err := pipeline.CreateOutput(path)
	if err != nil {
		return err
	}
	if err := fn(out, out.Name()); err != nil {
		out.Abort()
		return err
	}
	return out.Commit()
}

// withInput opens path ("" or "-" = standard input) for fn.
func withInput(path string, fn func(r io.Reader, name string) error) error {
	in, name, err := pipeline.OpenInput(path)
	if err != nil {
		return err
	}
	defer in.Close()
	return fn(in, name)
}

// readModel reads a model file.
func readModel(path string) (*crf.Model, error) {
	var m *crf.Model
	err := withInput(path, func(r io.Reader, name string) error {
		var err error
		m, err = tables.ReadModel(r, name, pipeline.ReaderOptions{})
		return err
	})
	return m, err
}

// readTable reads a feature table.
func readTable(path string, skipText bool) (*tables.FeatureTable, error) {
	var t *tables.FeatureTable
	err := withInput(path, func(r io.Reader, name string) error {
		var err error
		t, err = tables.ReadFeatureTable(r, name, tables.FeatureReadOptions{SkipText: skipText})
		return err
	})
	return t, err
}

// featureSettings are what a model or a training table records about how
// its features were made.
type featureSettings struct {
	templates *featurize.TemplateSet
	minCount  int
	input     featurize.InputOptions
	haveInput bool
}

// settingsFrom parses the featurization metadata of a table or model; what
// names the file for errors.
func settingsFrom(md map[string]string, what string) (featureSettings, error) {
	var s featureSettings
	text, ok := md[schemas.KeyTemplates]
	if !ok {
		return s, fmt.Errorf("%s records no feature templates (metadata %s)", what, schemas.KeyTemplates)
	}
	set, err := featurize.ParseTemplateString(text)
	if err != nil {
		return s, fmt.Errorf("%s: its templates: %w", what, err)
	}
	s.templates = set
	if v, ok := md[schemas.KeyMinCount]; ok {
		if s.minCount, err = strconv.Atoi(v); err != nil || s.minCount < 0 {
			return s, fmt.Errorf("%s: metadata %s=%q: want a count ≥ 0", what, schemas.KeyMinCount, v)
		}
	}
	if v, ok := md[featurize.KeyInput]; ok {
		if s.input, err = featurize.ParseInputOptions(v); err != nil {
			return s, fmt.Errorf("%s: metadata %s: %w", what, featurize.KeyInput, err)
		}
		s.haveInput = true
	}
	return s, nil
}

// logf prints a progress or summary line on stderr.
func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, format+"\n", args...)
}
