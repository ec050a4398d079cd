package featurize

import (
	"io"
	"os"
	"sync/atomic"

	"github.com/dualcrf/dualcrf/pipeline"
	"github.com/dualcrf/dualcrf/progress"
)

// track starts the featurize task on p (nil: none): the bytes of the input
// file read (before decompression), over every pass, out of the file's size
// times the passes (unknown for standard input and devices). The count is
// an atomic the readers add to and the display polls.
func (s *source) track(p *progress.Reporter, in pipeline.Source, passes int) *progress.Task {
	if p == nil {
		return nil
	}
	var total int64
	if s.path != "" {
		if st, err := os.Stat(s.path); err == nil && st.Mode().IsRegular() && !isTreebankZip(s.path, InputOptions{Format: "ptb-"}) {
			total = st.Size() * int64(passes)
		}
	}
	s.read = new(atomic.Int64)
	task := p.Start("featurize", "bytes", total)
	task.Poll(s.read.Load)
	return task
}

// countingReader counts the bytes read from r into n.
type countingReader struct {
	r io.Reader
	n *atomic.Int64
}

func (c countingReader) Read(p []byte) (int, error) {
	k, err := c.r.Read(p)
	c.n.Add(int64(k))
	return k, err
}

// openCounted opens the file at path for a pass, counting the bytes read
// from it, and decompresses it.
func (s *source) openCounted(display string, in InputOptions) (Reader, io.Closer, error) {
	f, err := os.Open(s.path)
	if err != nil {
		return nil, nil, renamePathError(err, display)
	}
	rc, err := pipeline.Decompress(countingReader{f, s.read}, display)
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	r, err := newInputReader(rc, display, in)
	if err != nil {
		rc.Close()
		f.Close()
		return nil, nil, err
	}
	return r, closers{rc, f}, nil
}

// closers closes each of its closers, returning the first error.
type closers []io.Closer

func (cs closers) Close() error {
	var first error
	for _, c := range cs {
		if err := c.Close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}
