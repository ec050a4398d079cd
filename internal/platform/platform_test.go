//go:build linux || darwin || windows

package platform

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestTryLock: a second open file of a locked file cannot take its lock
// until the first is closed, and the lock does not stop others reading the
// data (Windows' locks are mandatory for the bytes they cover).
func TestTryLock(t *testing.T) {
	path := filepath.Join(t.TempDir(), "LOCK")
	if err := os.WriteFile(path, []byte("1234\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	a, err := OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := TryLock(a); err != nil {
		t.Fatalf("first lock: %v", err)
	}
	b, err := OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if err := TryLock(b); !IsLocked(err) {
		t.Fatalf("second lock while the first is held: %v, want a lock held", err)
	}
	if got, err := os.ReadFile(path); err != nil || string(got) != "1234\n" {
		t.Fatalf("reading a locked file: %q, %v", got, err)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if err := TryLock(b); err != nil {
		t.Fatalf("lock after the holder closed: %v", err)
	}
	if IsLocked(nil) {
		t.Error("IsLocked(nil)")
	}
}

// TestCreateTempRenameRemoveOpen: a file from CreateTemp can be renamed
// over an existing file and removed while open, and its name has the
// pattern's prefix and suffix; OpenFile's files can be removed while open.
func TestCreateTempRenameRemoveOpen(t *testing.T) {
	dir := t.TempDir()
	final := filepath.Join(dir, "out.arrow")
	if err := os.WriteFile(final, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := CreateTemp(dir, ".out.arrow.tmp-*.x")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	base := filepath.Base(f.Name())
	if filepath.Dir(f.Name()) != dir || !strings.HasPrefix(base, ".out.arrow.tmp-") || !strings.HasSuffix(base, ".x") ||
		len(base) <= len(".out.arrow.tmp-.x") {
		t.Fatalf("temporary file %s", f.Name())
	}
	if _, err := f.WriteString("new"); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(f.Name(), final); err != nil {
		t.Fatalf("rename while open: %v", err)
	}
	if got, err := os.ReadFile(final); err != nil || string(got) != "new" {
		t.Fatalf("after rename: %q, %v", got, err)
	}

	g, err := OpenFile(filepath.Join(dir, "spool"), os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if _, err := OpenFile(g.Name(), os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600); !os.IsExist(err) {
		t.Fatalf("O_EXCL on an existing file: %v", err)
	}
	if err := os.Remove(g.Name()); err != nil {
		t.Fatalf("remove while open: %v", err)
	}
	if _, err := g.WriteString("still writable"); err != nil {
		t.Fatalf("write after remove: %v", err)
	}
}
