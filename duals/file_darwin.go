package duals

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// allocate reserves size bytes for f (fcntl F_PREALLOCATE, which macOS has
// instead of fallocate), so that writes through the mapping cannot fail for
// want of disk space (which would be a SIGBUS), then sets its size; file
// systems that cannot preallocate get a sparse file.
func allocate(f *os.File, size int64) error {
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
