package featurize

import (
	"io"
	"strconv"
	"strings"
)

// conlluFields is the number of tab-separated fields of a CoNLL-U word line:
// ID FORM LEMMA UPOS XPOS FEATS HEAD DEPREL DEPS MISC.
const conlluFields = 10

// ConlluOptions configures a conlluReader; the zero value labels words with
// their UPOS tag.
type ConlluOptions struct {
	// XPOSLabel labels words with XPOS (field 5, language-specific tags such
	// as the PTB tags of English) instead of UPOS; UPOS is then the "upos"
	// column.
	XPOSLabel bool
}

// conlluReader reads CoNLL-U (Universal Dependencies): one word per line in
// 10 tab-separated fields, "#" comment lines, a blank line after each
// sentence. Multiword-token lines (ID "n-m") and empty nodes (ID "n.m") are
// skipped; word IDs must run 1, 2, … within a sentence.
//
// The label is UPOS (or XPOS, see ConlluOptions), with "_" read as "" (no
// label). The token columns are, in order:
//
//	word   FORM
//	lemma  LEMMA
//	xpos   XPOS when the label is UPOS (named upos, holding UPOS, when the label is XPOS)
//	feats  FEATS
//
// The other tag column is gold annotation, nearly a function of the label,
// so it is deliberately not named "pos": the built-in templates' pos items
// (meant for automatic tags such as CoNLL-2002's) do not read it. A template
// that wants it names it: xpos[0].
//
// HEAD, DEPREL, DEPS and MISC are validated only for presence.
type conlluReader struct {
	lr      *lineReader
	opts    ConlluOptions
	columns []string
	nextID  int // the word ID expected next in the current sentence

	cells  []string
	labels []string
	lines  []int // line of each word
	sent   Sentence
	nsent  int
	err    error
}

var _ Reader = (*conlluReader)(nil)

// conlluColumns are the token columns of a conlluReader.
func conlluColumns(opts ConlluOptions) []string {
	if opts.XPOSLabel {
		return []string{"word", "lemma", "upos", "feats"}
	}
	return []string{"word", "lemma", "xpos", "feats"}
}

// newConlluReader returns a reader of the CoNLL-U text r, whose display name
// (for errors) is name.
func newConlluReader(r io.Reader, name string, opts ConlluOptions) *conlluReader {
	return &conlluReader{lr: newLineReader(r, name), opts: opts, columns: conlluColumns(opts)}
}

// Columns names the token columns: word, lemma, pos, feats.
func (r *conlluReader) Columns() []string { return r.columns }

// Sentence returns the sentence read by the last successful Scan.
func (r *conlluReader) Sentence() *Sentence { return &r.sent }

// Err returns the first error met, nil at a clean end of input.
func (r *conlluReader) Err() error { return r.err }

// Scan reads the next sentence.
func (r *conlluReader) Scan() bool {
	if r.err != nil {
		return false
	}
	r.cells, r.labels, r.lines = r.cells[:0], r.labels[:0], r.lines[:0]
	r.nextID = 1
	if first := scanBlock(r.lr, r, r.nsent, &r.err); first > 0 {
		return r.emit(first)
	}
	return false
}

func (r *conlluReader) line(b []byte) (bool, error) {
	if b[0] == '#' {
		return false, nil
	}
	return r.addLine(string(b))
}

func (r *conlluReader) pending() bool { return len(r.labels) > 0 }

func (r *conlluReader) blank() { r.nextID = 1 }

// addLine adds the word of a non-comment line; word is false for the
// skipped multiword-token and empty-node lines.
func (r *conlluReader) addLine(line string) (word bool, err error) {
	var f [conlluFields]string
	n := 0
	for rest := line; ; n++ {
		i := strings.IndexByte(rest, '\t')
		if n < conlluFields {
			if i < 0 {
				f[n] = rest
			} else {
				f[n] = rest[:i]
			}
		}
		if i < 0 {
			break
		}
		rest = rest[i+1:]
	}
	n++
	if n != conlluFields {
		return false, r.lr.syntaxError("expected %d tab-separated fields, found %d", conlluFields, n)
	}
	id := f[0]
	switch {
	case conlluDigits(id):
		if got, err := strconv.Atoi(id); err != nil || got != r.nextID {
			return false, r.lr.syntaxError("expected word ID %d, found %q", r.nextID, id)
		}
		r.nextID++
	case conlluPair(id, '-'), conlluPair(id, '.'):
		return false, nil
	default:
		return false, r.lr.syntaxError("invalid ID %q: expected n, n-m or n.m", id)
	}
	upos, xpos := f[3], f[4]
	label, pos := upos, xpos
	if r.opts.XPOSLabel {
		label, pos = xpos, upos
	}
	if label == "_" {
		label = ""
	}
	r.cells = append(r.cells, f[1], f[2], pos, f[5])
	r.labels = append(r.labels, label)
	r.lines = append(r.lines, r.lr.line)
	return true, nil
}

// conlluDigits reports whether s is a non-empty run of ASCII digits.
func conlluDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// conlluPair reports whether s is digits, sep, digits.
func conlluPair(s string, sep byte) bool {
	i := strings.IndexByte(s, sep)
	return i > 0 && conlluDigits(s[:i]) && conlluDigits(s[i+1:])
}

// emit publishes the collected words as the current sentence.
func (r *conlluReader) emit(line int) bool {
	r.sent.Tokens = readerRows(r.sent.Tokens, r.cells, len(r.columns))
	r.sent.Labels = r.labels
	r.sent.Attrs = nil
	r.sent.Line = line
	r.sent.Lines = r.lines
	r.nsent++
	return true
}

func (r *conlluReader) lineSource() *lineReader { return r.lr }
