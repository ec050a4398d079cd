package duals

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// allocate reserves size bytes for f, so that writes through the mapping
// cannot fail for want of disk space (which would be a SIGBUS); file systems
// without fallocate get a sparse file.
func allocate(f *os.File, size int64) error {
	if size == 0 {
		return nil
	}
	fd := int(f.Fd())
	err := unix.Fallocate(fd, 0, 0, size)
	if errors.Is(err, unix.EOPNOTSUPP) || errors.Is(err, unix.ENOSYS) {
		err = unix.Ftruncate(fd, size)
	}
	return err
}
