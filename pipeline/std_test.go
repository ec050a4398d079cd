package pipeline

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSourceReader reads standard input from a reader that is no file:
// decompressed by its magic bytes, named StdinName, never closed.
func TestSourceReader(t *testing.T) {
	data := []byte("EU NNP B-NP\nrejects VBZ B-VP\n")
	for _, format := range []string{"", "gzip", "zstd"} {
		in := data
		if format != "" {
			in = compressed(t, data, format)
		}
		for _, path := range []string{"", "-"} {
			src := Source{Path: path, Stdin: bytes.NewReader(in)}
			rc, name, err := src.Open()
			if err != nil {
				t.Fatalf("%s %q: %v", format, path, err)
			}
			got, err := io.ReadAll(rc)
			if err != nil || !bytes.Equal(got, data) || name != StdinName || src.Name() != StdinName {
				t.Errorf("%s %q: read %q, %v, named %q; want %q named %q", format, path, got, err, name, data, StdinName)
			}
			rc.Close()
		}
	}
	dir := t.TempDir()
	path := writeFile(t, dir, "x.txt", data)
	src := Source{Path: path, Stdin: strings.NewReader("not read")}
	rc, name, err := src.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	if got, _ := io.ReadAll(rc); !bytes.Equal(got, data) || name != path {
		t.Errorf("a named file read %q as %q; want %q as %q", got, name, data, path)
	}
}

// TestStdOutput writes "-" to a Std's own standard output: nothing before
// Commit, everything after; an aborted output leaves it untouched.
func TestStdOutput(t *testing.T) {
	var buf bytes.Buffer
	std := Std{Out: &buf}
	out, err := std.CreateOutput("-")
	if err != nil {
		t.Fatal(err)
	}
	if out.Name() != StdoutName {
		t.Errorf("named %q, want %q", out.Name(), StdoutName)
	}
	if _, err := out.Write([]byte("table")); err != nil {
		t.Fatal(err)
	}
	if err := out.Commit(); err != nil || buf.String() != "table" {
		t.Fatalf("committed %q, %v; want %q", buf.String(), err, "table")
	}
	aborted, err := std.CreateOutput("")
	if err != nil {
		t.Fatal(err)
	}
	aborted.Write([]byte("lost"))
	aborted.Abort()
	if buf.String() != "table" {
		t.Errorf("an aborted output wrote: %q", buf.String())
	}
}

// TestStdCheckFiles compares "-" as the streams of a Std: two outputs to
// a standard output that is no file are the same stream; an input read from
// a reader is no file an output could overwrite; with the standard streams
// *os.File, the files behind them count.
func TestStdCheckFiles(t *testing.T) {
	dir := t.TempDir()
	in := writeFile(t, dir, "in.arrow", []byte("x"))
	mem := Std{In: strings.NewReader("x"), Out: &bytes.Buffer{}}
	err := checkInOut(mem, nil, []Path{{Flag: "report", Name: "-"}, {Flag: "--arrow", Name: "-"}})
	if err == nil || !strings.Contains(err.Error(), "are the same file") {
		t.Errorf("two outputs to one standard output: %v", err)
	}
	if err := checkInOut(mem, []Path{{Name: "-"}}, []Path{{Flag: "-o", Name: in}}); err != nil {
		t.Errorf("standard input from memory: %v", err)
	}
	f, err := os.Open(in)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	err = checkInOut(Std{In: f, Out: &bytes.Buffer{}}, []Path{{Name: "-"}}, []Path{{Flag: "-o", Name: filepath.Join(dir, ".", "in.arrow")}})
	if err == nil || !strings.Contains(err.Error(), "refusing to overwrite an input") {
		t.Errorf("-o in.arrow < in.arrow: %v", err)
	}
}
