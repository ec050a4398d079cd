package featurize

import (
	"context"
	"errors"
	"io"
	"os"
	"strings"
	"sync/atomic"

	"github.com/dualcrf/dualcrf/internal/platform"
	"github.com/dualcrf/dualcrf/pipeline"
)

// source is the corpus Run reads, once or twice. It is one of:
//
//   - a regular file, opened again for each pass (path);
//   - a regular file read in place: standard input redirected from one
//     (ra, size);
//   - a stream that can be read only once: a pipe, a FIFO, a process
//     substitution, a terminal, a device (stream). When a second pass
//     follows, the first pass copies what it reads to an unnamed spool,
//     which the second pass reads. The first pass reads through the
//     readers' line and sentence limits, so an endless input (/dev/zero)
//     is stopped by them, not by a full disk.
//
// Reads of a stream give up when the context ends, even while blocked.
type source struct {
	ctx    context.Context // ends the opens and reads of a directory's files
	path   string
	ra     io.ReaderAt
	size   int64
	stream io.Reader
	spool  *platform.Spool
	file   *os.File      // the opened stream file, closed by Close
	read   *atomic.Int64 // when set (track), counts the input bytes read
}

// openSource opens src for Run; display names it in messages; twoPass
// says whether it will be read twice.
func openSource(ctx context.Context, src pipeline.Source, display string, in InputOptions, twoPass bool) (*source, error) {
	if !src.IsStdin() && isTreebankZip(src.Path, in) {
		return &source{ctx: ctx, path: src.Path}, nil
	}
	if src.IsStdin() {
		if f, ok := src.Reader().(*os.File); ok {
			return openStream(ctx, f, display, twoPass, false)
		}
		return openReader(ctx, src.Reader(), display, twoPass)
	}
	st, err := os.Stat(src.Path)
	switch {
	case err != nil:
		return nil, renamePathError(err, display)
	case st.IsDir(), st.Mode().IsRegular(): // a directory: a table dataset
		return &source{ctx: ctx, path: src.Path}, nil
	}
	f, err := pipeline.OpenContext(ctx, src.Path)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, renamePathError(err, display)
	}
	return openStream(ctx, f, display, twoPass, true)
}

// openStream reads the open file f: in place when it is a regular file
// (standard input redirected from one), else as a stream; owned says
// whether Close closes f.
func openStream(ctx context.Context, f *os.File, display string, twoPass, owned bool) (*source, error) {
	s := &source{}
	if owned {
		s.file = f
	}
	if st, err := f.Stat(); err == nil && st.Mode().IsRegular() {
		if off, err := f.Seek(0, io.SeekCurrent); err == nil {
			s.ra, s.size = io.NewSectionReader(f, off, st.Size()-off), st.Size()-off
			return s, nil
		}
	}
	return s.spoolStream(ctx, f, display, twoPass)
}

// openReader reads r, a standard input that is no file: in place when it
// can read at offsets (a bytes.Reader, a strings.Reader, a SectionReader),
// else as a stream.
func openReader(ctx context.Context, r io.Reader, display string, twoPass bool) (*source, error) {
	if ra, ok := r.(interface {
		io.ReaderAt
		Size() int64
	}); ok {
		var off int64
		if sk, ok := r.(io.Seeker); ok {
			off, _ = sk.Seek(0, io.SeekCurrent)
		}
		size := ra.Size() - off
		return &source{ra: io.NewSectionReader(ra, off, size), size: size}, nil
	}
	return (&source{}).spoolStream(ctx, r, display, twoPass)
}

// spoolStream makes s read the stream r, whose reads end with ctx, copying
// it to a spool as the first pass reads it when a second pass follows.
func (s *source) spoolStream(ctx context.Context, r io.Reader, display string, twoPass bool) (*source, error) {
	s.stream = pipeline.ContextReader(ctx, r)
	if twoPass {
		spool, err := platform.NewSpool("", display)
		if err != nil {
			s.Close()
			return nil, err
		}
		s.spool = spool
		s.stream = io.TeeReader(s.stream, spool)
	}
	return s, nil
}

// renamePathError names display instead of the path in a *os.PathError.
func renamePathError(err error, display string) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		pe.Path = display
	}
	return err
}

// isTreebankZip reports whether path is read as the NLTK Treebank archive.
func isTreebankZip(path string, in InputOptions) bool {
	return strings.HasPrefix(in.Format, "ptb-") && strings.HasSuffix(path, ".zip")
}

// open returns a reader of the next pass.
func (s *source) open(display string, in InputOptions) (Reader, io.Closer, error) {
	if s.path != "" && (s.read == nil || isTreebankZip(s.path, in) || isDir(s.path)) {
		return OpenReader(pipeline.Source{Path: s.path, Ctx: s.ctx}, in)
	}
	if s.path != "" {
		return s.openCounted(display, in)
	}
	raw := s.stream
	if s.ra != nil {
		raw = io.NewSectionReader(s.ra, 0, s.size)
	}
	if s.read != nil {
		raw = countingReader{raw, s.read}
	}
	raw, isTable := peekTable(raw)
	if isTable && !textGiven(in) {
		return newTableReaderOn(raw, display, in), nopCloser{}, nil
	}
	rc, err := pipeline.Decompress(raw, display)
	if err != nil {
		return nil, nil, err
	}
	r, err := newInputReader(rc, display, in)
	if err != nil {
		rc.Close()
		return nil, nil, err
	}
	return r, rc, nil
}

// rewind prepares the second pass: the rest of a stream that the first
// pass did not read (normally nothing) is spooled too, and the spool
// becomes the input.
func (s *source) rewind() error {
	if s.spool == nil {
		return nil
	}
	if _, err := io.Copy(io.Discard, s.stream); err != nil {
		return err
	}
	s.ra, s.size, s.stream = s.spool, s.spool.Size(), nil
	return nil
}

// Close closes the input file and the spool.
func (s *source) Close() error {
	var errs []error
	if s.spool != nil {
		errs = append(errs, s.spool.Close())
	}
	if s.file != nil {
		errs = append(errs, s.file.Close())
	}
	return errors.Join(errs...)
}

// isDir reports whether path names a directory (a partitioned table).
func isDir(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.IsDir()
}
