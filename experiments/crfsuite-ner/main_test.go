package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRun writes the attributes of a document start and a three-token
// sentence, to standard output and to a file, and refuses a file without
// part-of-speech tags, leaving nothing behind.
func TestRun(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.txt")
	if err := os.WriteFile(in, []byte("-DOCSTART- -DOCSTART- O\nDe Art O\nEU: N B-ORG\n1992 Num O\n\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// Every ':' of a name is escaped, the token's own ("EU:") too.
	want := "O\tbias\tword.lower()=de\tword[-3\\:]=De\tword[-2\\:]=De\tword.istitle()\tpostag=Art\tpostag[\\:2]=Ar\tBOS\t+1\\:word.lower()=eu\\:\t+1\\:word.isupper()\t+1\\:postag=N\t+1\\:postag[\\:2]=N\n" +
		"B-ORG\tbias\tword.lower()=eu\\:\tword[-3\\:]=EU\\:\tword[-2\\:]=U\\:\tword.isupper()\tpostag=N\tpostag[\\:2]=N\t-1\\:word.lower()=de\t-1\\:word.istitle()\t-1\\:postag=Art\t-1\\:postag[\\:2]=Ar\t+1\\:word.lower()=1992\t+1\\:postag=Num\t+1\\:postag[\\:2]=Nu\n" +
		"O\tbias\tword.lower()=1992\tword[-3\\:]=992\tword[-2\\:]=92\tword.isdigit()\tpostag=Num\tpostag[\\:2]=Nu\t-1\\:word.lower()=eu\\:\t-1\\:word.isupper()\t-1\\:postag=N\t-1\\:postag[\\:2]=N\tEOS\n\n"
	var out bytes.Buffer
	if err := run([]string{in}, &out); err != nil || out.String() != want {
		t.Fatalf("stdout: %v\n%q\nwant\n%q", err, out.String(), want)
	}
	file := filepath.Join(dir, "out.txt")
	if err := run([]string{"-o", file, in}, nil); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(file); err != nil || string(b) != want {
		t.Fatalf("-o: %v\n%q", err, b)
	}
	bad := filepath.Join(dir, "bad.txt")
	if err := os.WriteFile(bad, []byte("De O\n\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	err := run([]string{"-o", filepath.Join(dir, "bad.out"), bad}, nil)
	if err == nil || !strings.HasPrefix(err.Error(), bad+":1: ") {
		t.Errorf("two columns: %v, want an error at %s:1", err, bad)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 3 {
		t.Errorf("left behind: %v", ents)
	}
}

// TestPythonStr checks the case tests and slices against what Python's str
// answers (python3 -c 'print("Ab".istitle(), …)').
func TestPythonStr(t *testing.T) {
	for _, c := range []struct {
		s                   string
		upper, title, digit bool
		last3, first2       string
	}{
		{"Amsterdam", false, true, false, "dam", "Am"},
		{"EU", true, false, false, "EU", "EU"},
		{"De-Vries", false, true, false, "ies", "De"},
		{"McDonald", false, false, false, "ald", "Mc"},
		{"1992", false, false, true, "992", "19"},
		{"A1", true, true, false, "A1", "A1"},
		{"Ölçü", false, true, false, "lçü", "Öl"},
		{"'s", false, false, false, "'s", "'s"},
		{"", false, false, false, "", ""},
	} {
		if isUpper(c.s) != c.upper || isTitle(c.s) != c.title || isDigit(c.s) != c.digit || suffix(c.s, 3) != c.last3 || prefix(c.s, 2) != c.first2 {
			t.Errorf("%q: isupper %v istitle %v isdigit %v [-3:] %q [:2] %q", c.s, isUpper(c.s), isTitle(c.s), isDigit(c.s), suffix(c.s, 3), prefix(c.s, 2))
		}
	}
}
