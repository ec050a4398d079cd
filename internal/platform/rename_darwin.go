package platform

import (
	"errors"

	"golang.org/x/sys/unix"
)

// IsDirInTheWay reports whether err, from renaming a directory, says that
// the new name is an existing directory (EEXIST, ENOTEMPTY).
func IsDirInTheWay(err error) bool {
	return errors.Is(err, unix.EEXIST) || errors.Is(err, unix.ENOTEMPTY)
}

// ExchangeDirs exchanges the paths a and b atomically (renameatx_np
// RENAME_SWAP; APFS has it, HFS+ does not).
func ExchangeDirs(a, b string) error {
	return unix.RenameatxNp(unix.AT_FDCWD, a, unix.AT_FDCWD, b, unix.RENAME_SWAP)
}
