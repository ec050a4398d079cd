// Package featurize turns labelled text (CoNLL columns, CoNLL-U, Penn Treebank,
// CRFsuite attribute lines) into sparse feature tables: readers yield
// sentences, templates turn tokens into attributes, a vocabulary maps
// attributes to ids, and package tables' FeatureWriter writes the table.
package featurize

import (
	"fmt"

	"github.com/dualcrf/dualcrf/option"
)

// Attr is one attribute of a token with its value (1 for a binary attribute).
type Attr struct {
	Name  string
	Value float64
}

// Sentence is one sequence as read from a corpus.
type Sentence struct {
	// Tokens[t][c] is column c of token t; the columns are named by the
	// reader's Columns(). The label column is not among them.
	Tokens [][]string
	// Labels[t] is the gold label of token t, or "" when the corpus has none.
	// Labels is nil when the input carries no labels at all.
	Labels []string
	// Attrs[t] holds attributes given in the input itself (CRFsuite
	// attribute files); nil for column formats, whose attributes come from
	// templates.
	Attrs [][]Attr
	// Line is the 1-based line number of the sentence's first token.
	Line int
	// Lines[t] is the 1-based line number of token t, for messages about
	// a token; when Lines is shorter than the sentence, token t is taken
	// to be on line Line+t.
	Lines []int
}

// TokenLine returns the 1-based line number of token t, 0 when unknown.
func (s *Sentence) TokenLine(t int) int {
	switch {
	case t < len(s.Lines):
		return s.Lines[t]
	case s.Line > 0:
		return s.Line + t
	}
	return 0
}

// Len returns the number of tokens.
func (s *Sentence) Len() int {
	if s.Tokens != nil {
		return len(s.Tokens)
	}
	if s.Attrs != nil {
		return len(s.Attrs)
	}
	return len(s.Labels)
}

// Reader is a streaming corpus reader in the style of bufio.Scanner:
//
//	for r.Scan() { s := r.Sentence(); … }
//	if err := r.Err(); err != nil { … }
//
// The sentence returned by Sentence is valid until the next call to Scan.
type Reader interface {
	// Scan advances to the next sentence; it returns false at the end of
	// input or on error.
	Scan() bool
	// Sentence returns the current sentence.
	Sentence() *Sentence
	// Err returns the first error met, nil at a clean end of input.
	Err() error
	// Columns names the token columns of every sentence (e.g. "word", "pos").
	Columns() []string
}

// SyntaxError reports malformed input at a position in a file. When its
// message names an option (a limit the input exceeds, a format that reads
// it), it unwraps to the *option.Error that says so.
type SyntaxError struct {
	File string // file name, "-" or "<stdin>" for standard input
	Line int    // 1-based line number, 0 when not known
	Msg  string // what was expected

	option *option.Error // Msg naming the options, or nil
}

// Unwrap returns the *option.Error of a message that names options, else
// nil.
func (e *SyntaxError) Unwrap() error {
	if e.option == nil {
		return nil
	}
	return e.option
}

func (e *SyntaxError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	}
	return fmt.Sprintf("%s: %s", e.File, e.Msg)
}
