package platform

import (
	"errors"
	"fmt"
	"io"
	"os"
)

// ErrNoUnnamed reports that unnamed files (OpenUnnamed) are not available
// here.
var ErrNoUnnamed = errors.New("unnamed temporary files not supported")

// anonymousFile returns a new empty read-write file in dir (the system's
// temporary directory when dir is "") that has no name, so it vanishes when
// closed or when the process dies, however it dies. Where the kernel cannot
// create unnamed files, the file is created and its name removed at once.
func anonymousFile(dir string) (*os.File, error) {
	if dir == "" {
		dir = os.TempDir()
	}
	f, err := OpenUnnamed(dir, 0o600)
	if err == nil {
		return f, nil
	}
	if !errors.Is(err, ErrNoUnnamed) {
		return nil, fmt.Errorf("create a temporary file in %s: %w", dir, err)
	}
	f, err = CreateTemp(dir, "dualcrf-spool-*")
	if err != nil {
		return nil, err
	}
	if err := os.Remove(f.Name()); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// Spool is an unnamed temporary file (anonymousFile) for a copy of an input
// that must be read twice. Its writes fail rather than fill the file
// system: it may take all the space that was free when it was created but
// a tenth of it, or but 1 GiB when that is less.
type Spool struct {
	*os.File
	dir  string
	n    int64 // bytes written
	max  int64 // bytes it may take
	name string
}

// NewSpool creates a spool for the input name (for messages) in dir (the
// system's temporary directory when "").
func NewSpool(dir, name string) (*Spool, error) {
	if dir == "" {
		dir = os.TempDir()
	}
	f, err := anonymousFile(dir)
	if err != nil {
		return nil, fmt.Errorf("spool %s: %w", name, err)
	}
	s := &Spool{File: f, dir: dir, max: 1 << 62, name: name}
	if free, err := freeSpace(dir); err == nil {
		s.max = free - min(free/10, 1<<30)
	}
	return s, nil
}

// Write appends p, or fails when the spool would outgrow its bound.
func (s *Spool) Write(p []byte) (int, error) {
	if s.n+int64(len(p)) > s.max {
		return 0, fmt.Errorf("spooling %s to read it twice would fill %s (%d bytes spooled; read a regular file instead, or set TMPDIR to a larger file system)",
			s.name, s.dir, s.n)
	}
	n, err := s.File.Write(p)
	s.n += int64(n)
	if err != nil {
		return n, fmt.Errorf("spool %s in %s: %w", s.name, s.dir, err)
	}
	return n, nil
}

// ReadFrom copies r into the spool through Write, so that io.Copy into a
// spool keeps to its bound and its count (the embedded file's ReadFrom
// would bypass both).
func (s *Spool) ReadFrom(r io.Reader) (int64, error) {
	return io.Copy(struct{ io.Writer }{s}, r)
}

// Size returns the number of bytes written.
func (s *Spool) Size() int64 { return s.n }
