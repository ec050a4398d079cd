package featurize

import (
	"context"

	"github.com/dualcrf/dualcrf/pipeline"
)

// ScanFeatures reads the corpus in once, as Run's first pass does, and
// calls fn for every sentence with the reader's columns, the sentence and
// its features by the templates of set (nil: the input's own attributes),
// valid until fn returns. It lets a caller count what Run would count —
// the attributes, in order of first appearance, and the labels — on parts
// of a corpus apart and combine the counts (a distributed featurize);
// NewVocabulary then fixes the vocabulary for Run's Vocab.
func ScanFeatures(ctx context.Context, in pipeline.Source, opts InputOptions, set *TemplateSet, fn func(columns []string, s *Sentence, feats [][]Feature) error) error {
	if set == nil {
		set = &TemplateSet{}
	}
	display := in.Name()
	src, err := openSource(ctx, in, display, opts, false)
	if err != nil {
		return err
	}
	defer src.Close()
	err = scan(ctx, src, display, RunOptions{Input: opts}, false, set, fn)
	if err != nil && ctx.Err() != nil {
		return ctx.Err()
	}
	return err
}
