//go:build !linux

package duals

import (
	"errors"
	"os"
	"path/filepath"
)

// openStreamFile opens a streamed duals file with plain reads and writes
// (O_DIRECT is Linux's; elsewhere the page cache holds what it holds). It
// reports that the file is not direct.
func openStreamFile(path string, flag int) (*os.File, bool, error) {
	f, err := os.OpenFile(path, flag, 0o666)
	return f, false, err
}

// freeBytes is unknown here: the up-front space check is Linux's.
func freeBytes(dir string) (int64, error) { return 0, errors.ErrUnsupported }

func dirOf(path string) string { return filepath.Dir(path) }
