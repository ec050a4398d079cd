package pipeline

// The files a run names, each with its role, and the one check that no
// file is lost to another: CheckFiles. A command declares the role of each
// flag and argument that names a file once (FileSpec), collects the files
// of a run as Paths and calls CheckFiles before it reads or writes
// anything; a run of several stages (a job) hands it the files of every
// stage, each with its Step.

import (
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strings"
)

// Role is what a run does with a file it names.
type Role uint8

// The roles. Two files of a run may be the same file only when both are
// read (RoleInput, RoleStateRead: but a state file is no input), when one
// is RoleStateRead and the other RoleStateWritten (the state is read, then
// replaced), or when both are RoleDir; see CheckFiles.
const (
	// RoleInput is a file the run reads: a table, a model, a corpus, or a
	// directory of them.
	RoleInput Role = iota + 1
	// RoleOutput is a file the run writes whole: created, or replaced when
	// the run succeeds (Output; an existing FIFO or device is written in
	// place, an existing directory is refused).
	RoleOutput
	// RoleStateRead is state an earlier run left, which the run reads (a
	// warm start's kept duals): a regular file.
	RoleStateRead
	// RoleStateWritten is state the run leaves for a later run, written
	// whole when the run succeeds, as an output is (kept duals).
	RoleStateWritten
	// RoleState is a regular file the run reads and writes in place while
	// it runs (memory-mapped or streamed duals, a job's records and lock).
	RoleState
	// RoleDir is a directory the run keeps its state in: it creates files
	// there and removes them (checkpoints). No file the run reads or
	// writes whole may lie inside it.
	RoleDir
)

// String names the role as the flag tables' documentation does.
func (r Role) String() string {
	switch r {
	case RoleInput:
		return "input"
	case RoleOutput:
		return "output"
	case RoleStateRead:
		return "state read"
	case RoleStateWritten:
		return "state written"
	case RoleState:
		return "state read and written"
	case RoleDir:
		return "directory"
	}
	return fmt.Sprintf("Role(%d)", uint8(r))
}

// reads reports whether r only reads its file.
func (r Role) reads() bool { return r == RoleInput || r == RoleStateRead }

// replaces reports whether r writes its file whole, as an Output: what a
// later step may read.
func (r Role) replaces() bool { return r == RoleOutput || r == RoleStateWritten }

// Compatible reports whether two files of a run with roles a and b may be
// the same file (or, for a RoleDir, hold the other): both read (a state
// file is no input), a state read and then replaced, or two directories
// of state. CheckFiles refuses every other pair; a later step may also
// read what an earlier step wrote whole.
func Compatible(a, b Role) bool {
	switch {
	case a.reads() && b.reads():
		return a == b
	case a == RoleStateRead && b == RoleStateWritten, a == RoleStateWritten && b == RoleStateRead:
		return true
	}
	return a == RoleDir && b == RoleDir
}

// FileSpec declares how a command uses the file a flag or argument names:
// its role, whether "-" names a standard stream there, and where the path
// is in the flag's value.
type FileSpec struct {
	Role Role
	// Std: "-" is standard input (a role that reads) or standard output
	// (RoleOutput). Elsewhere "-" is refused: it would name a file "-".
	Std bool
	// Split finds the path in a value: the text before it and the path,
	// "" when the value names no file (--duals memory, --ref 1.5). nil:
	// the value is the path.
	Split func(value string) (prefix, path string)
}

// PathOf returns the text before the path in value and the path ("": the
// value names no file).
func (s FileSpec) PathOf(value string) (prefix, path string) {
	if s.Split == nil {
		return "", value
	}
	return s.Split(value)
}

// Path is a file a stage reads or writes, with the flag (or argument) that
// names it, for messages.
type Path struct {
	Flag string // e.g. "-o", "--log"; "" for an argument
	Name string // the path; "-" is standard input or output (Std); "" is unset
	Role Role
	// Std: "-" names a standard stream (FileSpec.Std); else it is refused.
	Std bool
	// Owner says whose file it is in a run of several stages, for
	// messages: "stage train", "the job file" ("": a stage's own).
	Owner string
	// Step orders the stages of a run: a file written whole (RoleOutput,
	// RoleStateWritten) may be read by a later step only. Every path of a
	// single stage has step 0. LastStep marks files written after (or
	// throughout) every stage: no input may be one of them.
	Step int
	// Pattern marks an input that is a glob pattern (filepath.Match): an
	// output it matches is refused, for a later run would read it. The
	// files it matched are inputs of their own.
	Pattern bool
}

// LastStep is the Step of a file written after every stage of a run (a
// job's manifest) or throughout it (its state, its lock).
const LastStep = math.MaxInt

// describe names p in messages; std names the standard stream "-" means.
func (p Path) describe(std string) string {
	name := p.Name
	if name == "-" && std != "" {
		name = "- (" + std + ")"
	}
	if p.Flag != "" {
		name = p.Flag + " " + name
	}
	if p.Owner != "" {
		name += " (" + p.Owner + ")"
	}
	return name
}

// noun is what messages call a file of role r.
func (r Role) noun() string {
	switch {
	case r.reads():
		return "input"
	case r == RoleDir:
		return "directory"
	}
	return "output"
}

// CheckFiles refuses a run that would lose a file, before anything is
// created: an output (any role that writes) that is an input or a state
// file of the run, or another output — which committing it would destroy
// (decode -m M -o M; train --keep-duals F -o F; train --log X -o X) — or
// that would change a directory the run reads (featurize -o lake/f.parquet
// lake). Files are compared by identity, not by name: by device and inode
// (os.SameFile) when they exist, so symbolic links, hard links and every
// spelling of a path (./x, x, /abs/x, dir/../x) are caught; a file that
// does not exist yet by its directory (its device and inode, and its path
// resolved through symbolic links, ".." included as the system resolves
// it) and its name, and by where a symbolic link to it leads. "-" stands for the file behind standard
// input or output, so `-o in.arrow < in.arrow` is caught too.
//
// Two files may be the same only as Compatible allows; besides:
//
//   - an output inside a directory input (or the same file as one of its
//     files: a hard link), or matched by an input Pattern, is refused;
//   - nothing written whole and no input may lie inside a RoleDir, nor be
//     it; a RoleState file may lie inside one;
//   - a step may read what an earlier step wrote whole, never what it
//     writes itself or a later step writes;
//   - two outputs may share a character device (/dev/null, a terminal);
//   - two inputs may not both be standard input, which is read once;
//   - "-" without Std is refused, and so is an existing file of the wrong
//     kind: an output (RoleOutput, RoleStateWritten) that is a directory
//     (a FIFO or a device is written in place), a state file that is no
//     regular file, a RoleDir that is no directory.
//
// Inputs that are no regular file or directory (a FIFO, a terminal) are
// not compared, and neither are files that cannot be examined for another
// reason than not existing: the stage reports those when it opens them.
// Paths with an empty Name are ignored.
func CheckFiles(paths []Path) error { return Std{}.CheckFiles(paths) }

// CheckFiles is the package's CheckFiles with s's streams standing for
// "-": a stream that is not an *os.File is no file a run could overwrite,
// and two "-" of one kind are the same stream.
func (s Std) CheckFiles(paths []Path) error {
	ids := make([]fileID, 0, len(paths))
	for _, p := range paths {
		if p.Name == "" {
			continue
		}
		if p.Role == 0 {
			return fmt.Errorf("%s: no role declared for this file", p.describe(""))
		}
		if p.Name == "-" && !p.Std {
			return stdRefused(p)
		}
		if p.Pattern {
			ids = append(ids, fileID{p: p, path: p.describe(""), patterns: patternForms(p.Name)})
			continue
		}
		var id fileID
		var ok bool
		if p.Role.reads() {
			id, ok = identify(p, s.stdin(), "standard input")
		} else {
			id, ok = identify(p, s.stdout(), "standard output")
		}
		if !ok {
			continue
		}
		if err := checkKind(id); err != nil {
			return err
		}
		if p.Role == RoleInput && id.info != nil && id.info.IsDir() {
			id.members = dirMembers(p.Name)
		}
		ids = append(ids, id)
	}
	// Each file against those before it: first the files read, then the
	// others, so that overwriting an input is the reason given before a
	// clash of outputs.
	for j, b := range ids {
		for _, readers := range []bool{true, false} {
			for _, a := range ids[:j] {
				if (a.p.Role.reads() || b.p.Role.reads()) != readers {
					continue
				}
				if err := conflict(a, b); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// stdRefused is the refusal of "-" where no standard stream is meant.
func stdRefused(p Path) error {
	stream := "output"
	if p.Role.reads() {
		stream = "input"
	}
	what := p.describe("")
	if p.Flag == "" {
		what = "argument " + what
	}
	return fmt.Errorf("%s: standard %s is not accepted here: give a file name", what, stream)
}

// checkKind refuses an existing file of the wrong kind for its role.
func checkKind(id fileID) error {
	if id.info == nil || id.std {
		return nil
	}
	mode := id.info.Mode()
	switch role := id.p.Role; {
	case role.replaces() && mode.IsDir():
		return fmt.Errorf("output %s is a directory: give a file name", id.path)
	case (role == RoleState || role == RoleStateRead) && !mode.IsRegular():
		return fmt.Errorf("%s is %s, not a regular file: it is read at random (and written in place)", id.path, kindOf(mode))
	case role == RoleDir && !mode.IsDir():
		return fmt.Errorf("%s is %s, not a directory", id.path, kindOf(mode))
	}
	return nil
}

// kindOf names the kind of file mode is, for messages.
func kindOf(mode fs.FileMode) string {
	switch {
	case mode.IsRegular():
		return "a regular file"
	case mode.IsDir():
		return "a directory"
	case mode&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case mode&fs.ModeSocket != 0:
		return "a socket"
	case mode&fs.ModeDevice != 0:
		return "a device"
	}
	return "not a regular file"
}

// conflict says why files a and b (a named first) may not both be what
// their roles say, as an error; nil when they may.
func conflict(a, b fileID) error {
	ra, rb := a.p.Role, b.p.Role
	switch {
	case ra.reads() && rb.reads():
		return readersConflict(a, b)
	case ra == RoleDir && rb == RoleDir:
		return nil
	case ra == RoleDir:
		return dirConflict(a, b)
	case rb == RoleDir:
		return dirConflict(b, a)
	case ra.reads():
		return writerReader(b, a)
	case rb.reads():
		return writerReader(a, b)
	}
	return writers(a, b)
}

// readersConflict refuses two readers of standard input, and a state file
// that is an input.
func readersConflict(a, b fileID) error {
	if a.std && b.std && a.p.Name == "-" && b.p.Name == "-" {
		return fmt.Errorf("inputs %s and %s both read standard input, which can be read once: give one of them a file name", a.path, b.path)
	}
	if a.p.Role == b.p.Role || a.p.Pattern || b.p.Pattern {
		return nil
	}
	state, in := a, b
	if a.p.Role == RoleInput {
		state, in = b, a
	}
	if sameFile(state, in) {
		return fmt.Errorf("%s, a state file, is the same file as input %s: a run's state is not its input", state.path, in.path)
	}
	return nil
}

// dirConflict refuses what may not be the state directory d or lie in
// it: any other file that is d, and a file written whole or an input
// inside it (a state file may lie in it); and d inside a directory input.
func dirConflict(d, o fileID) error {
	role := o.p.Role
	switch {
	case o.p.Pattern:
		return nil
	case role == RoleInput && o.info != nil && o.info.IsDir() && inside(d, o) && !inside(o, d):
		return fmt.Errorf("directory %s is inside input directory %s: refusing to write into a directory that is read", d.path, o.path)
	case sameFile(d, o):
		return fmt.Errorf("%s %s is %s, a directory the run writes and clears", role.noun(), o.path, d.path)
	case (role == RoleInput || role.replaces()) && inside(o, d):
		return fmt.Errorf("%s %s is inside %s, a directory the run writes and clears", role.noun(), o.path, d.path)
	}
	return nil
}

// writerReader refuses the output w when it would overwrite or change
// what in reads: unless in is read by a later step than the one that
// writes w whole, or w is the state in reads, written anew.
func writerReader(w, in fileID) error {
	switch {
	case in.p.Step > w.p.Step && w.p.Role.replaces():
		return nil // a later stage reads what w's stage wrote
	case w.p.Role == RoleStateWritten && in.p.Role == RoleStateRead && w.p.Step == in.p.Step:
		return nil // the state read is replaced by the state written
	case in.p.Pattern:
		for _, pat := range in.patterns {
			for _, name := range w.forms() {
				if ok, _ := filepath.Match(pat, name); ok {
					return fmt.Errorf("output %s matches input pattern %s: the next run would read it as an input", w.path, in.path)
				}
			}
		}
	case in.info == nil:
		if sameFile(w, in) {
			return fmt.Errorf("output %s is the same file as input %s: refusing to overwrite an input", w.path, in.path)
		}
	case in.info.IsDir():
		if inside(w, in) {
			return fmt.Errorf("output %s is inside input directory %s: refusing to write into a directory that is read", w.path, in.path)
		}
		if w.info != nil {
			for _, m := range in.members {
				if os.SameFile(w.info, m.info) {
					return fmt.Errorf("output %s is the same file as %s in input directory %s: refusing to overwrite an input", w.path, m.path, in.path)
				}
			}
		}
	case !in.info.Mode().IsRegular():
		// A FIFO or a terminal read: nothing an output could overwrite.
	case sameFile(w, in):
		return fmt.Errorf("output %s is the same file as input %s: refusing to overwrite an input", w.path, in.path)
	}
	return nil
}

// writers refuses two outputs that would write the same file; they may
// share a character device.
func writers(a, b fileID) error {
	if a.info != nil && b.info != nil && a.info.Mode()&fs.ModeCharDevice != 0 && os.SameFile(a.info, b.info) {
		return nil
	}
	if sameFile(a, b) {
		return fmt.Errorf("outputs %s and %s are the same file: one would overwrite the other", a.path, b.path)
	}
	return nil
}

// fileID identifies a file: its FileInfo when it exists, else its resolved
// directory and name.
type fileID struct {
	p    Path
	path string // for messages
	info os.FileInfo
	std  bool   // "-": a standard stream
	key  string // the resolved directory and name ("" for a stream that is a file)
	real string // where a symbolic link named key leads ("" : key)
	// parent is the directory of a file not made yet, when it exists:
	// with its name, the file's identity (a directory reached by two
	// paths, as through a bind mount, is one directory).
	parent os.FileInfo

	members  []member // a directory input's files
	patterns []string // a Pattern input's forms (patternForms)
}

// member is a file of a directory input.
type member struct {
	path string
	info os.FileInfo
}

// identify examines p; "-" is the stream std, named stdName. ok is false
// for a path that cannot be examined for another reason than not
// existing. A stream that is no *os.File is identified by its name.
func identify(p Path, std any, stdName string) (fileID, bool) {
	id := fileID{p: p, path: p.describe(stdName)}
	var err error
	if p.Name == "-" {
		id.std = true
		f, ok := std.(*os.File)
		if !ok {
			id.key = "\x00" + stdName
			return id, true
		}
		id.info, err = f.Stat()
		return id, err == nil
	}
	id.info, err = os.Stat(p.Name)
	if err != nil && !os.IsNotExist(err) {
		return id, false
	}
	if err != nil {
		id.info = nil
	}
	if id.key, err = locate(p.Name); err != nil {
		return id, id.info != nil
	}
	real := id.key
	if id.info != nil {
		if r, err := filepath.EvalSymlinks(p.Name); err == nil {
			if real, err = filepath.Abs(r); err != nil {
				real = id.key
			}
		}
	} else {
		real = linkTarget(id.key) // a writer that opens the name creates its target
		id.parent, _ = os.Stat(filepath.Dir(id.key))
	}
	if real != id.key {
		id.real = real
	}
	return id, true
}

// locate returns the absolute path of name with its directory resolved as
// the system resolves it (through symbolic links, ".." after them); the
// last element stays as it is, a symbolic link or a name not made yet. A
// directory that does not exist is cleaned by its name.
func locate(name string) (string, error) {
	abs := name
	if !filepath.IsAbs(abs) {
		wd, err := os.Getwd()
		if err != nil {
			return "", err
		}
		abs = wd + string(filepath.Separator) + name // not filepath.Join: it would clean a/.. by name
	}
	dir, base := filepath.Split(strings.TrimRight(abs, string(filepath.Separator)))
	if base == "." || base == ".." || dir == "" {
		if r, err := filepath.EvalSymlinks(abs); err == nil {
			return r, nil
		}
		return filepath.Clean(abs), nil
	}
	if r, err := filepath.EvalSymlinks(dir); err == nil {
		dir = r
	}
	return filepath.Join(dir, base), nil
}

// linkTarget follows the symbolic links at path, which is located, to
// where a writer opening path would create its file; path when it is no
// link.
func linkTarget(path string) string {
	for range 40 {
		target, err := os.Readlink(path)
		if err != nil {
			return path
		}
		if !filepath.IsAbs(target) {
			target = filepath.Dir(path) + string(filepath.Separator) + target
		}
		next, err := locate(target)
		if err != nil {
			return path
		}
		path = next
	}
	return path
}

// forms are the paths id may be known by: its resolved directory and
// name, and where it leads when it is a symbolic link.
func (id fileID) forms() []string {
	var out []string
	for _, s := range []string{id.key, id.real} {
		if s != "" && !strings.HasPrefix(s, "\x00") {
			out = append(out, s)
		}
	}
	return out
}

// sameFile reports whether a and b are one file: by device and inode when
// both exist, else by their directories' device and inode and their
// names, or by the places they name (a stream that is no file by its
// name).
func sameFile(a, b fileID) bool {
	switch {
	case a.info != nil && b.info != nil:
		return os.SameFile(a.info, b.info)
	case a.info != nil || b.info != nil:
		return false
	case a.key != "" && a.key == b.key:
		return true
	case a.parent != nil && b.parent != nil && filepath.Base(a.key) == filepath.Base(b.key) && os.SameFile(a.parent, b.parent):
		return true
	}
	for _, x := range a.forms() {
		for _, y := range b.forms() {
			if x == y {
				return true
			}
		}
	}
	return false
}

// inside reports whether a lies inside the directory d (or is d), by their
// resolved paths.
func inside(a, d fileID) bool {
	if a.info != nil && d.info != nil && os.SameFile(a.info, d.info) {
		return true
	}
	for _, dir := range d.forms() {
		for _, name := range a.forms() {
			if name == dir || strings.HasPrefix(name, strings.TrimSuffix(dir, string(filepath.Separator))+string(filepath.Separator)) {
				return true
			}
		}
	}
	return false
}

// dirMembers lists the regular files under dir (hidden ones too: a run
// that hashes the directory sees them). Unreadable parts are skipped.
func dirMembers(dir string) []member {
	var out []member
	filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return nil
		}
		if info, err := d.Info(); err == nil {
			out = append(out, member{path: path, info: info})
		}
		return nil
	})
	return out
}

// patternForms are the forms of a glob pattern to match outputs with: the
// absolute pattern, and the same with its leading directories (those
// without pattern characters) resolved through symbolic links.
func patternForms(pat string) []string {
	abs, err := filepath.Abs(pat)
	if err != nil {
		return []string{pat}
	}
	out := []string{abs}
	parts := strings.Split(abs, string(filepath.Separator))
	n := 0
	for n < len(parts)-1 && !strings.ContainsAny(parts[n], `*?[\`) {
		n++
	}
	prefix := strings.Join(parts[:n], string(filepath.Separator))
	if prefix == "" {
		return out
	}
	if resolved, err := filepath.EvalSymlinks(prefix); err == nil && resolved != prefix {
		out = append(out, filepath.Join(append([]string{resolved}, parts[n:]...)...))
	}
	return out
}
