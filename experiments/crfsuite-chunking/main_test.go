package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRun writes the attributes of a two-token sentence, to standard output
// and to a file, and refuses a file without part-of-speech tags, leaving
// nothing behind.
func TestRun(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.txt")
	if err := os.WriteFile(in, []byte("He PRP B-NP\nreckons: VBZ B-VP\n\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	want := "B-NP\tw[0]=He\tw[1]=reckons__COLON__\tw[0]|w[1]=He|reckons__COLON__\tpos[0]=PRP\tpos[1]=VBZ\tpos[0]|pos[1]=PRP|VBZ\t__BOS__\n" +
		"B-VP\tw[-1]=He\tw[0]=reckons__COLON__\tw[-1]|w[0]=He|reckons__COLON__\tpos[-1]=PRP\tpos[0]=VBZ\tpos[-1]|pos[0]=PRP|VBZ\t__EOS__\n\n"
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
	if err := os.WriteFile(bad, []byte("He B-NP\n\n"), 0o644); err != nil {
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
