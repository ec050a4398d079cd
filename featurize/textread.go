package featurize

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/dualcrf/dualcrf/crf"
	"github.com/dualcrf/dualcrf/pipeline"
	"github.com/dualcrf/dualcrf/schemas"
	"github.com/dualcrf/dualcrf/tables"
)

// TextReader featurizes a corpus with a fixed vocabulary straight into
// chunks of whole sentences, as tables.FeatureReader hands them out of the
// table Run would write with the same options: decode --text streams
// through it with no Arrow round trip. It reads the corpus once, so
// standard input needs no spooling. Its loop is tables.FeatureReader's:
//
//	for tr.Next() { t := tr.Chunk(); … }
//	if err := tr.Err(); err != nil { … }
//
// Attributes the vocabulary does not know are left out
// (tables.FeatureTable.Dropped counts them); labels outside
// RunOptions.Labels are appended to the label names, so a chunk's Dataset
// names the labels met up to its end.
type TextReader struct {
	r           Reader
	closer      io.Closer
	display     string
	set         *TemplateSet
	x           *Extractor // compiled at the first sentence: readers learn their columns from it
	vocab       *Vocabulary
	chunkTokens int
	metadata    map[string]string
	opts        RunOptions // for checkColumns

	labels     []string
	labelIndex map[string]int32
	feats      [][]Feature
	ids        []int32
	vals       []float64

	sentences int // sentences handed out in chunks so far
	chunk     *tables.FeatureTable
	done      bool
	err       error
}

// NewTextReader opens the corpus src reads (a file, or standard input) for
// featurizing with opts.Vocab, which must be set, in chunks that end at the
// first sentence after chunkTokens tokens (tables.DefaultChunkTokens when ≤ 0).
// Close it after use.
func NewTextReader(src pipeline.Source, opts RunOptions, chunkTokens int) (*TextReader, error) {
	if opts.Vocab == nil {
		return nil, fmt.Errorf("featurize: a TextReader needs a fixed vocabulary")
	}
	display := src.Name()
	opts.Input.Need = opts.Templates.requiredColumns()
	r, c, err := OpenReader(src, opts.Input)
	if err != nil {
		return nil, err
	}
	tr, err := newTextReader(r, c, display, opts, chunkTokens)
	if err != nil {
		c.Close()
		return nil, err
	}
	return tr, nil
}

// newTextReader is NewTextReader on the opened reader r of the input
// display names; c closes it.
func newTextReader(r Reader, c io.Closer, display string, opts RunOptions, chunkTokens int) (*TextReader, error) {
	if chunkTokens <= 0 {
		chunkTokens = tables.DefaultChunkTokens
	}
	set := opts.Templates
	if set == nil {
		set = &TemplateSet{}
	}
	inputJSON, err := json.Marshal(opts.Input)
	if err != nil {
		return nil, err
	}
	tr := &TextReader{
		r:           r,
		closer:      c,
		display:     display,
		set:         set,
		vocab:       opts.Vocab,
		chunkTokens: chunkTokens,
		metadata: map[string]string{
			schemas.KeyTemplates: set.String(),
			schemas.KeyMinCount:  strconv.Itoa(opts.MinCount),
			schemas.KeySource:    display,
			KeyInput:             string(inputJSON),
		},
		opts:       opts,
		labels:     append([]string(nil), opts.Labels...),
		labelIndex: make(map[string]int32, len(opts.Labels)),
	}
	for i, l := range tr.labels {
		tr.labelIndex[l] = int32(i)
	}
	return tr, nil
}

// Close closes the corpus.
func (tr *TextReader) Close() error { return tr.closer.Close() }

// Metadata returns what a feature table of the corpus would carry.
func (tr *TextReader) Metadata() map[string]string { return tr.metadata }

// Chunk returns the chunk read by the last call to Next.
func (tr *TextReader) Chunk() *tables.FeatureTable { return tr.chunk }

// Err returns the first error met, nil at a clean end of the corpus.
func (tr *TextReader) Err() error { return tr.err }

// Next featurizes the next chunk; it returns false at the end of the corpus
// or on error. Every chunk holds at least one sentence.
func (tr *TextReader) Next() bool {
	tr.chunk = nil
	if tr.done || tr.err != nil {
		return false
	}
	t, err := tr.read()
	if err != nil {
		tr.err = err
		return false
	}
	if t == nil {
		tr.done = true
		return false
	}
	tr.chunk = t
	return true
}

// read featurizes sentences into a chunk until it holds chunkTokens
// tokens; nil at the end of the corpus.
func (tr *TextReader) read() (*tables.FeatureTable, error) {
	var t *tables.FeatureTable
	for t == nil || t.Data.NumTokens() < tr.chunkTokens {
		if !tr.r.Scan() {
			if err := tr.r.Err(); err != nil {
				return nil, err
			}
			if cr, ok := tr.r.(*ConllReader); ok && !tr.done {
				noteStats(readStats{docstarts: cr.Docstarts()}, tr.display, tr.opts)
				tr.done = true
			}
			break
		}
		s := tr.r.Sentence()
		if tr.x == nil {
			x, err := compileFor(tr.set, tr.r)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", tr.display, err)
			}
			x.Source = tr.display
			tr.x = x
			tr.metadata[KeyColumns] = columnsJSON(tr.r.Columns())
			checkColumns(tr.r, tr.display, tr.opts)
		}
		if t == nil {
			t = tr.newChunk()
		}
		if err := tr.add(t, s); err != nil {
			return nil, err
		}
	}
	if t == nil {
		return nil, nil
	}
	d := t.Data
	d.SentStart = append(d.SentStart, len(d.Labels))
	d.NumLabels, d.LabelNames = len(tr.labels), tr.labels[:len(tr.labels):len(tr.labels)]
	tr.sentences += d.Len()
	return t, nil
}

// newChunk starts an empty chunk.
func (tr *TextReader) newChunk() *tables.FeatureTable {
	names := tr.vocab.names
	cols := tr.r.Columns()
	capTokens := min(tr.chunkTokens, tables.DefaultChunkTokens) // a whole-corpus chunk grows
	return &tables.FeatureTable{
		Data: &crf.Dataset{NumAttrs: len(names), AttrNames: names[:len(names):len(names)],
			SentStart: make([]int, 0, 1024), AttrStart: make([]int, 1, capTokens+1), Labels: make([]int32, 0, capTokens)},
		Columns:       cols,
		Text:          make([][]string, len(cols)),
		Metadata:      tr.metadata,
		FirstSentence: tr.sentences,
	}
}

// add featurizes sentence s into chunk t.
func (tr *TextReader) add(t *tables.FeatureTable, s *Sentence) error {
	n := s.Len()
	d := t.Data
	errorf := func(format string, args ...any) error {
		return &SyntaxError{File: tr.display, Line: s.Line, Msg: fmt.Sprintf("sentence %d: %s", t.FirstSentence+d.Len(), fmt.Sprintf(format, args...))}
	}
	switch {
	case n == 0:
		return errorf("empty sentence")
	case len(t.Text) > 0 && len(s.Tokens) != n:
		return errorf("%d token rows for %d tokens", len(s.Tokens), n)
	case s.Labels != nil && len(s.Labels) != n:
		return errorf("%d labels for %d tokens", len(s.Labels), n)
	}
	for tok := range s.Tokens {
		if len(t.Text) > 0 && len(s.Tokens[tok]) != len(t.Text) {
			return errorf("token %d has %d columns, want %d", tok, len(s.Tokens[tok]), len(t.Text))
		}
	}
	var err error
	if tr.feats, err = tr.x.Extract(s, tr.feats); err != nil {
		return err
	}
	d.SentStart = append(d.SentStart, len(d.Labels))
	t.Lines = append(t.Lines, s.Line)
	for tok, fs := range tr.feats {
		var dropped int
		tr.ids, tr.vals, dropped = tr.vocab.AppendIDs(tr.ids[:0], tr.vals[:0], fs)
		t.Dropped += dropped
		for _, v := range tr.vals {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return errorf("token %d: attribute value %v is not finite", tok, v)
			}
		}
		d.Attrs = append(d.Attrs, tr.ids...)
		if !allOnes(tr.vals) && d.Values == nil {
			d.Values = appendOnes(make([]float64, 0, cap(d.Attrs)), len(d.Attrs)-len(tr.ids))
		}
		if d.Values != nil {
			d.Values = append(d.Values, tr.vals...)
		}
		d.AttrStart = append(d.AttrStart, len(d.Attrs))
		d.Labels = append(d.Labels, tr.label(s, tok))
		for c := range t.Text {
			t.Text[c] = append(t.Text[c], strings.Clone(s.Tokens[tok][c]))
		}
	}
	return nil
}

// label returns the id of token t's label, -1 when it has none; a label
// not met before gets the next id.
func (tr *TextReader) label(s *Sentence, t int) int32 {
	if s.Labels == nil || s.Labels[t] == "" {
		return -1
	}
	l := s.Labels[t]
	id, ok := tr.labelIndex[l]
	if !ok {
		l = strings.Clone(l)
		id = int32(len(tr.labels))
		tr.labels = append(tr.labels, l)
		tr.labelIndex[l] = id
	}
	return id
}

// allOnes reports whether every value is 1 (true for none).
func allOnes(values []float64) bool {
	for _, v := range values {
		if v != 1 {
			return false
		}
	}
	return true
}

// appendOnes appends n ones to dst.
func appendOnes(dst []float64, n int) []float64 {
	for ; n > 0; n-- {
		dst = append(dst, 1)
	}
	return dst
}
