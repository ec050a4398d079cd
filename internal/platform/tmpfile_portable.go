//go:build !linux && !darwin && !windows

package platform

import (
	"errors"
	"os"
)

// OpenToCheckLock opens path for reading to check its lock.
func OpenToCheckLock(path string) (*os.File, error) { return os.Open(path) }

// freeSpace reports that the free space is not known here: spools are then
// bounded only by the file system.
func freeSpace(dir string) (int64, error) { return 0, errors.ErrUnsupported }
