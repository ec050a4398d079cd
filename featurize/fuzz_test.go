package featurize

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// readersFuzzSeeds adds every testdata/readers file with extension ext,
// plus the given inputs, to the corpus of f.
func readersFuzzSeeds(f *testing.F, ext string, extra ...string) {
	files, err := filepath.Glob(filepath.Join("testdata", "readers", "*"+ext))
	if err != nil {
		f.Fatal(err)
	}
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	for _, s := range extra {
		f.Add([]byte(s))
	}
}

// readersFuzzCheck reads data to the end with the reader kind and fails on
// a malformed sentence or on an error that is not a SyntaxError naming the
// input.
func readersFuzzCheck(t *testing.T, kind readersKind, data []byte) {
	const name = "fuzz.in"
	r := kind.reader(bytes.NewReader(data), name)
	n := 0
	for r.Scan() {
		s := r.Sentence()
		if err := readersCheckSentence(s, r.Columns()); err != nil {
			t.Fatalf("sentence %d: %v", n, err)
		}
		if kind == "crfsuite" {
			if s.Tokens != nil || s.Attrs == nil || s.Labels == nil {
				t.Fatalf("sentence %d: CRFsuite sentence with Tokens %v, Attrs nil %v, Labels nil %v",
					n, s.Tokens != nil, s.Attrs == nil, s.Labels == nil)
			}
		} else if s.Tokens == nil || s.Attrs != nil {
			t.Fatalf("sentence %d: column sentence with Tokens nil %v, Attrs %v", n, s.Tokens == nil, s.Attrs != nil)
		}
		n++
		if n > len(data)+1 {
			t.Fatalf("%d sentences from %d bytes", n, len(data))
		}
	}
	err := r.Err()
	if err == nil {
		if n == 0 {
			t.Fatal("no sentence and no error")
		}
		return
	}
	var se *SyntaxError
	if !errors.As(err, &se) || se.File != name || !strings.HasPrefix(err.Error(), name+":") {
		t.Fatalf("error %q is not a SyntaxError naming %s", err, name)
	}
	if r.Scan() {
		t.Fatal("Scan succeeded after an error")
	}
}

func FuzzConll(f *testing.F) {
	readersFuzzSeeds(f, ".conll", "a B C\nb C\n", "-DOCSTART- x O\n\n", "a\tb  c\r\n\n\nd e f")
	f.Fuzz(func(t *testing.T, data []byte) { readersFuzzCheck(t, "conll", data) })
}

func FuzzConllu(f *testing.F) {
	readersFuzzSeeds(f, ".conllu", "1\ta\ta\tX\tX\t_\t0\troot\t_\t_\n1-2\ta\t_\t_\t_\t_\t_\t_\t_\t_\n")
	f.Fuzz(func(t *testing.T, data []byte) { readersFuzzCheck(t, "conllu", data) })
}

func FuzzTreebankPOS(f *testing.F) {
	readersFuzzSeeds(f, ".pos", "[ a/DT ]\n\n''/'' b/NN\n=====\n")
	f.Fuzz(func(t *testing.T, data []byte) { readersFuzzCheck(t, "pos", data) })
}

func FuzzTreebankMRG(f *testing.F) {
	readersFuzzSeeds(f, ".mrg", "((S (-NONE- *)))(NN a)", "( (S (NN a) )))")
	f.Fuzz(func(t *testing.T, data []byte) { readersFuzzCheck(t, "mrg", data) })
}

func FuzzCRFsuite(f *testing.F) {
	readersFuzzSeeds(f, ".crfsuite", "L\ta\\:b:1\t\\\\:2\n\nM\tx:inf\n", "\t\tL\n")
	f.Fuzz(func(t *testing.T, data []byte) {
		readersFuzzCheck(t, "crfsuite", data)
		if s := string(data); CRFsuiteUnescape(crfsuiteEscape(s)) != s {
			t.Fatalf("escape round trip of %q", s)
		}
	})
}
