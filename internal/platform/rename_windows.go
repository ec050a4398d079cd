package platform

import (
	"errors"
	"io/fs"

	"golang.org/x/sys/windows"
)

// IsDirInTheWay reports whether err, from renaming a directory, says that
// the new name exists: MoveFileEx refuses to replace a directory with
// ERROR_ACCESS_DENIED or ERROR_ALREADY_EXISTS.
func IsDirInTheWay(err error) bool {
	return errors.Is(err, fs.ErrExist) || errors.Is(err, windows.ERROR_ACCESS_DENIED)
}

// ExchangeDirs fails with errors.ErrUnsupported: Windows cannot exchange two paths atomically, and the
// caller moves the old directory aside instead.
func ExchangeDirs(a, b string) error { return errors.ErrUnsupported }
