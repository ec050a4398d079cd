//go:build !linux && !darwin && !dragonfly && !freebsd && !netbsd && !openbsd && !windows

package platform

import "os"

// IsTerminal reports whether f is a terminal; here it cannot tell, and
// says no.
func IsTerminal(f *os.File) bool { return false }

// ANSITerminal reports whether f is a terminal that takes ANSI escape
// sequences; here it cannot tell, and says no.
func ANSITerminal(f *os.File) (bool, int) { return false, 0 }
