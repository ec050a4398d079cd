package pipeline

// The standard streams a stage reads and writes for the path "-". A stage
// run by the dualcrf command gets the process's; a program that runs the
// stages in its own process (the command's tests, a server, a Go user
// chaining stages through memory) hands them other readers and writers:
// Source for an input, Std for the command's checks and outputs.

import (
	"io"
	"os"
)

// Source is a stage's input: the file at Path or, when Path is "" or "-",
// standard input, which is Stdin (os.Stdin when nil). A Source whose Stdin
// is a bytes.Reader or a pipe's end is how a Go program feeds a stage from
// memory or from another stage, without touching the file system.
type Source struct {
	Path  string    // the file to read; "" or "-": standard input
	Stdin io.Reader // standard input; nil: os.Stdin
}

// IsStdin reports whether s reads standard input.
func (s Source) IsStdin() bool { return isStd(s.Path) }

// Name names s in messages: the path, or StdinName.
func (s Source) Name() string {
	if s.IsStdin() {
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
	if !s.IsStdin() {
		return OpenInput(s.Path)
	}
	if f, ok := s.Reader().(*os.File); ok {
		rc, err := openInputFile(f, StdinName, false)
		return rc, StdinName, err
	}
	rc, err := decompress(s.Reader(), StdinName, nil)
	return rc, StdinName, err
}

// Std holds the standard streams the path "-" names: In is read for an
// input "-" and Out written for an output "-". A nil field is the process's
// own stream, so the zero Std is the process's (os.Stdin, os.Stdout); the
// package's functions CreateOutput, CheckDistinct and ResolveOutput are
// those of the zero Std.
type Std struct {
	In  io.Reader
	Out io.Writer
}

// Source returns the input at path, standard input being s.In.
func (s Std) Source(path string) Source { return Source{Path: path, Stdin: s.In} }

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
	return ok && isTerminal(f)
}
