package duals

import (
	"errors"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// openStreamFile opens a streamed duals file with O_DIRECT — block reads
// and writes bypass the page cache, which a file larger than memory would
// only thrash — or, on a file system that refuses it (tmpfs), without, and
// advises the kernel that access is sequential. It reports whether the
// file is direct.
func openStreamFile(path string, flag int) (*os.File, bool, error) {
	f, err := os.OpenFile(path, flag|unix.O_DIRECT|unix.O_CLOEXEC, 0o666)
	if err == nil {
		return f, true, nil
	}
	if !errors.Is(err, unix.EINVAL) {
		return nil, false, err
	}
	f, err = os.OpenFile(path, flag|unix.O_CLOEXEC, 0o666)
	if err != nil {
		return nil, false, err
	}
	unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_SEQUENTIAL)
	return f, false, nil
}

// freeBytes returns the bytes an unprivileged process may still write to
// the file system holding dir (statfs).
func freeBytes(dir string) (int64, error) {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return 0, err
	}
	return int64(st.Bavail) * int64(st.Bsize), nil
}

func dirOf(path string) string { return filepath.Dir(path) }
