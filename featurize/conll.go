package featurize

import (
	"fmt"
	"io"
	"strings"
)

// Values of ConllOptions.LabelColumn with a special meaning.
const (
	// LabelLast takes the last column as the label (the CoNLL convention).
	LabelLast = -1
	// LabelNone reads unlabelled text: every column is a token column.
	LabelNone = -2
)

// ConllDocstart is the first field of the document-boundary lines of the
// CoNLL-2002/2003 corpora.
const ConllDocstart = "-DOCSTART-"

// ConllOptions configures a ConllReader. The zero value takes column 0 as
// the label; use DefaultConllOptions for the usual layout (label last).
type ConllOptions struct {
	// Columns names the token columns (all columns but the label) in file
	// order. When nil the names are "word", "pos", "chunk", then "c3",
	// "c4", … by position among the token columns, and the column count is
	// taken from the first token line. When set, every line must have
	// len(Columns) columns plus the label column.
	Columns []string
	// LabelColumn is the 0-based index of the label column among all the
	// columns of a line, LabelLast (-1) for the last one, or LabelNone (-2)
	// for unlabelled text.
	LabelColumn int
	// KeepDocstart keeps "-DOCSTART-" lines as ordinary tokens; by default
	// they are dropped, and a sentence left empty is skipped.
	KeepDocstart bool
}

// DefaultConllOptions returns the options for the usual CoNLL layout:
// default column names, label in the last column, -DOCSTART- dropped.
func DefaultConllOptions() ConllOptions {
	return ConllOptions{LabelColumn: LabelLast}
}

// ConllReader reads CoNLL column files: one token per line, columns
// separated by spaces or tabs, a blank line after each sentence (CoNLL-2000
// chunking, CoNLL-2002/2003 NER and the like). Every token line of a file
// must have the same number of columns. Lines "-DOCSTART- …" are dropped
// whether they stand alone (CoNLL-2003) or open a sentence (CoNLL-2002).
// Input without any sentence is an error ("no sentences").
//
// It holds one sentence at a time; each token line costs one string
// allocation, shared by the token's fields.
type ConllReader struct {
	lr      *lineReader
	opts    ConllOptions
	ncols   int // columns per line; 0 until the first token line
	label   int // index of the label column, or -1 for none
	columns []string

	fields []string
	cells  []string // token cells, row-major, ncols-1 or ncols per token
	labels []string
	lines  []int // line of each token
	// first is the text of the file's first token line and firstLine its
	// number, until a second token line is read: a mismatch there blames
	// a first line that looks like a comment.
	first     string
	firstLine int
	sent      Sentence
	nsent     int
	err       error
	docstarts int // -DOCSTART- lines left out
}

var _ Reader = (*ConllReader)(nil)

// NewConllReader returns a reader of the CoNLL column text r, whose display
// name (for errors) is name.
func NewConllReader(r io.Reader, name string, opts ConllOptions) *ConllReader {
	cr := &ConllReader{lr: newLineReader(r, name), opts: opts}
	if opts.LabelColumn < LabelNone {
		cr.err = fmt.Errorf("conll reader %s: invalid label column %d", name, opts.LabelColumn)
	}
	return cr
}

// Columns names the token columns. With ConllOptions.Columns unset it is
// known only after the first successful Scan (nil before).
func (r *ConllReader) Columns() []string { return r.columns }

// Docstarts returns the number of "-DOCSTART-" lines read so far and left
// out (ConllOptions.KeepDocstart keeps them as tokens).
func (r *ConllReader) Docstarts() int { return r.docstarts }

// Sentence returns the sentence read by the last successful Scan.
func (r *ConllReader) Sentence() *Sentence { return &r.sent }

// Err returns the first error met, nil at a clean end of input.
func (r *ConllReader) Err() error { return r.err }

// Scan reads the next sentence.
func (r *ConllReader) Scan() bool {
	if r.err != nil {
		return false
	}
	r.cells, r.labels, r.lines = r.cells[:0], r.labels[:0], r.lines[:0]
	if first := scanBlock(r.lr, r, r.nsent, &r.err); first > 0 {
		return r.emit(first)
	}
	return false
}

func (r *ConllReader) line(b []byte) (bool, error) {
	r.fields = readerSpaceFields(r.fields[:0], string(b))
	if r.fields[0] == ConllDocstart && !r.opts.KeepDocstart {
		r.docstarts++
		return false, nil
	}
	return true, r.addToken()
}

func (r *ConllReader) pending() bool { return len(r.labels) > 0 || len(r.cells) > 0 }

func (r *ConllReader) blank() {}

// addToken appends the token of the fields of the current line.
func (r *ConllReader) addToken() error {
	if r.ncols == 0 {
		if err := r.setup(len(r.fields)); err != nil {
			return err
		}
		r.first, r.firstLine = strings.Join(r.fields, " "), r.lr.line
	} else if r.firstLine > 0 {
		if len(r.fields) != r.ncols && strings.HasPrefix(r.first, "#") {
			return &SyntaxError{File: r.lr.name, Line: r.firstLine, Msg: fmt.Sprintf(
				"%.60q looks like a comment, but CoNLL files have none: it was read as a token line of %d columns, and the next token line (line %d) has %d; remove it",
				r.first, r.ncols, r.lr.line, len(r.fields))}
		}
		r.first, r.firstLine = "", 0
	}
	if len(r.fields) != r.ncols {
		if max(r.ncols, len(r.fields)) >= 5 { // more columns than CoNLL files have: words
			return optionSyntaxError(r.lr.name, r.lr.line, "expected %d columns, found %d (CoNLL text has one token a line, its columns separated by spaces; running text, one sentence a line, is {InputOptions.Format} plain)", r.ncols, len(r.fields))
		}
		return r.lr.syntaxError("expected %d columns, found %d", r.ncols, len(r.fields))
	}
	r.lines = append(r.lines, r.lr.line)
	for c, f := range r.fields {
		if c == r.label {
			r.labels = append(r.labels, f)
		} else {
			r.cells = append(r.cells, f)
		}
	}
	return nil
}

// setup fixes the column layout from the first token line, of n columns.
func (r *ConllReader) setup(n int) error {
	hasLabel := r.opts.LabelColumn != LabelNone
	if r.opts.Columns != nil {
		want := len(r.opts.Columns)
		if hasLabel {
			want++
		}
		if n != want {
			return r.lr.syntaxError("expected %d columns (%d named token columns%s), found %d",
				want, len(r.opts.Columns), conllLabelNote(hasLabel), n)
		}
	}
	r.label = -1
	if hasLabel {
		if n < 2 {
			return r.lr.syntaxError("missing label column: found %d column, expected token columns and a label column (read unlabelled text without a label column)", n)
		}
		r.label = r.opts.LabelColumn
		if r.label == LabelLast {
			r.label = n - 1
		}
		if r.label >= n {
			return r.lr.syntaxError("missing label column: column %d requested for the label (counting from 1), found %d columns", r.label+1, n)
		}
	}
	r.ncols = n
	r.columns = r.opts.Columns
	if r.columns == nil {
		k := n
		if hasLabel {
			k--
		}
		r.columns = make([]string, k)
		for i := range r.columns {
			r.columns[i] = conllColumnName(i)
		}
	}
	return nil
}

func conllLabelNote(hasLabel bool) string {
	if hasLabel {
		return " + label"
	}
	return ""
}

// conllColumnName is the default name of token column i.
func conllColumnName(i int) string {
	switch i {
	case 0:
		return "word"
	case 1:
		return "pos"
	case 2:
		return "chunk"
	}
	return fmt.Sprintf("c%d", i)
}

// emit publishes the collected tokens as the current sentence.
func (r *ConllReader) emit(line int) bool {
	k := len(r.columns)
	r.sent.Tokens = readerRows(r.sent.Tokens, r.cells, k)
	r.sent.Labels = nil
	if r.label >= 0 {
		r.sent.Labels = r.labels
	}
	r.sent.Attrs = nil
	r.sent.Line = line
	r.sent.Lines = r.lines
	r.nsent++
	return true
}

func (r *ConllReader) lineSource() *lineReader { return r.lr }
