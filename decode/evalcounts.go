package decode

// Counts let an evaluation be split: the parts of a corpus are scored apart
// (by other processes or machines), their counts merged, and the merged
// counts give the report the whole corpus gives.

import (
	"errors"
	"fmt"
)

// ErrOpenChunk means two evaluations to be merged both ended inside a
// chunk (Counts.Open): conlleval would have carried that state into the
// next sentence, so their merge is not the evaluation of the whole.
var ErrOpenChunk = errors.New("decode: both evaluations end inside a chunk; score the parts together")

// Counts are everything an Evaluator has counted, in a form that can be
// stored, sent and merged: the counts of consecutive parts of a corpus,
// merged, are those of the whole corpus, provided no part but the last
// ends Open. EvaluatorFromCounts turns them back into an Evaluator, whose
// Result and reports are then the whole corpus's.
type Counts struct {
	Options     EvalOptions `json:"options"`
	Sentences   int         `json:"sentences"`
	Tokens      int         `json:"tokens"`
	CorrectTags int         `json:"correct_tags"`
	// Labels holds, per label, the gold, predicted and correct tokens.
	Labels map[string][3]int `json:"labels"`
	// FoundCorrect, FoundGuessed and CorrectChunk are conlleval's chunk
	// totals, and Types, per chunk type, its gold, predicted and correct
	// chunks.
	FoundCorrect int               `json:"found_correct"`
	FoundGuessed int               `json:"found_guessed"`
	CorrectChunk int               `json:"correct_chunk"`
	Types        map[string][3]int `json:"types"`
	// Open is conlleval's $inCorrect after the last sentence: a chunk
	// correct so far that the sentence boundary did not close. Only odd
	// tags leave it set (e.g. a chunk ending in a "." tag).
	Open bool `json:"open,omitempty"`
}

// Counts returns what e has counted so far.
func (e *Evaluator) Counts() Counts {
	e.init()
	c := Counts{
		Options:   e.opts,
		Sentences: e.sentences, Tokens: e.tokens, CorrectTags: e.correctTags,
		Labels:       make(map[string][3]int, len(e.labels)),
		FoundCorrect: e.chunks.foundCorrect, FoundGuessed: e.chunks.foundGuessed, CorrectChunk: e.chunks.correctChunk,
		Types: make(map[string][3]int, len(e.chunks.types)),
		Open:  e.chunks.inCorrect,
	}
	for l, n := range e.labels {
		c.Labels[l] = [3]int{n.gold, n.pred, n.correct}
	}
	for t, n := range e.chunks.types {
		c.Types[t] = [3]int{n.gold, n.pred, n.correct}
	}
	return c
}

// Merge adds o's counts to c's: c becomes the counts of the two parts
// scored together, whichever came first in the corpus, as long as the one
// that came first is not Open (the caller, who knows the parts' order,
// checks that). Both Open is ErrOpenChunk; other options are an error.
func (c *Counts) Merge(o Counts) error {
	if c.Options != o.Options {
		return fmt.Errorf("decode: cannot merge counts made with scheme %s (no chunks: %t) and %s (no chunks: %t)",
			c.Options.Scheme, c.Options.NoChunks, o.Options.Scheme, o.Options.NoChunks)
	}
	if c.Open && o.Open {
		return ErrOpenChunk
	}
	c.Sentences += o.Sentences
	c.Tokens += o.Tokens
	c.CorrectTags += o.CorrectTags
	c.FoundCorrect += o.FoundCorrect
	c.FoundGuessed += o.FoundGuessed
	c.CorrectChunk += o.CorrectChunk
	c.Labels = addCounts(c.Labels, o.Labels)
	c.Types = addCounts(c.Types, o.Types)
	c.Open = c.Open || o.Open
	return nil
}

// addCounts adds b's counts to a's, returning a (made when nil).
func addCounts(a, b map[string][3]int) map[string][3]int {
	if a == nil {
		a = make(map[string][3]int, len(b))
	}
	for k, n := range b {
		m := a[k]
		for i := range m {
			m[i] += n[i]
		}
		a[k] = m
	}
	return a
}

// EvaluatorFromCounts returns an Evaluator holding c, as if it had scored
// the sentences c counts: its Result and reports are theirs, and more
// sentences may be added.
func EvaluatorFromCounts(c Counts) *Evaluator {
	e := NewEvaluator(c.Options)
	e.init()
	e.sentences, e.tokens, e.correctTags = c.Sentences, c.Tokens, c.CorrectTags
	for l, n := range c.Labels {
		e.labels[l] = &labelCounts{gold: n[0], pred: n[1], correct: n[2]}
	}
	k := &e.chunks
	k.foundCorrect, k.foundGuessed, k.correctChunk = c.FoundCorrect, c.FoundGuessed, c.CorrectChunk
	k.types = make(map[string]*chunkCounts, len(c.Types))
	for t, n := range c.Types {
		k.types[t] = &chunkCounts{gold: n[0], pred: n[1], correct: n[2]}
	}
	k.inCorrect = c.Open
	return e
}
