package platform

import (
	"crypto/rand"
	"errors"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/windows"
)

// lockOffset is where TryLock locks one byte, far beyond any data: Windows
// locks are mandatory for the bytes they cover, so a lock on the data would
// stop other processes from reading it (the pid in a checkpoint directory's
// LOCK file, for instance). Locking beyond the end of a file is allowed.
const lockOffset = 1 << 62

// TryLock takes f's exclusive lock (LockFileEx on one byte at lockOffset)
// without waiting. When another open file holds it the error satisfies
// IsLocked.
func TryLock(f *os.File) error {
	ol := &windows.Overlapped{Offset: uint32(lockOffset & 0xffffffff), OffsetHigh: uint32(lockOffset >> 32)}
	return windows.LockFileEx(windows.Handle(f.Fd()),
		windows.LOCKFILE_EXCLUSIVE_LOCK|windows.LOCKFILE_FAIL_IMMEDIATELY, 0, 1, 0, ol)
}

// IsLocked reports whether err is TryLock's for a lock held by another open
// file (ERROR_LOCK_VIOLATION).
func IsLocked(err error) bool { return errors.Is(err, windows.ERROR_LOCK_VIOLATION) }

// OpenFile is os.OpenFile for regular files, except that the file is
// shared for deletion (FILE_SHARE_DELETE): it can be renamed or removed
// while open, as on Unix. flag may hold O_RDONLY, O_WRONLY or O_RDWR with
// O_CREATE, O_EXCL and O_TRUNC; the handle is not inherited by children.
func OpenFile(name string, flag int, perm os.FileMode) (*os.File, error) {
	p, err := windows.UTF16PtrFromString(name)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: name, Err: err}
	}
	var access uint32
	switch flag & (os.O_RDONLY | os.O_WRONLY | os.O_RDWR) {
	case os.O_RDONLY:
		access = windows.GENERIC_READ
	case os.O_WRONLY:
		access = windows.GENERIC_WRITE
	case os.O_RDWR:
		access = windows.GENERIC_READ | windows.GENERIC_WRITE
	}
	var disposition uint32
	switch {
	case flag&(os.O_CREATE|os.O_EXCL) == os.O_CREATE|os.O_EXCL:
		disposition = windows.CREATE_NEW
	case flag&(os.O_CREATE|os.O_TRUNC) == os.O_CREATE|os.O_TRUNC:
		disposition = windows.CREATE_ALWAYS
	case flag&os.O_CREATE == os.O_CREATE:
		disposition = windows.OPEN_ALWAYS
	case flag&os.O_TRUNC == os.O_TRUNC:
		disposition = windows.TRUNCATE_EXISTING
	default:
		disposition = windows.OPEN_EXISTING
	}
	attrs := uint32(windows.FILE_ATTRIBUTE_NORMAL)
	if perm&0o200 == 0 {
		attrs = windows.FILE_ATTRIBUTE_READONLY
	}
	share := uint32(windows.FILE_SHARE_READ | windows.FILE_SHARE_WRITE | windows.FILE_SHARE_DELETE)
	h, err := windows.CreateFile(p, access, share, nil, disposition, attrs, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: name, Err: err}
	}
	return os.NewFile(uintptr(h), name), nil
}

// CreateTemp is os.CreateTemp, with the file opened by OpenFile (so it can
// be renamed or removed while open).
func CreateTemp(dir, pattern string) (*os.File, error) {
	if dir == "" {
		dir = os.TempDir()
	}
	if strings.ContainsAny(pattern, `/\`) {
		return nil, &os.PathError{Op: "createtemp", Path: pattern, Err: errors.New("pattern contains path separator")}
	}
	prefix, suffix := pattern, ""
	if i := strings.LastIndexByte(pattern, '*'); i >= 0 {
		prefix, suffix = pattern[:i], pattern[i+1:]
	}
	for try := 0; ; try++ {
		name := filepath.Join(dir, prefix+rand.Text()+suffix)
		f, err := OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
		if err == nil || !errors.Is(err, os.ErrExist) || try == 100 {
			return f, err
		}
	}
}

// DirSyncUnsupported reports whether err, from syncing a directory, means
// that Windows cannot: FlushFileBuffers refuses a directory opened for
// reading (ERROR_ACCESS_DENIED) or the file system has no such call.
func DirSyncUnsupported(err error) bool {
	return errors.Is(err, windows.ERROR_ACCESS_DENIED) || errors.Is(err, windows.ERROR_INVALID_HANDLE) ||
		errors.Is(err, windows.ERROR_INVALID_FUNCTION)
}
