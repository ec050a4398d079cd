package featurize

import (
	"errors"
	"io"
	"math"
	"strconv"
	"strings"
)

// CRFsuiteReader reads CRFsuite attribute files (the "item with attributes"
// format of crfsuite learn/tag): one item per line,
//
//	label<TAB>attr[:value]<TAB>attr[:value]…
//
// and a blank line after each sequence. Empty fields (runs of TABs) are
// skipped, as CRFsuite does, so the first non-empty field is the label.
// An attribute's value follows its last unescaped ':' when that suffix
// parses as a finite float; otherwise the whole field is the name and the
// value is 1 (CRFsuite itself splits at the first ':' and reads a
// non-number as 0). Names are unescaped like CRFsuite does: "\:" is ':',
// "\\" is '\', any other '\' stays. A value that is NaN or infinite, or a
// number beyond float64's range ("1e309"), is an error.
//
// Sentence.Attrs and Sentence.Labels are filled; Tokens is nil and Columns
// is empty. Input without any sequence is an error ("no sentences").
type CRFsuiteReader struct {
	lr *lineReader

	attrs  []Attr // attributes of the sequence, item after item
	ends   []int  // ends[t] is the end of item t's attributes in attrs
	labels []string
	lines  []int // line of each item
	sent   Sentence
	nsent  int
	err    error
}

var _ Reader = (*CRFsuiteReader)(nil)

// NewCRFsuiteReader returns a reader of the CRFsuite attribute text r, whose
// display name (for errors) is name.
func NewCRFsuiteReader(r io.Reader, name string) *CRFsuiteReader {
	return &CRFsuiteReader{lr: newLineReader(r, name)}
}

// Columns returns nil: the items carry attributes, not token columns.
func (r *CRFsuiteReader) Columns() []string { return nil }

// Sentence returns the sequence read by the last successful Scan.
func (r *CRFsuiteReader) Sentence() *Sentence { return &r.sent }

// Err returns the first error met, nil at a clean end of input.
func (r *CRFsuiteReader) Err() error { return r.err }

// Scan reads the next sequence.
func (r *CRFsuiteReader) Scan() bool {
	if r.err != nil {
		return false
	}
	r.attrs, r.ends, r.labels, r.lines = r.attrs[:0], r.ends[:0], r.labels[:0], r.lines[:0]
	if first := scanBlock(r.lr, r, r.nsent, &r.err); first > 0 {
		return r.emit(first)
	}
	return false
}

func (r *CRFsuiteReader) line(b []byte) (bool, error) { return true, r.addItem(string(b)) }

func (r *CRFsuiteReader) pending() bool { return len(r.labels) > 0 }

func (r *CRFsuiteReader) blank() {}

// addItem parses one item line.
func (r *CRFsuiteReader) addItem(line string) error {
	label := true
	for rest := line; rest != ""; {
		f := rest
		if i := strings.IndexByte(rest, '\t'); i >= 0 {
			f, rest = rest[:i], rest[i+1:]
		} else {
			rest = ""
		}
		if f == "" {
			continue
		}
		name, value, err := crfsuiteField(f)
		if err != nil {
			return r.lr.syntaxError("%v", err)
		}
		if label {
			r.labels = append(r.labels, name)
			label = false
			continue
		}
		if name == "" {
			return r.lr.syntaxError("empty attribute name in %q", f)
		}
		r.attrs = append(r.attrs, Attr{Name: name, Value: value})
	}
	if label { // only TABs and spaces: cannot happen after readerBlankLine
		return r.lr.syntaxError("missing label")
	}
	r.ends = append(r.ends, len(r.attrs))
	r.lines = append(r.lines, r.lr.line)
	return nil
}

// crfsuiteField splits a field into its unescaped name and its value (1 when
// absent).
func crfsuiteField(f string) (name string, value float64, err error) {
	colon := crfsuiteLastColon(f)
	if colon >= 0 {
		v, perr := strconv.ParseFloat(f[colon+1:], 64)
		switch {
		case errors.Is(perr, strconv.ErrRange) && math.IsInf(v, 0):
			return "", 0, &crfsuiteValueError{field: f, why: "is beyond the range of float64 (±1.8e308)"}
		case perr != nil:
			// not a number: the whole field is the name
		case math.IsNaN(v) || math.IsInf(v, 0):
			return "", 0, &crfsuiteValueError{field: f, why: "must be a finite number"}
		default:
			return CRFsuiteUnescape(f[:colon]), v, nil
		}
	}
	return CRFsuiteUnescape(f), 1, nil
}

// crfsuiteValueError is an attribute value that parses as a number but is
// not a usable one.
type crfsuiteValueError struct{ field, why string }

func (e *crfsuiteValueError) Error() string {
	return "attribute value " + e.why + ": " + strconv.Quote(e.field)
}

// crfsuiteLastColon returns the index of the last ':' of f that is not
// escaped as "\:", or -1.
func crfsuiteLastColon(f string) int {
	last := -1
	for i := 0; i < len(f); i++ {
		switch f[i] {
		case '\\':
			if i+1 < len(f) && (f[i+1] == ':' || f[i+1] == '\\') {
				i++
			}
		case ':':
			last = i
		}
	}
	return last
}

// CRFsuiteUnescape undoes CRFsuite's escaping of attribute names: "\:"
// becomes ':' and "\\" becomes '\'; a '\' before any other character is
// kept.
func CRFsuiteUnescape(s string) string {
	i := strings.IndexByte(s, '\\')
	if i < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	b.WriteString(s[:i])
	for ; i < len(s); i++ {
		c := s[i]
		if c == '\\' && i+1 < len(s) && (s[i+1] == ':' || s[i+1] == '\\') {
			i++
			c = s[i]
		}
		b.WriteByte(c)
	}
	return b.String()
}

// emit publishes the collected items as the current sequence.
func (r *CRFsuiteReader) emit(line int) bool {
	rows := r.sent.Attrs[:0]
	start := 0
	for _, end := range r.ends {
		rows = append(rows, r.attrs[start:end:end])
		start = end
	}
	r.sent.Tokens = nil
	r.sent.Labels = r.labels
	r.sent.Attrs = rows
	r.sent.Line = line
	r.sent.Lines = r.lines
	r.nsent++
	return true
}

func (r *CRFsuiteReader) lineSource() *lineReader { return r.lr }
