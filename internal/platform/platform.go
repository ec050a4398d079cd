// Package platform holds the operations whose system calls differ from
// one operating system to another, so that the stages build and behave alike
// on Linux, macOS and Windows:
//
//   - TryLock takes an exclusive advisory lock on an open file without
//     waiting (flock(2) on Linux and macOS, LockFileEx on Windows); the lock
//     goes with the file's last close and with its process, however it ends.
//     IsLocked tells its error when another open file holds the lock.
//   - OpenFile and CreateTemp open files that may be renamed over another
//     path, or removed, while open: always so on Linux and macOS, and on
//     Windows only when opened with FILE_SHARE_DELETE, which os.OpenFile
//     does not ask for.
//   - SyncDir makes a directory's entries durable (after a create or a
//     rename); DirSyncUnsupported tells the errors of syncing a directory
//     that only mean that the system or file system cannot.
//
// On Linux and macOS these are exactly os.OpenFile, os.CreateTemp and
// flock(2). Elsewhere (neither Linux, macOS nor Windows) files have no locks
// here: TryLock fails with an error that wraps errors.ErrUnsupported.
package platform

import (
	"fmt"
	"os"
)

// SyncDir makes the directory entries of dir durable (a file created or
// renamed in it), by syncing the directory itself. File systems that cannot
// sync a directory (DirSyncUnsupported) are taken to need no such sync.
func SyncDir(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("sync directory: %w", err)
	}
	defer f.Close()
	if err := f.Sync(); err != nil && !DirSyncUnsupported(err) {
		return fmt.Errorf("sync directory %s: %w", dir, err)
	}
	return nil
}
