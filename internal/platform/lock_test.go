//go:build linux || darwin || windows

package platform

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLockDir: a second lock of a locked directory is refused at once with
// the holder's process id, and taken once the first is released; the lock
// file names the holder while held and no one after.
func TestLockDir(t *testing.T) {
	dir := t.TempDir()
	l, err := LockDir(dir, "lock")
	if err != nil {
		t.Fatal(err)
	}
	if l.Path() != filepath.Join(dir, "lock") {
		t.Errorf("lock file %s", l.Path())
	}
	_, err = LockDir(dir, "lock")
	var le *LockedError
	if !errors.As(err, &le) || le.PID != os.Getpid() || le.Path != l.Path() || !strings.Contains(err.Error(), "held by process") {
		t.Fatalf("second lock: %v", err)
	}
	if err := l.Unlock(); err != nil {
		t.Fatal(err)
	}
	if err := l.Unlock(); err != nil {
		t.Fatalf("second unlock: %v", err)
	}
	if b, err := os.ReadFile(l.Path()); err != nil || len(b) != 0 {
		t.Fatalf("lock file after unlock: %q, %v", b, err)
	}
	l, err = LockDir(dir, "lock")
	if err != nil {
		t.Fatalf("lock after unlock: %v", err)
	}
	defer l.Unlock()
	if _, err := LockDir(filepath.Join(dir, "missing"), "lock"); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("lock in a missing directory: %v", err)
	}
}
