package dualcrfbeam

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/sdf"

	"github.com/dualcrf/dualcrf/arrowio"
	"github.com/dualcrf/dualcrf/featurize"
	"github.com/dualcrf/dualcrf/pipeline"
	"github.com/dualcrf/dualcrf/stage"
)

// FeaturizeConfig configures the featurize pipeline. Its zero value (but
// for Shards and OutDir) is `dualcrf featurize`'s default: CoNLL input,
// the input format's default templates, every attribute kept, Arrow IPC
// stream output.
type FeaturizeConfig struct {
	Shards []Shard
	OutDir string // part-NNNNN.arrow, one per shard
	// Templates is a built-in set's name or a template file; "": the
	// input format's default (stage.DefaultTemplate).
	Templates string
	MinCount  int // as stage.FeaturizeOptions.MinCount
	Input     featurize.InputOptions
	Writer    arrowio.WriterOptions
}

// featurizeSpec is what the pipeline's workers need of a FeaturizeConfig,
// in a form Beam serializes (a DoFn's exported fields, as JSON).
type featurizeSpec struct {
	Templates string // the template set's text ("": the input's own attributes)
	MinCount  int
	Input     string // featurize.InputOptions as JSON
	Format    string // arrowio.Format
	Compress  string // arrowio.Compression
	OutDir    string
}

// spec resolves c's templates and options into a featurizeSpec.
func (c FeaturizeConfig) spec() (featurizeSpec, error) {
	s := featurizeSpec{MinCount: c.MinCount, OutDir: c.OutDir, Format: string(c.Writer.Format), Compress: string(c.Writer.Compression)}
	if c.MinCount < 0 {
		return s, fmt.Errorf("featurize: min-count %d: want a count ≥ 0", c.MinCount)
	}
	name := c.Templates
	if name == "" {
		name = stage.DefaultTemplate(c.Input.Format)
	}
	if name != "" {
		set, err := featurize.LoadTemplates(name)
		if err != nil {
			return s, err
		}
		s.Templates = set.String()
	}
	in, err := json.Marshal(c.Input)
	if err != nil {
		return s, err
	}
	s.Input = string(in)
	return s, nil
}

// parse returns the templates (nil: the input's own attributes) and input
// options of s.
func (s featurizeSpec) parse() (*featurize.TemplateSet, featurize.InputOptions, error) {
	var in featurize.InputOptions
	if err := json.Unmarshal([]byte(s.Input), &in); err != nil {
		return nil, in, fmt.Errorf("featurize: input options: %w", err)
	}
	if s.Templates == "" {
		return nil, in, nil
	}
	set, err := featurize.ParseTemplateString(s.Templates)
	return set, in, err
}

// Featurize adds the featurize pipeline to s: a count of every shard's
// attributes and labels, combined into the vocabulary, which every shard
// is then featurized with. The returned collection holds each shard's
// summary once its table is written.
func Featurize(s beam.Scope, c FeaturizeConfig) (beam.PCollection, error) {
	spec, err := c.spec()
	if err != nil {
		return beam.PCollection{}, err
	}
	if len(c.Shards) == 0 {
		return beam.PCollection{}, errors.New("featurize: no input shards")
	}
	s = s.Scope("featurize")
	shards := beam.Create(s, toAny(c.Shards)...)
	counts := beam.ParDo(s, &countFn{Spec: spec}, shards)
	vocab := beam.Combine(s, &vocabFn{MinCount: spec.MinCount}, counts)
	return beam.ParDo(s, &featurizeFn{Spec: spec}, shards, beam.SideInput{Input: vocab}), nil
}

// toAny returns the shards as Create takes them.
func toAny(shards []Shard) []any {
	out := make([]any, len(shards))
	for i, sh := range shards {
		out[i] = sh
	}
	return out
}

// ShardCounts are one shard's attributes and labels, each in order of
// first appearance in the shard, with the attributes' counts.
type ShardCounts struct {
	Shard  int
	Names  []string
	Counts []int64
	Labels []string
}

// countFn counts a shard's attributes and labels: featurize's first pass.
type countFn struct {
	perShard
	Spec featurizeSpec
}

// ProcessElement counts the shard sh.
func (fn *countFn) ProcessElement(ctx context.Context, rt *sdf.LockRTracker, sh Shard, emit func(ShardCounts)) error {
	if !claim(rt) {
		return nil
	}
	set, in, err := fn.Spec.parse()
	if err != nil {
		return err
	}
	c := ShardCounts{Shard: sh.Index}
	ids := map[string]int{}
	seenLabel := map[string]bool{}
	err = featurize.ScanFeatures(ctx, pipeline.Source{Path: sh.Path}, in, set, func(_ []string, s *featurize.Sentence, feats [][]featurize.Feature) error {
		for _, tok := range feats {
			for _, f := range tok {
				if i, ok := ids[f.Name]; ok {
					c.Counts[i]++
					continue
				}
				ids[f.Name] = len(c.Names)
				c.Names = append(c.Names, f.Name)
				c.Counts = append(c.Counts, 1)
			}
		}
		for _, l := range s.Labels {
			if l != "" && !seenLabel[l] {
				seenLabel[l] = true
				c.Labels = append(c.Labels, l)
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	emit(c)
	return nil
}

// firstSeen is where a name first appears in the corpus: the shard, then
// the rank in the shard.
type firstSeen struct {
	Shard int
	Rank  int
}

// before reports whether a comes before b in the corpus.
func (a firstSeen) before(b firstSeen) bool {
	return a.Shard < b.Shard || a.Shard == b.Shard && a.Rank < b.Rank
}

// VocabCounts accumulate the counts of shards: each attribute's count and
// first appearance, each label's first appearance.
type VocabCounts struct {
	Attrs  map[string]AttrCount
	Labels map[string]firstSeen
}

// AttrCount is an attribute's count so far and where it first appeared.
type AttrCount struct {
	Count int64
	First firstSeen
}

// Vocab is the combined vocabulary: the attributes kept, and the labels,
// in id order — the order `dualcrf featurize` gives the whole corpus.
type Vocab struct {
	Names  []string
	Labels []string
}

// vocabFn combines shard counts into the vocabulary.
type vocabFn struct {
	MinCount int
}

// CreateAccumulator returns empty counts.
func (fn *vocabFn) CreateAccumulator() VocabCounts {
	return VocabCounts{Attrs: map[string]AttrCount{}, Labels: map[string]firstSeen{}}
}

// AddInput adds a shard's counts.
func (fn *vocabFn) AddInput(a VocabCounts, c ShardCounts) VocabCounts {
	a = fn.ensure(a)
	for i, name := range c.Names {
		a.Attrs[name] = mergeAttr(a.Attrs[name], AttrCount{Count: c.Counts[i], First: firstSeen{c.Shard, i}})
	}
	for i, l := range c.Labels {
		a.Labels[l] = earlier(a.Labels, l, firstSeen{c.Shard, i})
	}
	return a
}

// MergeAccumulators adds b's counts to a's.
func (fn *vocabFn) MergeAccumulators(a, b VocabCounts) VocabCounts {
	a = fn.ensure(a)
	if len(b.Attrs) > len(a.Attrs) {
		a, b = fn.ensure(b), a
	}
	for name, n := range b.Attrs {
		a.Attrs[name] = mergeAttr(a.Attrs[name], n)
	}
	for l, at := range b.Labels {
		a.Labels[l] = earlier(a.Labels, l, at)
	}
	return a
}

// ExtractOutput cuts the attributes seen fewer than MinCount times and
// orders attributes and labels by first appearance.
func (fn *vocabFn) ExtractOutput(a VocabCounts) Vocab {
	type named struct {
		name string
		at   firstSeen
	}
	var attrs, labels []named
	for name, n := range a.Attrs {
		if n.Count >= int64(fn.MinCount) {
			attrs = append(attrs, named{name, n.First})
		}
	}
	for l, at := range a.Labels {
		labels = append(labels, named{l, at})
	}
	order := func(x, y named) int {
		switch {
		case x.at.before(y.at):
			return -1
		case y.at.before(x.at):
			return 1
		}
		return 0
	}
	slices.SortFunc(attrs, order)
	slices.SortFunc(labels, order)
	v := Vocab{Names: make([]string, len(attrs)), Labels: make([]string, len(labels))}
	for i, x := range attrs {
		v.Names[i] = x.name
	}
	for i, x := range labels {
		v.Labels[i] = x.name
	}
	return v
}

// ensure makes a's maps.
func (fn *vocabFn) ensure(a VocabCounts) VocabCounts {
	if a.Attrs == nil {
		a.Attrs = map[string]AttrCount{}
	}
	if a.Labels == nil {
		a.Labels = map[string]firstSeen{}
	}
	return a
}

// mergeAttr adds two counts of an attribute (a may be zero: unseen).
func mergeAttr(a, b AttrCount) AttrCount {
	if a.Count == 0 {
		return b
	}
	a.Count += b.Count
	if b.First.before(a.First) {
		a.First = b.First
	}
	return a
}

// earlier returns the first appearance of label l: at, or the one in m.
func earlier(m map[string]firstSeen, l string, at firstSeen) firstSeen {
	if old, ok := m[l]; ok && old.before(at) {
		return old
	}
	return at
}

// FeaturizeResult is one shard's featurized table.
type FeaturizeResult struct {
	Shard     int
	Path      string // the feature table written
	Sentences int
	Tokens    int
}

// featurizeFn featurizes a shard with the vocabulary: featurize's second
// pass, writing part-NNNNN.arrow.
type featurizeFn struct {
	perShard
	Spec featurizeSpec

	vocab *featurize.Vocabulary // built from the side input once
}

// ProcessElement featurizes the shard sh.
func (fn *featurizeFn) ProcessElement(ctx context.Context, rt *sdf.LockRTracker, sh Shard, v Vocab, emit func(FeaturizeResult)) error {
	if !claim(rt) {
		return nil
	}
	set, in, err := fn.Spec.parse()
	if err != nil {
		return err
	}
	if fn.vocab == nil {
		if fn.vocab, err = featurize.NewVocabulary(v.Names); err != nil {
			return err
		}
	}
	opts := featurize.RunOptions{Input: in, Templates: set, MinCount: fn.Spec.MinCount, Vocab: fn.vocab, Labels: v.Labels,
		Writer: arrowio.WriterOptions{Format: arrowio.Format(fn.Spec.Format), Compression: arrowio.Compression(fn.Spec.Compress)}}
	path := OutputPath(fn.Spec.OutDir, sh.Index, "arrow")
	res := FeaturizeResult{Shard: sh.Index, Path: path}
	err = writeAtomic(ctx, path, func(out *pipeline.Output) error {
		sum, err := featurize.Run(ctx, pipeline.Source{Path: sh.Path}, out, opts)
		res.Sentences, res.Tokens = sum.Sentences, sum.Tokens
		return err
	})
	if err != nil {
		return fmt.Errorf("featurize: shard %d: %w", sh.Index, err)
	}
	emit(res)
	return nil
}
