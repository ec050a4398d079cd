package train

import (
	"errors"

	"golang.org/x/sys/unix"
)

// isDirInTheWay reports whether err, from renaming a directory, says that
// the new name is an existing directory (EEXIST, ENOTEMPTY).
func isDirInTheWay(err error) bool {
	return errors.Is(err, unix.EEXIST) || errors.Is(err, unix.ENOTEMPTY)
}

// exchangeDirs exchanges the paths a and b atomically
// (renameat2 RENAME_EXCHANGE).
func exchangeDirs(a, b string) error {
	return unix.Renameat2(unix.AT_FDCWD, a, unix.AT_FDCWD, b, unix.RENAME_EXCHANGE)
}
