package featurize

import (
	"archive/zip"
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// treebankZip builds a small NLTK-style treebank archive from the sample
// files in testdata/readers (a directory entry, .mrg and .pos members and a
// member of neither kind).
func treebankZip(t testing.TB, method uint16) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	if _, err := zw.Create("treebank/combined/"); err != nil {
		t.Fatal(err)
	}
	for _, m := range []struct{ name, src string }{
		{"treebank/combined/wsj_0001.mrg", "sample.mrg"},
		{"treebank/combined/wsj_0002.mrg", "sample.mrg"},
		{"treebank/tagged/wsj_0001.pos", "sample.pos"},
		{"treebank/README", "sample.pos"},
	} {
		b, err := os.ReadFile(filepath.Join("testdata", "readers", m.src))
		if err != nil {
			t.Fatal(err)
		}
		w, err := zw.CreateHeader(&zip.FileHeader{Name: m.name, Method: method})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(b); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// readTreebankZip reads every sentence of the archive data, written to
// path, in format; errors must name the archive.
func readTreebankZip(t *testing.T, path string, data []byte, format TreebankFormat) (sentences int, err error) {
	t.Helper()
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err != nil && !strings.Contains(err.Error(), path) {
			t.Fatalf("error %q does not name the archive %s", err, path)
		}
	}()
	z, err := OpenTreebankZip(path, format)
	if err != nil {
		return 0, err
	}
	defer z.Close()
	for z.Scan() {
		if len(z.Sentence().Tokens) == 0 {
			t.Fatalf("an empty sentence from %s", z.Member())
		}
		sentences++
	}
	return sentences, z.Err()
}

// TestTreebankZipErrorsNameTheArchive: an archive that is not a zip, or has
// no member of the format, is refused naming it.
func TestTreebankZipErrorsNameTheArchive(t *testing.T) {
	good := treebankZip(t, zip.Deflate)
	path := filepath.Join(t.TempDir(), "treebank.zip")
	if n, err := readTreebankZip(t, path, good, TreebankMRG); err != nil || n == 0 {
		t.Fatalf("intact archive: %d sentences, %v", n, err)
	}
	for _, data := range [][]byte{[]byte("not a zip"), good[:len(good)/2]} {
		if _, err := readTreebankZip(t, path, data, TreebankMRG); err == nil {
			t.Errorf("%d bytes of garbage accepted", len(data))
		}
	}
}

// FuzzTreebankZip opens arbitrary bytes as a treebank archive, seeded with
// stored and deflated archives: errors name the archive, nothing panics.
// The archive is read from memory through newTreebankZip, which
// OpenTreebankZip calls on the file (writing a file per input would make
// the fuzzing a test of the file system); TestTreebankZipErrorsNameTheArchive
// covers the file.
func FuzzTreebankZip(f *testing.F) {
	f.Add(treebankZip(f, zip.Store), true)
	f.Add(treebankZip(f, zip.Deflate), false)
	f.Fuzz(func(t *testing.T, data []byte, mrg bool) {
		format := TreebankPOS
		if mrg {
			format = TreebankMRG
		}
		const name = "fuzz.zip"
		z, err := newTreebankZip(bytes.NewReader(data), int64(len(data)), name, format)
		if err == nil {
			for z.Scan() {
				if len(z.Sentence().Tokens) == 0 {
					t.Fatalf("an empty sentence from %s", z.Member())
				}
			}
			err = z.Err()
			if cerr := z.Close(); cerr != nil {
				t.Fatalf("close: %v", cerr)
			}
		}
		if err != nil && !strings.Contains(err.Error(), name) {
			t.Fatalf("error %q does not name the archive", err)
		}
	})
}
