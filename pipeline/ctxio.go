package pipeline

import (
	"context"
	"io"
	"os"
	"syscall"
)

// ContextReader returns a reader of r whose Read gives up with ctx's error
// as soon as ctx is done, even while a read of r is blocked: on a pipe or
// FIFO whose writer is idle, or a terminal. The reads of r happen in a
// goroutine; one blocked when ctx ends stays blocked until r yields or is
// closed (a stage ends its process then, so nothing waits for it).
func ContextReader(ctx context.Context, r io.Reader) io.Reader {
	return &ctxReader{ctx: ctx, r: r}
}

// ctxReader is ContextReader's reader.
type ctxReader struct {
	ctx     context.Context
	r       io.Reader
	req     chan int       // asks the goroutine for a read of at most n bytes
	res     chan ctxResult // its answer
	pending []byte         // data received and not yet returned
	err     error          // sticky error
}

type ctxResult struct {
	data []byte // the goroutine's buffer, valid until the next request
	err  error
}

// ctxReadSize is the most a read asks of the underlying reader.
const ctxReadSize = 64 << 10

func (c *ctxReader) Read(p []byte) (int, error) {
	if len(c.pending) > 0 {
		n := copy(p, c.pending)
		c.pending = c.pending[n:]
		return n, nil
	}
	if c.err != nil {
		return 0, c.err
	}
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	if len(p) == 0 {
		return 0, nil
	}
	if c.req == nil {
		c.req, c.res = make(chan int), make(chan ctxResult, 1)
		go c.loop()
	}
	c.req <- len(p)
	select {
	case r := <-c.res:
		n := copy(p, r.data)
		c.pending, c.err = r.data[n:], r.err
		if len(c.pending) > 0 {
			return n, nil
		}
		return n, c.err
	case <-c.ctx.Done():
		c.err = c.ctx.Err()
		return 0, c.err
	}
}

// loop serves read requests until ctx is done or the reader fails.
func (c *ctxReader) loop() {
	buf := make([]byte, ctxReadSize)
	for {
		select {
		case n := <-c.req:
			k, err := c.r.Read(buf[:min(n, len(buf))])
			c.res <- ctxResult{data: buf[:k], err: err}
			if err != nil {
				return
			}
		case <-c.ctx.Done():
			return
		}
	}
}

// OpenContext opens path for reading like os.Open, but gives up with ctx's
// error when ctx ends while the open waits: opening a FIFO waits until a
// writer opens it too.
func OpenContext(ctx context.Context, path string) (*os.File, error) {
	if st, err := os.Stat(path); err != nil || st.Mode()&os.ModeNamedPipe == 0 {
		return os.Open(path)
	}
	type opened struct {
		f   *os.File
		err error
	}
	ch := make(chan opened, 1)
	go func() {
		f, err := os.Open(path)
		ch <- opened{f, err}
	}()
	select {
	case o := <-ch:
		return o.f, o.err
	case <-ctx.Done():
	}
	// Release the waiting open by opening the FIFO for writing ourselves
	// (it succeeds at once: the waiting open counts as a reader), then close
	// whatever it opened.
	if w, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
		w.Close()
	}
	go func() {
		if o := <-ch; o.f != nil {
			o.f.Close()
		}
	}()
	return nil, ctx.Err()
}

// ctxFile is a regular file whose reads fail with ctx's error once ctx is
// done: a stage reading it in place (ReadAt) stops at its next read. It
// closes the file only when owned.
type ctxFile struct {
	*os.File
	ctx   context.Context
	owned bool
}

func (f *ctxFile) Read(p []byte) (int, error) {
	if err := f.ctx.Err(); err != nil {
		return 0, err
	}
	return f.File.Read(p)
}

func (f *ctxFile) ReadAt(p []byte, off int64) (int, error) {
	if err := f.ctx.Err(); err != nil {
		return 0, err
	}
	return f.File.ReadAt(p, off)
}

// Close closes the file when it is the opener's (not standard input).
func (f *ctxFile) Close() error {
	if f.owned {
		return f.File.Close()
	}
	return nil
}
