package platform

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSyncDir syncs a directory, and names one it cannot open.
func TestSyncDir(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "f"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := SyncDir(dir); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "nosuch")
	if err := SyncDir(missing); err == nil || !strings.Contains(err.Error(), missing) {
		t.Fatalf("SyncDir(%s) = %v, want an error naming it", missing, err)
	}
}
