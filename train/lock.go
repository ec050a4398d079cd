package train

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/dualcrf/dualcrf/internal/platform"
	"github.com/dualcrf/dualcrf/option"
)

// DirLock is the exclusive lock of a checkpoint directory, held by the one
// run that may write it.
type DirLock struct {
	dir  string
	lock *platform.DirLock
}

// ErrLocked reports a checkpoint directory in use by another run.
var ErrLocked = errors.New("train: checkpoint directory in use")

// LockDir creates dir if needed, checks that it is a writable directory,
// and takes its lock (platform.LockDir on DIR/LOCK) without waiting: a
// directory locked by another run is refused at once. Holding the lock, it
// removes what interrupted runs left behind: temporary snapshot directories
// (.ckpt-*.tmp-*), a half-written CURRENT.tmp and temporary duals files
// (.duals-*.tmp).
func LockDir(dir string) (*DirLock, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("checkpoint directory: %w", err)
	}
	pl, err := platform.LockDir(dir, "LOCK")
	var locked *platform.LockedError
	var pe *os.PathError
	switch {
	case errors.As(err, &locked):
		holder := ""
		if locked.PID > 0 {
			holder = " (process " + strconv.Itoa(locked.PID) + ")"
		}
		return nil, fmt.Errorf("%w: %s is locked by another training run%s; %w",
			ErrLocked, dir, holder, &option.Error{Msg: "wait for it to end, or use another {Checkpoint} directory"})
	case errors.As(err, &pe) && pe.Op == "lock":
		return nil, fmt.Errorf("lock checkpoint directory %s: %w", dir, pe.Err)
	case err != nil:
		return nil, fmt.Errorf("checkpoint directory %s is not writable: %w", dir, err)
	}
	l := &DirLock{dir: dir, lock: pl}
	l.clean()
	return l, nil
}

// clean removes the leftovers of interrupted runs.
func (l *DirLock) clean() {
	ents, _ := os.ReadDir(l.dir)
	for _, e := range ents {
		n := e.Name()
		if (strings.HasPrefix(n, ".ckpt-") && strings.Contains(n, ".tmp-")) || n == "CURRENT.tmp" ||
			(strings.HasPrefix(n, ".duals-") && strings.HasSuffix(n, ".tmp")) {
			os.RemoveAll(filepath.Join(l.dir, n))
		}
	}
}

// Dir returns the locked directory.
func (l *DirLock) Dir() string { return l.dir }

// Unlock releases the lock. Unlocking twice does nothing.
func (l *DirLock) Unlock() error {
	if l == nil {
		return nil
	}
	return l.lock.Unlock()
}
