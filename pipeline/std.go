package pipeline

// The standard streams a stage reads and writes for the path "-". A stage
// run by the dualcrf command gets the process's; a program that runs the
// stages in its own process (the command's tests, a server, a Go user
// chaining stages through memory) hands them other readers and writers:
// Source for an input, Std for the command's checks and outputs.

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/dualcrf/dualcrf/internal/platform"
)

// Source is a stage's input: the file at Path or, when Path is "" or "-",
// standard input, which is Stdin (os.Stdin when nil). A Source whose Stdin
// is a bytes.Reader or a pipe's end is how a Go program feeds a stage from
// memory or from another stage, without touching the file system.
type Source struct {
	Path  string    // the file to read; "" or "-": standard input
	Stdin io.Reader // standard input; nil: os.Stdin
	// StdinLabel names Stdin in messages; "": StdinName. A program that
	// feeds a stage from memory names what it feeds.
	StdinLabel string
	// Ctx, when not nil, ends the reads of the input: once it is done,
	// opening a FIFO that has no writer, a read blocked on a pipe, FIFO or
	// terminal, and every later read (of a regular file too) give up with
	// its error, so a stage stops at once on a signal.
	Ctx context.Context
}

// IsStdin reports whether s reads standard input.
func (s Source) IsStdin() bool { return isStd(s.Path) }

// Name names s in messages: the path, or StdinLabel (StdinName when
// empty).
func (s Source) Name() string {
	if s.IsStdin() {
		if s.StdinLabel != "" {
			return s.StdinLabel
		}
		return StdinName
	}
	return s.Path
}

// Reader returns standard input's reader: Stdin, or os.Stdin when nil.
func (s Source) Reader() io.Reader {
	if s.Stdin == nil {
		return os.Stdin
	}
	return s.Stdin
}

// Open opens s as OpenInput opens a path, reading standard input from
// s.Reader(): gzip and zstd are decompressed, and an uncompressed regular
// file (standard input included, when it is an *os.File redirected from
// one) is handed over with its ReadAt, Seek and Stat. Closing the reader
// never closes standard input.
func (s Source) Open() (io.ReadCloser, string, error) {
	ctx := s.Ctx
	if ctx != nil && ctx.Done() == nil {
		ctx = nil // never done: nothing to watch
	}
	if !s.IsStdin() {
		if ctx == nil {
			return OpenInput(s.Path)
		}
		if err := ctx.Err(); err != nil {
			return nil, s.Path, fmt.Errorf("open %s: %w", s.Path, err)
		}
		f, err := OpenContext(ctx, s.Path)
		if err != nil {
			if ctx.Err() != nil {
				err = fmt.Errorf("open %s: %w", s.Path, err)
			}
			return nil, s.Path, err
		}
		rc, err := openInputFileContext(ctx, f, s.Path, true)
		if err != nil {
			_ = f.Close()
			return nil, s.Path, err
		}
		return rc, s.Path, nil
	}
	if f, ok := s.Reader().(*os.File); ok {
		rc, err := openInputFileContext(ctx, f, s.Name(), false)
		return rc, s.Name(), err
	}
	r := s.Reader()
	if ctx != nil {
		r = ContextReader(ctx, r)
	}
	rc, err := decompress(r, s.Name(), nil)
	return rc, s.Name(), err
}

// Std holds the standard streams the path "-" names: In is read for an
// input "-" and Out written for an output "-". A nil field is the process's
// own stream, so the zero Std is the process's (os.Stdin, os.Stdout); the
// package's functions CreateOutput, CheckFiles and ResolveOutput are
// those of the zero Std.
type Std struct {
	In  io.Reader
	Out io.Writer
	// Ctx, when not nil, is the Ctx of the Sources that Source returns: it
	// ends their reads (see Source).
	Ctx context.Context
}

// Source returns the input at path, standard input being s.In, its reads
// ending with s.Ctx.
func (s Std) Source(path string) Source { return Source{Path: path, Stdin: s.In, Ctx: s.Ctx} }

// stdout returns the standard output writer.
func (s Std) stdout() io.Writer {
	if s.Out == nil {
		return os.Stdout
	}
	return s.Out
}

// stdin returns the standard input reader.
func (s Std) stdin() io.Reader {
	if s.In == nil {
		return os.Stdin
	}
	return s.In
}

// stdoutIsTerminal reports whether standard output is a terminal.
func (s Std) stdoutIsTerminal() bool {
	f, ok := s.stdout().(*os.File)
	return ok && platform.IsTerminal(f)
}
