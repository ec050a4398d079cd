package platform

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// Allocate sets f's size to size bytes and reserves them (fcntl
// F_PREALLOCATE, which macOS has instead of fallocate), so that writes
// through a mapping of f cannot fail for want of disk space (which would be
// a SIGBUS); file systems that cannot preallocate get a sparse file.
func Allocate(f *os.File, size int64) error {
	if size == 0 {
		return nil
	}
	st := unix.Fstore_t{Flags: unix.F_ALLOCATEALL, Posmode: unix.F_PEOFPOSMODE, Length: size}
	err := unix.FcntlFstore(f.Fd(), unix.F_PREALLOCATE, &st)
	if err != nil && !errors.Is(err, errors.ErrUnsupported) && !errors.Is(err, unix.EINVAL) {
		return err
	}
	return unix.Ftruncate(int(f.Fd()), size)
}
