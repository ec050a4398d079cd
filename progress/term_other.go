//go:build !(linux || darwin || dragonfly || freebsd || netbsd || openbsd)

package progress

// Terminal reports whether w is a terminal; here it cannot tell, and says
// no (progress shows as with --progress none unless asked for).
func Terminal(w any) (bool, int) { return false, 0 }
