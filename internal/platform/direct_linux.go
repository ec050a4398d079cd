package platform

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// OpenDirect opens the file at path (flag as os.OpenFile's, mode 0666
// before the umask) for I/O that bypasses the page cache (O_DIRECT), which
// a file read and written in large blocks, and larger than memory, would
// only thrash: reads and writes must then be of whole 4096-byte units at
// 4096-aligned offsets from 4096-aligned memory (AllocFloats). On a file
// system that refuses O_DIRECT (tmpfs) the file is opened without it and
// the kernel is told that access is sequential. direct reports which.
func OpenDirect(path string, flag int) (f *os.File, direct bool, err error) {
	f, err = os.OpenFile(path, flag|unix.O_DIRECT|unix.O_CLOEXEC, 0o666)
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

// FreeBytes returns the bytes an unprivileged process may still write to
// the file system holding dir (statfs).
func FreeBytes(dir string) (int64, error) {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return 0, err
	}
	return int64(st.Bavail) * int64(st.Bsize), nil
}

// DropCache evicts the file at path from the page cache (posix_fadvise
// POSIX_FADV_DONTNEED): its next reads come from the disk, as those of a
// file larger than memory would.
func DropCache(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED)
}
