//go:build linux || darwin

package platform

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// TryLock takes f's exclusive lock (flock LOCK_EX) without waiting. When
// another open file holds it the error satisfies IsLocked.
func TryLock(f *os.File) error {
	for {
		err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		if !errors.Is(err, unix.EINTR) {
			return err
		}
	}
}

// IsLocked reports whether err is TryLock's for a lock held by another open
// file (EWOULDBLOCK).
func IsLocked(err error) bool { return errors.Is(err, unix.EWOULDBLOCK) }

// OpenFile is os.OpenFile.
func OpenFile(name string, flag int, perm os.FileMode) (*os.File, error) {
	return os.OpenFile(name, flag, perm)
}

// CreateTemp is os.CreateTemp.
func CreateTemp(dir, pattern string) (*os.File, error) { return os.CreateTemp(dir, pattern) }

// DirSyncUnsupported reports whether err, from syncing a directory, means
// that the file system cannot sync directories (EINVAL).
func DirSyncUnsupported(err error) bool { return errors.Is(err, unix.EINVAL) }
