package platform

import (
	"os"

	"golang.org/x/sys/windows"
)

// IsTerminal reports whether f is a console (GetConsoleMode succeeds on
// console handles only).
func IsTerminal(f *os.File) bool {
	var mode uint32
	return windows.GetConsoleMode(windows.Handle(f.Fd()), &mode) == nil
}

// ANSITerminal reports false: a console shows ANSI escape sequences as
// text unless asked to take them, which nothing here does.
func ANSITerminal(f *os.File) (bool, int) { return false, 0 }
