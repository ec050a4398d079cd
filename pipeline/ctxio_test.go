package pipeline

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"
	"testing/iotest"
	"time"

	"github.com/dualcrf/dualcrf/internal/fifotest"
)

// TestContextReaderData: a ContextReader passes its reader's bytes through
// unchanged, whatever the sizes of the reads.
func TestContextReaderData(t *testing.T) {
	data := bytes.Repeat([]byte("0123456789abcdef"), 20000) // more than one inner read
	if err := iotest.TestReader(ContextReader(context.Background(), bytes.NewReader(data)), data); err != nil {
		t.Fatal(err)
	}
	if err := iotest.TestReader(ContextReader(context.Background(), iotest.OneByteReader(bytes.NewReader(data))), data); err != nil {
		t.Fatal(err)
	}
}

// TestContextReaderCancel: a read blocked on a pipe whose writer is idle
// returns the context's error when the context ends.
func TestContextReaderCancel(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	w.WriteString("x")
	ctx, cancel := context.WithCancel(context.Background())
	cr := ContextReader(ctx, r)
	buf := make([]byte, 10)
	if n, err := cr.Read(buf); n != 1 || err != nil {
		t.Fatalf("read %d, %v", n, err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := cr.Read(buf)
		done <- err
	}()
	time.Sleep(20 * time.Millisecond) // let it block
	cancel()
	select {
	case err := <-done:
		if err != context.Canceled {
			t.Fatalf("blocked read ended with %v", err)
		}
	case <-time.After(time.Minute): // a hang, not a slow run
		t.Fatal("blocked read ignores cancellation")
	}
	if _, err := cr.Read(buf); err != context.Canceled {
		t.Fatalf("read after cancellation: %v", err)
	}
}

// TestOpenContext: opening a FIFO waits for a writer, but not past the end
// of the context.
func TestOpenContext(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "f")
	fifotest.Make(t, fifo)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		f, err := OpenContext(ctx, fifo)
		if f != nil {
			f.Close()
		}
		done <- err
	}()
	time.Sleep(20 * time.Millisecond) // let it wait
	cancel()
	select {
	case err := <-done:
		if err != context.Canceled {
			t.Fatalf("open ended with %v", err)
		}
	case <-time.After(time.Minute): // a hang, not a slow run
		t.Fatal("opening a FIFO ignores cancellation")
	}
	// With a writer, it opens.
	go func() {
		if w, err := os.OpenFile(fifo, os.O_WRONLY, 0); err == nil {
			w.WriteString("hello")
			w.Close()
		}
	}()
	f, err := OpenContext(context.Background(), fifo)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if b, err := io.ReadAll(f); err != nil || string(b) != "hello" {
		t.Fatalf("read %q, %v", b, err)
	}
}
