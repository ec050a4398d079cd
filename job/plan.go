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
	inputs []string // every file read and hashed: arguments and input options
	// relative holds the inputs (resolved) that the job file gave as
	// relative paths, with the path as written.
	relative map[string]string
	outputs  []string // every file written and recorded
	stdout   string   // eval's report goes to this file ("" : the run's standard output)
	// ckpt: train checkpoints with the stage's options (checkpoints).
	ckpt bool
	// files are every file the stage names, each with its role (the
	// glob patterns its inputs came from too, and the state files it
	// reads or writes but the job does not record, such as train's
	// duals), as the job's file check takes them.
	files []pipeline.Path
}

// steps makes every stage concrete: globs expanded, paths resolved, the
// options written as flags in name order. x says which options name
// files, and what the stage does with them.
func (f *File) steps(x Exec) ([]*step, error) {
	var out []*step
	for i, s := range f.Stages {
		st := &step{Stage: s, index: i}
		if err := f.makeStep(st, x.Files(s.Run)); err != nil {
			return nil, fmt.Errorf("%s: stage %s: %w", f.path, s.Name, err)
		}
		out = append(out, st)
	}
	return out, nil
}

// makeStep fills in st's arguments and files; specs declares the files
// of its command's options, by option name.
func (f *File) makeStep(st *step, specs map[string]pipeline.FileSpec) error {
	owner := "stage " + st.Name
	add := func(flag, name string, role pipeline.Role) {
		st.files = append(st.files, pipeline.Path{Flag: flag, Name: name, Role: role, Owner: owner, Step: st.index + 1})
	}
	st.relative = map[string]string{}
	given := func(written, resolved string) {
		if written != "" && !filepath.IsAbs(written) {
			st.relative[resolved] = written
		}
	}
	st.args = []string{st.Run}
	keys := make([]string, 0, len(st.Options))
	for k := range st.Options {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v, _ := optionValue(st.Options[k]) // checked by Parse
		if spec, ok := specs[k]; ok {
			prefix, p := spec.PathOf(v)
			if p == "-" {
				return fmt.Errorf("option %s %q: a job's stages read and write files, not standard input or output", k, v)
			}
			if p != "" {
				written := p
				p = f.resolve(p)
				v = prefix + p
				add("--"+k, p, spec.Role)
				// Inputs are hashed and outputs recorded; the state a
				// stage reads or writes (train's duals, kept duals,
				// checkpoints) is checked but not recorded.
				switch spec.Role {
				case pipeline.RoleInput:
					given(written, p)
					st.inputs = append(st.inputs, p)
				case pipeline.RoleOutput:
					st.outputs = append(st.outputs, p)
				}
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
			add("", st.stdout, pipeline.RoleOutput)
		}
	} else {
		o := f.resolve(st.Output)
		st.args = append(st.args, "--output="+o)
		st.outputs = append(st.outputs, o)
		add("", o, pipeline.RoleOutput)
	}
	var args []string
	for _, pat := range st.Inputs {
		if pat == "-" || pat == "" {
			return fmt.Errorf("input %q: a job reads files, not standard input", pat)
		}
		p := f.resolve(pat)
		if !strings.ContainsAny(pat, "*?[") {
			args = append(args, p)
			add("", p, pipeline.RoleInput)
			given(pat, p)
			continue
		}
		st.files = append(st.files, pipeline.Path{Name: p, Role: pipeline.RoleInput, Owner: owner, Step: st.index + 1, Pattern: true})
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
			add("", name, pipeline.RoleInput)
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
// is written, with the check every command runs on its own files
// (pipeline.CheckFiles): no file a stage writes may be a file that stage
// or an earlier one reads (or lie inside such a directory input, or match
// such a glob), the job file, a file another stage writes, or another
// stage's state; the manifests, the job's state and lock, and the places
// the job keeps a train stage's checkpoints and duals (reserved whether
// or not its options let it use them) may be no stage's input or output.
func (f *File) checkFiles(steps []*step) error {
	paths := []pipeline.Path{
		{Name: f.path, Role: pipeline.RoleInput, Owner: "the job file"},
		{Name: f.ManifestPath(), Role: pipeline.RoleOutput, Owner: "the manifest", Step: pipeline.LastStep},
		{Name: f.FailedManifestPath(), Role: pipeline.RoleOutput, Owner: "the failed run's manifest", Step: pipeline.LastStep},
		{Name: f.statePath(), Role: pipeline.RoleState, Owner: "the job's state", Step: pipeline.LastStep},
		{Name: f.lockPath(), Role: pipeline.RoleState, Owner: "the job's lock", Step: pipeline.LastStep},
	}
	for _, s := range steps {
		paths = append(paths, s.files...)
		if s.Run != "train" {
			continue
		}
		dir := f.checkpointDir(s)
		owner := "stage " + s.Name + "'s checkpoints"
		paths = append(paths, pipeline.Path{Name: dir, Role: pipeline.RoleDir, Owner: owner, Step: pipeline.LastStep},
			pipeline.Path{Name: dir + ".key", Role: pipeline.RoleState, Owner: owner, Step: pipeline.LastStep})
		if s.keepsDuals() {
			paths = append(paths, pipeline.Path{Name: f.keptDuals(s), Role: pipeline.RoleState, Owner: "stage " + s.Name + "'s kept duals", Step: pipeline.LastStep})
		}
	}
	if err := pipeline.CheckFiles(paths); err != nil {
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
