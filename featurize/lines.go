package featurize

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"
	"unicode/utf8"

	"github.com/dualcrf/dualcrf/option"
	"github.com/dualcrf/dualcrf/pipeline"
)

// The default limits of the readers (InputOptions.MaxLineBytes and
// MaxSentenceTokens), so that no input, however long its lines or
// sentences, takes unbounded memory.
const (
	DefaultMaxLineBytes      = 1 << 20
	DefaultMaxSentenceTokens = 100_000
)

// lineReader reads lines of up to maxLine bytes from a named stream. It
// accepts LF and CRLF line ends, drops a leading UTF-8 byte-order mark,
// counts lines and rejects invalid UTF-8 and longer lines with a
// SyntaxError naming file and line. It also holds the readers' cap on the
// tokens of a sentence.
type lineReader struct {
	br        *bufio.Reader
	name      string
	line      int    // number of the line last returned by next
	long      []byte // holds a line longer than br's buffer
	eof       bool
	err       error // first error; a clean end of input leaves it nil
	maxLine   int   // longest line accepted, in bytes (without its line end)
	maxTokens int   // most tokens a sentence may have
}

func newLineReader(r io.Reader, name string) *lineReader {
	return &lineReader{br: bufio.NewReaderSize(r, 64<<10), name: name,
		maxLine: DefaultMaxLineBytes, maxTokens: DefaultMaxSentenceTokens}
}

// setLimits applies the limits of opts; zero keeps the default.
func (lr *lineReader) setLimits(opts InputOptions) {
	if opts.MaxLineBytes > 0 {
		lr.maxLine = opts.MaxLineBytes
	}
	if opts.MaxSentenceTokens > 0 {
		lr.maxTokens = opts.MaxSentenceTokens
	}
}

// lineTooLong is the error of a line longer than maxLine: the line after
// the last one returned.
func (lr *lineReader) lineTooLong() error {
	return optionSyntaxError(lr.name, lr.line+1, "line longer than %d bytes (the limit, {InputOptions.MaxLineBytes}; is this really text in lines?)", lr.maxLine)
}

// checkTokens fails when a sentence that began at line first has reached
// n tokens, more than maxTokens.
func (lr *lineReader) checkTokens(n, first int) error {
	if n <= lr.maxTokens {
		return nil
	}
	return optionSyntaxError(lr.name, lr.line, "the sentence that begins at line %d has more than %d tokens (the limit, {InputOptions.MaxSentenceTokens}; a missing blank line between sentences?)", first, lr.maxTokens)
}

// next returns the next line without its line end. The slice is valid until
// the following call. ok is false at the end of input or on error (see err).
func (lr *lineReader) next() (line []byte, ok bool) {
	if lr.err != nil || lr.eof {
		return nil, false
	}
	b, err := lr.br.ReadSlice('\n')
	if err == bufio.ErrBufferFull {
		lr.long = append(lr.long[:0], b...)
		for err == bufio.ErrBufferFull {
			if len(lr.long) > lr.maxLine+2 { // + CR LF
				lr.err = lr.lineTooLong()
				return nil, false
			}
			b, err = lr.br.ReadSlice('\n')
			lr.long = append(lr.long, b...)
		}
		b = lr.long
	}
	switch {
	case err == io.EOF:
		lr.eof = true
		if len(b) == 0 {
			return nil, false
		}
	case err != nil:
		lr.err = lr.readError(err)
		return nil, false
	}
	b = bytes.TrimSuffix(b, []byte{'\n'})
	b = bytes.TrimSuffix(b, []byte{'\r'})
	if len(b) > lr.maxLine {
		lr.err = lr.lineTooLong()
		return nil, false
	}
	lr.line++
	if lr.line == 1 {
		b = bytes.TrimPrefix(b, []byte("\uFEFF"))
	}
	if !utf8.Valid(b) {
		lr.err = lr.invalidUTF8(b)
		return nil, false
	}
	return b, true
}

// readError names the file and the line being read when err stopped the
// input.
func (lr *lineReader) readError(err error) error {
	var de *pipeline.DecompressError
	if errors.As(err, &de) {
		at := *de
		at.Line = lr.line + 1
		return &at
	}
	return readFailure(lr.name, lr.line+1, err)
}

// readFailure is the error for a read of the input name that failed with
// err at the given line (0: before any line); the file is named once.
func readFailure(name string, line int, err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		if errors.Is(pe.Err, syscall.EISDIR) {
			return fmt.Errorf("%s: %w", name, pe.Err)
		}
		err = fmt.Errorf("%s: %w", pe.Op, pe.Err)
	}
	if line > 0 {
		return fmt.Errorf("%s:%d: %w", name, line, err)
	}
	return fmt.Errorf("%s: %w", name, err)
}

func (lr *lineReader) invalidUTF8(b []byte) error {
	col := 0
	for len(b) > 0 {
		r, size := utf8.DecodeRune(b)
		if r == utf8.RuneError && size <= 1 {
			return lr.syntaxError("invalid UTF-8: byte 0x%02x at byte %d of the line", b[0], col+1)
		}
		b, col = b[size:], col+size
	}
	return lr.syntaxError("invalid UTF-8")
}

// syntaxError returns a SyntaxError at the line last read.
func (lr *lineReader) syntaxError(format string, args ...any) *SyntaxError {
	return &SyntaxError{File: lr.name, Line: lr.line, Msg: fmt.Sprintf(format, args...)}
}

// optionSyntaxError is a *SyntaxError at line of file whose message
// names options as {Field} (option.Error).
func optionSyntaxError(file string, line int, format string, args ...any) *SyntaxError {
	oe := &option.Error{Msg: fmt.Sprintf(format, args...)}
	return &SyntaxError{File: file, Line: line, Msg: oe.Error(), option: oe}
}

// readerNoSentences is the error of every reader on input without a sentence.
func readerNoSentences(name string) error {
	return &SyntaxError{File: name, Msg: "no sentences"}
}

// readerBlankLine reports whether b holds only spaces and tabs.
func readerBlankLine(b []byte) bool {
	for _, c := range b {
		if c != ' ' && c != '\t' {
			return false
		}
	}
	return true
}

// readerSpaceFields appends to dst the fields of s separated by runs of
// ASCII spaces and tabs (not Unicode spaces: a no-break space belongs to
// its word).
func readerSpaceFields(dst []string, s string) []string {
	start := -1
	for i := 0; i < len(s); i++ {
		if s[i] == ' ' || s[i] == '\t' {
			if start >= 0 {
				dst = append(dst, s[start:i])
				start = -1
			}
		} else if start < 0 {
			start = i
		}
	}
	if start >= 0 {
		dst = append(dst, s[start:])
	}
	return dst
}

// readerRows slices the flat token cells into rows of width cols, each
// with its capacity clipped so that appending to a row cannot clobber the
// next; rows is reused.
func readerRows(rows [][]string, cells []string, cols int) [][]string {
	rows = rows[:0]
	for i := 0; i+cols <= len(cells); i += cols {
		rows = append(rows, cells[i:i+cols:i+cols])
	}
	return rows
}

// blockLines is what a reader of blank-line-separated sentences tells
// scanBlock about itself.
type blockLines interface {
	// line handles a non-blank line; token says whether it added a token.
	line(b []byte) (token bool, err error)
	// pending says whether the current sentence has anything to emit.
	pending() bool
	// blank handles a blank line that ends no sentence.
	blank()
}

// scanBlock reads the lines of the next sentence, up to the blank line that
// ends it or the end of input, and returns the line number of its first
// token, or 0 when there is none: at the end of input, or after an error,
// which it stores in *errp. An input that ends before its first sentence
// (nsent sentences were read before) is the error "no sentences".
func scanBlock(lr *lineReader, r blockLines, nsent int, errp *error) (first int) {
	tokens := 0
	for {
		b, ok := lr.next()
		if !ok {
			break
		}
		if readerBlankLine(b) {
			if r.pending() {
				return max(first, 1)
			}
			r.blank()
			continue
		}
		token, err := r.line(b)
		if err != nil {
			*errp = err
			return 0
		}
		if token && first == 0 {
			first = lr.line
		}
		if token {
			if tokens++; tokens > lr.maxTokens {
				*errp = lr.checkTokens(tokens, first)
				return 0
			}
		}
	}
	switch {
	case lr.err != nil:
		*errp = lr.err
	case r.pending():
		return max(first, 1)
	case nsent == 0:
		*errp = readerNoSentences(lr.name)
	}
	return 0
}
