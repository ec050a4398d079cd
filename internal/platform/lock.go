package platform

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// DirLock is the exclusive lock of a directory, held by the one process
// that may write in it: TryLock on a file of the directory that names the
// holder's process id. The lock goes with the holder's process, however it
// ends, so a killed holder never leaves a directory locked.
type DirLock struct {
	path string
	f    *os.File
}

// LockedError is LockDir's refusal of a directory whose lock another
// process holds.
type LockedError struct {
	Path string // the lock file
	PID  int    // the holder's process id; 0 when not known
}

func (e *LockedError) Error() string {
	who := "another process"
	if e.PID > 0 {
		who = "process " + strconv.Itoa(e.PID)
	}
	return fmt.Sprintf("%s is held by %s", e.Path, who)
}

// LockDir takes the lock of the existing directory dir through its file
// name (created when missing) without waiting, and writes the caller's
// process id into that file. When another process holds the lock the error
// is a *LockedError; when the file cannot be opened it is the open's
// *os.PathError; when the system cannot lock it is an *os.PathError whose
// Op is "lock".
func LockDir(dir, name string) (*DirLock, error) {
	path := filepath.Join(dir, name)
	f, err := OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	if err := TryLock(f); err != nil {
		f.Close()
		if IsLocked(err) {
			b, _ := os.ReadFile(path)
			pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
			return nil, &LockedError{Path: path, PID: pid}
		}
		return nil, &os.PathError{Op: "lock", Path: path, Err: err}
	}
	if err := f.Truncate(0); err == nil {
		f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return &DirLock{path: path, f: f}, nil
}

// Path returns the lock file's path.
func (l *DirLock) Path() string { return l.path }

// Unlock empties the lock file (no process holds it) and releases the
// lock. Unlocking twice, or a nil lock, does nothing.
func (l *DirLock) Unlock() error {
	if l == nil || l.f == nil {
		return nil
	}
	l.f.Truncate(0)
	err := l.f.Close()
	l.f = nil
	return err
}
