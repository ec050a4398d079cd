package featurize

import (
	"context"
	"math"

	"github.com/dualcrf/dualcrf/crf"
	"github.com/dualcrf/dualcrf/pipeline"
	"github.com/dualcrf/dualcrf/tables"
)

// Table featurizes the corpus in into memory: the table, text columns
// included, that tables.ReadFeatureTable would read from Run's output with
// the same options, without writing Arrow (opts.Writer and BatchTokens do
// not apply). Like Run, it reads the input twice to learn a vocabulary,
// spooling an input that can be read only once. With opts.Vocab set, the
// summary's Coverage says how much of the input the vocabulary covers.
func Table(ctx context.Context, in pipeline.Source, opts RunOptions) (*tables.FeatureTable, tables.FeatureSummary, error) {
	display := in.Name()
	opts.Input.Need = opts.Templates.requiredColumns()
	fixed := opts.Vocab != nil
	opts = withFormatVocabulary(opts)
	src, err := openSource(ctx, in, display, opts.Input, opts.Vocab == nil)
	if err != nil {
		return nil, tables.FeatureSummary{}, err
	}
	defer src.Close()
	passes := 1
	if opts.Vocab == nil {
		passes = 2
	}
	defer src.track(opts.Progress, in, passes).End()
	t, err := table(ctx, src, display, opts)
	if err != nil && ctx.Err() != nil {
		err = ctx.Err()
	}
	if err != nil {
		return nil, tables.FeatureSummary{}, err
	}
	sum := t.Summary()
	if fixed {
		sum.Coverage = coverage(t, len(opts.Labels))
	}
	return t, sum, nil
}

// table is Table on an opened source: a first pass for the vocabulary and
// labels, then a TextReader whose one chunk is the whole corpus.
func table(ctx context.Context, src *source, display string, opts RunOptions) (*tables.FeatureTable, error) {
	set := opts.Templates
	if set == nil && (opts.TemplatesFor == nil || opts.Vocab != nil) {
		set = &TemplateSet{}
	}
	if opts.Vocab == nil {
		vocab, labels, set, err := firstPass(ctx, src, display, opts, set)
		if err != nil {
			return nil, err
		}
		opts.Vocab, opts.Labels, opts.Templates = vocab, labels, set
	}
	r, c, err := src.open(display, opts.Input)
	if err != nil {
		return nil, err
	}
	tr, err := newTextReader(r, c, display, opts, math.MaxInt)
	if err != nil {
		c.Close()
		return nil, err
	}
	defer tr.Close()
	if tr.Next() {
		return tr.Chunk(), ctx.Err()
	}
	if err := tr.Err(); err != nil {
		return nil, err
	}
	names := opts.Vocab.Names()
	return &tables.FeatureTable{Data: &crf.Dataset{NumAttrs: len(names), AttrNames: names, NumLabels: len(tr.labels), LabelNames: tr.labels,
		SentStart: []int{0}, AttrStart: []int{0}}, Columns: r.Columns(), Metadata: tr.Metadata()}, nil
}

// coverage counts what of t a fixed vocabulary covers; labels with ids
// below known are the known ones.
func coverage(t *tables.FeatureTable, known int) *tables.Coverage {
	d := t.Data
	c := &tables.Coverage{Tokens: d.NumTokens(), Attrs: len(d.Attrs) + t.Dropped, UnknownAttrs: t.Dropped}
	for _, y := range d.Labels {
		if y >= 0 {
			c.AddLabel(d.LabelNames[y], int(y) < known)
		}
	}
	return c
}
