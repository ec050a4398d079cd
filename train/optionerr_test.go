package train

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dualcrf/dualcrf/option"
)

// TestOptionWords: train's errors that advise an option name it by its Go
// field (as stage.TrainOptions does) in an *option.Error, which a command
// renders in its own words; the error keeps its kind.
func TestOptionWords(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ck")
	l, err := LockDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Unlock()
	_, err = LockDir(dir)
	var oe *option.Error
	if !errors.Is(err, ErrLocked) || !errors.As(err, &oe) || !strings.HasSuffix(err.Error(), "; wait for it to end, or use another Checkpoint directory") {
		t.Errorf("second lock: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "CURRENT"), []byte("ckpt-000002\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	err = CheckFresh(dir)
	want := "Checkpoint " + dir + ` holds the snapshots of an earlier run (newest "ckpt-000002"): continue it with Resume ` + dir + ", or remove " + dir + " to start afresh"
	if !errors.Is(err, ErrCheckpointExists) || !errors.As(err, &oe) || err.Error() != want {
		t.Errorf("CheckFresh: %v, want %s", err, want)
	}
	flag := func(field string) string { return "--" + strings.ToLower(field) }
	if got := oe.Format(flag); !strings.HasPrefix(got, "--checkpoint "+dir+" holds") || !strings.Contains(got, "with --resume "+dir) {
		t.Errorf("rendered: %s", got)
	}
	st := &checkpointState{Sentences: 1, Dim: 3}
	if err := st.check(1, 2); !errors.As(err, &oe) || !strings.HasSuffix(err.Error(), "(other NoBias setting?)") {
		t.Errorf("check: %v", err)
	}
}
