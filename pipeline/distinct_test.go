package pipeline

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheckDistinct: an output that is an input, or another output, is
// refused whatever the spelling, link or standard stream that names it.
func TestCheckDistinct(t *testing.T) {
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
		err := CheckDistinct(c.in, c.out)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: error %v, want %q", c.name, err, c.want)
		}
	}
}
