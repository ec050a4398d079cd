// Package datatest finds the shared corpora that tests and benchmarks read:
// $DUALCRF_DATA when set, else ../shared/data beside the repository's root
// (the directory holding go.mod). When the data is absent a test that needs
// it fails, naming DUALCRF_DATA and the place it looked: a missing corpus
// must not turn into a quietly skipped test.
package datatest

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// EnvVar is the environment variable that names the data directory.
const EnvVar = "DUALCRF_DATA"

// Find returns the data directory as an absolute path, and an error when
// it does not exist; it looks for the repository's root from the working
// directory up.
func Find() (string, error) {
	dir := os.Getenv(EnvVar)
	if dir == "" {
		root, err := repoRoot()
		if err != nil {
			return "", fmt.Errorf("%s is not set and %w", EnvVar, err)
		}
		dir = filepath.Join(root, "..", "shared", "data")
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return dir, err
	}
	st, err := os.Stat(abs)
	switch {
	case err != nil:
		return abs, fmt.Errorf("no data directory %s (set %s): %w", abs, EnvVar, err)
	case !st.IsDir():
		return abs, fmt.Errorf("data directory %s (set %s) is not a directory", abs, EnvVar)
	}
	return abs, nil
}

// repoRoot returns the nearest directory holding go.mod, from the working
// directory up.
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory")
		}
		dir = parent
	}
}

// Dir returns the data directory as an absolute path; the test fails when
// it is absent.
func Dir(t testing.TB) string {
	t.Helper()
	dir, err := Find()
	if err != nil {
		t.Fatalf("the shared data is missing: %v", err)
	}
	return dir
}

// Path returns the path of a file under the data directory (rel joined
// with filepath.Join); the test fails when the file is absent.
func Path(t testing.TB, rel ...string) string {
	t.Helper()
	dir := Dir(t)
	p := filepath.Join(append([]string{dir}, rel...)...)
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("the shared data is incomplete: %v (data directory %s; set %s)", err, dir, EnvVar)
	}
	return p
}
