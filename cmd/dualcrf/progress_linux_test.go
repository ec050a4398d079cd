package main

import (
	"bytes"
	"io"
	"strings"
	"sync"
	"testing"

	"github.com/dualcrf/dualcrf/internal/ptytest"
	"golang.org/x/sys/unix"
)

// TestProgressOnTerminal: with standard error on a terminal, train
// (--progress auto, the default) draws a bar redrawn in place with its
// rate, the per-epoch lines scrolling above it; --progress none draws
// none; standard output gets nothing either way.
func TestProgressOnTerminal(t *testing.T) {
	f := fixtures(t)
	for _, c := range []struct {
		mode string
		bar  bool
	}{{"auto", true}, {"none", false}} {
		ptmx, tty := ptytest.Open(t)
		if err := unix.IoctlSetWinsize(int(tty.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Row: 24, Col: 100}); err != nil {
			t.Fatal(err)
		}
		var screen bytes.Buffer
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			io.Copy(&screen, ptmx) // ends when the terminal closes
		}()
		dir := t.TempDir()
		cmd := command(dir, "train", "--progress", c.mode, "--max-epochs", "4", "--gap-tol", "1e-9", "-o", "m.arrow", f.train)
		var stdout bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, tty
		if err := cmd.Run(); err != nil {
			t.Fatal(err)
		}
		tty.Close()
		wg.Wait()
		out := screen.String()
		drawn := strings.Contains(out, "\rtrain ") && strings.Contains(out, "steps/s") && strings.Contains(out, "\x1b[K")
		if drawn != c.bar || !strings.Contains(out, "epoch   4") || stdout.Len() != 0 {
			t.Errorf("--progress %s: bar drawn %v, want %v; stdout %q; terminal:\n%q", c.mode, drawn, c.bar, stdout.String(), out)
		}
		// The initialisation and the certificates are phases of their own,
		// counting sentences; the note tells the last certified gap's epoch.
		if c.bar {
			for _, want := range []string{"\rtrain init ", "\rtrain certify epoch 0 ", "\rtrain epoch 1/4 ", "\rtrain certify epoch 4 ", "sentences", " @0 → 1e-09"} {
				if !strings.Contains(out, want) {
					t.Errorf("--progress %s: no %q on the terminal:\n%q", c.mode, want, out)
				}
			}
		}
	}
}
