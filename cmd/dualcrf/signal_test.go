//go:build unix

package main

// The first SIGINT or SIGTERM ends every stage at once with 130 or 143,
// leaving nothing: while it waits on an idle pipe or FIFO, and while it
// reads a table it has (a signal in the middle of eval or inspect used to
// let them finish and exit 0).

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/dualcrf/dualcrf/internal/fifotest"
)

// TestBlockedStagesEndOnSignal runs each stage that reads standard input
// on a pipe whose writer stays open and silent (`sleep 1000 | dualcrf eval
// -`), and featurize on a directory holding a FIFO named x.parquet, then
// sends one signal: each must exit 130 or 143 and leave its directory as
// it was (formerly all of them ignored the first signal).
func TestBlockedStagesEndOnSignal(t *testing.T) {
	f := fixtures(t)
	for _, c := range []struct {
		name string
		args []string
		sig  syscall.Signal
		fifo bool // a directory with a FIFO x.parquet instead of the pipe
	}{
		{"eval", []string{"eval", "-"}, syscall.SIGTERM, false},
		{"eval-scores", []string{"eval", "--scores", "s.arrow", "-"}, syscall.SIGINT, false},
		{"decode", []string{"decode", "-m", f.model, "-o", "p.arrow", "-"}, syscall.SIGTERM, false},
		{"inspect", []string{"inspect", "-"}, syscall.SIGINT, false},
		{"train", []string{"train", "-o", "t.arrow", "-"}, syscall.SIGTERM, false},
		{"featurize-fifo-table", []string{"featurize", "-o", "o.arrow", "lake"}, syscall.SIGTERM, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			want := []string(nil)
			if c.fifo {
				if err := os.Mkdir(filepath.Join(dir, "lake"), 0o755); err != nil {
					t.Fatal(err)
				}
				fifotest.Make(t, filepath.Join(dir, "lake", "x.parquet"))
				want = []string{"lake"}
			}
			// A signal that comes before the command listens for it kills
			// it (the runtime's default): then try again, later.
			for delay := 200 * time.Millisecond; ; delay *= 2 {
				cmd := command(dir, c.args...)
				r, w, err := os.Pipe()
				if err != nil {
					t.Fatal(err)
				}
				cmd.Stdin = r
				var stderr bytes.Buffer
				cmd.Stderr = &stderr
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				r.Close()
				time.Sleep(delay)
				cmd.Process.Signal(c.sig)
				done := make(chan error, 1)
				go func() { done <- cmd.Wait() }()
				var werr error
				select {
				case werr = <-done:
				case <-time.After(30 * time.Second): // a hang, not a slow run
					cmd.Process.Kill()
					<-done
					w.Close()
					t.Fatalf("%v: still running after the first %v", c.args, c.sig)
				}
				w.Close()
				var ee *exec.ExitError
				if !errors.As(werr, &ee) {
					t.Fatalf("%v: %v, want exit %d\n%s", c.args, werr, 128+int(c.sig), stderr.String())
				}
				if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() && delay < 5*time.Second {
					continue
				}
				if ee.ExitCode() != 128+int(c.sig) || !strings.Contains(stderr.String(), "interrupted by SIG") {
					t.Fatalf("%v: exit %d, want %d\n%s", c.args, ee.ExitCode(), 128+int(c.sig), stderr.String())
				}
				break
			}
			if names := dirEntries(t, dir); strings.Join(names, " ") != strings.Join(want, " ") {
				t.Errorf("left %v, want %v", names, want)
			}
		})
	}
}

// signalAfter is a context that a SIGTERM cancels at its n-th look
// (Err): a signal in the middle of reading a table that is a regular file.
type signalAfter struct {
	context.Context
	cancel context.CancelCauseFunc
	mu     sync.Mutex
	left   int
}

func newSignalAfter(n int) *signalAfter {
	ctx, cancel := context.WithCancelCause(context.Background())
	return &signalAfter{Context: ctx, cancel: cancel, left: n}
}

func (s *signalAfter) Err() error {
	s.mu.Lock()
	if s.left--; s.left == 0 {
		s.cancel(&signalError{syscall.SIGTERM})
	}
	s.mu.Unlock()
	return s.Context.Err()
}

// signalReader serves r and cancels with a SIGTERM after its first read:
// a signal in the middle of reading standard input.
type signalReader struct {
	r      io.Reader
	cancel context.CancelCauseFunc
}

func (s *signalReader) Read(p []byte) (int, error) {
	n, err := s.r.Read(p[:min(len(p), 4096)])
	s.cancel(&signalError{syscall.SIGTERM})
	return n, err
}

// TestSignalMidRun: eval --scores and inspect signalled while they read a
// table (a regular file, or standard input that keeps coming) exit 143
// and write nothing (formerly they finished and exited 0).
func TestSignalMidRun(t *testing.T) {
	f := fixtures(t)
	for _, c := range []struct {
		name string
		args []string
	}{
		{"eval-scores", []string{"eval", "--scores", "s.arrow", f.pred}},
		{"inspect-predictions", []string{"inspect", f.pred}},
		{"inspect-features", []string{"inspect", f.train}},
		{"decode", []string{"decode", "-m", f.model, "-o", "p.arrow", f.test}},
	} {
		for _, stdin := range []bool{false, true} {
			args := c.args
			t.Run(c.name+map[bool]string{false: "-file", true: "-stdin"}[stdin], func(t *testing.T) {
				dir := t.TempDir()
				t.Chdir(dir)
				var ctx context.Context
				var in io.Reader = strings.NewReader("")
				if stdin {
					b, err := os.ReadFile(args[len(args)-1])
					if err != nil {
						t.Fatal(err)
					}
					c, cancel := context.WithCancelCause(context.Background())
					ctx, in = c, &signalReader{r: bytes.NewReader(b), cancel: cancel}
					args = append(args[:len(args)-1:len(args)-1], "-")
				} else {
					ctx = newSignalAfter(3)
				}
				var out, errb bytes.Buffer
				code := run(ctx, append([]string{"dualcrf"}, args...), in, &out, &errb)
				if code != 143 || out.Len() != 0 {
					t.Fatalf("%v: exit %d, want 143 and no output\nstdout:\n%s\nstderr:\n%s", args, code, out.String(), errb.String())
				}
				if names := dirEntries(t, dir); len(names) != 0 {
					t.Errorf("left %v", names)
				}
			})
		}
	}
}
