package featurize

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/dualcrf/dualcrf/pipeline"
)

// TestReaderMessages pins the errors of the text readers that were once
// found wrong or missing: each names the file, the line and the problem.
func TestReaderMessages(t *testing.T) {
	for _, tc := range []struct {
		kind  readersKind
		input string
		want  string // the whole error text
	}{
		// A value beyond float64's range was taken as part of the name.
		{"crfsuite", "B-NP\tw=a:1e309\n", `bad.txt:1: attribute value is beyond the range of float64 (±1.8e308): "w=a:1e309"`},
		{"crfsuite", "B-NP\tx:1\n\nO\tw=a:-1e400\n", `bad.txt:3: attribute value is beyond the range of float64 (±1.8e308): "w=a:-1e400"`},
	} {
		_, err := readersReadAll(tc.kind.reader(strings.NewReader(tc.input), "bad.txt"))
		if err == nil || err.Error() != tc.want {
			t.Errorf("%s %q: error %v, want %s", tc.kind, tc.input, err, tc.want)
		}
	}
}

// TestCRFsuiteTinyValues checks that a value that underflows to zero or a
// subnormal is a value, not an error.
func TestCRFsuiteTinyValues(t *testing.T) {
	r := NewCRFsuiteReader(strings.NewReader("B\ta:1e-400\tb:4e-320\n"), "tiny.txt")
	if !r.Scan() {
		t.Fatal(r.Err())
	}
	row := r.Sentence().Attrs[0]
	if len(row) != 2 || row[0].Name != "a" || row[0].Value != 0 || row[1].Name != "b" || !(row[1].Value > 0) {
		t.Errorf("attributes %+v, want a=0 and b subnormal", row)
	}
}

// TestTruncatedCompressedLines checks the position a truncated gzip or zstd
// input is reported at: the line being read when the data ended, counted
// in the decompressed text (line 1 when the data ends before any text, no
// line when it ends inside the stream's header), never "line 0" and never
// "EOF" as if the stream were corrupt rather than cut short.
func TestTruncatedCompressedLines(t *testing.T) {
	plain := readersCorpus(5000)
	dir := t.TempDir()
	for _, format := range []string{"gzip", "zstd"} {
		data := readersCompressed(t, plain, format)
		path := filepath.Join(dir, "in."+format)
		for _, n := range []int{5, 10, 20, 30, len(data) / 3, len(data) - 1} {
			if err := os.WriteFile(path, data[:n], 0o644); err != nil {
				t.Fatal(err)
			}
			err := readTruncated(path)
			if err == nil {
				t.Errorf("%s cut at %d bytes: no error", format, n)
				continue
			}
			msg := err.Error()
			want := ": unexpected end of compressed data (truncated " + format + " stream)"
			at, ok := strings.CutSuffix(msg, want)
			if !ok || !strings.HasPrefix(at, path) {
				t.Errorf("%s cut at %d bytes: %q, want %s[:LINE]%s", format, n, msg, path, want)
				continue
			}
			at = strings.TrimPrefix(at, path)
			if at == "" {
				continue // in the header
			}
			line, err := strconv.Atoi(strings.TrimPrefix(at, ":"))
			if err != nil || line < 1 {
				t.Errorf("%s cut at %d bytes: %q: want a line ≥ 1", format, n, msg)
				continue
			}
			// The lines before the reported one decompress completely.
			got, _ := io.ReadAll(mustOpen(t, path))
			if complete := bytes.Count(got, []byte("\n")); line != complete+1 {
				t.Errorf("%s cut at %d bytes: line %d, but %d lines decompress whole", format, n, line, complete)
			}
		}
	}
}

// readTruncated reads the CoNLL file at path to the end.
func readTruncated(path string) error {
	rc, name, err := pipeline.OpenInput(path)
	if err != nil {
		return err
	}
	defer rc.Close()
	_, err = readersReadAll(NewConllReader(rc, name, DefaultConllOptions()))
	return err
}

// mustOpen opens path with Open.
func mustOpen(t *testing.T, path string) io.Reader {
	t.Helper()
	rc, _, err := pipeline.OpenInput(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rc.Close() })
	return rc
}

// TestTemplateErrorLines checks that an error about a token names the
// token's own line, where tokens are not one per line from the sentence's
// first: CoNLL-U multiword-token lines, several Penn Treebank tokens per
// line, a tree spread over lines.
func TestTemplateErrorLines(t *testing.T) {
	word := func(id, form, xpos string) string {
		return id + "\t" + form + "\t" + form + "\tX\t" + xpos + "\t_\t0\troot\t_\t_\n"
	}
	for _, tc := range []struct {
		kind     readersKind
		input    string
		template string
		want     string
	}{
		{"conll", "a 1 B\nb 2 C\nc x C\n", "num(pos[0])", `in:3: num(pos[0]): "x" is not a finite number`},
		{"conll", "-DOCSTART- -X- O\n\na 1 B\nb x C\n", "num(pos[0])", `in:4: num(pos[0]): "x" is not a finite number`},
		{"conllu", "# c\n" + word("1", "a", "1") + "2-3\tbc\t_\t_\t_\t_\t_\t_\t_\t_\n" + word("2", "b", "2") + word("3", "c", "zz"),
			"num(xpos[0])", `in:5: num(xpos[0]): "zz" is not a finite number`},
		{"pos", "1/A 2/B\nc/C 4/D\n", "num(w[0])", `in:2: num(w[0]): "c" is not a finite number`},
		{"mrg", "((S (A 1) (B 2)\n (C x)))\n", "num(w[0])", `in:2: num(w[0]): "x" is not a finite number`},
		{"crfsuite", "A\tx\nB\ty\n", "num(w[0])", ""}, // no columns: the template does not compile
	} {
		set, err := ParseTemplateString(tc.template)
		if err != nil {
			t.Fatal(err)
		}
		r := tc.kind.reader(strings.NewReader(tc.input), "in")
		var got error
		for r.Scan() && got == nil {
			var x *Extractor
			if x, got = set.Compile(r.Columns()); got != nil {
				break
			}
			x.Source = "in"
			_, got = x.Extract(r.Sentence(), nil)
		}
		if got == nil {
			got = r.Err()
		}
		switch {
		case tc.want == "" && got == nil:
			t.Errorf("%s %q: no error", tc.kind, tc.input)
		case tc.want != "" && (got == nil || got.Error() != tc.want):
			t.Errorf("%s %q: error %v, want %s", tc.kind, tc.input, got, tc.want)
		}
	}
}
