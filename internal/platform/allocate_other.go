//go:build !linux && !darwin

package platform

import "os"

// Allocate sets f's size to size bytes (on Windows SetEndOfFile, which on
// NTFS allocates the space, so that writes through a mapping of f cannot
// fail for want of disk space).
func Allocate(f *os.File, size int64) error { return f.Truncate(size) }
