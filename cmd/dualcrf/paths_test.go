package main

// Tests generated from the flag tables: every file a command names is
// declared in its table (a fileFlag, or a fileArg for its arguments and
// standard output), and these tests point every pair of one command's
// declarations at one file, so a flag added to a table later is tried
// against every other without a test of its own.

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"

	"github.com/dualcrf/dualcrf/job"
	"github.com/dualcrf/dualcrf/pipeline"
)

// pathTarget is the file a generated case points two declarations at.
const pathTarget = "f"

// declName is how a refusal names d: a flag by its name as messages show
// it, standard output by what it holds; "" for the arguments (named by
// their path).
func declName(d fileDecl) string {
	switch d := d.(type) {
	case *fileFlag:
		return d.shown()
	case *fileArg:
		return d.flag
	}
	return ""
}

// isStdout reports whether d is the standard output a command prints to.
func isStdout(d fileDecl) bool {
	a, ok := d.(*fileArg)
	return ok && a.flag != ""
}

// pathCase is one run of a command with some declarations set.
type pathCase struct {
	command string
	decls   []fileDecl
	set     map[int]string // declaration index → the value it gets ("-": a standard stream)
	stdin   string         // the file standard input reads ("": the null device)
	stdout  string         // the file standard output appends to ("": a scratch file)
}

// args writes the command line: the flags set, each required flag left
// unset given a file of its own, then the arguments.
func (c pathCase) args() []string {
	args := []string{c.command}
	var positional []string
	for i, d := range c.decls {
		v, set := c.set[i]
		switch d := d.(type) {
		case *fileFlag:
			if !set && d.Required {
				v, set = "req-"+d.Name, true
			}
			if set {
				args = append(args, "--"+d.Name+"="+v)
			}
		case *fileArg:
			if set && d.flag == "" {
				positional = append(positional, v)
			}
		}
	}
	return append(args, positional...)
}

// run runs the case in process in dir (its working directory and TMPDIR)
// and returns the exit status and standard error.
func (c pathCase) run(t *testing.T, dir string) (int, string) {
	t.Helper()
	t.Chdir(dir)
	t.Setenv("TMPDIR", dir)
	stdin, err := os.Open(cmp(c.stdin, os.DevNull))
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	stdoutPath := c.stdout
	if stdoutPath == "" {
		stdoutPath = filepath.Join(t.TempDir(), "stdout")
	}
	stdout, err := os.OpenFile(stdoutPath, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer stdout.Close()
	var stderr bytes.Buffer
	code := run(context.Background(), append([]string{"dualcrf"}, c.args()...), stdin, stdout, &stderr)
	return code, stderr.String()
}

// cmp returns s, or def when s is empty.
func cmp(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// spellings are the names a case gives pathTarget: as it is, absolute,
// through ".." after a directory, through a symbolic link (made by
// pathDir).
func spellings(dir string) []string {
	return []string{pathTarget, filepath.Join(dir, pathTarget), "sub/../" + pathTarget, "lnk"}
}

// pathDir makes a directory for a case: a subdirectory sub, a link lnk to
// pathTarget, and pathTarget itself when exists (a directory when dir is
// true, else a regular file).
func pathDir(t *testing.T, exists, dir bool) string {
	t.Helper()
	d := t.TempDir()
	if err := os.Mkdir(filepath.Join(d, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(pathTarget, filepath.Join(d, "lnk")); err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(d, pathTarget)
	switch {
	case exists && dir:
		err := os.Mkdir(target, 0o755)
		if err == nil {
			err = os.WriteFile(filepath.Join(target, "kept"), []byte("state"), 0o644)
		}
		if err != nil {
			t.Fatal(err)
		}
	case exists:
		if err := os.WriteFile(target, []byte("precious"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return d
}

// treeDigest describes every file under dir: its path, mode and content.
func treeDigest(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		fmt.Fprintf(&b, "%s %v", rel, info.Mode())
		if info.Mode().IsRegular() {
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			fmt.Fprintf(&b, " %q", data)
		}
		b.WriteByte('\n')
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// commandNames returns the commands with file tables, sorted.
func commandNames() []string {
	var names []string
	for name := range commandFiles() {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}

// TestPathPairs points every pair of one command's declared files (flags,
// arguments, standard output) whose roles may not share a file at one
// file — not made yet, and existing — spelled a different way each time
// (the same name, absolute, through "..", through a symbolic link, "-"
// with the standard stream redirected to it), and wants each run refused
// before anything is written: exit 1, both declarations named when the
// file does not exist yet, and every file left as it was. Pairs that may
// share a file (two inputs; a warm start's duals and the duals kept;
// --checkpoint and --resume) are left to the runs that use them.
func TestPathPairs(t *testing.T) {
	counts := map[string]int{}
	for _, command := range commandNames() {
		decls := commandFiles()[command]
		k := 0
		for i := range decls {
			for j := i + 1; j < len(decls); j++ {
				a, b := decls[i], decls[j]
				if pipeline.Compatible(a.declared().Role, b.declared().Role) {
					continue
				}
				counts[command]++
				for _, exists := range []bool{false, true} {
					k++
					if !exists && (isStdout(a) || isStdout(b)) {
						continue // a standard output redirected to the file makes it
					}
					isDir := a.declared().Role == pipeline.RoleDir || b.declared().Role == pipeline.RoleDir
					dir := pathDir(t, exists, isDir)
					c := pathCase{command: command, decls: decls, set: map[int]string{}}
					spell := spellings(dir)
					c.set[i], c.set[j] = pathTarget, spell[k%len(spell)]
					// The standard streams: a standard output row is the
					// stream; with the file there, one declaration that
					// takes "-" reads or writes it through the stream.
					for _, n := range []int{i, j} {
						d := decls[n]
						switch {
						case isStdout(d):
							c.stdout, c.set[n] = filepath.Join(dir, pathTarget), "-"
						case exists && !isDir && d.declared().Std && c.stdin == "" && c.stdout == "" && k%3 != 0:
							c.set[n] = "-"
							if d.declared().Role == pipeline.RoleOutput {
								c.stdout = filepath.Join(dir, pathTarget)
							} else {
								c.stdin = filepath.Join(dir, pathTarget)
							}
						}
					}
					before := treeDigest(t, dir)
					code, stderr := c.run(t, dir)
					what := fmt.Sprintf("dualcrf %s (stdin %q, stdout %q; %s exists: %v)", strings.Join(c.args(), " "), c.stdin, c.stdout, pathTarget, exists)
					if code != 1 || !strings.HasPrefix(stderr, "dualcrf: "+command+": ") {
						t.Errorf("%s: exit %d, stderr %q; want exit 1 and the file check's refusal", what, code, stderr)
					}
					if !exists {
						for _, n := range []int{i, j} {
							name := declName(decls[n])
							if name == "" {
								name = c.set[n]
							}
							if !strings.Contains(stderr, name) {
								t.Errorf("%s: %q does not name %s", what, stderr, name)
							}
						}
					}
					if after := treeDigest(t, dir); after != before {
						t.Errorf("%s: %s\nchanged the directory:\n%s\nwas\n%s", what, stderr, after, before)
					}
				}
			}
		}
	}
	t.Logf("pairs of declared files refused, by command: %v", counts)
	// Each command's count, so that a table that loses its declarations
	// (or a command that loses its table) fails here.
	want := map[string]int{"train": 52, "featurize": 4, "decode": 3, "eval": 3, "explain": 1, "export": 3,
		"plot": 2, "inspect": 1}
	for _, command := range commandNames() {
		if counts[command] != want[command] {
			t.Errorf("%s: %d pairs refused, want %d", command, counts[command], want[command])
		}
	}
}

// TestPathStdStreams: "-" is a standard stream only where a declaration
// says so: every declared flag or argument that does not take it is
// refused with "-", and two declarations that read standard input may not
// both be "-".
func TestPathStdStreams(t *testing.T) {
	refused, twice := map[string]int{}, map[string]int{}
	for _, command := range commandNames() {
		decls := commandFiles()[command]
		for i, d := range decls {
			if isStdout(d) {
				continue
			}
			var cases []pathCase
			if !d.declared().Std {
				cases = append(cases, pathCase{command: command, decls: decls, set: map[int]string{i: "-"}})
				refused[command]++
			}
			for j := i + 1; j < len(decls); j++ {
				if d.declared().Std && decls[j].declared().Std && d.declared().Role == pipeline.RoleInput && decls[j].declared().Role == pipeline.RoleInput {
					cases = append(cases, pathCase{command: command, decls: decls, set: map[int]string{i: "-", j: "-"}})
					twice[command]++
				}
			}
			for _, c := range cases {
				dir := t.TempDir()
				code, stderr := c.run(t, dir)
				want := "standard input, which can be read once"
				if len(c.set) == 1 {
					want = "is not accepted here: give a file name"
				}
				if code != 1 || !strings.HasPrefix(stderr, "dualcrf: "+command+": ") || !strings.Contains(stderr, want) {
					t.Errorf("dualcrf %s: exit %d, stderr %q; want exit 1 and %q", strings.Join(c.args(), " "), code, stderr, want)
				}
				if names := dirEntries(t, dir); len(names) != 0 {
					t.Errorf("dualcrf %s: left %v", strings.Join(c.args(), " "), names)
				}
			}
		}
	}
	t.Logf(`"-" refused, by command: %v; two standard inputs refused: %v`, refused, twice)
	if refused["train"] != 8 || twice["train"] != 1 || twice["featurize"] != 3 || twice["decode"] != 3 || refused["plot"] != 3 {
		t.Errorf(`"-" refused %v, two standard inputs %v: fewer than the tables declare`, refused, twice)
	}
}

// TestFileTables: every command has a file table, and its flags are the
// table's: each fileFlag of the table is a flag of the command with the
// same role, and every flag of the command that holds text either names
// a file (declared) or is one of the flags known to name none. A new
// flag that names a file fails here until its row says what the command
// does with the file.
func TestFileTables(t *testing.T) {
	app := newApp(nil, nil, nil)
	notFiles := map[string][]string{
		"featurize": {"memory-budget", "input-format", "format", "columns", "label-column", "sentence-column", "position-column", "folds", "column", "output-format", "ipc", "compression", "progress"},
		"train": {"memory-budget", "feature-space", "transitions", "lambda", "l1", "solver", "loss", "hamming", "sampler", "sag-variant", "dual-precision",
			"nondeterministic-async", "progress"},
		"decode":  {"memory-budget", "input-format", "columns", "label-column", "sentence-column", "position-column", "folds", "column", "constraints", "force-column", "scheme", "format", "ipc", "compression", "progress"},
		"eval":    {"scheme"},
		"explain": {"format"},
		"export":  {"format", "memory-budget"},
		"demo":    {"gap-tol"},
		"synth":   {"ipc", "compression"},
		"run":     {"var", "progress"},
		"plot":    {"names", "title"},
	}
	tables := commandFiles()
	for _, cmd := range app.Commands {
		decls, ok := tables[cmd.Name]
		if !ok {
			t.Errorf("command %s has no file table in commandFiles", cmd.Name)
			continue
		}
		declared := map[string]pipeline.Role{}
		for _, d := range decls {
			if d.isFlag() {
				declared[d.Names()[0]] = d.declared().Role
			}
		}
		for _, f := range cmd.Flags {
			name := f.Names()[0]
			switch f := f.(type) {
			case *fileFlag:
				if role, ok := declared[name]; !ok || role != f.spec.Role {
					t.Errorf("%s --%s: role %v in the command, %v in its file table", cmd.Name, name, f.spec.Role, role)
				}
				delete(declared, name)
			case *cli.StringFlag, *cli.StringSliceFlag:
				if !slices.Contains(notFiles[cmd.Name], name) {
					t.Errorf("%s --%s holds text but is neither declared as a file in its table nor known to name none", cmd.Name, name)
				}
			}
		}
		if len(declared) > 0 {
			t.Errorf("%s: the file table declares flags the command lacks: %v", cmd.Name, declared)
		}
	}
	if len(tables) != len(app.Commands) {
		t.Errorf("commandFiles has %d tables for %d commands", len(tables), len(app.Commands))
	}
}

// TestJobPathPairs is TestPathPairs for dualcrf run: in a job file's stage
// of each command a job runs, every pair of the stage's files (its
// inputs:, its output:, each option naming a file, and the job file
// itself) whose roles may not share a file is pointed at one file, and the
// job is refused before any stage runs, leaving its directory as it was.
func TestJobPathPairs(t *testing.T) {
	counts := map[string]int{}
	for _, command := range job.Commands {
		// A stage's files: its inputs and output (the job's words), the
		// job file, and the options that name files, by their flags' names.
		type stageFile struct {
			key  string // "inputs", "output", "job" or the option
			role pipeline.Role
		}
		files := []stageFile{{"job", pipeline.RoleInput}, {"inputs", pipeline.RoleInput}, {"output", pipeline.RoleOutput}}
		for _, d := range commandFiles()[command] {
			if !d.isFlag() {
				continue
			}
			name := d.Names()[0]
			if name == "output" || name == "checkpoint" || name == "resume" {
				continue // the job's own (managed): refused as options
			}
			files = append(files, stageFile{name, d.declared().Role})
		}
		for i := range files {
			for j := i + 1; j < len(files); j++ {
				a, b := files[i], files[j]
				if pipeline.Compatible(a.role, b.role) {
					continue
				}
				counts[command]++
				dir := pathDir(t, false, false)
				jobPath := filepath.Join(dir, "job.yaml")
				target := map[string]string{"inputs": "in.txt", "output": "out.arrow"}
				name := pathTarget
				if a.key == "job" {
					name = "job.yaml" // the job file is the file both name
				}
				target[a.key], target[b.key] = name, name
				if command == "decode" && target["model"] == "" {
					target["model"] = "m.arrow"
				}
				var opts []string
				for k, v := range target {
					if k != "inputs" && k != "output" && k != "job" {
						opts = append(opts, fmt.Sprintf("%s: %q", k, v))
					}
				}
				sort.Strings(opts)
				yaml := fmt.Sprintf("name: t\nstages:\n  - {run: %s, inputs: [%q], output: %q, options: {%s}}\n",
					command, target["inputs"], target["output"], strings.Join(opts, ", "))
				if err := os.WriteFile(jobPath, []byte(yaml), 0o644); err != nil {
					t.Fatal(err)
				}
				before := treeDigest(t, dir)
				code, stderr := pathCase{command: "run", decls: commandFiles()["run"], set: map[int]string{0: jobPath}}.run(t, dir)
				if code != 1 || !strings.Contains(stderr, jobPath+": ") || !strings.Contains(stderr, "same file") && !strings.Contains(stderr, "a directory the run") {
					t.Errorf("job %q: exit %d, stderr %q; want exit 1 and the file check's refusal", yaml, code, stderr)
				}
				if after := treeDigest(t, dir); after != before {
					t.Errorf("job %q: %s\nchanged the directory:\n%s\nwas\n%s", yaml, stderr, after, before)
				}
			}
		}
	}
	t.Logf("pairs of a job stage's files refused, by command: %v", counts)
	if !reflect.DeepEqual(counts, map[string]int{"featurize": 5, "train": 41, "decode": 4, "eval": 5}) {
		t.Errorf("pairs refused %v: not what the tables declare", counts)
	}
}
