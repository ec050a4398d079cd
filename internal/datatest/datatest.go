// Package datatest finds the corpora that tests and benchmarks read, the
// small slices of them that the repository carries, and the Python 3
// interpreter the tests of the generated Python feature module run.
//
// The data directory is $DUALCRF_DATA when set; else data/ under the
// repository's root (the directory holding its go.mod, not a nested
// module's) when it holds a corpus, which is where
// `go run ./scripts/getdata -o data` puts them.
//
// When none is found, a test that needs the full corpora is skipped, with a
// message saying how to get them, and Main prints how many were skipped.
// When CI or DUALCRF_REQUIRE_DATA is true, or $DUALCRF_DATA names a
// directory that does not exist, a missing corpus is a failure instead: it
// must not turn into a quietly skipped test where the data is meant to be.
package datatest

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
)

// EnvVar is the environment variable that names the data directory.
const EnvVar = "DUALCRF_DATA"

// RequireVar is the environment variable that, when true, makes missing
// data a failure rather than a skip (as does CI=true).
const RequireVar = "DUALCRF_REQUIRE_DATA"

// FetchCommand is the command, run from the repository's root, that
// downloads the corpora into data/.
const FetchCommand = "go run ./scripts/getdata -o data"

// corpora are the subdirectories of a data directory; a default candidate
// counts as the data directory when it holds one of them.
var corpora = []string{"conll2000", "conll2002", "ud_english_ewt", "treebank", "ocr"}

// ErrNoData is wrapped by Find's error when no data directory was found
// and none was named by $DUALCRF_DATA.
var ErrNoData = errors.New("no corpus data")

// skipped counts the tests of this test binary skipped for want of data;
// Main reports it.
var skipped atomic.Int64

// Find returns the data directory as an absolute path. The error wraps
// ErrNoData when $DUALCRF_DATA is unset and no default directory holds the
// corpora; it does not when $DUALCRF_DATA names a missing directory or a
// file, which is a mistake to report rather than a reason to skip.
func Find() (string, error) {
	if dir := os.Getenv(EnvVar); dir != "" {
		abs, err := filepath.Abs(dir)
		if err != nil {
			return dir, err
		}
		st, err := os.Stat(abs)
		switch {
		case err != nil:
			return abs, fmt.Errorf("no data directory %s (from %s): %w", abs, EnvVar, err)
		case !st.IsDir():
			return abs, fmt.Errorf("data directory %s (from %s) is not a directory", abs, EnvVar)
		}
		return abs, nil
	}
	root, err := RepoRoot()
	if err != nil {
		return "", fmt.Errorf("%w: %s is not set and %v", ErrNoData, EnvVar, err)
	}
	dir := DefaultDir(root)
	if holdsCorpus(dir) {
		return dir, nil
	}
	return "", fmt.Errorf("%w: %s is not set and %s holds no corpus", ErrNoData, EnvVar, dir)
}

// DefaultDir is the data directory looked at when $DUALCRF_DATA is not set,
// for the repository rooted at root: data/ under it.
func DefaultDir(root string) string {
	return filepath.Join(root, "data")
}

// holdsCorpus reports whether dir has one of the corpora's subdirectories.
func holdsCorpus(dir string) bool {
	for _, c := range corpora {
		if st, err := os.Stat(filepath.Join(dir, c)); err == nil && st.IsDir() {
			return true
		}
	}
	return false
}

// nestedPrefix begins the module path of each module nested in the
// repository (beam/, interop/, experiments/): their go.mod is not the root.
const nestedPrefix = "github.com/dualcrf/dualcrf/"

// RepoRoot returns the nearest directory holding go.mod, from the working
// directory up, passing over the repository's nested modules (a go.mod
// whose module path begins with github.com/dualcrf/dualcrf/), so that a
// test of experiments/ finds the corpora where the core's tests do.
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if mod, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil && !nested(mod) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory")
		}
		dir = parent
	}
}

// nested reports whether the go.mod text mod declares one of the
// repository's nested modules.
func nested(mod []byte) bool {
	for _, line := range strings.Split(string(mod), "\n") {
		if path, ok := strings.CutPrefix(strings.TrimSpace(line), "module "); ok {
			return strings.HasPrefix(strings.Trim(strings.TrimSpace(path), `"`), nestedPrefix)
		}
	}
	return false
}

// Required reports whether missing data must fail the tests: CI or
// DUALCRF_REQUIRE_DATA set to a true value (1, t, true, …).
func Required() bool {
	for _, v := range []string{"CI", RequireVar} {
		if b, err := strconv.ParseBool(os.Getenv(v)); err == nil && b {
			return true
		}
	}
	return false
}

// Dir returns the data directory as an absolute path. When there is none,
// the test is skipped (and counted for Main), or fails when Required or
// when $DUALCRF_DATA names a missing directory.
func Dir(t testing.TB) string {
	t.Helper()
	dir, err := Find()
	if err == nil {
		return dir
	}
	if !errors.Is(err, ErrNoData) {
		t.Fatalf("the corpus data is missing: %v", err)
	}
	if Required() {
		t.Fatalf("the corpus data is missing and required (CI or %s is set): %v; set %s to its directory, or fetch it: %s",
			RequireVar, err, EnvVar, FetchCommand)
	}
	skipped.Add(1)
	t.Skipf("needs the full corpora: set %s to their directory, or fetch them: %s", EnvVar, FetchCommand)
	return ""
}

// Path returns the path of a file under the data directory (rel joined
// with filepath.Join). Without a data directory it acts as Dir; a data
// directory that lacks the file fails the test.
func Path(t testing.TB, rel ...string) string {
	t.Helper()
	dir := Dir(t)
	p := filepath.Join(append([]string{dir}, rel...)...)
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("the corpus data is incomplete: %v (data directory %s; fetch the corpora again: %s)", err, dir, FetchCommand)
	}
	return p
}

// Carried returns the absolute path of a file the repository carries, rel
// being relative to the repository's root (cmd/dualcrf/demodata/…,
// testdata/corpora/…); the test fails when it is absent.
func Carried(t testing.TB, rel ...string) string {
	t.Helper()
	root, err := RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(append([]string{root}, rel...)...)
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("a file the repository carries is missing: %v", err)
	}
	return p
}

// PythonVar names the Python 3 interpreter the tests run (default:
// python3 on the PATH).
const PythonVar = "DUALCRF_PYTHON"

// Python3 returns the path of the Python 3 interpreter ($DUALCRF_PYTHON,
// else python3 on the PATH). Without one the test is skipped, or fails
// when Required (CI installs python3).
func Python3(t testing.TB) string {
	t.Helper()
	name := os.Getenv(PythonVar)
	if name == "" {
		name = "python3"
	}
	path, err := exec.LookPath(name)
	if err == nil {
		return path
	}
	if Required() || os.Getenv(PythonVar) != "" {
		t.Fatalf("no Python 3 interpreter (%v): install python3, or name one with %s", err, PythonVar)
	}
	t.Skipf("needs python3 (install it, or name an interpreter with %s)", PythonVar)
	return ""
}

// Main runs the tests (call it from TestMain: os.Exit(datatest.Main(m)))
// and returns their exit code. When tests were skipped for want of the
// corpora it says so in one line: on the terminal (/dev/tty) when the tests
// passed, the run is not verbose and there is one — `go test ./...` hides
// a passing package's output — else on standard error.
func Main(m *testing.M) int {
	code := m.Run()
	if n := skipped.Load(); n > 0 {
		line := SkipLine(filepath.Base(os.Args[0]), n)
		// go test shows a package's output when it fails or runs -v, and
		// hides it otherwise: then the terminal, when there is one, gets the
		// line instead (once, not twice).
		if code == 0 && !testing.Verbose() {
			if tty, err := os.OpenFile("/dev/tty", os.O_WRONLY, 0); err == nil {
				fmt.Fprintln(tty, line)
				tty.Close()
				return code
			}
		}
		fmt.Fprintln(os.Stderr, line)
	}
	return code
}

// SkipLine is Main's line for n tests of the test binary bin skipped.
func SkipLine(bin string, n int64) string {
	pkg := strings.TrimSuffix(strings.TrimSuffix(bin, ".exe"), ".test")
	tests := "tests"
	if n == 1 {
		tests = "test"
	}
	return fmt.Sprintf("%s: %d corpus %s skipped, no corpus data: fetch it with `%s` (or set %s)", pkg, n, tests, FetchCommand, EnvVar)
}
