//go:build !linux && !darwin && !dragonfly && !freebsd && !netbsd && !openbsd && !windows

package pipeline

import "os"

// isTerminal reports whether f is a terminal; here it cannot tell, and
// says no.
func isTerminal(f *os.File) bool { return false }
