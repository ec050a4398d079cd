package platform

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestExchangeDirs: renaming a directory over a non-empty one is refused
// with an error IsDirInTheWay recognises; where the system can exchange two
// directories, ExchangeDirs swaps them whole.
func TestExchangeDirs(t *testing.T) {
	root := t.TempDir()
	a, b := filepath.Join(root, "a"), filepath.Join(root, "b")
	for _, d := range []string{a, b} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, "name"), []byte(filepath.Base(d)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	err := os.Rename(a, b)
	if err == nil {
		t.Fatal("renamed a directory over a non-empty one")
	}
	if !IsDirInTheWay(err) {
		t.Fatalf("IsDirInTheWay(%v) = false", err)
	}
	if IsDirInTheWay(os.ErrPermission) {
		t.Fatal("IsDirInTheWay(ErrPermission) = true")
	}
	err = ExchangeDirs(a, b)
	if errors.Is(err, errors.ErrUnsupported) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	for d, want := range map[string]string{a: "b", b: "a"} {
		if got, err := os.ReadFile(filepath.Join(d, "name")); err != nil || string(got) != want {
			t.Fatalf("%s holds %q (%v) after the exchange, want %q", d, got, err, want)
		}
	}
}
