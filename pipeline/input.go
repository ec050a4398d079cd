package pipeline

// Opening a stage's input. Every stage opens its input here, so that one
// rule holds for all: "" and "-" are standard input, named StdinName in
// messages and never closed by the opener; gzip and zstd input, recognised
// by its magic bytes (not by its name), is decompressed on the fly; an
// uncompressed regular file is handed over as the file itself, so that an
// Arrow IPC file is read in place (ReadAt) instead of into memory.

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
)

// isStd reports whether path means the standard stream.
func isStd(path string) bool { return path == "" || path == "-" }

// IsStdin reports whether path means standard input ("" or "-").
func IsStdin(path string) bool { return isStd(path) }

// Magic bytes that open the compressed formats the opener recognises.
const (
	gzipMagic = "\x1f\x8b"
	zstdMagic = "\x28\xb5\x2f\xfd"
)

// OpenInput opens path for reading; "" or "-" is standard input. The name
// returned is the one to use in messages (the path, or StdinName). Gzip and
// zstd input is decompressed transparently (see Decompress). When the input
// is not compressed and is a regular file (or standard input redirected from
// one), the reader returned has the file's ReadAt, Seek and Stat — for a
// named file it is the *os.File itself — so Arrow readers can read an IPC
// file in place. Closing the reader closes the file, never standard input.
func OpenInput(path string) (io.ReadCloser, string, error) {
	if isStd(path) {
		rc, err := openInputFile(os.Stdin, StdinName, false)
		return rc, StdinName, err
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, path, err
	}
	rc, err := openInputFile(f, path, true)
	if err != nil {
		_ = f.Close()
		return nil, path, err
	}
	return rc, path, nil
}

// openInputFile returns f, or a decompressing reader of it, closing f on Close
// when owned. A regular file is peeked with ReadAt, so that it stays usable
// as an io.ReaderAt when it is not compressed.
func openInputFile(f *os.File, name string, owned bool) (io.ReadCloser, error) {
	return openInputFileContext(nil, f, name, owned)
}

// openInputFileContext is openInputFile whose reads end with ctx (nil:
// never): a regular file is handed over as a ctxFile, any other (a pipe, a
// FIFO, a terminal) is read through ContextReader.
func openInputFileContext(ctx context.Context, f *os.File, name string, owned bool) (io.ReadCloser, error) {
	var closeFile func() error
	if owned {
		closeFile = f.Close
	}
	if st, err := f.Stat(); err == nil && st.Mode().IsRegular() {
		if off, err := f.Seek(0, io.SeekCurrent); err == nil {
			var head [len(zstdMagic)]byte
			n, _ := f.ReadAt(head[:], off)
			if compression(head[:n]) == "" {
				switch {
				case ctx != nil:
					return &ctxFile{File: f, ctx: ctx, owned: owned}, nil
				case owned:
					return f, nil
				}
				return stdinFile{f}, nil
			}
			if ctx != nil {
				return decompress(&ctxFile{File: f, ctx: ctx}, name, closeFile)
			}
		}
	}
	if ctx != nil {
		return decompress(ContextReader(ctx, f), name, closeFile)
	}
	return decompress(f, name, closeFile)
}

// stdinFile is standard input redirected from a regular file: the file's
// ReadAt, Seek and Stat, and a Close that leaves it open.
type stdinFile struct{ *os.File }

// Close does nothing: standard input is not the opener's to close.
func (stdinFile) Close() error { return nil }

// compression names the compression that head (the input's first bytes)
// announces: "gzip", "zstd", or "" for none.
func compression(head []byte) string {
	switch {
	case strings.HasPrefix(string(head), gzipMagic):
		return "gzip"
	case strings.HasPrefix(string(head), zstdMagic):
		return "zstd"
	}
	return ""
}

// Decompress returns a reader of r decompressed: gzip and zstd streams are
// recognised by their first bytes, anything else is passed through. name
// names r in errors: a damaged or truncated compressed stream is a
// *DecompressError, from Decompress (a gzip header) or from Read. An error
// reading r's first bytes is not reported here but by the first Read.
// Closing the result closes the decompressor, not r.
func Decompress(r io.Reader, name string) (io.ReadCloser, error) {
	return decompress(r, name, nil)
}

// decompress is Decompress; closeFile (nil: none) closes the file under r.
func decompress(r io.Reader, name string, closeFile func() error) (io.ReadCloser, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	head, _ := br.Peek(len(zstdMagic)) // a read error recurs at the first Read
	in := &input{name: name, r: br, closeFile: closeFile, format: compression(head)}
	switch in.format {
	case "gzip":
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, &DecompressError{Name: name, Format: in.format, Err: err}
		}
		in.r, in.closeDec = zr, zr.Close
	case "zstd":
		zr, err := zstd.NewReader(br)
		if err != nil {
			return nil, &DecompressError{Name: name, Format: in.format, Err: err}
		}
		in.r = zr
		in.closeDec = func() error { zr.Close(); return nil }
	}
	return in, nil
}

// input is the reader of a compressed or streamed input.
type input struct {
	name      string
	format    string // "gzip", "zstd" or "" for plain input
	r         io.Reader
	closeDec  func() error // closes the decompressor, or nil
	closeFile func() error // closes the file, or nil
}

// Read reads the decompressed bytes; a failure of the compressed stream is
// a *DecompressError.
func (in *input) Read(p []byte) (int, error) {
	n, err := in.r.Read(p)
	if err != nil && err != io.EOF && in.format != "" {
		err = &DecompressError{Name: in.name, Format: in.format, Err: err}
	}
	return n, err
}

// Close closes the decompressor and the file, once.
func (in *input) Close() error {
	var errs []error
	if in.closeDec != nil {
		errs = append(errs, in.closeDec())
		in.closeDec = nil
	}
	if in.closeFile != nil {
		errs = append(errs, in.closeFile())
		in.closeFile = nil
	}
	return errors.Join(errs...)
}

// DecompressError is a failure of the gzip or zstd stream of an input.
type DecompressError struct {
	Name   string // the input, as named in messages
	Line   int    // the line of the decompressed text being read; 0: not known, or in the stream's header
	Format string // "gzip" or "zstd"
	Err    error  // what the decompressor said
}

func (e *DecompressError) Error() string {
	where := e.Name
	if e.Line > 0 {
		where = fmt.Sprintf("%s:%d", e.Name, e.Line)
	}
	if errors.Is(e.Err, io.ErrUnexpectedEOF) || errors.Is(e.Err, io.EOF) {
		return fmt.Sprintf("%s: unexpected end of compressed data (truncated %s stream)", where, e.Format)
	}
	return fmt.Sprintf("%s: corrupt %s stream: %v", where, e.Format, e.Err)
}

// Unwrap returns the decompressor's error.
func (e *DecompressError) Unwrap() error { return e.Err }
