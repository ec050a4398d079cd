package pipeline

import (
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strings"
)

// Path is a file a stage reads or writes, with the flag (or argument) that
// names it, for messages.
type Path struct {
	Flag string // e.g. "-o", "--log", "input"
	Name string // the path; "-" is standard input or output; "" is unset
	// Owner says whose file it is in a run of several stages, for
	// messages: "stage train", "the job file" ("": a stage's own).
	Owner string
	// Step orders the stages of a run: an output may be an input of a
	// later step only (the stage that reads it runs after the one that
	// writes it); it is refused as an input of its own or an earlier step.
	// Every path of a single stage has step 0. LastStep marks files written
	// after (or throughout) every stage: no input may be one of them.
	Step int
	// Pattern marks an input that is a glob pattern (filepath.Match): an
	// output it matches is refused, for a later run would read it. The
	// files it matched are inputs of their own.
	Pattern bool
	// Dir marks an output that is a directory the run writes files into
	// and may clear (train's checkpoints in a job): no other path may lie
	// inside it.
	Dir bool
}

// LastStep is the Step of a file written after every stage of a run (a
// job's manifest) or throughout it (its state, its lock).
const LastStep = math.MaxInt

// describe names p in messages; std names the standard stream "-" means.
func (p Path) describe(std string) string {
	name := p.Name
	if name == "-" {
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

// CheckDistinct refuses a stage's outputs when one would overwrite or
// change what the stage (or a run of stages) reads, or another output,
// before anything is created: committing it would destroy the input
// (decode -m M -o M), one of the two outputs (train --log X -o X), or
// change a directory the stage reads (featurize -o lake/f.parquet lake).
//
// Files are compared by device and inode (os.SameFile), so symbolic links,
// hard links and different spellings of one path (./x, x, dir/../x) are
// caught; "-" stands for the file behind standard input or output, so
// `-o in.arrow < in.arrow` and `> in.arrow` with in.arrow an input are
// caught too. An output that does not exist yet is compared with the other
// outputs by its resolved directory and name. An output is refused:
//
//   - when it is the same file as a regular-file input;
//   - when it lies inside a directory input (its directory resolved
//     through symbolic links), or is the same file as one of the
//     directory's files (a hard link);
//   - when an input Pattern matches it;
//   - when it is the same file as another output, or lies inside another
//     output that is a Dir; an input inside a Dir output is refused too.
//
// An input that does not exist yet (an earlier step makes it) is compared
// with the outputs by its resolved directory and name. Inputs are compared
// only with the outputs of their own or a later Step.
// Two outputs may share a character device (/dev/null, a terminal);
// sharing anything else — a regular file, a pipe such as standard output
// into the next stage — is refused. Paths with an empty Name are ignored,
// and so are inputs that cannot be examined for another reason than not
// existing (the stage reports those when it opens them).
func CheckDistinct(inputs, outputs []Path) error { return Std{}.CheckDistinct(inputs, outputs) }

// CheckDistinct is the package's CheckDistinct with s's streams standing
// for "-": a stream that is not an *os.File is no file an output could
// overwrite, and two outputs "-" are the same stream.
func (s Std) CheckDistinct(inputs, outputs []Path) error {
	ins := make([]fileID, 0, len(inputs))
	for _, p := range inputs {
		if p.Pattern {
			if p.Name != "" {
				ins = append(ins, fileID{p: p, path: p.describe(""), patterns: patternForms(p.Name)})
			}
			continue
		}
		id, ok := identify(p, s.stdin(), "standard input")
		switch {
		case !ok:
		case id.info == nil:
			if id.key != "" {
				ins = append(ins, id) // made by an earlier step, or missing
			}
		case id.info.Mode().IsRegular():
			ins = append(ins, id)
		case id.info.IsDir():
			id.members = dirMembers(p.Name)
			ins = append(ins, id)
		}
	}
	outs := make([]fileID, 0, len(outputs))
	for _, p := range outputs {
		if id, ok := identify(p, s.stdout(), "standard output"); ok {
			outs = append(outs, id)
		}
	}
	for i, o := range outs {
		for _, in := range ins {
			if in.p.Step > o.p.Step {
				continue // a later stage reads what o's stage wrote
			}
			if err := clash(o, in); err != nil {
				return err
			}
		}
		for _, p := range outs[:i] {
			if sameOutput(o, p) {
				return fmt.Errorf("outputs %s and %s are the same file: one would overwrite the other", p.path, o.path)
			}
		}
		for j, d := range outs {
			if j != i && d.p.Dir && inside(o, d) {
				return fmt.Errorf("output %s is inside %s, a directory the run writes and clears", o.path, d.path)
			}
		}
		if o.p.Dir {
			for _, in := range ins {
				if !in.p.Pattern && inside(in, o) {
					return fmt.Errorf("input %s is inside %s, a directory the run writes and clears", in.path, o.path)
				}
			}
		}
	}
	return nil
}

// clash says why output o may not be written when in is read ("" : it
// may), as an error.
func clash(o, in fileID) error {
	switch {
	case in.p.Pattern:
		for _, pat := range in.patterns {
			for _, name := range o.forms() {
				if ok, _ := filepath.Match(pat, name); ok {
					return fmt.Errorf("output %s matches input pattern %s: the next run would read it as an input", o.path, in.path)
				}
			}
		}
	case in.info == nil:
		if o.key == in.key || o.real == in.key {
			return fmt.Errorf("output %s is the same file as input %s: refusing to overwrite an input", o.path, in.path)
		}
	case in.info.IsDir():
		if inside(o, in) {
			return fmt.Errorf("output %s is inside input directory %s: refusing to write into a directory that is read", o.path, in.path)
		}
		if o.info != nil {
			for _, m := range in.members {
				if os.SameFile(o.info, m.info) {
					return fmt.Errorf("output %s is the same file as %s in input directory %s: refusing to overwrite an input", o.path, m.path, in.path)
				}
			}
		}
	case o.info != nil && os.SameFile(o.info, in.info):
		return fmt.Errorf("output %s is the same file as input %s: refusing to overwrite an input", o.path, in.path)
	}
	return nil
}

// fileID identifies a file: its FileInfo when it exists, else its resolved
// directory and name.
type fileID struct {
	p    Path
	path string // for messages
	info os.FileInfo
	key  string // the resolved directory and name ("" for a stream)
	real string // where a symbolic link named key leads ("" : key)

	members  []member // a directory input's files
	patterns []string // a Pattern input's forms (patternForms)
}

// member is a file of a directory input.
type member struct {
	path string
	info os.FileInfo
}

// identify examines p; "-" is the stream std, named stdName. ok is false
// for an unset path or one that cannot be examined for another reason than
// not existing. A stream that is no *os.File is identified by its name.
func identify(p Path, std any, stdName string) (fileID, bool) {
	id := fileID{p: p, path: p.describe(stdName)}
	var err error
	switch p.Name {
	case "":
		return id, false
	case "-":
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
	abs, err := filepath.Abs(p.Name)
	if err != nil {
		return id, id.info != nil
	}
	dir, base := filepath.Split(abs)
	if resolved, err := filepath.EvalSymlinks(dir); err == nil {
		dir = resolved
	}
	id.key = filepath.Join(dir, base)
	real, err := filepath.EvalSymlinks(abs)
	if err != nil && id.info == nil {
		real = danglingTarget(abs) // a writer that opens the name creates its target
	}
	if real != id.key {
		id.real = real
	}
	return id, true
}

// danglingTarget is where the symbolic link at path leads, its directory
// resolved, when the target does not exist; "" when path is no link.
func danglingTarget(path string) string {
	target, err := os.Readlink(path)
	if err != nil {
		return ""
	}
	if !filepath.IsAbs(target) {
		target = filepath.Join(filepath.Dir(path), target)
	}
	dir, base := filepath.Split(target)
	if resolved, err := filepath.EvalSymlinks(dir); err == nil {
		dir = resolved
	}
	return filepath.Join(dir, base)
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

// inside reports whether a lies inside the directory d (or is d), by their
// resolved paths.
func inside(a, d fileID) bool {
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

// sameOutput reports whether two outputs would write the same file.
func sameOutput(a, b fileID) bool {
	switch {
	case a.info != nil && b.info != nil:
		return os.SameFile(a.info, b.info) && a.info.Mode()&os.ModeCharDevice == 0
	case a.info == nil && b.info == nil:
		return a.key == b.key
	}
	return false
}
