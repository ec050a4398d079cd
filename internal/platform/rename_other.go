//go:build !linux && !darwin && !windows

package platform

import (
	"errors"
	"io/fs"
)

// IsDirInTheWay reports whether err, from renaming a directory, says that
// the new name exists.
func IsDirInTheWay(err error) bool { return errors.Is(err, fs.ErrExist) }

// ExchangeDirs fails with errors.ErrUnsupported: this system cannot exchange two paths atomically, and
// the caller moves the old directory aside instead.
func ExchangeDirs(a, b string) error { return errors.ErrUnsupported }
