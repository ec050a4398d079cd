package platform

import (
	"os"
	"path/filepath"
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
