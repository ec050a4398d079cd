package job

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/dualcrf/dualcrf/pipeline"
)

// step is a stage made concrete: its command line and its files.
type step struct {
	Stage
	index  int
	args   []string // the command's arguments (without train's checkpoint flags)
	inputs []string // every file read: arguments and file options
	// relative holds the inputs (resolved) that the job file gave as
	// relative paths, with the path as written.
	relative map[string]string
	outputs  []string // every file written
	stdout   string   // eval's report goes to this file ("" : the run's standard output)
	// ckpt: train checkpoints with the stage's options (checkpoints).
	ckpt bool
	// files are the stage's inputs (with the glob patterns they came from)
	// and outputs (with the files written but not recorded, such as
	// train's duals) as the job's file check names them.
	files struct{ in, out []pipeline.Path }
}

// steps makes every stage concrete: globs expanded, paths resolved, the
// options written as flags in name order.
func (f *File) steps() ([]*step, error) {
	var out []*step
	for i, s := range f.Stages {
		st := &step{Stage: s, index: i}
		if err := f.makeStep(st); err != nil {
			return nil, fmt.Errorf("%s: stage %s: %w", f.path, s.Name, err)
		}
		out = append(out, st)
	}
	return out, nil
}

// makeStep fills in st's arguments and files.
func (f *File) makeStep(st *step) error {
	files := fileOptions[st.Run]
	owner := "stage " + st.Name
	in := func(flag, name string) {
		st.files.in = append(st.files.in, pipeline.Path{Flag: flag, Name: name, Owner: owner, Step: st.index + 1})
	}
	st.relative = map[string]string{}
	given := func(written, resolved string) {
		if written != "" && !filepath.IsAbs(written) {
			st.relative[resolved] = written
		}
	}
	out := func(flag, name string) {
		st.files.out = append(st.files.out, pipeline.Path{Flag: flag, Name: name, Owner: owner, Step: st.index + 1})
	}
	st.args = []string{st.Run}
	keys := make([]string, 0, len(st.Options))
	for k := range st.Options {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v, _ := optionValue(st.Options[k]) // checked by Parse
		switch {
		case slices.Contains(files.in, k):
			w := v
			v = f.resolve(v)
			given(w, v)
			st.inputs = append(st.inputs, v)
			in("--"+k, v)
		case slices.Contains(files.out, k):
			v = f.resolve(v)
			st.outputs = append(st.outputs, v)
			out("--"+k, v)
		case st.Run == "train" && k == "keep-duals":
			// Written at the end of the run, like a duals file not
			// recorded; the warm-start file it may replace is not an
			// input either (the job keeps its own in its state).
			v = f.resolve(v)
			out("--keep-duals", v)
		case st.Run == "train" && k == "warm-start":
			v = f.resolve(v)
		case st.Run == "train" && k == "duals":
			// A duals file is written (not recorded: it is train's
			// scratch); stream or auto in the checkpoint directory.
			// (Without a checkpoint directory, stream and auto write an
			// unlinked temporary file.)
			if p, ok := strings.CutPrefix(v, "stream:"); ok {
				v = "stream:" + f.resolve(p)
				out("--duals", f.resolve(p))
			} else if v != "memory" && v != "auto" && v != "stream" {
				v = f.resolve(v)
				out("--duals", v)
			}
		}
		st.args = append(st.args, "--"+k+"="+v)
	}
	if st.Output == "-" {
		return fmt.Errorf("output %q: a job's stages write files, not standard output", st.Output)
	}
	if st.Run == "eval" {
		st.args = append(st.args, "--json")
		if st.Output != "" {
			st.stdout = f.resolve(st.Output)
			st.outputs = append(st.outputs, st.stdout)
			out("", st.stdout)
		}
	} else {
		o := f.resolve(st.Output)
		st.args = append(st.args, "--output="+o)
		st.outputs = append(st.outputs, o)
		out("", o)
	}
	var args []string
	for _, pat := range st.Inputs {
		if pat == "-" || pat == "" {
			return fmt.Errorf("input %q: a job reads files, not standard input", pat)
		}
		p := f.resolve(pat)
		if !strings.ContainsAny(pat, "*?[") {
			args = append(args, p)
			in("", p)
			given(pat, p)
			continue
		}
		st.files.in = append(st.files.in, pipeline.Path{Name: p, Owner: owner, Step: st.index + 1, Pattern: true})
		m, err := filepath.Glob(p)
		if err != nil {
			return fmt.Errorf("input %q: %w", pat, err)
		}
		if len(m) == 0 {
			if !filepath.IsAbs(pat) {
				return fmt.Errorf("input %q matches no file: %s", pat, f.relativeTo())
			}
			return fmt.Errorf("input %q matches no file", pat)
		}
		args = append(args, m...) // sorted by Glob
		for _, name := range m {
			in("", name)
		}
	}
	if len(args) > 0 {
		st.args = append(st.args, "--")
		st.args = append(st.args, args...)
	}
	st.inputs = append(st.inputs, args...)
	return nil
}

// relativeTo says where a job's relative paths are read from.
func (f *File) relativeTo() string {
	return fmt.Sprintf("a job's relative paths are relative to the job file's directory, %s", f.dir)
}

// relativeHint is the end of the message of err, an input of st that
// could not be read: when it is missing and the job file gave it as a
// relative path, where that path was looked for.
func (f *File) relativeHint(st *step, err error) string {
	var pe *fs.PathError
	if !errors.As(err, &pe) || !errors.Is(err, fs.ErrNotExist) {
		return ""
	}
	written, ok := st.relative[pe.Path]
	if !ok {
		return ""
	}
	return fmt.Sprintf(" (%q in the job file; %s)", written, f.relativeTo())
}

// checkFiles refuses a job whose runs would lose a file, before anything
// is written (pipeline.CheckDistinct): no output of a stage may be an
// input of that stage or an earlier one (or lie inside such a directory
// input, or match such a glob), the job file, or another output; the
// manifests, the state file, the lock and train's checkpoint directories
// may be no input and no stage's output.
func (f *File) checkFiles(steps []*step) error {
	ins := []pipeline.Path{{Name: f.path, Owner: "the job file"}}
	outs := []pipeline.Path{
		{Name: f.ManifestPath(), Owner: "the manifest", Step: pipeline.LastStep},
		{Name: f.FailedManifestPath(), Owner: "the failed run's manifest", Step: pipeline.LastStep},
		{Name: f.statePath(), Owner: "the job's state", Step: pipeline.LastStep},
		{Name: f.lockPath(), Owner: "the job's lock", Step: pipeline.LastStep},
	}
	for _, s := range steps {
		ins = append(ins, s.files.in...)
		outs = append(outs, s.files.out...)
		if s.Run == "train" && s.checkpoints() {
			dir := f.checkpointDir(s)
			outs = append(outs, pipeline.Path{Name: dir, Owner: "stage " + s.Name + "'s checkpoints", Step: pipeline.LastStep, Dir: true},
				pipeline.Path{Name: dir + ".key", Owner: "stage " + s.Name + "'s checkpoints", Step: pipeline.LastStep})
		}
	}
	if err := pipeline.CheckDistinct(ins, outs); err != nil {
		return fmt.Errorf("%s: %w", f.path, err)
	}
	return nil
}

// FileHash is a file's path and the SHA-256 of its content (a directory's:
// of its files' relative paths and contents, in path order).
type FileHash struct {
	Path   string `json:"path"`
	SHA256 string `json:"sha256"`
	Bytes  int64  `json:"bytes"`
}

// hashFiles hashes each path.
func hashFiles(paths []string) ([]FileHash, error) {
	out := make([]FileHash, 0, len(paths))
	for _, p := range paths {
		h, err := hashPath(p)
		if err != nil {
			return nil, err
		}
		out = append(out, h)
	}
	return out, nil
}

// hashPath hashes a file, or a directory's regular files.
func hashPath(path string) (FileHash, error) {
	st, err := os.Stat(path)
	if err != nil {
		return FileHash{}, err
	}
	h := sha256.New()
	var n int64
	if !st.IsDir() {
		if n, err = hashFile(h, path); err != nil {
			return FileHash{}, err
		}
		return FileHash{Path: path, SHA256: hex.EncodeToString(h.Sum(nil)), Bytes: n}, nil
	}
	err = filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		rel, _ := filepath.Rel(path, p)
		fmt.Fprintf(h, "%s\x00", filepath.ToSlash(rel))
		m, err := hashFile(h, p)
		n += m
		return err
	})
	if err != nil {
		return FileHash{}, err
	}
	return FileHash{Path: path, SHA256: hex.EncodeToString(h.Sum(nil)), Bytes: n}, nil
}

// hashFile feeds the file at path to w.
func hashFile(w io.Writer, path string) (int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	n, err := io.Copy(w, f)
	if err != nil {
		return n, fmt.Errorf("%s: %w", path, err)
	}
	return n, nil
}

// Record is what the job remembers of a stage's last successful run, to
// skip it when nothing changed.
type Record struct {
	Args    []string       `json:"args"`
	Inputs  []FileHash     `json:"inputs"`
	Outputs []FileHash     `json:"outputs"`
	Seconds float64        `json:"seconds"`
	Metrics map[string]any `json:"metrics,omitempty"`
}

// whyRun says why st must run given its last record and the hashes of its
// inputs now; "" means it may be skipped.
func whyRun(st *step, rec *Record, inputs []FileHash) string {
	switch {
	case rec == nil:
		return "no previous run"
	case !slices.Equal(rec.Args, st.args):
		return "options or files changed"
	}
	if len(rec.Inputs) != len(inputs) {
		return "inputs changed"
	}
	for i, h := range inputs {
		if rec.Inputs[i].SHA256 != h.SHA256 {
			return "input " + h.Path + " changed"
		}
	}
	if len(rec.Outputs) != len(st.outputs) {
		return "outputs changed"
	}
	for i, o := range rec.Outputs {
		if o.Path != st.outputs[i] {
			return "output " + st.outputs[i] + " is not recorded"
		}
		h, err := hashPath(o.Path)
		switch {
		case err != nil:
			return "output " + o.Path + " is missing"
		case h.SHA256 != o.SHA256:
			return "output " + o.Path + " changed since"
		}
	}
	return ""
}
