package featurize

import (
	"bytes"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// The OCR letters of Taskar, Guestrin & Koller (letter.data): one letter
// per line, tab-separated (each line may end with a trailing TAB),
//
//	id  letter  next_id  word_id  position  fold  p_0_0 … p_15_7
//
// where letter is the label, next_id is -1 at the last letter of a word
// (words are runs of consecutive lines), position is 1-based in the word,
// fold 0–9 is the standard 10-fold split, and the 128 pixels (16 rows × 8
// columns, row-major) are 0 or 1.

const (
	// OCRRows and OCRCols are the height and width of a letter's bitmap.
	OCRRows, OCRCols = 16, 8
	// OCRPixels is the number of pixels, each one attribute.
	OCRPixels = OCRRows * OCRCols
	// OCRFolds is the number of folds of the standard split.
	OCRFolds = 10
	// ocrFields is the number of fields of a line (without the trailing
	// empty one).
	ocrFields = 6 + OCRPixels
)

// OCRAttrNames returns the 128 pixel attribute names, p_ROW_COL in the
// file's row-major order: attribute id i is pixel i. A set pixel is the
// attribute with value 1; a clear pixel is left out (value 0), which
// scores the same in a linear model, so the vocabulary always holds all
// 128 names whatever pixels a fold sets, and the model has
// d = 128·K + K² + 3K weights (4,082 for K = 26).
func OCRAttrNames() []string {
	names := make([]string, 0, OCRPixels)
	for r := 0; r < OCRRows; r++ {
		for c := 0; c < OCRCols; c++ {
			names = append(names, fmt.Sprintf("p_%d_%d", r, c))
		}
	}
	return names
}

// OCRLabels returns the 26 labels a–z in order, the label ids of an OCR
// table whatever letters its folds hold.
func OCRLabels() []string {
	l := make([]string, 26)
	for i := range l {
		l[i] = string(rune('a' + i))
	}
	return l
}

// ParseFolds parses a fold selection: comma-separated fold numbers or
// ranges "A-B" (e.g. "0-8", "9", "0,2,4-6") among 0…OCRFolds-1. The
// result marks the selected folds; "" selects all of them (nil).
func ParseFolds(spec string) ([]bool, error) {
	if spec == "" {
		return nil, nil
	}
	sel := make([]bool, OCRFolds)
	for _, part := range strings.Split(spec, ",") {
		lo, hi, isRange := strings.Cut(strings.TrimSpace(part), "-")
		a, err := parseFold(lo)
		if err != nil {
			return nil, fmt.Errorf("folds %q: %w", spec, err)
		}
		b := a
		if isRange {
			if b, err = parseFold(hi); err != nil {
				return nil, fmt.Errorf("folds %q: %w", spec, err)
			}
			if b < a {
				return nil, fmt.Errorf("folds %q: range %d-%d is empty", spec, a, b)
			}
		}
		for f := a; f <= b; f++ {
			sel[f] = true
		}
	}
	return sel, nil
}

func parseFold(s string) (int, error) {
	f, err := strconv.Atoi(s)
	if err != nil || f < 0 || f >= OCRFolds {
		return 0, fmt.Errorf("fold %q is not a number in 0-%d", s, OCRFolds-1)
	}
	return f, nil
}

// ocrReader reads Taskar's OCR letters: each word is one sentence, each
// letter a token labelled with the letter, whose attributes are its set
// pixels (see OCRAttrNames). Sentence.Tokens is nil and Columns empty.
// Lines are checked: 134 fields, consecutive ids, next_id -1 or id+1,
// positions 1, 2, … within a word, one word id and fold per word, pixels 0
// or 1; a word cut short by the end of input is an error. With a fold
// selection, words of other folds are read (and checked) but skipped.
type ocrReader struct {
	lr    *lineReader
	folds []bool // selected folds; nil: all

	names  []string // pixel attribute names, by pixel
	attrs  []Attr
	ends   []int
	labels []string
	lines  []int
	sent   Sentence
	nsent  int // words emitted
	words  int // words read, selected or not
	lastID int64
	err    error
	fields [][]byte
}

var _ Reader = (*ocrReader)(nil)

// newOCRReader returns a reader of the OCR letters r, whose display name
// (for errors) is name; folds selects the folds read (nil: all).
func newOCRReader(r io.Reader, name string, folds []bool) *ocrReader {
	return &ocrReader{lr: newLineReader(r, name), folds: folds, names: OCRAttrNames()}
}

// Columns returns nil: letters carry pixel attributes, not token columns.
func (r *ocrReader) Columns() []string { return nil }

// Sentence returns the word read by the last successful Scan.
func (r *ocrReader) Sentence() *Sentence { return &r.sent }

// Err returns the first error met, nil at a clean end of input.
func (r *ocrReader) Err() error { return r.err }

func (r *ocrReader) lineSource() *lineReader { return r.lr }

// ocrWord is the state of the word being read.
type ocrWord struct {
	wordID, fold string
	first        int // line of its first letter
}

// Scan reads the next word of a selected fold.
func (r *ocrReader) Scan() bool {
	for r.err == nil {
		keep, ok := r.readWord()
		if !ok {
			break
		}
		if keep {
			r.emit()
			return true
		}
	}
	if r.err == nil && r.nsent == 0 {
		if r.words == 0 {
			r.err = readerNoSentences(r.lr.name)
		} else {
			r.err = &SyntaxError{File: r.lr.name, Msg: fmt.Sprintf("no word of the selected folds among %d words", r.words)}
		}
	}
	return false
}

// readWord reads the lines of one word; keep says whether its fold is
// selected; ok is false at the end of input or on error.
func (r *ocrReader) readWord() (keep, ok bool) {
	r.attrs, r.ends, r.labels, r.lines = r.attrs[:0], r.ends[:0], r.labels[:0], r.lines[:0]
	var w ocrWord
	for {
		b, more := r.lr.next()
		if !more {
			if r.lr.err != nil {
				r.err = r.lr.err
			} else if len(r.labels) > 0 {
				r.err = &SyntaxError{File: r.lr.name, Line: r.lr.line,
					Msg: fmt.Sprintf("input ends inside the word that begins at line %d (its last letter has next_id -1)", w.first)}
			}
			return false, false
		}
		if readerBlankLine(b) {
			if len(r.labels) > 0 {
				r.err = r.lr.syntaxError("blank line inside the word that begins at line %d", w.first)
				return false, false
			}
			continue
		}
		last, err := r.letter(b, &w)
		if err != nil {
			r.err = err
			return false, false
		}
		if len(r.labels) > r.lr.maxTokens {
			r.err = r.lr.checkTokens(len(r.labels), w.first)
			return false, false
		}
		if last {
			r.words++
			f, _ := strconv.Atoi(w.fold)
			return r.folds == nil || (f >= 0 && f < len(r.folds) && r.folds[f]), true
		}
	}
}

// letter parses one line into the current word; last says whether it
// ends the word.
func (r *ocrReader) letter(b []byte, w *ocrWord) (last bool, err error) {
	b = bytes.TrimSuffix(b, []byte{'\t'})
	r.fields = r.fields[:0]
	for len(b) > 0 || len(r.fields) == 0 {
		i := bytes.IndexByte(b, '\t')
		if i < 0 {
			r.fields = append(r.fields, b)
			break
		}
		r.fields = append(r.fields, b[:i])
		b = b[i+1:]
		if len(r.fields) > ocrFields {
			break
		}
	}
	f := r.fields
	if len(f) != ocrFields {
		more, n := "", len(f)
		if n > ocrFields {
			more, n = "more than ", ocrFields
		}
		return false, r.lr.syntaxError("%s%d tab-separated fields, want %d (id, letter, next_id, word_id, position, fold and %d pixels)", more, n, ocrFields, OCRPixels)
	}
	id, err := r.int(f[0], "id")
	if err != nil {
		return false, err
	}
	if r.lastID != 0 && id != r.lastID+1 {
		return false, r.lr.syntaxError("id %d does not follow id %d of the line before", id, r.lastID)
	}
	r.lastID = id
	label := string(f[1])
	if label == "" || strings.ContainsAny(label, " ") {
		return false, r.lr.syntaxError("letter %q is not a label", label)
	}
	next, err := r.int(f[2], "next_id")
	if err != nil {
		return false, err
	}
	if next != -1 && next != id+1 {
		return false, r.lr.syntaxError("next_id %d is neither -1 (end of word) nor id+1 = %d", next, id+1)
	}
	pos, err := r.int(f[4], "position")
	if err != nil {
		return false, err
	}
	if want := int64(len(r.labels) + 1); pos != want {
		return false, r.lr.syntaxError("position %d, want %d (letter %d of its word)", pos, want, want)
	}
	if _, err := r.int(f[3], "word_id"); err != nil {
		return false, err
	}
	fold, err := r.int(f[5], "fold")
	if err != nil {
		return false, err
	}
	if fold < 0 || fold >= OCRFolds {
		return false, r.lr.syntaxError("fold %d is not in 0-%d", fold, OCRFolds-1)
	}
	if len(r.labels) == 0 {
		*w = ocrWord{wordID: string(f[3]), fold: string(f[5]), first: r.lr.line}
	} else if string(f[3]) != w.wordID || string(f[5]) != w.fold {
		return false, r.lr.syntaxError("word_id %s, fold %s differ from word %s, fold %s of the word that begins at line %d", f[3], f[5], w.wordID, w.fold, w.first)
	}
	for k, p := range f[6:] {
		switch {
		case len(p) == 1 && p[0] == '1':
			r.attrs = append(r.attrs, Attr{Name: r.names[k], Value: 1})
		case len(p) == 1 && p[0] == '0':
		default:
			return false, r.lr.syntaxError("pixel %s is %q, want 0 or 1", r.names[k], p)
		}
	}
	r.ends = append(r.ends, len(r.attrs))
	r.labels = append(r.labels, label)
	r.lines = append(r.lines, r.lr.line)
	return next == -1, nil
}

// int parses a decimal integer field.
func (r *ocrReader) int(b []byte, what string) (int64, error) {
	v, err := strconv.ParseInt(string(b), 10, 64)
	if err != nil {
		return 0, r.lr.syntaxError("%s %q is not an integer", what, b)
	}
	return v, nil
}

// emit publishes the word read as the current sentence.
func (r *ocrReader) emit() {
	rows := r.sent.Attrs[:0]
	start := 0
	for _, end := range r.ends {
		rows = append(rows, r.attrs[start:end:end])
		start = end
	}
	r.sent = Sentence{Labels: r.labels, Attrs: rows, Line: r.lines[0], Lines: r.lines}
	r.nsent++
}
