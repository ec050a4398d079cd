package pipeline

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dualcrf/dualcrf/internal/fifotest"
)

// checkInOut checks inputs and outputs with s.CheckFiles: a Path
// without a Role is RoleInput among inputs and RoleOutput among outputs;
// "-" names a standard stream.
func checkInOut(s Std, inputs, outputs []Path) error {
	var all []Path
	for _, p := range inputs {
		if p.Role == 0 {
			p.Role = RoleInput
		}
		p.Std = true
		all = append(all, p)
	}
	for _, p := range outputs {
		if p.Role == 0 {
			p.Role = RoleOutput
		}
		p.Std = true
		all = append(all, p)
	}
	return s.CheckFiles(all)
}

// TestCheckFiles: an output that is an input, or another output, is
// refused whatever the spelling, link or standard stream that names it.
func TestCheckFiles(t *testing.T) {
	dir := t.TempDir()
	sub := filepath.Join(dir, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	in := filepath.Join(dir, "in.arrow")
	other := filepath.Join(dir, "other.arrow")
	for _, p := range []string{in, other} {
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	link := filepath.Join(dir, "link.arrow")
	if err := os.Symlink(in, link); err != nil {
		t.Fatal(err)
	}
	hard := filepath.Join(dir, "hard.arrow")
	if err := os.Link(in, hard); err != nil {
		t.Fatal(err)
	}
	dirLink := filepath.Join(dir, "sublink")
	if err := os.Symlink(sub, dirLink); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	stdin, err := os.Open(in)
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	oldIn, oldOut := os.Stdin, os.Stdout
	os.Stdin, os.Stdout = stdin, w
	defer func() { os.Stdin, os.Stdout = oldIn, oldOut }()

	I := func(name string) []Path { return []Path{{Flag: "-m", Name: name}} }
	O := func(names ...string) []Path {
		var ps []Path
		for i, n := range names {
			ps = append(ps, Path{Flag: []string{"-o", "--log"}[i], Name: n})
		}
		return ps
	}
	cases := []struct {
		name    string
		in, out []Path
		want    string // "" = accepted
	}{
		{"same path", I(in), O(in), "output -o " + in + " is the same file as input -m " + in + ": refusing to overwrite an input"},
		{"./x and x", I("in.arrow"), O("./in.arrow"), "same file as input"},
		{"dir/../x", I(in), O("sub/../in.arrow"), "same file as input"},
		{"symbolic link", I(in), O(link), "same file as input"},
		{"hard link", I(hard), O(in), "same file as input"},
		{"standard input", I("-"), O("in.arrow"), "output -o in.arrow is the same file as input -m - (standard input)"},
		{"two new outputs", nil, O("new.arrow", "./sub/../new.arrow"), "outputs -o new.arrow and --log ./sub/../new.arrow are the same file"},
		{"new outputs through a linked directory", nil, O("sub/new", "sublink/new"), "are the same file"},
		{"existing outputs", nil, O(other, "other.arrow"), "are the same file"},
		{"stdout twice", nil, O("-", fmt.Sprintf("/proc/self/fd/%d", w.Fd())), "outputs -o - (standard output) and --log /proc/self/fd/"},
		{"different files", I(in), O(other, "new.arrow"), ""},
		{"new beside existing", I(in), O("in.arrow.new"), ""},
		{"null device twice", I(in), O(os.DevNull, os.DevNull), ""},
		{"unset paths", []Path{{Flag: "--vocab"}}, O("", "x"), ""},
		{"missing input", I("missing"), O("missing2"), ""},
		{"standard streams", I("-"), O("-"), ""},
	}
	for _, c := range cases {
		err := checkInOut(Std{}, c.in, c.out)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: error %v, want %q", c.name, err, c.want)
		}
	}
}

// TestCheckFilesDirsPatternsSteps: an output inside a directory input
// (whatever names the directory), the same file as one of its files, one
// an input pattern matches, or inside a directory the run clears is
// refused; a later step may read what an earlier one wrote, but no step
// may write what it or an earlier step reads.
func TestCheckFilesDirsPatternsSteps(t *testing.T) {
	dir := t.TempDir()
	lake := filepath.Join(dir, "lake")
	part := filepath.Join(lake, "split=train")
	if err := os.MkdirAll(part, 0o755); err != nil {
		t.Fatal(err)
	}
	table := filepath.Join(part, "part-0.parquet")
	if err := os.WriteFile(table, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(lake, filepath.Join(dir, "lakelink")); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(table, filepath.Join(dir, "hard.parquet")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(part, "new.arrow"), filepath.Join(dir, "dangling")); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	in := func(name string, step int) Path { return Path{Name: name, Step: step} }
	out := func(name string, step int) Path { return Path{Flag: "-o", Name: name, Step: step} }
	cases := []struct {
		name    string
		in, out []Path
		want    string // "" = accepted
	}{
		{"new file in the directory", []Path{in("lake", 0)}, []Path{out("lake/features.parquet", 0)},
			"output -o lake/features.parquet is inside input directory lake: refusing to write into a directory that is read"},
		{"deep in the directory", []Path{in("lake", 0)}, []Path{out("lake/split=train/f.arrow", 0)}, "inside input directory lake"},
		{"through a linked directory", []Path{in("lake", 0)}, []Path{out("lakelink/f.arrow", 0)}, "inside input directory lake"},
		{"the linked directory read", []Path{in("lakelink/", 0)}, []Path{out("lake/f.arrow", 0)}, "inside input directory lakelink/"},
		{"a hidden file in it", []Path{in("lake", 0)}, []Path{out("lake/.f.arrow", 0)}, "inside input directory lake"},
		{"the directory itself", []Path{in("lake", 0)}, []Path{out("lake", 0)}, "output -o lake is a directory: give a file name"},
		{"a hard link to a member", []Path{in("lake", 0)}, []Path{out("hard.parquet", 0)},
			"output -o hard.parquet is the same file as lake/split=train/part-0.parquet in input directory lake"},
		{"a symbolic link into it", []Path{in("lake", 0)}, []Path{out("dangling", 0)}, "inside input directory lake"}, // a writer opening it creates lake/…/new.arrow
		{"beside the directory", []Path{in("lake", 0)}, []Path{out("lake.arrow", 0)}, ""},
		{"pattern match", []Path{{Name: "lake/split=train/*", Pattern: true}}, []Path{out("lake/split=train/out.arrow", 0)},
			"output -o lake/split=train/out.arrow matches input pattern lake/split=train/*: the next run would read it as an input"},
		{"pattern through a link", []Path{{Name: "lakelink/*/*.arrow", Pattern: true}}, []Path{out("lake/split=train/o.arrow", 0)}, "matches input pattern"},
		{"pattern not matching", []Path{{Name: "lake/*/*.parquet", Pattern: true}}, []Path{out("lake/split=train/o.arrow", 0)}, ""},
		{"a later step reads it", []Path{in("part-0.parquet", 2)}, []Path{out("part-0.parquet", 1)}, ""},
		{"a later step writes an input", []Path{in(table, 1)}, []Path{out(table, 3)}, "is the same file as input"},
		{"written after every step", []Path{in(table, 7)}, []Path{out(table, LastStep)}, "is the same file as input"},
		{"a later step writes into a directory read", []Path{in("lake", 1)}, []Path{out("lake/x.arrow", 2)}, "inside input directory lake"},
		{"an earlier step writes into a directory read later", []Path{in("lake", 2)}, []Path{out("lake/x.arrow", 1)}, ""},
		{"an input not made yet", []Path{in("new.arrow", 1)}, []Path{out("./new.arrow", 3)}, "output -o ./new.arrow is the same file as input new.arrow"},
		{"an input made by an earlier step", []Path{in("new.arrow", 2)}, []Path{out("./new.arrow", 1)}, ""},
		{"output in a cleared directory", nil, []Path{{Name: "ck", Role: RoleDir, Owner: "stage train"}, out("ck/model.arrow", 0)},
			"output -o ck/model.arrow is inside ck (stage train), a directory the run writes and clears"},
		{"input in a cleared directory", []Path{in("lake/split=train/part-0.parquet", 0)}, []Path{{Name: "lake", Role: RoleDir, Step: LastStep}},
			"input lake/split=train/part-0.parquet is inside lake, a directory the run writes and clears"},
		{"owners named", []Path{{Name: table, Owner: "stage features"}}, []Path{{Name: table, Owner: "the manifest"}},
			"output " + table + " (the manifest) is the same file as input " + table + " (stage features)"},
	}
	for _, c := range cases {
		err := checkInOut(Std{}, c.in, c.out)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: error %v, want %q", c.name, err, c.want)
		}
	}
}

// roles are every Role, for the tests that try each pair.
var roles = []Role{RoleInput, RoleOutput, RoleStateRead, RoleStateWritten, RoleState, RoleDir}

// TestCheckFilesRolePairs points files of every pair of roles at one file
// — not made yet, and existing (a regular file, or a directory for two
// RoleDir) — spelled differently, and wants a refusal exactly when
// Compatible says the pair may not share a file.
func TestCheckFilesRolePairs(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	if err := os.Mkdir("sub", 0o755); err != nil {
		t.Fatal(err)
	}
	for _, ra := range roles {
		for _, rb := range roles {
			for _, exists := range []bool{false, true} {
				name := fmt.Sprintf("f-%d-%d-%v", ra, rb, exists)
				kindOK := !(ra == RoleDir) && !(rb == RoleDir)
				if exists {
					switch {
					case ra == RoleDir && rb == RoleDir:
						if err := os.Mkdir(name, 0o755); err != nil {
							t.Fatal(err)
						}
					case kindOK:
						if err := os.WriteFile(name, []byte("x"), 0o644); err != nil {
							t.Fatal(err)
						}
					default:
						continue // one file cannot be both a directory and a regular file
					}
				}
				a := Path{Flag: "--a", Name: name, Role: ra}
				b := Path{Flag: "--b", Name: filepath.Join(dir, "sub", "..", name), Role: rb}
				err := CheckFiles([]Path{a, b})
				if Compatible(ra, rb) {
					if err != nil {
						t.Errorf("%v and %v (exists %v): %v", ra, rb, exists, err)
					}
					continue
				}
				if err == nil || !strings.Contains(err.Error(), "--a "+name) || !strings.Contains(err.Error(), "--b ") {
					t.Errorf("%v and %v (exists %v): error %v, want a refusal naming both", ra, rb, exists, err)
				}
			}
		}
	}
}

// TestCheckFilesNames: one file is found whatever names it — absolute or
// relative, through a symbolic link to a file not made yet (or a chain of
// them), through ".." after a symbolic link (the system's reading, not the
// name's) — and two files are not taken for one because their names look
// alike.
func TestCheckFilesNames(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	for _, d := range []string{"a", "b", "b/c"} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// link → b/c, so link/.. is b, while by its name it would be ".".
	if err := os.Symlink("b/c", "link"); err != nil {
		t.Fatal(err)
	}
	for _, l := range [][2]string{{"dangling", "a/new"}, {"chain", "dangling"}} {
		if err := os.Symlink(l[1], l[0]); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile("in", []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := func(name string) Path { return Path{Flag: "-o", Name: name, Role: RoleOutput} }
	kept := func(name string) Path { return Path{Flag: "--keep-duals", Name: name, Role: RoleStateWritten} }
	in := func(name string) Path { return Path{Flag: "--valid", Name: name, Role: RoleInput} }
	cases := []struct {
		name  string
		paths []Path
		want  string // "" = accepted
	}{
		{"absolute and relative", []Path{in("in"), kept(filepath.Join(dir, "in"))}, "output --keep-duals " + filepath.Join(dir, "in") + " is the same file as input --valid in"},
		{"a/../x and x, not made yet", []Path{out("a/../x"), kept("x")}, "outputs -o a/../x and --keep-duals x are the same file"},
		{"link/.. is b", []Path{out("link/../x"), kept("b/x")}, "are the same file"},
		{"link/.. is not .", []Path{out("link/../x"), kept("x")}, ""},
		{"a link to a file not made yet", []Path{out("dangling"), kept("a/new")}, "outputs -o dangling and --keep-duals a/new are the same file"},
		{"a chain of links", []Path{kept("a/new"), out("chain")}, "are the same file"},
		{"an input not made yet, by a link", []Path{in("chain"), out("a/./new")}, "output -o a/./new is the same file as input --valid chain"},
		{"alike but two files", []Path{out("a/x"), kept("b/x")}, ""},
	}
	for _, c := range cases {
		err := CheckFiles(c.paths)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: error %v, want %q", c.name, err, c.want)
		}
	}
}

// TestCheckFilesKinds: an existing file of the wrong kind for its role is
// refused by name (an output that is a directory, a state file that is a
// FIFO or a device, a state directory that is a file), while a FIFO or a
// device output is accepted (written in place); "-" is refused where no
// standard stream is declared, and two inputs cannot both read standard
// input.
func TestCheckFilesKinds(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	fifotest.Make(t, "fifo")
	if err := os.Mkdir("d", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile("f", []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	p := func(flag, name string, role Role) Path { return Path{Flag: flag, Name: name, Role: role} }
	mem := Std{In: strings.NewReader(""), Out: &bytes.Buffer{}}
	cases := []struct {
		name  string
		paths []Path
		want  string // "" = accepted
	}{
		{"output to a FIFO", []Path{p("-o", "fifo", RoleOutput)}, ""},
		{"kept duals to a device", []Path{p("--keep-duals", os.DevNull, RoleStateWritten)}, ""},
		{"output to a directory", []Path{p("-o", "d", RoleOutput)}, "output -o d is a directory: give a file name"},
		{"kept duals to a directory", []Path{p("--keep-duals", "d", RoleStateWritten)}, "output --keep-duals d is a directory"},
		{"duals in a FIFO", []Path{p("--duals", "fifo", RoleState)}, "--duals fifo is a named pipe (FIFO), not a regular file"},
		{"duals on a device", []Path{p("--duals", os.DevNull, RoleState)}, "--duals " + os.DevNull + " is a device, not a regular file"},
		{"warm start from a directory", []Path{p("--warm-start", "d", RoleStateRead)}, "--warm-start d is a directory, not a regular file"},
		{"checkpoints in a file", []Path{p("--checkpoint", "f", RoleDir)}, "--checkpoint f is a regular file, not a directory"},
		{"- undeclared", []Path{p("--log", "-", RoleOutput)}, "--log -: standard output is not accepted here: give a file name"},
		{"- undeclared input", []Path{p("", "-", RoleInput)}, "argument -: standard input is not accepted here"},
		{"stdin twice", []Path{{Flag: "--valid", Name: "-", Role: RoleInput, Std: true}, {Name: "-", Role: RoleInput, Std: true}},
			"inputs --valid - (standard input) and - (standard input) both read standard input"},
		{"no role", []Path{{Flag: "--x", Name: "f"}}, "--x f: no role declared"},
	}
	for _, c := range cases {
		err := mem.CheckFiles(c.paths)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: error %v, want %q", c.name, err, c.want)
		}
	}
}
