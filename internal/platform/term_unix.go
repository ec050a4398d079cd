//go:build linux || darwin || dragonfly || freebsd || netbsd || openbsd

package platform

import (
	"os"

	"golang.org/x/sys/unix"
)

// IsTerminal reports whether f is a terminal.
func IsTerminal(f *os.File) bool {
	_, err := unix.IoctlGetWinsize(int(f.Fd()), unix.TIOCGWINSZ)
	return err == nil
}

// ANSITerminal reports whether f is a terminal that takes ANSI escape
// sequences (a progress bar redrawn in place) and, if so, its width in
// columns (0 when the terminal does not say).
func ANSITerminal(f *os.File) (bool, int) {
	ws, err := unix.IoctlGetWinsize(int(f.Fd()), unix.TIOCGWINSZ)
	if err != nil {
		return false, 0
	}
	return true, int(ws.Col)
}
