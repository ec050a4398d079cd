//go:build unix

package duals

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dualcrf/dualcrf/option"
)

// TestLockedStreamNamesOption: streamed duals in use by another run are
// refused with advice naming the option (Duals, as stage.TrainOptions
// names it) in an *option.Error, which a command renders as its flag.
func TestLockedStreamNamesOption(t *testing.T) {
	path := filepath.Join(t.TempDir(), "duals.stream")
	f1, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f1.Close()
	if err := lockStream(f1, path); err != nil {
		t.Fatal(err)
	}
	f2, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f2.Close()
	err = lockStream(f2, path)
	var fe *FileError
	var oe *option.Error
	if !errors.As(err, &fe) || !errors.As(err, &oe) || !strings.HasSuffix(err.Error(), "give this run another Duals stream:PATH") {
		t.Fatalf("second lock: %v", err)
	}
	if got := oe.Format(func(string) string { return "--duals" }); !strings.HasSuffix(got, "another --duals stream:PATH") {
		t.Errorf("rendered: %s", got)
	}
}
