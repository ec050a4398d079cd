package pipeline

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// openPTY opens a pseudo-terminal pair: the controlling side and the
// terminal a program would have as its standard output.
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

// TestBinaryToTerminal: binary output to a terminal is refused unless "-"
// was given explicitly; text is not (on main 7.4 MB of Arrow went to the
// terminal without a word).
func TestBinaryToTerminal(t *testing.T) {
	_, tty := openPTY(t)
	if !isTerminal(tty) {
		t.Fatal("a pseudo-terminal is not a terminal")
	}
	null, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	if isTerminal(null) {
		t.Fatal("/dev/null is a terminal")
	}
	old := os.Stdout
	os.Stdout = tty
	defer func() { os.Stdout = old }()
	kinds := []Kind{KindArrow, KindCoNLL, KindParquet}
	_, err = ResolveOutput(OutputRequest{Flag: "-o", Path: "-", Kinds: kinds})
	if err == nil || !strings.Contains(err.Error(), "refusing to write binary Arrow IPC to a terminal") {
		t.Errorf("default output on a terminal: %v", err)
	}
	if _, err := ResolveOutput(OutputRequest{Flag: "-o", Path: "-", Kinds: kinds, Kind: KindParquet, KindFlag: "--format"}); err == nil {
		t.Error("Parquet to a terminal accepted")
	}
	if _, err := ResolveOutput(OutputRequest{Flag: "-o", Path: "-", PathGiven: true, Kinds: kinds}); err != nil {
		t.Errorf("explicit -o -: %v", err)
	}
	if _, err := ResolveOutput(OutputRequest{Flag: "-o", Path: "-", Kinds: kinds, Kind: KindCoNLL, KindFlag: "--format"}); err != nil {
		t.Errorf("text to a terminal: %v", err)
	}
	if _, err := ResolveOutput(OutputRequest{Flag: "-o", Path: "x.arrow", Kinds: kinds}); err != nil {
		t.Errorf("file output while stdout is a terminal: %v", err)
	}
	os.Stdout = null
	if _, err := ResolveOutput(OutputRequest{Flag: "-o", Path: "-", Kinds: kinds}); err != nil {
		t.Errorf("binary to /dev/null: %v", err)
	}
}
