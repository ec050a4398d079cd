//go:build !linux

package platform

import (
	"errors"
	"fmt"
	"os"
	"runtime"
)

// OpenDirect opens the file at path (flag as os.OpenFile's, mode 0666
// before the umask) with plain reads and writes: O_DIRECT is Linux's, and
// elsewhere the page cache holds what it holds. direct is false.
func OpenDirect(path string, flag int) (f *os.File, direct bool, err error) {
	f, err = os.OpenFile(path, flag, 0o666)
	return f, false, err
}

// FreeBytes is unknown here (the error wraps errors.ErrUnsupported): the
// up-front space check is Linux's.
func FreeBytes(dir string) (int64, error) {
	return 0, fmt.Errorf("free space: not known on %s: %w", runtime.GOOS, errors.ErrUnsupported)
}

// DropCache fails (the error wraps errors.ErrUnsupported): evicting a file
// from the page cache is Linux's here.
func DropCache(path string) error {
	return fmt.Errorf("drop the page cache: not supported on %s: %w", runtime.GOOS, errors.ErrUnsupported)
}
