//go:build linux || darwin

package platform

import (
	"os"

	"golang.org/x/sys/unix"
)

// OpenToCheckLock opens path for reading to check its lock, without following
// a symbolic link or waiting on a FIFO.
func OpenToCheckLock(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK, 0)
}

// freeSpace returns the bytes an unprivileged process may still write to
// the file system holding dir (statfs).
func freeSpace(dir string) (int64, error) {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return 0, err
	}
	return int64(st.Bavail) * int64(st.Bsize), nil
}
