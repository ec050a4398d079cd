// Package pipeline holds what every dualcrf stage needs to sit in a Unix
// pipeline: opening inputs ("-" = stdin, gzip and zstd undone on the fly;
// reads that end with a context), atomic outputs ("-" = stdout; a file
// appears only when its stage succeeds, and a killed stage leaves nothing
// that the next run does not remove), and checks that no output overwrites
// an input and that an output's name matches its format. The tables' bytes
// are package arrowio's (Arrow IPC and Parquet) and their meaning package
// tables'.
package pipeline

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/dualcrf/dualcrf/internal/platform"
)

// StdinName and StdoutName name the standard streams in messages.
const (
	StdinName  = "<stdin>"
	StdoutName = "<stdout>"
)

// Output is a stage's output. For a path it is written to a temporary file in
// the same directory and renamed over path by Commit, so readers never see a
// partial file; Close or Abort without Commit removes the temporary file. A
// file it replaces keeps its mode (a new one gets 0644), and a symbolic link
// stays: the file it leads to is the one written.
// The temporary file has no name while it is written where the system allows
// (Linux), and otherwise the name ".NAME.tmp-*" under a lock that its writer
// holds: a later CreateOutput of the same path removes such files left by a
// killed writer (see tmpfile.go). For "" or "-" it is standard output
// (written through, flushed by Commit), and for an existing non-regular file
// such as /dev/null or a FIFO it is that file, written directly. Writes are
// buffered. An Output is not safe for concurrent use.
type Output struct {
	name    string
	path    string    // final path; "" when written directly
	tmp     *os.File  // temporary file, nil when written directly
	tmpName string    // the temporary file's path; "" while it has none
	direct  io.Writer // standard output or a special file, nil for a temporary file
	owned   *os.File  // the special file, closed with the output; nil for standard output
	buf     *bufio.Writer
	mode    os.FileMode
	done    bool
}

// CreateOutput opens the output for path ("" or "-" = standard output).
func CreateOutput(path string) (*Output, error) { return Std{}.CreateOutput(path) }

// CreateOutput is the package's CreateOutput with s.Out as standard output.
func (s Std) CreateOutput(path string) (*Output, error) { return createOutput(path, s.stdout(), true) }

// createOutput is CreateOutput, stdout being standard output; unnamed false
// forces a named temporary file (what systems without unnamed files get),
// for tests.
func createOutput(path string, stdout io.Writer, unnamed bool) (*Output, error) {
	if isStd(path) {
		return newDirect(stdout, nil, StdoutName), nil
	}
	mode := os.FileMode(0o644)
	if st, err := os.Stat(path); err == nil {
		if st.IsDir() {
			return nil, fmt.Errorf("create output %s: is a directory", path)
		}
		if !st.Mode().IsRegular() {
			f, err := os.OpenFile(path, os.O_WRONLY, 0)
			if err != nil {
				return nil, fmt.Errorf("create output: %w", err)
			}
			return newDirect(f, f, path), nil
		}
		mode = st.Mode().Perm()
	}
	target := writeTarget(path)
	dir, base := filepath.Split(target)
	if dir == "" {
		dir = "."
	}
	removeStaleTemps(dir, base)
	o := &Output{name: path, path: target, mode: mode}
	tmp, err := (*os.File)(nil), platform.ErrNoUnnamed
	if unnamed {
		tmp, err = platform.OpenUnnamed(dir, 0o600)
	}
	switch {
	case err == nil:
		if _, err := lockFile(tmp); err != nil {
			tmp.Close()
			return nil, fmt.Errorf("create output %s: lock: %w", path, err)
		}
	case errors.Is(err, platform.ErrNoUnnamed):
		if tmp, err = createNamedTemp(dir, base); err != nil {
			return nil, fmt.Errorf("create output %s: %w", path, err)
		}
		o.tmpName = tmp.Name()
	default:
		return nil, fmt.Errorf("create output %s: %w", path, err)
	}
	o.tmp, o.buf = tmp, bufio.NewWriterSize(tmp, 1<<20)
	return o, nil
}

// writeTarget is the file an output at path replaces: path, or where the
// symbolic link at path leads (a link to a file not made yet too), so that
// the link stays and its target is written.
func writeTarget(path string) string {
	if st, err := os.Lstat(path); err != nil || st.Mode()&os.ModeSymlink == 0 {
		return path
	}
	if real, err := filepath.EvalSymlinks(path); err == nil {
		return real
	}
	abs, err := locate(path)
	if err != nil {
		return path
	}
	return linkTarget(abs)
}

// newDirect returns an output written straight to w; owned, when not nil,
// is the file under w, closed with the output.
func newDirect(w io.Writer, owned *os.File, name string) *Output {
	return &Output{name: name, direct: w, owned: owned, buf: bufio.NewWriterSize(w, 1<<20)}
}

// Name returns the output's name for messages.
func (o *Output) Name() string { return o.name }

// Write writes p; it fails after Commit, Abort or Close.
func (o *Output) Write(p []byte) (int, error) {
	if o.done {
		return 0, fmt.Errorf("%s: write after close", o.name)
	}
	return o.buf.Write(p)
}

// Commit makes the output final: it flushes the buffer and, for a file,
// syncs the temporary file to disk and renames it over the path. On failure
// the temporary file is removed.
func (o *Output) Commit() error {
	if o.done {
		return fmt.Errorf("%s: commit after close", o.name)
	}
	o.done = true
	if o.tmp == nil {
		return o.commitDirect()
	}
	err := o.commitTemp()
	if err != nil && o.tmpName != "" {
		_ = os.Remove(o.tmpName)
	}
	// Closing releases the lock, so only now may a cleanup take the name.
	if cerr := o.tmp.Close(); err == nil && cerr != nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", o.name, err)
	}
	_ = platform.SyncDir(filepath.Dir(o.path)) // a failure only weakens durability
	return nil
}

func (o *Output) commitDirect() error {
	err := o.buf.Flush()
	if o.owned != nil {
		err = errors.Join(err, o.owned.Close())
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", o.name, err)
	}
	return nil
}

// commitTemp flushes and syncs the temporary file and puts it at the path;
// the caller closes it.
func (o *Output) commitTemp() error {
	if err := o.buf.Flush(); err != nil {
		return err
	}
	if err := o.tmp.Chmod(o.mode); err != nil {
		return err
	}
	if err := o.tmp.Sync(); err != nil {
		return err
	}
	if o.tmpName == "" {
		return o.linkUnnamed()
	}
	return os.Rename(o.tmpName, o.path)
}

// linkUnnamed names the unnamed temporary file: the path itself when it
// does not exist (one atomic step), else a locked temporary name renamed
// over the path.
func (o *Output) linkUnnamed() error {
	err := platform.LinkUnnamed(o.tmp, o.path)
	if err == nil || !errors.Is(err, os.ErrExist) {
		return err
	}
	dir, base := filepath.Split(o.path)
	for attempt := 0; ; attempt++ {
		name := filepath.Join(dir, tempPrefix(base)+randomSuffix())
		err = platform.LinkUnnamed(o.tmp, name)
		if err == nil {
			o.tmpName = name
			return os.Rename(name, o.path)
		}
		if !errors.Is(err, os.ErrExist) || attempt == 10 {
			return err
		}
	}
}

// Abort discards the output: a temporary file is removed; standard output is
// left unflushed. Abort after Commit does nothing.
func (o *Output) Abort() error {
	if o.done {
		return nil
	}
	o.done = true
	switch {
	case o.tmp != nil:
		var err error
		if o.tmpName != "" {
			err = os.Remove(o.tmpName)
		}
		return errors.Join(err, o.tmp.Close())
	case o.owned != nil:
		return o.owned.Close()
	}
	return nil
}

// Close is Abort when the output was not committed, so
//
//	out, err := pipeline.CreateOutput(path)
//	…
//	defer out.Close()
//	… write …
//	return out.Commit()
//
// leaves no partial file when the stage fails.
func (o *Output) Close() error { return o.Abort() }

// IsBrokenPipe reports whether err comes from writing to a pipe whose reader
// has gone (EPIPE; on Windows ERROR_NO_DATA or ERROR_BROKEN_PIPE), so a stage
// can end quietly when downstream stops early.
func IsBrokenPipe(err error) bool {
	return platform.IsBrokenPipe(err)
}
