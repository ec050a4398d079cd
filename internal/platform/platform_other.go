//go:build !linux && !darwin && !windows

package platform

import (
	"errors"
	"fmt"
	"os"
	"runtime"
)

// TryLock fails: files have no locks on this system. (Its callers name
// the file.)
func TryLock(f *os.File) error {
	return fmt.Errorf("file locks are not supported on %s: %w", runtime.GOOS, errors.ErrUnsupported)
}

// IsLocked reports false: TryLock never finds a lock held.
func IsLocked(err error) bool { return false }

// OpenFile is os.OpenFile.
func OpenFile(name string, flag int, perm os.FileMode) (*os.File, error) {
	return os.OpenFile(name, flag, perm)
}

// CreateTemp is os.CreateTemp.
func CreateTemp(dir, pattern string) (*os.File, error) { return os.CreateTemp(dir, pattern) }

// DirSyncUnsupported reports whether err, from syncing a directory, means
// that this system cannot.
func DirSyncUnsupported(err error) bool { return errors.Is(err, errors.ErrUnsupported) }
