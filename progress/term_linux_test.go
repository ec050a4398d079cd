package progress

import (
	"bytes"
	"io"
	"os"
	"testing"

	"github.com/dualcrf/dualcrf/internal/ptytest"
	"golang.org/x/sys/unix"
)

// TestTerminal: a pty is a terminal of the width it was given; a file, a
// pipe and a buffer are not.
func TestTerminal(t *testing.T) {
	_, tty := ptytest.Open(t)
	if err := unix.IoctlSetWinsize(int(tty.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Row: 24, Col: 97}); err != nil {
		t.Fatal(err)
	}
	if ok, w := terminal(tty); !ok || w != 97 {
		t.Errorf("pty: %v, width %d", ok, w)
	}
	f, err := os.CreateTemp(t.TempDir(), "x")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	defer pw.Close()
	for _, w := range []io.Writer{f, pw, &bytes.Buffer{}} {
		if ok, _ := terminal(w); ok {
			t.Errorf("%T taken for a terminal", w)
		}
	}
	if r := ForStderr(tty, Auto); r.Mode() != Bar {
		t.Errorf("auto on a pty: %v", r.Mode())
	} else {
		r.Close()
	}
	if r := ForStderr(f, Auto); r != nil {
		t.Errorf("auto on a file: %v", r.Mode())
	}
}
