package pipeline

// Temporary files that a kill cannot leave behind.
//
// An output is written to a temporary file and renamed over its path when
// complete. Where the kernel can (Linux, O_TMPFILE), the temporary file has
// no name at all until it is complete: a kill -9 while writing leaves
// nothing. Committing links the file to its path directly when the path does
// not exist; otherwise it links it to a temporary name and renames that over
// the path, and a kill between the two steps leaves the temporary name.
// Elsewhere the temporary file has a name from the start.
//
// Every named temporary of output NAME is ".NAME.tmp-*" and is held under an
// exclusive lock (platform.TryLock: flock(2), or LockFileEx on Windows) by its
// writer for as long as the writer lives. Creating output NAME removes the
// ".NAME.tmp-*" files that nobody holds: those whose writer died. A live
// writer's file is never removed (its lock is held), and neither is any
// other file. On Windows, temporary files are opened shared for deletion
// (platform.CreateTemp), so that they can be renamed or unlinked while open.

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/dualcrf/dualcrf/internal/platform"
)

// tempPrefix is the name prefix of output base's temporary files.
func tempPrefix(base string) string { return "." + base + ".tmp-" }

// randomSuffix returns 12 random hex digits.
func randomSuffix() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// lockFile takes f's exclusive lock without waiting; ok is false when
// another open file holds it, and err is set when the file system cannot
// lock at all.
func lockFile(f *os.File) (ok bool, err error) {
	err = platform.TryLock(f)
	switch {
	case err == nil:
		return true, nil
	case platform.IsLocked(err):
		return false, nil
	}
	return false, err
}

// removeStaleTemps removes dir's temporary files of output base whose
// writers are gone: the ".base.tmp-*" regular files that no process holds
// locked. It is best effort: a file it cannot open or lock is left.
func removeStaleTemps(dir, base string) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	prefix := tempPrefix(base)
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), prefix) && e.Type().IsRegular() {
			removeIfStale(filepath.Join(dir, e.Name()))
		}
	}
}

// removeIfStale removes path when no process holds its lock.
func removeIfStale(path string) {
	f, err := platform.OpenToCheckLock(path)
	if err != nil {
		return
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() {
		return
	}
	if ok, _ := lockFile(f); !ok {
		return
	}
	// Remove the name only if it is still the file locked.
	if cur, err := os.Lstat(path); err == nil && os.SameFile(cur, st) {
		_ = os.Remove(path)
	}
}

// createNamedTemp creates and locks a temporary file ".base.tmp-*" in dir.
// A file removed by another process's cleanup between its creation and the
// lock is abandoned for a new one.
func createNamedTemp(dir, base string) (*os.File, error) {
	for attempt := 0; ; attempt++ {
		f, err := platform.CreateTemp(dir, tempPrefix(base)+"*")
		if err != nil {
			return nil, err
		}
		ok, lerr := lockFile(f)
		if lerr != nil {
			return f, nil // no locks on this file system: it stays unguarded
		}
		if ok {
			st, err1 := f.Stat()
			cur, err2 := os.Lstat(f.Name())
			if err1 == nil && err2 == nil && os.SameFile(st, cur) {
				return f, nil
			}
		}
		f.Close()
		if attempt == 10 {
			return nil, fmt.Errorf("create a temporary file in %s: removed as soon as created, 10 times", dir)
		}
	}
}
