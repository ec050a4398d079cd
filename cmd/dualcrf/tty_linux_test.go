package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// openPTY opens a pseudo-terminal: the controlling side and the terminal.
func openPTY(t *testing.T) (ptmx, tty *os.File) {
	t.Helper()
	ptmx, err := os.OpenFile("/dev/ptmx", os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ptmx.Close() })
	if err := unix.IoctlSetPointerInt(int(ptmx.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetInt(int(ptmx.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	tty, err = os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tty.Close() })
	return ptmx, tty
}

// TestBinaryToTerminal: a stage whose standard output is a terminal refuses
// to write Arrow there unless told -o - (on main it wrote the bytes).
func TestBinaryToTerminal(t *testing.T) {
	f := fixtures(t)
	for _, c := range []struct {
		args []string
		ok   bool
	}{
		{[]string{"decode", "-m", f.model, f.test}, false},
		{[]string{"featurize", "--model", f.model, f.testText}, false},
		{[]string{"synth", "-n", "2"}, false},
		{[]string{"decode", "-m", f.model, "-o", "-", f.test}, true},
		{[]string{"decode", "-m", f.model, "--format", "conll", f.test}, true},
	} {
		ptmx, tty := openPTY(t)
		go io.Copy(io.Discard, ptmx) // what reaches the terminal
		cmd := command(t.TempDir(), c.args...)
		var stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = tty, &stderr
		err := cmd.Run()
		refused := strings.Contains(stderr.String(), "refusing to write binary Arrow IPC to a terminal")
		if c.ok != (err == nil) || refused == c.ok {
			t.Errorf("dualcrf %s: %v\n%s", strings.Join(c.args, " "), err, stderr.String())
		}
	}
}
