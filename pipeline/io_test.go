package pipeline

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// dirEntries lists the names in dir.
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

func TestOutputCommit(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out.arrow")
	out, err := CreateOutput(path)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	if _, err := fmt.Fprint(out, "complete"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("output visible before Commit: %v", err)
	}
	if err := out.Commit(); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil || string(got) != "complete" {
		t.Fatalf("read %q, %v", got, err)
	}
	if names := dirEntries(t, dir); len(names) != 1 {
		t.Fatalf("directory holds %v, want only out.arrow", names)
	}
	if _, err := out.Write([]byte("x")); err == nil {
		t.Fatal("write after Commit accepted")
	}
	if err := out.Close(); err != nil {
		t.Fatalf("Close after Commit: %v", err)
	}
	if got, _ := os.ReadFile(path); string(got) != "complete" {
		t.Fatalf("Close after Commit changed the file: %q", got)
	}
}

// TestOutputFailure: a stage that fails leaves the old file, or none.
func TestOutputFailure(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "model.arrow")
	if err := os.WriteFile(path, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, finish := range []func(*Output) error{(*Output).Close, (*Output).Abort} {
		out, err := CreateOutput(path)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprint(out, "partial")
		if err := finish(out); err != nil {
			t.Fatal(err)
		}
		if got, _ := os.ReadFile(path); string(got) != "old" {
			t.Fatalf("failed stage changed the file: %q", got)
		}
		if names := dirEntries(t, dir); len(names) != 1 {
			t.Fatalf("directory holds %v after a failed stage", names)
		}
	}
	// A replaced file keeps its permissions.
	out, err := CreateOutput(path)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprint(out, "new")
	if err := out.Commit(); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v, %v; want 0600", st.Mode(), err)
	}
}

func TestOutputSpecial(t *testing.T) {
	out, err := CreateOutput(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprint(out, "discarded")
	if err := out.Commit(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(os.DevNull); err != nil {
		t.Fatal(err)
	}
	if _, err := CreateOutput(t.TempDir()); err == nil || !strings.Contains(err.Error(), "is a directory") {
		t.Fatalf("directory output: %v", err)
	}
	if _, err := CreateOutput(filepath.Join(t.TempDir(), "no", "such", "dir", "f")); err == nil {
		t.Fatal("output in a missing directory accepted")
	}
}

func TestIsBrokenPipe(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
	defer w.Close()
	_, err = w.Write([]byte("nobody listens"))
	if !IsBrokenPipe(err) || !IsBrokenPipe(fmt.Errorf("write table: %w", err)) {
		t.Fatalf("IsBrokenPipe(%v) = false", err)
	}
	if IsBrokenPipe(io.ErrUnexpectedEOF) || IsBrokenPipe(nil) {
		t.Fatal("IsBrokenPipe true for other errors")
	}
}

// TestOutputThroughLink: an output named by a symbolic link replaces the
// file the link leads to (made when it does not exist yet), keeping its
// mode, and leaves the link as it was.
func TestOutputThroughLink(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "models", "v3.arrow")
	if err := os.Mkdir(filepath.Dir(target), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(target, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	link, dangling := filepath.Join(dir, "model.arrow"), filepath.Join(dir, "next.arrow")
	if err := os.Symlink("models/v3.arrow", link); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("models/v4.arrow", dangling); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ link, target string }{{link, target}, {dangling, filepath.Join(dir, "models", "v4.arrow")}} {
		out, err := CreateOutput(c.link)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprint(out, "new")
		if err := out.Commit(); err != nil {
			t.Fatal(err)
		}
		if st, err := os.Lstat(c.link); err != nil || st.Mode()&os.ModeSymlink == 0 {
			t.Errorf("%s is no longer a symbolic link: %v, %v", c.link, st.Mode(), err)
		}
		if got, err := os.ReadFile(c.target); err != nil || string(got) != "new" {
			t.Errorf("%s holds %q, %v; want the output", c.target, got, err)
		}
	}
	if st, err := os.Stat(target); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("the replaced target has mode %v, %v; want 0600 kept", st.Mode(), err)
	}
}
