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

// plainReader reads running text, one sentence a line, splitting each
// line into tokens with package tokenize (Penn Treebank rules). Blank
// lines are skipped. Its sentences have one column, "word", and no labels.
type plainReader struct {
	lr    *lineReader
	sent  Sentence
	toks  []string
	nsent int
	err   error
}

var _ Reader = (*plainReader)(nil)

// newPlainReader returns a reader of the text r, whose display name (for
// errors) is name.
func newPlainReader(r io.Reader, name string) *plainReader {
	return &plainReader{lr: newLineReader(r, name)}
}

// Columns names the token column: "word".
func (r *plainReader) Columns() []string { return plainColumns }

// Sentence returns the sentence read by the last successful Scan.
func (r *plainReader) Sentence() *Sentence { return &r.sent }

// Err returns the first error met, nil at a clean end of input.
func (r *plainReader) Err() error { return r.err }

// Scan reads the next non-blank line as a sentence.
func (r *plainReader) Scan() bool {
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

func (r *plainReader) lineSource() *lineReader { return r.lr }

// tokensReader reads text already split into tokens: one token a line, a
// blank line after each sentence. A line is its token, spaces and tabs
// around it dropped; a line with a space or tab inside is an error (CoNLL
// columns are --input-format conll). Its sentences have one column,
// "word", and no labels.
type tokensReader struct {
	lr    *lineReader
	cells []string
	lines []int
	sent  Sentence
	nsent int
	err   error
}

var _ Reader = (*tokensReader)(nil)

// newTokensReader returns a reader of the token lines r, whose display
// name (for errors) is name.
func newTokensReader(r io.Reader, name string) *tokensReader {
	return &tokensReader{lr: newLineReader(r, name)}
}

// Columns names the token column: "word".
func (r *tokensReader) Columns() []string { return plainColumns }

// Sentence returns the sentence read by the last successful Scan.
func (r *tokensReader) Sentence() *Sentence { return &r.sent }

// Err returns the first error met, nil at a clean end of input.
func (r *tokensReader) Err() error { return r.err }

// Scan reads the next sentence.
func (r *tokensReader) Scan() bool {
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

func (r *tokensReader) line(b []byte) (bool, error) {
	tok := strings.Trim(string(b), " \t")
	if strings.ContainsAny(tok, " \t") {
		n := len(readerSpaceFields(nil, tok))
		return false, optionSyntaxError(r.lr.name, r.lr.line, "%d words on a line: {InputOptions.Format} tokens reads one token a line (running text, one sentence a line, is {InputOptions.Format} plain; columns are {InputOptions.Format} conll)", n)
	}
	r.cells = append(r.cells, tok)
	r.lines = append(r.lines, r.lr.line)
	return true, nil
}

func (r *tokensReader) pending() bool { return len(r.cells) > 0 }

func (r *tokensReader) blank() {}

func (r *tokensReader) lineSource() *lineReader { return r.lr }
