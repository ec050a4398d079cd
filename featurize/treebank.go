package featurize

import (
	"archive/zip"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"sort"
	"strings"
)

// TreebankFormat selects a Penn Treebank file format.
type TreebankFormat int

// The Penn Treebank formats.
const (
	// TreebankMRG is the bracketed-tree format with POS tags
	// (combined/wsj_*.mrg).
	TreebankMRG TreebankFormat = iota + 1
	// TreebankPOS is the tagged-text format word/TAG (tagged/wsj_*.pos).
	TreebankPOS
)

// treebankNone is the tag of trace elements in .mrg trees.
const treebankNone = "-NONE-"

// ParseTreebankFormat parses "mrg" or "pos" (a leading "." is allowed).
func ParseTreebankFormat(s string) (TreebankFormat, error) {
	switch strings.TrimPrefix(s, ".") {
	case "mrg":
		return TreebankMRG, nil
	case "pos":
		return TreebankPOS, nil
	}
	return 0, fmt.Errorf("unknown treebank format %q: want mrg or pos", s)
}

// String returns "mrg" or "pos".
func (f TreebankFormat) String() string {
	switch f {
	case TreebankMRG:
		return "mrg"
	case TreebankPOS:
		return "pos"
	}
	return fmt.Sprintf("TreebankFormat(%d)", int(f))
}

// treebankToken is one word/TAG item of a .pos line.
type treebankToken struct{ word, tag string }

// treebankNode is an open constituent of a .mrg tree.
type treebankNode struct {
	label, word       string
	hasLabel, hasWord bool
	hasChild          bool
}

// TreebankReader reads Penn Treebank files; the label of a token is its POS
// tag and its one column is "word". Words are kept as written (the
// treebank's escapes such as "1\/2" and "-LRB-" stay). Input without any
// sentence is an error ("no sentences").
//
// TreebankMRG: each top-level bracketed tree is a sentence; its leaves
// "(TAG word)" are the tokens, less the "-NONE-" trace elements. A tree
// left with no token is skipped.
//
// TreebankPOS: tokens are "word/TAG" separated by spaces, split at the last
// "/" (which must not be escaped as "\/"); tags are kept as written,
// including ambiguous ones such as "VBG|NN". The "[" "]" NP-chunk brackets
// are ignored. Sentence boundaries in these files are not marked
// unambiguously; the rule, worked out against the .mrg trees of the NLTK
// sample, is:
//   - a separator line "=====…" or the end of the file ends a sentence;
//   - a blank line ends a sentence, except right after a chunk line
//     (a line ending in "]"), where the tagger also broke lines inside a
//     sentence;
//   - a closing-quote token (tag: two apostrophes) that opens the next
//     block belongs to the sentence before it (the files put the quote
//     closing a sentence after the blank line).
//
// On the NLTK sample this gives 3,950 sentences for the 3,914 trees.
type TreebankReader struct {
	lr      *lineReader
	format  TreebankFormat
	columns []string

	words, tags []string
	lines       []int // line of each token
	first       int   // line of the first token of the sentence being built
	sent        Sentence
	nsent       int
	err         error

	// TreebankPOS state.
	toks      []treebankToken // items of the last line read
	tokLine   int
	tokPos    int  // next item of toks to consume
	closed    bool // a blank line ended the sentence being built
	prevChunk bool // the last non-blank line ended with "]"

	// TreebankMRG state.
	line     string // the line being scanned
	pos      int    // scan position in line
	stack    []treebankNode
	treeLine int // line of the '(' opening the current tree
}

var _ Reader = (*TreebankReader)(nil)

// newTreebankReader returns a reader of the Penn Treebank text r in the
// given format; name is its display name for errors.
func newTreebankReader(r io.Reader, name string, format TreebankFormat) *TreebankReader {
	tr := &TreebankReader{lr: newLineReader(r, name), format: format, columns: []string{"word"}}
	if format != TreebankMRG && format != TreebankPOS {
		tr.err = fmt.Errorf("treebank reader %s: invalid format %v", name, format)
	}
	return tr
}

// Columns names the token columns: "word".
func (r *TreebankReader) Columns() []string { return r.columns }

// Sentence returns the sentence read by the last successful Scan.
func (r *TreebankReader) Sentence() *Sentence { return &r.sent }

// Err returns the first error met, nil at a clean end of input.
func (r *TreebankReader) Err() error { return r.err }

// Scan reads the next sentence.
func (r *TreebankReader) Scan() bool {
	if r.err != nil {
		return false
	}
	r.words, r.tags, r.lines = r.words[:0], r.tags[:0], r.lines[:0]
	if r.format == TreebankPOS {
		return r.scanPOS()
	}
	return r.scanMRG()
}

func (r *TreebankReader) add(word, tag string, line int) error {
	if len(r.words) == 0 {
		r.first = line
	}
	if err := r.lr.checkTokens(len(r.words)+1, r.first); err != nil {
		return err
	}
	r.words = append(r.words, word)
	r.tags = append(r.tags, tag)
	r.lines = append(r.lines, line)
	return nil
}

func (r *TreebankReader) emit() bool {
	r.sent.Tokens = readerRows(r.sent.Tokens, r.words, 1)
	r.sent.Labels = r.tags
	r.sent.Attrs = nil
	r.sent.Line = r.first
	r.sent.Lines = r.lines
	r.nsent++
	return true
}

// finish ends a Scan at the end of the input or on a read error.
func (r *TreebankReader) finish() bool {
	if r.lr.err != nil {
		r.err = r.lr.err
		return false
	}
	if len(r.words) > 0 {
		r.closed = false
		return r.emit()
	}
	if r.nsent == 0 {
		r.err = readerNoSentences(r.lr.name)
	}
	return false
}

func (r *TreebankReader) scanPOS() bool {
	for {
		for r.tokPos < len(r.toks) {
			tk := r.toks[r.tokPos]
			if r.closed {
				r.closed = false
				if tk.tag == "''" {
					if r.err = r.add(tk.word, tk.tag, r.tokLine); r.err != nil {
						return false
					}
					r.tokPos++
				}
				return r.emit()
			}
			if r.err = r.add(tk.word, tk.tag, r.tokLine); r.err != nil {
				return false
			}
			r.tokPos++
		}
		b, ok := r.lr.next()
		if !ok {
			return r.finish()
		}
		switch {
		case treebankSeparator(b):
			r.prevChunk = false
			if len(r.words) > 0 {
				r.closed = false
				return r.emit()
			}
		case readerBlankLine(b):
			if len(r.words) > 0 && !r.prevChunk {
				r.closed = true
			}
		default:
			if err := r.tokenizePOS(string(b)); err != nil {
				r.err = err
				return false
			}
		}
	}
}

// treebankSeparator reports whether b is a "=====" paragraph separator.
func treebankSeparator(b []byte) bool {
	n := 0
	for _, c := range b {
		switch c {
		case '=':
			n++
		case ' ', '\t':
		default:
			return false
		}
	}
	return n > 0
}

// tokenizePOS splits a .pos line into its word/TAG items.
func (r *TreebankReader) tokenizePOS(line string) error {
	r.toks, r.tokPos, r.tokLine = r.toks[:0], 0, r.lr.line
	last := ""
	for rest := line; ; {
		rest = strings.TrimLeft(rest, " \t")
		if rest == "" {
			break
		}
		end := strings.IndexAny(rest, " \t")
		if end < 0 {
			end = len(rest)
		}
		f := rest[:end]
		rest = rest[end:]
		last = f
		if f == "[" || f == "]" {
			continue
		}
		i := strings.LastIndexByte(f, '/')
		if i <= 0 || i == len(f)-1 || f[i-1] == '\\' {
			return r.lr.syntaxError("expected word/TAG, found %q", f)
		}
		r.toks = append(r.toks, treebankToken{word: f[:i], tag: f[i+1:]})
	}
	r.prevChunk = last == "]"
	return nil
}

func (r *TreebankReader) scanMRG() bool {
	for {
		for r.pos < len(r.line) {
			done, err := r.stepMRG()
			if err != nil {
				r.err = err
				return false
			}
			if done {
				return r.emit()
			}
		}
		b, ok := r.lr.next()
		if !ok {
			break
		}
		r.line, r.pos = string(b), 0
	}
	if r.lr.err == nil && len(r.stack) > 0 {
		r.err = &SyntaxError{File: r.lr.name, Line: r.treeLine,
			Msg: fmt.Sprintf("unterminated tree: %d '(' still open at end of input", len(r.stack))}
		return false
	}
	return r.finish()
}

// stepMRG consumes one bracket or atom of the current line; done reports
// that a tree with at least one token was completed.
func (r *TreebankReader) stepMRG() (done bool, err error) {
	switch c := r.line[r.pos]; c {
	case ' ', '\t':
		r.pos++
	case '(':
		r.pos++
		if len(r.stack) == 0 {
			r.treeLine = r.lr.line
		} else if len(r.stack) >= r.lr.maxTokens {
			return false, optionSyntaxError(r.lr.name, r.lr.line, "tree nested deeper than %d levels (the limit, {InputOptions.MaxSentenceTokens})", r.lr.maxTokens)
		} else {
			top := &r.stack[len(r.stack)-1]
			if top.hasWord {
				return false, r.lr.syntaxError("unexpected '(' after the word %q of (%s …)", top.word, top.label)
			}
			top.hasChild = true
		}
		r.stack = append(r.stack, treebankNode{})
	case ')':
		r.pos++
		if len(r.stack) == 0 {
			return false, r.lr.syntaxError("unexpected ')' outside a tree")
		}
		n := r.stack[len(r.stack)-1]
		r.stack = r.stack[:len(r.stack)-1]
		switch {
		case n.hasWord:
			if n.label != treebankNone {
				if err := r.add(n.word, n.label, r.lr.line); err != nil {
					return false, err
				}
			}
		case !n.hasChild:
			return false, r.lr.syntaxError("empty constituent (%s)", n.label)
		}
		return len(r.stack) == 0 && len(r.words) > 0, nil
	default:
		end := r.pos
		for end < len(r.line) && !strings.ContainsRune(" \t()", rune(r.line[end])) {
			end++
		}
		atom := r.line[r.pos:end]
		r.pos = end
		if len(r.stack) == 0 {
			return false, r.lr.syntaxError("expected '(', found %q", atom)
		}
		top := &r.stack[len(r.stack)-1]
		switch {
		case !top.hasLabel && !top.hasChild:
			top.label, top.hasLabel = atom, true
		case top.hasChild || top.hasWord:
			return false, r.lr.syntaxError("unexpected %q: a constituent holds one word or subtrees", atom)
		default:
			top.word, top.hasWord = atom, true
		}
	}
	return false, nil
}

// TreebankZipReader reads, as one corpus, every member of a zip archive with
// the format's extension (".mrg" or ".pos"), in member-name order; for the
// NLTK "treebank.zip" that is treebank/combined/wsj_*.mrg or
// treebank/tagged/wsj_*.pos. Errors name the member as "archive!member".
type TreebankZipReader struct {
	zr     *zip.Reader
	closer io.Closer // the archive file
	name   string
	format TreebankFormat
	files  []*zip.File
	next   int // index in files of the member to open next
	rc     io.ReadCloser
	cur    *TreebankReader
	member string
	sent   *Sentence    // the current sentence; nil before the first Scan
	limits InputOptions // the line and sentence limits of the members' readers
	err    error
}

var _ Reader = (*TreebankZipReader)(nil)

// OpenTreebankZip opens the zip archive at zipPath for reading the members
// of the given format. It is an error if there is none.
func OpenTreebankZip(zipPath string, format TreebankFormat) (*TreebankZipReader, error) {
	if format != TreebankMRG && format != TreebankPOS {
		return nil, fmt.Errorf("open %s: invalid treebank format %v", zipPath, format)
	}
	f, err := os.Open(zipPath)
	if err != nil {
		return nil, err // a *fs.PathError: names the file
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("open treebank zip: %w", err)
	}
	z, err := newTreebankZip(f, st.Size(), zipPath, format)
	if err != nil {
		f.Close()
		return nil, err
	}
	z.closer = f
	return z, nil
}

// newTreebankZip reads the directory of the archive r of size bytes, named
// name in errors.
func newTreebankZip(r io.ReaderAt, size int64, name string, format TreebankFormat) (*TreebankZipReader, error) {
	zr, err := zip.NewReader(r, size)
	if err != nil {
		return nil, fmt.Errorf("%s: not a readable zip archive (the NLTK treebank.zip): %w", name, err)
	}
	ext := "." + format.String()
	z := &TreebankZipReader{zr: zr, name: name, format: format}
	for _, f := range zr.File {
		if !f.FileInfo().IsDir() && path.Ext(f.Name) == ext {
			z.files = append(z.files, f)
		}
	}
	sort.Slice(z.files, func(i, j int) bool { return z.files[i].Name < z.files[j].Name })
	if len(z.files) == 0 {
		return nil, fmt.Errorf("%s: no *%s member in the archive (want the NLTK treebank.zip)", name, ext)
	}
	return z, nil
}

// Columns names the token columns: "word".
func (z *TreebankZipReader) Columns() []string { return []string{"word"} }

// Sentence returns the sentence read by the last successful Scan.
func (z *TreebankZipReader) Sentence() *Sentence {
	if z.sent == nil {
		return &Sentence{}
	}
	return z.sent
}

// Err returns the first error met, nil at a clean end of input.
func (z *TreebankZipReader) Err() error { return z.err }

// Member returns the "archive!member" name of the member being read.
func (z *TreebankZipReader) Member() string { return z.member }

// Scan reads the next sentence, moving on to the next member as needed.
func (z *TreebankZipReader) Scan() bool {
	for z.err == nil {
		if z.cur != nil {
			if z.cur.Scan() {
				z.sent = z.cur.Sentence()
				return true
			}
			z.err = z.cur.Err()
			if err := z.rc.Close(); z.err == nil && err != nil {
				z.err = fmt.Errorf("read %s: %w", z.member, err)
			}
			z.cur, z.rc = nil, nil
			continue
		}
		if z.next == len(z.files) {
			return false
		}
		f := z.files[z.next]
		z.next++
		rc, err := f.Open()
		if err != nil {
			z.err = fmt.Errorf("open %s!%s: %w", z.name, f.Name, err)
			return false
		}
		z.rc, z.member = rc, z.name+"!"+f.Name
		z.cur = newTreebankReader(rc, z.member, z.format)
		z.cur.lr.setLimits(z.limits)
	}
	return false
}

// Close closes the archive.
func (z *TreebankZipReader) Close() error {
	var errs []error
	if z.rc != nil {
		errs = append(errs, z.rc.Close())
		z.rc, z.cur = nil, nil
	}
	if z.closer != nil {
		errs = append(errs, z.closer.Close())
		z.closer = nil
	}
	return errors.Join(errs...)
}

func (r *TreebankReader) lineSource() *lineReader { return r.lr }
