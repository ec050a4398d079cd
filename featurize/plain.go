package featurize

import (
	"io"
	"strings"

	"github.com/dualcrf/dualcrf/featurize/tokenize"
)

// The input formats of text without columns or labels: running text, one
// sentence a line (FormatPlain), and one token a line (FormatTokens). Both
// give sentences of one token column, "word".
const (
	FormatPlain  = "plain"
	FormatTokens = "tokens"
)

// plainColumns are the token columns of plain and tokens input.
var plainColumns = []string{"word"}

// PlainReader reads running text, one sentence a line, splitting each
// line into tokens with package tokenize (Penn Treebank rules). Blank
// lines are skipped. Its sentences have one column, "word", and no labels.
type PlainReader struct {
	lr    *lineReader
	sent  Sentence
	toks  []string
	nsent int
	err   error
}

var _ Reader = (*PlainReader)(nil)

// NewPlainReader returns a reader of the text r, whose display name (for
// errors) is name.
func NewPlainReader(r io.Reader, name string) *PlainReader {
	return &PlainReader{lr: newLineReader(r, name)}
}

// Columns names the token column: "word".
func (r *PlainReader) Columns() []string { return plainColumns }

// Sentence returns the sentence read by the last successful Scan.
func (r *PlainReader) Sentence() *Sentence { return &r.sent }

// Err returns the first error met, nil at a clean end of input.
func (r *PlainReader) Err() error { return r.err }

// Scan reads the next non-blank line as a sentence.
func (r *PlainReader) Scan() bool {
	if r.err != nil {
		return false
	}
	for {
		b, ok := r.lr.next()
		if !ok {
			switch {
			case r.lr.err != nil:
				r.err = r.lr.err
			case r.nsent == 0:
				r.err = readerNoSentences(r.lr.name)
			}
			return false
		}
		r.toks = tokenize.AppendLine(r.toks[:0], string(b))
		if len(r.toks) == 0 {
			continue
		}
		if len(r.toks) > r.lr.maxTokens {
			r.err = r.lr.checkTokens(len(r.toks), r.lr.line)
			return false
		}
		rows := r.sent.Tokens[:0]
		for _, t := range r.toks {
			rows = append(rows, []string{t})
		}
		r.sent = Sentence{Tokens: rows, Line: r.lr.line}
		r.nsent++
		return true
	}
}

func (r *PlainReader) lineSource() *lineReader { return r.lr }

// TokensReader reads text already split into tokens: one token a line, a
// blank line after each sentence. A line is its token, spaces and tabs
// around it dropped; a line with a space or tab inside is an error (CoNLL
// columns are --input-format conll). Its sentences have one column,
// "word", and no labels.
type TokensReader struct {
	lr    *lineReader
	cells []string
	lines []int
	sent  Sentence
	nsent int
	err   error
}

var _ Reader = (*TokensReader)(nil)

// NewTokensReader returns a reader of the token lines r, whose display
// name (for errors) is name.
func NewTokensReader(r io.Reader, name string) *TokensReader {
	return &TokensReader{lr: newLineReader(r, name)}
}

// Columns names the token column: "word".
func (r *TokensReader) Columns() []string { return plainColumns }

// Sentence returns the sentence read by the last successful Scan.
func (r *TokensReader) Sentence() *Sentence { return &r.sent }

// Err returns the first error met, nil at a clean end of input.
func (r *TokensReader) Err() error { return r.err }

// Scan reads the next sentence.
func (r *TokensReader) Scan() bool {
	if r.err != nil {
		return false
	}
	r.cells, r.lines = r.cells[:0], r.lines[:0]
	first := scanBlock(r.lr, r, r.nsent, &r.err)
	if first == 0 {
		return false
	}
	r.sent = Sentence{Tokens: readerRows(r.sent.Tokens, r.cells, 1), Line: first, Lines: r.lines}
	r.nsent++
	return true
}

func (r *TokensReader) line(b []byte) (bool, error) {
	tok := strings.Trim(string(b), " \t")
	if strings.ContainsAny(tok, " \t") {
		n := len(readerSpaceFields(nil, tok))
		return false, optionSyntaxError(r.lr.name, r.lr.line, "%d words on a line: {InputOptions.Format} tokens reads one token a line (running text, one sentence a line, is {InputOptions.Format} plain; columns are {InputOptions.Format} conll)", n)
	}
	r.cells = append(r.cells, tok)
	r.lines = append(r.lines, r.lr.line)
	return true, nil
}

func (r *TokensReader) pending() bool { return len(r.cells) > 0 }

func (r *TokensReader) blank() {}

func (r *TokensReader) lineSource() *lineReader { return r.lr }
