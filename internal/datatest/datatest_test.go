package datatest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFind: $DUALCRF_DATA wins and is made absolute; a missing directory or
// a file in its place is an error naming the variable and the place.
func TestFind(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv(EnvVar, tmp)
	if got, err := Find(); err != nil || got != tmp {
		t.Fatalf("Find() = %q, %v; want %q", got, err, tmp)
	}
	missing := filepath.Join(tmp, "nosuch")
	t.Setenv(EnvVar, missing)
	if _, err := Find(); err == nil || !strings.Contains(err.Error(), missing) || !strings.Contains(err.Error(), EnvVar) {
		t.Fatalf("Find() with %s=%s: err %v, want one naming both", EnvVar, missing, err)
	}
	file := filepath.Join(tmp, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv(EnvVar, file)
	if _, err := Find(); err == nil || !strings.Contains(err.Error(), "not a directory") {
		t.Fatalf("Find() with a file: err %v", err)
	}
}

// TestFindDefault: without $DUALCRF_DATA the directory is ../shared/data
// beside the repository's root.
func TestFindDefault(t *testing.T) {
	t.Setenv(EnvVar, "")
	got, err := Find()
	root, rerr := repoRoot()
	if rerr != nil {
		t.Fatal(rerr)
	}
	want := filepath.Join(root, "..", "shared", "data")
	if got != want {
		t.Fatalf("Find() = %q, %v; want %q", got, err, want)
	}
}
