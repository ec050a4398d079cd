//go:build linux || darwin || dragonfly || freebsd || netbsd || openbsd

package progress

import (
	"os"

	"golang.org/x/sys/unix"
)

// Terminal reports whether w is a terminal and, if so, its width in
// columns (0 when the terminal does not say).
func Terminal(w any) (bool, int) {
	f, ok := w.(*os.File)
	if !ok {
		return false, 0
	}
	ws, err := unix.IoctlGetWinsize(int(f.Fd()), unix.TIOCGWINSZ)
	if err != nil {
		return false, 0
	}
	return true, int(ws.Col)
}
