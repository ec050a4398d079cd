package platform

import (
	"os"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/dualcrf/dualcrf/internal/ptytest"
)

// TestTerminal: a pseudo-terminal is a terminal of the width it was given;
// a file, a pipe and /dev/null are not.
func TestTerminal(t *testing.T) {
	_, tty := ptytest.Open(t)
	if err := unix.IoctlSetWinsize(int(tty.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Row: 24, Col: 97}); err != nil {
		t.Fatal(err)
	}
	if !IsTerminal(tty) {
		t.Error("a pseudo-terminal is not a terminal")
	}
	if ok, w := ANSITerminal(tty); !ok || w != 97 {
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
	null, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	for _, g := range []*os.File{f, pw, null} {
		if IsTerminal(g) {
			t.Errorf("%s taken for a terminal", g.Name())
		}
		if ok, _ := ANSITerminal(g); ok {
			t.Errorf("%s taken for an ANSI terminal", g.Name())
		}
	}
}
