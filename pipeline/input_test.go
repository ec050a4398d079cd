package pipeline

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
)

// compressed returns data compressed with format ("gzip" or "zstd").
func compressed(t *testing.T, data []byte, format string) []byte {
	t.Helper()
	var buf bytes.Buffer
	var zw io.WriteCloser = gzip.NewWriter(&buf)
	if format == "zstd" {
		var err error
		if zw, err = zstd.NewWriter(&buf); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := zw.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// writeFile writes data to a new file name in dir and returns its path.
func writeFile(t *testing.T, dir, name string, data []byte) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// withStdin runs fn with os.Stdin set to f.
func withStdin(f *os.File, fn func()) {
	old := os.Stdin
	os.Stdin = f
	defer func() { os.Stdin = old }()
	fn()
}

// TestOpenInput: plain, gzip and zstd files read as their text whatever
// their names say; a plain file comes back as the *os.File, so Arrow
// readers can use ReadAt; a missing file is named.
func TestOpenInput(t *testing.T) {
	dir := t.TempDir()
	text := []byte("a b\nc d\n")
	files := map[string]string{
		writeFile(t, dir, "plain.txt", text):                             "",
		writeFile(t, dir, "z.txt.gz", compressed(t, text, "gzip")):       "gzip",
		writeFile(t, dir, "z.txt.zst", compressed(t, text, "zstd")):      "zstd",
		writeFile(t, dir, "zstd-named.gz", compressed(t, text, "zstd")):  "zstd",
		writeFile(t, dir, "gzip-named.txt", compressed(t, text, "gzip")): "gzip",
		writeFile(t, dir, "short.txt", []byte("\x1f")):                   "",
		writeFile(t, dir, "empty.txt", nil):                              "",
	}
	for path, format := range files {
		rc, name, err := OpenInput(path)
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(rc)
		want := text
		if format == "" {
			want, _ = os.ReadFile(path)
		}
		if err != nil || !bytes.Equal(got, want) || name != path {
			t.Errorf("%s: read %q, %v, name %q", path, got, err, name)
		}
		if _, isFile := rc.(*os.File); isFile != (format == "") {
			t.Errorf("%s (%q): opened as %T", path, format, rc)
		}
		if err := rc.Close(); err != nil {
			t.Error(err)
		}
	}
	missing := filepath.Join(dir, "missing")
	if _, name, err := OpenInput(missing); !errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), missing) || name != missing {
		t.Errorf("missing file: %v (name %q)", err, name)
	}
}

// TestOpenInputStdin: "" and "-" are standard input, named StdinName and
// never closed by the reader's Close (formerly, closing it closed standard
// input); redirected from a plain regular file it keeps ReadAt, and
// compressed it is decompressed, as a named file is.
func TestOpenInputStdin(t *testing.T) {
	dir := t.TempDir()
	text := []byte("from stdin\n")
	for _, tc := range []struct {
		data   []byte
		readAt bool
	}{{text, true}, {compressed(t, text, "gzip"), false}, {compressed(t, text, "zstd"), false}} {
		for _, path := range []string{"-", ""} {
			f, err := os.Open(writeFile(t, dir, "stdin", tc.data))
			if err != nil {
				t.Fatal(err)
			}
			withStdin(f, func() {
				rc, name, err := OpenInput(path)
				if err != nil {
					t.Fatal(err)
				}
				if name != StdinName {
					t.Errorf("OpenInput(%q) name %q", path, name)
				}
				if _, ok := rc.(regularFile); ok != tc.readAt {
					t.Errorf("OpenInput(%q) of %q: %T, random access %v, want %v", path, tc.data[:2], rc, ok, tc.readAt)
				}
				if got, err := io.ReadAll(rc); err != nil || !bytes.Equal(got, text) {
					t.Errorf("OpenInput(%q) read %q, %v", path, got, err)
				}
				if err := rc.Close(); err != nil {
					t.Error(err)
				}
			})
			if _, err := f.Stat(); err != nil {
				t.Errorf("OpenInput(%q): Close closed standard input: %v", path, err)
			}
			f.Close()
		}
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	go func() {
		w.Write(compressed(t, text, "zstd"))
		w.Close()
	}()
	withStdin(r, func() {
		rc, _, err := OpenInput("-")
		if err != nil {
			t.Fatal(err)
		}
		if got, err := io.ReadAll(rc); err != nil || !bytes.Equal(got, text) {
			t.Errorf("zstd from a pipe: read %q, %v", got, err)
		}
		rc.Close()
	})
}

// TestOpenInputDamaged: a truncated or corrupt compressed stream is a
// *DecompressError naming the input, whether the header or the data is
// damaged.
func TestOpenInputDamaged(t *testing.T) {
	dir := t.TempDir()
	text := bytes.Repeat([]byte("some text to compress\n"), 5000)
	for _, format := range []string{"gzip", "zstd"} {
		z := compressed(t, text, format)
		for _, tc := range []struct {
			name string
			data []byte
			want string
		}{
			{"cut", z[:len(z)/2], "unexpected end of compressed data (truncated " + format + " stream)"},
			{"header", z[:6], "unexpected end of compressed data (truncated " + format + " stream)"},
		} {
			path := writeFile(t, dir, format+"-"+tc.name, tc.data)
			rc, _, err := OpenInput(path)
			if err == nil {
				_, err = io.ReadAll(rc)
				rc.Close()
			}
			var de *DecompressError
			if !errors.As(err, &de) || err.Error() != path+": "+tc.want || de.Format != format {
				t.Errorf("%s %s: %v, want %q", format, tc.name, err, path+": "+tc.want)
			}
		}
	}
	de := &DecompressError{Name: "x.gz", Line: 7, Format: "gzip", Err: errors.New("bad")}
	if got := de.Error(); got != "x.gz:7: corrupt gzip stream: bad" {
		t.Errorf("DecompressError = %q", got)
	}
}

// regularFile is what package arrowio reads in place: what OpenInput
// returns for an uncompressed regular file.
type regularFile interface {
	io.ReaderAt
	io.Seeker
	Stat() (fs.FileInfo, error)
}
