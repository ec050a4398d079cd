package featurize

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dualcrf/dualcrf/arrowio"
	"github.com/dualcrf/dualcrf/pipeline"
)

// TestWriteCRFsuiteRoundTrip writes CRFsuite lines for CoNLL text whose
// tokens hold ':' and '\' (escaped twice: by the templates, then by
// CRFsuite's format) and non-ASCII letters, with num() values, and reads
// them back with the CRFsuite reader, which unescapes as CRFsuite does:
// every label, name and value must come back as Extract and the markers
// give them.
func TestWriteCRFsuiteRoundTrip(t *testing.T) {
	text := "He PRP B-NP 1\nc:a\\\\b\\: NN I-NP 2.5e-3\n\\ : O -0\n\nÉté NN B-NP 7\n\n"
	dir := t.TempDir()
	path := filepath.Join(dir, "in.txt")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	set, err := ParseTemplateString("w[0]\nlower(w[-1])|pos[0]\nnum(n[0])\nw[0]|num(n[0])\n")
	if err != nil {
		t.Fatal(err)
	}
	mk := Markers{Bias: "@bias", Start: "@start", End: "@end"}
	in := InputOptions{Columns: []string{"word", "pos", "n"}, LabelColumn: 3}
	var out bytes.Buffer
	sum, err := WriteCRFsuite(t.Context(), pipeline.Source{Path: path}, &out, RunOptions{Templates: set, Input: in}, mk)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Sentences != 2 || sum.Tokens != 4 {
		t.Fatalf("summary %+v", sum)
	}
	// What the templates give, read directly.
	r, c, err := OpenReader(pipeline.Source{Path: path}, in)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	back := NewCRFsuiteReader(bytes.NewReader(out.Bytes()), "out")
	var x *Extractor
	for r.Scan() {
		if x == nil {
			if x, err = set.Compile(r.Columns()); err != nil {
				t.Fatal(err)
			}
		}
		want, err := goAttributes(x, r.Sentence(), mk)
		if err != nil {
			t.Fatal(err)
		}
		if !back.Scan() {
			t.Fatalf("CRFsuite lines end early: %v", back.Err())
		}
		got := back.Sentence()
		for tok := range want {
			if got.Labels[tok] != r.Sentence().Labels[tok] {
				t.Errorf("token %d: label %q, want %q", tok, got.Labels[tok], r.Sentence().Labels[tok])
			}
			if len(got.Attrs[tok]) != len(want[tok]) {
				t.Fatalf("token %d: %v, want %v", tok, got.Attrs[tok], want[tok])
			}
			for j, f := range want[tok] {
				if g := got.Attrs[tok][j]; g.Name != f.Name || g.Value != f.Value {
					t.Errorf("token %d attribute %d: read back %q = %v, want %q = %v", tok, j, g.Name, g.Value, f.Name, f.Value)
				}
			}
		}
	}
	if back.Scan() {
		t.Error("CRFsuite lines have more sentences than the input")
	}
	for _, want := range []string{`w[0]=c\:a\\\\\\\\b\\\\\:`, "\tnum(n[0]):0.0025\t", "\tnum(n[0]):-0\t", "\t@bias\t@start\t@end\n"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}

// TestWriteCRFsuiteRefuses: a token-table cell with a TAB, a line break or
// a NUL, which CRFsuite's lines cannot carry, is an error naming the
// input; unlabelled text gets CRFsuiteNoLabel; an input attribute named
// like a marker is left out.
func TestWriteCRFsuiteRefuses(t *testing.T) {
	dir := t.TempDir()
	set, _ := ParseTemplateString("w[0]\n")
	for _, bad := range []string{"a\tb", "a\nb", "a\rb", "a\x00b"} {
		path := filepath.Join(dir, "t.parquet")
		rows := []tok{{0, 0, "ok", "NN", "B-NP"}, {0, 1, bad, "NN", "I-NP"}}
		if err := os.WriteFile(path, tokenTable(t, arrowio.FormatParquet, rows), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := WriteCRFsuite(t.Context(), pipeline.Source{Path: path}, &bytes.Buffer{}, RunOptions{Templates: set}, Markers{})
		var se *SyntaxError
		if !errors.As(err, &se) || se.File != path || !strings.Contains(err.Error(), "CRFsuite's attribute format cannot carry") {
			t.Errorf("token %q: %v", bad, err)
		}
	}
	path := filepath.Join(dir, "plain.txt")
	if err := os.WriteFile(path, []byte("Hello world\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if _, err := WriteCRFsuite(t.Context(), pipeline.Source{Path: path}, &out, RunOptions{Templates: set, Input: InputOptions{Format: FormatPlain}}, Markers{Bias: "@b"}); err != nil {
		t.Fatal(err)
	}
	if got, want := out.String(), "_\tw[0]=Hello\t@b\n_\tw[0]=world\t@b\n\n"; got != want {
		t.Errorf("unlabelled text: %q, want %q", got, want)
	}
	crf := filepath.Join(dir, "in.crf")
	if err := os.WriteFile(crf, []byte("A\t@b\tx:2\t@b@\n\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	if _, err := WriteCRFsuite(t.Context(), pipeline.Source{Path: crf}, &out, RunOptions{Input: InputOptions{Format: "crfsuite"}}, Markers{Bias: "@b@"}); err != nil {
		t.Fatal(err)
	}
	if got, want := out.String(), "A\t@b\tx:2\t@b@\n\n"; got != want {
		t.Errorf("input attributes and markers: %q, want %q", got, want)
	}
}
