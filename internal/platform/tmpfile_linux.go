package platform

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// OpenUnnamed opens an unnamed regular file in dir (O_TMPFILE), or fails
// with ErrNoUnnamed when the kernel or file system cannot, or when the file
// could not be given a name later (no /proc/self/fd).
func OpenUnnamed(dir string, perm uint32) (*os.File, error) {
	fd, err := unix.Open(dir, unix.O_TMPFILE|unix.O_RDWR|unix.O_CLOEXEC, perm)
	switch {
	case errors.Is(err, unix.EOPNOTSUPP), errors.Is(err, unix.EISDIR), errors.Is(err, unix.EINVAL):
		return nil, ErrNoUnnamed
	case err != nil:
		return nil, &os.PathError{Op: "open", Path: dir, Err: err}
	}
	f := os.NewFile(uintptr(fd), filepath.Join(dir, "(unnamed)"))
	if _, err := os.Stat(procFD(f)); err != nil {
		f.Close()
		return nil, ErrNoUnnamed
	}
	return f, nil
}

// procFD is the /proc path of f's descriptor.
func procFD(f *os.File) string { return fmt.Sprintf("/proc/self/fd/%d", f.Fd()) }

// LinkUnnamed gives the unnamed file f the name path, which must not
// exist (os.ErrExist otherwise).
func LinkUnnamed(f *os.File, path string) error {
	err := unix.Linkat(unix.AT_FDCWD, procFD(f), unix.AT_FDCWD, path, unix.AT_SYMLINK_FOLLOW)
	if err != nil {
		return &os.LinkError{Op: "link", Old: f.Name(), New: path, Err: err}
	}
	return nil
}
