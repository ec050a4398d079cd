package featurize

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/gzip"

	"github.com/dualcrf/dualcrf/internal/fifotest"
	"github.com/dualcrf/dualcrf/pipeline"
	"github.com/dualcrf/dualcrf/tables"
)

// readAllSentences reads r to the end and returns the number of sentences.
func readAllSentences(r Reader) (int, error) {
	n := 0
	for r.Scan() {
		n++
	}
	return n, r.Err()
}

// wantSyntaxError fails unless err is a SyntaxError at file:line whose
// message holds msg.
func wantSyntaxError(t *testing.T, err error, file string, line int, msg string) {
	t.Helper()
	var se *SyntaxError
	if !errors.As(err, &se) || se.File != file || se.Line != line || !strings.Contains(se.Msg, msg) {
		t.Fatalf("error %v, want %s:%d: …%s…", err, file, line, msg)
	}
}

// TestDefaultLimits: readers refuse, by default, a line longer than 1 MiB
// and a sentence of more than 100,000 tokens, naming the file and line (on
// main both were read whole: a 100 MB line took 2.6 GB).
func TestDefaultLimits(t *testing.T) {
	big := "a B\r\n" + strings.Repeat("y", 1<<20) + " B\r\n"
	_, err := readAllSentences(NewConllReader(strings.NewReader(big), "big.txt", DefaultConllOptions()))
	wantSyntaxError(t, err, "big.txt", 2, "line longer than 1048576 bytes")
	ok := "a B\r\n" + strings.Repeat("y", 1<<20-2) + " B\r\n" // CR LF do not count
	if _, err := readAllSentences(NewConllReader(strings.NewReader(ok), "ok.txt", DefaultConllOptions())); err != nil {
		t.Fatalf("a line of 1 MiB: %v", err)
	}
	many := strings.Repeat("a B\n", 100_001)
	_, err = readAllSentences(NewConllReader(strings.NewReader(many), "many.txt", DefaultConllOptions()))
	wantSyntaxError(t, err, "many.txt", 100_001, "has more than 100000 tokens")
	_, err = readAllSentences(newTreebankReader(strings.NewReader(strings.Repeat("a/DT ", 100_001)), "many.pos", TreebankPOS))
	wantSyntaxError(t, err, "many.pos", 1, "has more than 100000 tokens")
}

// gzipped compresses data.
func gzipped(t testing.TB, data []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestBombBounded: a gzip bomb (64 MiB of one line from 64 KiB) is refused
// after the first MiB, allocating a few MiB (formerly: the whole line, and
// more).
func TestBombBounded(t *testing.T) {
	dir := t.TempDir()
	bomb := filepath.Join(dir, "bomb.gz")
	if err := os.WriteFile(bomb, gzipped(t, bytes.Repeat([]byte("a"), 64<<20)), 0o644); err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, err := Run(context.Background(), pipeline.Source{Path: bomb}, io.Discard, RunOptions{})
	runtime.ReadMemStats(&after)
	wantSyntaxError(t, err, bomb, 1, "line longer than")
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 16<<20 {
		t.Fatalf("refusing the bomb allocated %d MiB", alloc>>20)
	}
}

// corpusText is a small labelled CoNLL corpus of 3 sentences.
const corpusText = "He PRP B-NP\nran VBD B-VP\n\nShe PRP B-NP\nsat VBD B-VP\n. . O\n\nIt PRP B-NP\n"

// TestRunFIFO: a named FIFO is read once and spooled for the second pass
// (formerly the second pass opened the FIFO again and waited forever for a
// writer; a process substitution read as "no sentences").
func TestRunFIFO(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "in.fifo")
	fifotest.Make(t, fifo)
	go func() {
		w, err := os.OpenFile(fifo, os.O_WRONLY, 0)
		if err != nil {
			return
		}
		io.WriteString(w, corpusText)
		w.Close()
	}()
	done := make(chan error, 1)
	var sum tables.FeatureSummary
	go func() {
		var err error
		sum, err = Run(context.Background(), pipeline.Source{Path: fifo}, io.Discard, RunOptions{})
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil || sum.Sentences != 3 || sum.Tokens != 6 {
			t.Fatalf("%+v, %v; want 3 sentences, 6 tokens", sum, err)
		}
	case <-time.After(time.Minute): // a hang, not a slow run
		t.Fatal("featurizing a FIFO hangs")
	}
}

// TestRunCancelBlocked: a featurize blocked on a FIFO ends when its context
// does, whether the FIFO has no writer yet or an idle one (formerly it
// ignored SIGINT and SIGTERM).
func TestRunCancelBlocked(t *testing.T) {
	for _, writer := range []bool{false, true} {
		fifo := filepath.Join(t.TempDir(), "in.fifo")
		fifotest.Make(t, fifo)
		if writer {
			// An idle writer: opened, sends one line, then nothing.
			opened := make(chan *os.File, 1)
			go func() {
				w, err := os.OpenFile(fifo, os.O_WRONLY, 0)
				if err == nil {
					io.WriteString(w, "He PRP B-NP\n")
				}
				opened <- w
			}()
			defer func() {
				if w := <-opened; w != nil {
					w.Close()
				}
			}()
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() {
			_, err := Run(ctx, pipeline.Source{Path: fifo}, io.Discard, RunOptions{})
			done <- err
		}()
		time.Sleep(50 * time.Millisecond) // let it block
		cancel()
		select {
		case err := <-done:
			if err != context.Canceled {
				t.Errorf("writer %v: error %v, want context.Canceled", writer, err)
			}
		case <-time.After(time.Minute): // a hang, not a slow run
			t.Fatalf("writer %v: featurize blocked on a FIFO ignores cancellation", writer)
		}
	}
}
