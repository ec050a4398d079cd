// Package osfile holds the file operations whose system calls differ from
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
//   - DirSyncUnsupported tells the errors of syncing a directory that only
//     mean that the system or file system cannot.
//
// On Linux and macOS these are exactly os.OpenFile, os.CreateTemp and
// flock(2). Elsewhere (neither Linux, macOS nor Windows) files have no locks
// here: TryLock fails with an error that wraps errors.ErrUnsupported.
package osfile
