package platform

import (
	"os"

	"golang.org/x/sys/windows"
)

// OpenToCheckLock opens path for reading to check its lock, shared for
// deletion so that the file can be removed while open.
func OpenToCheckLock(path string) (*os.File, error) { return OpenFile(path, os.O_RDONLY, 0) }

// freeSpace returns the bytes the caller may still write to the volume
// holding dir (GetDiskFreeSpaceEx).
func freeSpace(dir string) (int64, error) {
	p, err := windows.UTF16PtrFromString(dir)
	if err != nil {
		return 0, err
	}
	var avail, total, free uint64
	if err := windows.GetDiskFreeSpaceEx(p, &avail, &total, &free); err != nil {
		return 0, err
	}
	return int64(min(avail, 1<<62)), nil
}
