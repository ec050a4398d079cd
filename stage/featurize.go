package stage

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/dualcrf/dualcrf/arrowio"
	"github.com/dualcrf/dualcrf/crf"
	"github.com/dualcrf/dualcrf/featurize"
	"github.com/dualcrf/dualcrf/internal/platform"
	"github.com/dualcrf/dualcrf/pipeline"
	"github.com/dualcrf/dualcrf/progress"
	"github.com/dualcrf/dualcrf/tables"
)

// FeaturizeOptions configure Featurize and FeaturizeTable. The zero value
// featurizes CoNLL text with the templates its columns call for (chunking
// with a pos column, ner for words only), keeping every
// attribute, into an Arrow IPC stream.
type FeaturizeOptions struct {
	// Templates are the feature templates; nil: chosen from the input's
	// columns for the column formats (conll, plain, tokens, token
	// tables), else the input format's default set (DefaultTemplate). Not
	// with Like, which has its own.
	Templates *featurize.TemplateSet
	// MinCount drops attributes seen fewer times in the input (per template
	// and value); 0 and 1 keep all. Not with Like.
	MinCount int
	// Like, when set, is the featurization of a model or of a training
	// table (featurize.FromModel, FromTable): its templates,
	// vocabulary and labels are reused, so that test data gets the ids the
	// model knows.
	Like *featurize.Featurization
	// Input says how to read the corpus; nil: Like's input settings, or
	// featurize.InputOptions' zero value (CoNLL, labels in the last column).
	Input *featurize.InputOptions
	// Writer chooses the IPC format and compression of Featurize's output.
	Writer arrowio.WriterOptions
	// Progress, when set, shows the input bytes read with their rate and
	// ETA; nil: nothing.
	Progress *progress.Reporter
	// Note, when set, is given warnings — text with more columns than
	// Like's training text; a label seen rarely next to a near-identical
	// frequent one, likely mistyped (learning a vocabulary) — and notes:
	// the CoNLL "-DOCSTART-" lines left out.
	Note func(msg string)
	// OptionName, when set, names an option (by its Go field, as
	// OptionError does) in the notes; nil: its Go name. The command
	// passes its flags' names.
	OptionName func(field string) string
	// Chosen, when set, is told the built-in template set chosen from the
	// input's columns (the column formats) when it is not chunking, the
	// set of CoNLL text with part-of-speech tags: the input has no such
	// column.
	Chosen func(name string, columns []string)
	// MemoryBudget bounds the memory of the vocabulary learnt (not with
	// Like, which learns none), in bytes (featurize.RunOptions.MemoryBudget);
	// 0: the machine's physical memory, or its cgroup's limit when lower.
	MemoryBudget int64
}

// DefaultTemplate names the built-in template set used for an input
// format when none is given and the input's columns are not known: ""
// (the input's own attributes) for crfsuite and ocr, pos for the
// part-of-speech corpora, chunking otherwise. Featurize chooses the set of
// the column formats from the input's columns instead (conll, plain, tokens, token tables).
func DefaultTemplate(format string) string {
	switch format {
	case "crfsuite", "ocr":
		return ""
	case "conllu", "ptb-mrg", "ptb-pos":
		return "pos"
	}
	return "chunking"
}

// templatesByColumns reports whether Featurize, given no templates,
// chooses them from the input's columns (featurize.DefaultTemplates:
// chunking when they include part-of-speech tags, ner for words only):
// for the column formats conll, plain, tokens and token tables.
func templatesByColumns(format string) bool {
	switch format {
	case "", "conll", featurize.FormatPlain, featurize.FormatTokens, featurize.FormatTable:
		return true
	}
	return false
}

// runOptions turns o into featurize's options for the input in.
func (o FeaturizeOptions) runOptions(in pipeline.Source) (featurize.RunOptions, error) {
	var r featurize.RunOptions
	switch {
	case o.MemoryBudget < 0:
		return r, fmt.Errorf("featurize: %w", optionError("FeaturizeOptions.MemoryBudget", o.MemoryBudget, "want a positive size (0: the machine's memory)"))
	case o.MemoryBudget > 0 && o.Like != nil:
		return r, fmt.Errorf("featurize: %w", optionError("FeaturizeOptions.MemoryBudget", nil, "bounds the vocabulary featurize learns; with {FeaturizeOptions.Like} it learns none"))
	}
	if o.Like != nil && (o.Templates != nil || o.MinCount != 0) {
		return r, errors.New("featurize: the templates and min-count come from the model or table featurized like; do not repeat them")
	}
	if o.Like != nil {
		r = o.Like.RunOptions()
	} else {
		r.Templates, r.MinCount = o.Templates, o.MinCount
	}
	if o.Note != nil {
		r.Warn = func(msg string) { o.Note("warning: " + msg) }
		r.Note = o.Note
		r.OptionName = o.OptionName
	}
	if o.Input != nil {
		r.Input = *o.Input
	}
	r.Writer = o.Writer
	r.Progress = o.Progress
	if o.Like == nil {
		r.MemoryBudget = o.MemoryBudget
		if r.MemoryBudget == 0 {
			if b, err := platform.PhysicalMemory(); err == nil && b > 0 {
				r.MemoryBudget, r.MachineMemory = b, true
			}
		}
	}
	if !in.IsStdin() && strings.HasSuffix(in.Path, ".zip") && !strings.HasPrefix(r.Input.Format, "ptb-") {
		return r, fmt.Errorf("featurize: %s: a zip archive is read only as the NLTK Penn Treebank, with the input format ptb-mrg or ptb-pos", in.Path)
	}
	if o.Like == nil && r.Templates == nil && templatesByColumns(r.Input.Format) {
		r.TemplatesFor = featurize.DefaultTemplates
		if o.Chosen != nil {
			r.Chosen = func(name string, columns []string) {
				if name != "chunking" {
					o.Chosen(name, columns)
				}
			}
		}
	} else if o.Like == nil && r.Templates == nil {
		if name := DefaultTemplate(r.Input.Format); name != "" {
			set, err := featurize.LoadTemplates(name)
			if err != nil {
				return r, err
			}
			r.Templates = set
		}
	}
	return r, nil
}

// Featurize reads the corpus in (gzip and zstd are decompressed) and
// writes its feature table to out as Arrow IPC. The summary's Coverage,
// with Like set, says how much of the input the vocabulary covers (see
// tables.Coverage.Warnings).
func Featurize(ctx context.Context, input Input, out io.Writer, o FeaturizeOptions) (tables.FeatureSummary, error) {
	in, err := input.source(ctx)
	if err != nil {
		return tables.FeatureSummary{}, err
	}
	r, err := o.runOptions(in)
	if err != nil {
		return tables.FeatureSummary{}, err
	}
	sum, err := featurize.Run(ctx, in, out, r)
	return sum, nameInput(err, "featurize", in.Name())
}

// FeaturizeCRFsuite reads the corpus in as Featurize does and writes every
// token's attributes as CRFsuite attribute lines (featurize.WriteCRFsuite),
// with the marker attributes mk of a model's bias, start and end weights
// (crfsuite.MarkersOf of the model Like comes from; zero for none): what
// CRFsuite's tagger needs to tag with the model `dualcrf export` wrote.
// o.MinCount and o.Writer do not apply: every attribute is written.
func FeaturizeCRFsuite(ctx context.Context, input Input, out io.Writer, o FeaturizeOptions, mk featurize.Markers) (featurize.CRFsuiteSummary, error) {
	if o.MinCount > 1 {
		return featurize.CRFsuiteSummary{}, optionError("RunOptions.MinCount", o.MinCount,
			"CRFsuite attribute lines carry every attribute (CRFsuite's learn has its own cutoff, feature.minfreq)")
	}
	in, err := input.source(ctx)
	if err != nil {
		return featurize.CRFsuiteSummary{}, err
	}
	r, err := o.runOptions(in)
	if err != nil {
		return featurize.CRFsuiteSummary{}, err
	}
	sum, err := featurize.WriteCRFsuite(ctx, in, out, r, mk)
	return sum, nameInput(err, "featurize", in.Name())
}

// nameInput adds the input's name to a *featurize.MissingColumnError in
// err (the templates read a column the input lacks); stage names the
// stage. Other errors are returned as they are.
func nameInput(err error, stage, input string) error {
	var me *featurize.MissingColumnError
	if err == nil || !errors.As(err, &me) {
		return err
	}
	return fmt.Errorf("%s: %s: %w", stage, input, err)
}

// FeaturizeTable is Featurize handing the table back in memory, text
// columns included: the table tables.ReadFeatureTable would read from
// Featurize's output, built without writing Arrow (featurize.Table).
// o.Writer does not apply.
func FeaturizeTable(ctx context.Context, input Input, o FeaturizeOptions) (*tables.FeatureTable, tables.FeatureSummary, error) {
	in, err := input.source(ctx)
	if err != nil {
		return nil, tables.FeatureSummary{}, err
	}
	r, err := o.runOptions(in)
	if err != nil {
		return nil, tables.FeatureSummary{}, err
	}
	t, sum, err := featurize.Table(ctx, in, r)
	return t, sum, nameInput(err, "featurize", in.Name())
}

// ReadModel reads a model from in.
func ReadModel(ctx context.Context, in Input) (*crf.Model, error) {
	r, name, err := in.open(ctx)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return tables.ReadModel(r, name, arrowio.ReaderOptions{})
}

// ReadFeatureTable reads a whole feature table from in, without its text
// columns when skipText is set.
func ReadFeatureTable(ctx context.Context, in Input, skipText bool) (*tables.FeatureTable, error) {
	rr, name, done, err := in.records(ctx)
	if err != nil {
		return nil, err
	}
	defer done()
	return tables.ReadFeatureRecords(rr, name, tables.FeatureReadOptions{SkipText: skipText})
}
