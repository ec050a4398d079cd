package datatest

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestMain(m *testing.M) { os.Exit(Main(m)) }

// fakeTB records Dir's and Path's verdicts instead of ending the test:
// Fatalf and Skipf end the call by a panic that call recovers.
type fakeTB struct {
	testing.TB
	fatal, skip string
}

type stop struct{}

func (f *fakeTB) Helper()                        {}
func (f *fakeTB) Fatalf(format string, a ...any) { f.fatal = fmt.Sprintf(format, a...); panic(stop{}) }
func (f *fakeTB) Skipf(format string, a ...any)  { f.skip = fmt.Sprintf(format, a...); panic(stop{}) }

// call runs fn(f) and recovers the end of a Fatalf or Skipf.
func (f *fakeTB) call(fn func(testing.TB)) {
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(stop); !ok {
				panic(r)
			}
		}
	}()
	fn(f)
}

// fakeRepo makes an empty repository (a go.mod) under a temporary
// directory, changes into it and clears the variables Find and Required
// read; it returns the repository's root.
func fakeRepo(t *testing.T) string {
	t.Helper()
	root := filepath.Join(t.TempDir(), "repo")
	if err := os.MkdirAll(filepath.Join(root, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "go.mod"), []byte("module x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(filepath.Join(root, "sub"))
	for _, v := range []string{EnvVar, RequireVar, "CI"} {
		t.Setenv(v, "")
	}
	return root
}

func mkdir(t *testing.T, dir string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
}

// TestFind: $DUALCRF_DATA wins and is made absolute; a missing directory or
// a file in its place is an error naming the variable and the place, and
// not ErrNoData (a mistake, not a reason to skip).
func TestFind(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv(EnvVar, tmp)
	if got, err := Find(); err != nil || got != tmp {
		t.Fatalf("Find() = %q, %v; want %q", got, err, tmp)
	}
	missing := filepath.Join(tmp, "nosuch")
	t.Setenv(EnvVar, missing)
	_, err := Find()
	if err == nil || !strings.Contains(err.Error(), missing) || !strings.Contains(err.Error(), EnvVar) || errors.Is(err, ErrNoData) {
		t.Fatalf("Find() with %s=%s: err %v, want one naming both, not ErrNoData", EnvVar, missing, err)
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

// TestFindDefault: without $DUALCRF_DATA, data/ under the root when it
// holds a corpus (a data/ with only its README does not count); nothing
// else — a directory beside the clone is not looked at — else ErrNoData.
func TestFindDefault(t *testing.T) {
	root := fakeRepo(t)
	local, shared := filepath.Join(root, "data"), filepath.Join(filepath.Dir(root), "shared", "data")
	if got := DefaultDir(root); got != local {
		t.Fatalf("DefaultDir = %q", got)
	}
	mkdir(t, local)
	if err := os.WriteFile(filepath.Join(local, "README.md"), []byte("# data\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err := Find(); !errors.Is(err, ErrNoData) || !strings.Contains(err.Error(), local) {
		t.Fatalf("no corpora: Find() = %q, %v; want ErrNoData naming %s", got, err, local)
	}
	mkdir(t, filepath.Join(shared, "ocr"))
	if got, err := Find(); !errors.Is(err, ErrNoData) {
		t.Fatalf("corpora beside the clone only: Find() = %q, %v; want ErrNoData", got, err)
	}
	mkdir(t, filepath.Join(local, "conll2000"))
	if got, err := Find(); err != nil || got != local {
		t.Fatalf("Find() = %q, %v; want %q", got, err, local)
	}
}

// TestRepoRootPassesNestedModules: from inside one of the repository's
// nested modules (experiments/, beam/, interop/), the root is the
// repository's, where data/ is; another module's go.mod is a root.
func TestRepoRootPassesNestedModules(t *testing.T) {
	root := fakeRepo(t)
	exp := filepath.Join(root, "experiments", "paper")
	mkdir(t, exp)
	if err := os.WriteFile(filepath.Join(root, "experiments", "go.mod"), []byte("module github.com/dualcrf/dualcrf/experiments\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(exp)
	if got, err := RepoRoot(); err != nil || got != root {
		t.Fatalf("RepoRoot() = %q, %v; want %q", got, err, root)
	}
	if err := os.WriteFile(filepath.Join(root, "experiments", "go.mod"), []byte("module example.com/other\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err := RepoRoot(); err != nil || got != filepath.Join(root, "experiments") {
		t.Fatalf("RepoRoot() = %q, %v; want the other module's directory", got, err)
	}
}

// TestDirSkipsOrFails: without data Dir skips, naming the variable and
// the fetch command, and counts the skip; with CI=true or
// DUALCRF_REQUIRE_DATA=1 it fails instead; a $DUALCRF_DATA that names
// nothing always fails.
func TestDirSkipsOrFails(t *testing.T) {
	root := fakeRepo(t)
	before := skipped.Load()
	var f fakeTB
	f.call(func(tb testing.TB) { Dir(tb) })
	if f.fatal != "" || !strings.Contains(f.skip, EnvVar) || !strings.Contains(f.skip, FetchCommand) {
		t.Errorf("no data: fatal %q, skip %q; want a skip naming %s and %q", f.fatal, f.skip, EnvVar, FetchCommand)
	}
	if skipped.Load() != before+1 {
		t.Errorf("skip not counted")
	}
	skipped.Add(-1) // this binary's own line must not report the fake skip
	for _, env := range [][2]string{{"CI", "true"}, {RequireVar, "1"}, {EnvVar, filepath.Join(root, "nosuch")}} {
		t.Run(env[0], func(t *testing.T) {
			t.Setenv(env[0], env[1])
			var f fakeTB
			f.call(func(tb testing.TB) { Dir(tb) })
			if f.skip != "" || f.fatal == "" {
				t.Errorf("%s=%s: skip %q, fatal %q; want a failure", env[0], env[1], f.skip, f.fatal)
			}
		})
	}
	t.Setenv("CI", "false")
	if Required() {
		t.Error("CI=false requires the data")
	}
}

// TestPath: a file missing from a data directory that exists fails (an
// incomplete fetch is not skipped).
func TestPath(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(EnvVar, dir)
	mkdir(t, filepath.Join(dir, "ocr"))
	if err := os.WriteFile(filepath.Join(dir, "ocr", "letter.data.gz"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if got := Path(t, "ocr", "letter.data.gz"); got != filepath.Join(dir, "ocr", "letter.data.gz") {
		t.Errorf("Path = %q", got)
	}
	var f fakeTB
	f.call(func(tb testing.TB) { Path(tb, "conll2000", "train.txt.gz") })
	if f.skip != "" || !strings.Contains(f.fatal, "incomplete") || !strings.Contains(f.fatal, FetchCommand) {
		t.Errorf("missing file: skip %q, fatal %q", f.skip, f.fatal)
	}
}

// TestMainLine runs this test binary again with one test that skips for
// want of data: Main writes the line on standard error, and the exit code
// is the tests' (0).
func TestMainLine(t *testing.T) {
	if os.Getenv("DATATEST_HELPER") == "1" {
		t.Run("corpus", func(t *testing.T) { Dir(t) })
		return
	}
	fakeRepo(t)
	// -test.v: Main writes to the terminal only when not verbose, and this
	// run's line is for the test, not for whoever watches the terminal.
	cmd := exec.Command(os.Args[0], "-test.run=^TestMainLine$", "-test.v")
	cmd.Env = append(os.Environ(), "DATATEST_HELPER=1")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	want := SkipLine(filepath.Base(os.Args[0]), 1)
	if !strings.Contains(stderr.String(), want+"\n") {
		t.Errorf("stderr:\n%s\nwant the line %q", stderr.String(), want)
	}
}

func TestSkipLine(t *testing.T) {
	for _, tc := range []struct {
		bin  string
		n    int64
		want string
	}{
		{"featurize.test", 7, "featurize: 7 corpus tests skipped"},
		{"main.test.exe", 1, "main: 1 corpus test skipped"},
	} {
		if got := SkipLine(tc.bin, tc.n); !strings.HasPrefix(got, tc.want) || !strings.Contains(got, FetchCommand) || !strings.Contains(got, EnvVar) {
			t.Errorf("SkipLine(%q, %d) = %q", tc.bin, tc.n, got)
		}
	}
}
