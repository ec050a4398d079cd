package pipeline

import (
	"fmt"
	"os"
	"path/filepath"
)

// Path is a file a stage reads or writes, with the flag (or argument) that
// names it, for messages.
type Path struct {
	Flag string // e.g. "-o", "--log", "input"
	Name string // the path; "-" is standard input or output; "" is unset
}

// describe names p in messages; std names the standard stream "-" means.
func (p Path) describe(std string) string {
	name := p.Name
	if name == "-" {
		name = "- (" + std + ")"
	}
	if p.Flag == "" {
		return name
	}
	return p.Flag + " " + name
}

// CheckDistinct refuses a stage's outputs when one is the same file as an
// input or as another output, before anything is created: committing it
// would destroy the input (decode -m M -o M) or one of the two outputs
// (train --log X -o X). Files are compared by device and inode
// (os.SameFile), so symbolic links, hard links and different spellings of
// one path (./x, x, dir/../x) are caught; "-" stands for the file behind
// standard input or output, so `-o in.arrow < in.arrow` and `> in.arrow`
// with in.arrow an input are caught too. An output that does not exist yet
// is compared with the other outputs by its resolved directory and name.
//
// Only regular files are compared with inputs (writing elsewhere cannot
// overwrite one). Two outputs may share a character device (/dev/null, a
// terminal); sharing anything else — a regular file, a pipe such as
// standard output into the next stage — is refused. Paths with an empty
// Name are ignored, and so are inputs that cannot be examined (the stage
// reports those when it opens them).
func CheckDistinct(inputs, outputs []Path) error { return Std{}.CheckDistinct(inputs, outputs) }

// CheckDistinct is the package's CheckDistinct with s's streams standing
// for "-": a stream that is not an *os.File is no file an output could
// overwrite, and two outputs "-" are the same stream.
func (s Std) CheckDistinct(inputs, outputs []Path) error {
	ins := make([]fileID, 0, len(inputs))
	for _, p := range inputs {
		if id, ok := identify(p, s.stdin(), "standard input"); ok && id.info != nil && id.info.Mode().IsRegular() {
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
			if o.info != nil && os.SameFile(o.info, in.info) {
				return fmt.Errorf("output %s is the same file as input %s: refusing to overwrite an input", o.path, in.path)
			}
		}
		for _, p := range outs[:i] {
			if sameOutput(o, p) {
				return fmt.Errorf("outputs %s and %s are the same file: one would overwrite the other", p.path, o.path)
			}
		}
	}
	return nil
}

// fileID identifies a file: its FileInfo when it exists, else its resolved
// directory and name.
type fileID struct {
	path string // for messages
	info os.FileInfo
	key  string
}

// identify examines p; "-" is the stream std, named stdName. ok is false
// for an unset path or one that cannot be examined for another reason than
// not existing. A stream that is no *os.File is identified by its name.
func identify(p Path, std any, stdName string) (fileID, bool) {
	id := fileID{path: p.describe(stdName)}
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
	switch {
	case err == nil:
		return id, true
	case !os.IsNotExist(err):
		return id, false
	}
	id.info = nil
	abs, err := filepath.Abs(p.Name)
	if err != nil {
		return id, false
	}
	dir, base := filepath.Split(abs)
	if resolved, err := filepath.EvalSymlinks(dir); err == nil {
		dir = resolved
	}
	id.key = filepath.Join(dir, base)
	return id, true
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
