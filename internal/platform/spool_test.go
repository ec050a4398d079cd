package platform

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAnonymousFile: a spool has no name in its directory.
func TestAnonymousFile(t *testing.T) {
	dir := t.TempDir()
	f, err := anonymousFile(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString("spooled"); err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 7)
	if _, err := f.ReadAt(b, 0); err != nil || string(b) != "spooled" {
		t.Fatalf("read back %q, %v", b, err)
	}
	if names := dirEntries(t, dir); len(names) != 0 {
		t.Fatalf("directory holds %v", names)
	}
	if _, err := anonymousFile(filepath.Join(dir, "missing")); err == nil {
		t.Fatal("spool in a missing directory")
	}
}

// dirEntries lists dir's names.
func dirEntries(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return names
}

// TestSpoolCopyBounded: io.Copy into a spool goes through its Write, which
// counts the bytes and refuses to pass its bound (the embedded file's
// ReadFrom bypassed both: Size said 0, and nothing bounded the copy).
func TestSpoolCopyBounded(t *testing.T) {
	s, err := NewSpool(t.TempDir(), "in")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if n, err := io.Copy(s, bytes.NewReader(make([]byte, 1000))); n != 1000 || err != nil || s.Size() != 1000 {
		t.Fatalf("copied %d bytes, %v; size %d", n, err, s.Size())
	}
	s.max = 1500
	if _, err := io.Copy(s, bytes.NewReader(make([]byte, 1000))); err == nil || !strings.Contains(err.Error(), "would fill") {
		t.Fatalf("a copy past the bound: %v", err)
	}
}
