//go:build !linux && !darwin && !windows

package train

import (
	"errors"
	"io/fs"
)

// isDirInTheWay reports whether err, from renaming a directory, says that
// the new name exists.
func isDirInTheWay(err error) bool { return errors.Is(err, fs.ErrExist) }

// exchangeDirs fails: this system cannot exchange two paths atomically, and
// the caller moves the old directory aside instead.
func exchangeDirs(a, b string) error { return errors.ErrUnsupported }
