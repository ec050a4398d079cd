// Package platform is the one home of dualcrf's system-specific code: every
// operation whose system calls differ from one operating system to another,
// so that the rest of the module has no platform files and builds and
// behaves alike on Linux, macOS and Windows (and, with less, elsewhere):
//
//   - Files and locks: TryLock takes an exclusive advisory lock on an open
//     file without waiting (flock(2), LockFileEx), IsLocked tells its error;
//     LockDir is the one directory lock (a LOCK file with the holder's PID)
//     of checkpoint directories and jobs. OpenFile and CreateTemp open files
//     that may be renamed or removed while open (FILE_SHARE_DELETE on
//     Windows); OpenUnnamed and LinkUnnamed make outputs that have no name
//     until committed (O_TMPFILE and linkat on Linux); SyncDir makes a
//     directory's entries durable; ExchangeDirs swaps two directories
//     atomically (renameat2 RENAME_EXCHANGE) and IsDirInTheWay tells a
//     rename onto a directory.
//   - Memory and disk: AllocFloats gives memory outside the Go heap;
//     MapShared maps a file (mmap, CreateFileMapping) with Flush, Advise and
//     DropPages; Allocate reserves a file's disk space (fallocate,
//     F_PREALLOCATE); OpenDirect opens with O_DIRECT where the file system
//     allows; FreeBytes and DropCache; PhysicalMemory is the machine's memory
//     or the cgroup's limit, when lower.
//   - Terminals and pipes: IsTerminal and ANSITerminal probe a file;
//     IsBrokenPipe tells a write to a closed pipe; Spool keeps a one-shot
//     input for a second read.
//
// On systems other than Linux, macOS and Windows, files have no locks or
// mappings here: those operations fail with an error that wraps
// errors.ErrUnsupported. Unnamed files are Linux's only: elsewhere
// OpenUnnamed returns ErrNoUnnamed and outputs get a locked temporary name.
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
