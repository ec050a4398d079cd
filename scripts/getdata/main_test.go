package main

import (
	"archive/zip"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/dualcrf/dualcrf/internal/datatest"
)

func TestMain(m *testing.M) { os.Exit(datatest.Main(m)) }

// TestManifestREADME: data/README.md's table of files and checksums is
// the Manifest's, row for row.
func TestManifestREADME(t *testing.T) {
	b, err := os.ReadFile(datatest.Carried(t, "data", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	rows := regexp.MustCompile("(?m)^\\| `([^`]+)` \\| `([0-9a-f]{64})` \\|$").FindAllStringSubmatch(string(b), -1)
	readme := map[string]string{}
	for _, r := range rows {
		readme[r[1]] = r[2]
	}
	if len(readme) != len(Manifest) {
		t.Errorf("data/README.md lists %d files, the Manifest %d", len(readme), len(Manifest))
	}
	for _, f := range Manifest {
		if readme[f.Dest] != f.SHA256 {
			t.Errorf("%s: data/README.md says %q, the Manifest %s", f.Dest, readme[f.Dest], f.SHA256)
		}
	}
}

// TestManifestCarried: the UD EWT dev file the repository carries has the
// Manifest's sha256 (the one entry checkable without the corpora).
func TestManifestCarried(t *testing.T) {
	p := datatest.Carried(t, "testdata", "corpora", "ud_english_ewt", "en_ewt-ud-dev.conllu.gz")
	got, err := ContentSHA256(p, false)
	if err != nil {
		t.Fatal(err)
	}
	if want := manifestEntry(t, "ud_english_ewt/en_ewt-ud-dev.conllu.gz").SHA256; got != want {
		t.Errorf("%s: sha256 %s, the Manifest says %s", p, got, want)
	}
}

// TestManifestData: every file of the corpora has the Manifest's sha256.
func TestManifestData(t *testing.T) {
	dir := datatest.Dir(t)
	for _, f := range Manifest {
		got, err := ContentSHA256(filepath.Join(dir, filepath.FromSlash(f.Dest)), f.Raw)
		if err != nil || got != f.SHA256 {
			t.Errorf("%s: sha256 %s (%v), the Manifest says %s", f.Dest, got, err, f.SHA256)
		}
	}
}

func manifestEntry(t *testing.T, dest string) File {
	t.Helper()
	for _, f := range Manifest {
		if f.Dest == dest {
			return f
		}
	}
	t.Fatalf("no %s in the Manifest", dest)
	return File{}
}

// mirror is a copy of the sources laid out as on the server: the content
// each File must end with, and the directory holding the sources.
type mirror struct {
	dir     string
	files   []File            // the Manifest, its hashes those of content
	content map[string][]byte // Dest → content
}

// makeMirror builds the sources of the Manifest in a directory: from the
// corpora when fromData and they are present (so the Manifest's own hashes
// are checked end to end; NLTK's zips are rebuilt, their members
// unchanged), else from the slices the repository carries and made-up
// stand-ins, with the expected hashes replaced by theirs (the hashes are
// then the test's, the mechanics are getdata's). corrupt, when not "",
// names a Dest whose source gets one byte changed after the hashes are
// taken.
func makeMirror(t *testing.T, corrupt string, fromData bool) mirror {
	t.Helper()
	m := mirror{dir: t.TempDir(), content: map[string][]byte{}}
	data, err := datatest.Find()
	if err == nil && !fromData {
		err = errors.New("not asked for")
	}
	real := err == nil
	if real {
		t.Logf("mirror built from the corpora in %s", data)
	} else {
		t.Logf("mirror built from the carried slices and stand-ins (no corpora: %v)", err)
	}
	zips := map[string]map[string][]byte{} // Source → member → bytes
	for _, f := range Manifest {
		var c []byte
		switch {
		case real:
			c = readContent(t, filepath.Join(data, filepath.FromSlash(f.Dest)), f.Raw)
		case f.Dest == "conll2000/train.txt.gz" || f.Dest == "conll2000/test.txt.gz":
			c = readContent(t, datatest.Carried(t, "cmd", "dualcrf", "demodata", filepath.Base(f.Dest)), false)
		case f.Dest == "ud_english_ewt/en_ewt-ud-dev.conllu.gz":
			c = readContent(t, datatest.Carried(t, "testdata", "corpora", "ud_english_ewt", filepath.Base(f.Dest)), false)
		case f.Raw:
			c = zipBytes(t, map[string][]byte{"treebank/combined/wsj_0001.mrg": []byte("( (S (NP-SBJ (NNP Pierre)) (. .)) )\n")})
		default:
			c = []byte("a stand-in for " + f.Dest + "\n")
		}
		m.content[f.Dest] = c
		f.SHA256 = sum(c)
		m.files = append(m.files, f)
		src := c
		if f.Dest == corrupt {
			src = slices.Clone(c)
			src[len(src)/2] ^= 0x20
		}
		if f.Member != "" {
			if zips[f.Source] == nil {
				zips[f.Source] = map[string][]byte{}
			}
			zips[f.Source][f.Member] = src
			continue
		}
		writeFile(t, filepath.Join(m.dir, filepath.FromSlash(f.Source)), src)
	}
	for source, members := range zips {
		members["conll2000/other"] = []byte("a member not fetched\n")
		writeFile(t, filepath.Join(m.dir, filepath.FromSlash(source)), zipBytes(t, members))
	}
	return m
}

func readContent(t *testing.T, p string, raw bool) []byte {
	t.Helper()
	c, err := contentOf(p, raw)
	if err != nil {
		t.Fatalf("%s: %v", p, err)
	}
	return c
}

func writeFile(t *testing.T, p string, b []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func zipBytes(t *testing.T, members map[string][]byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	names := make([]string, 0, len(members))
	for n := range members {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		w, err := zw.CreateHeader(&zip.FileHeader{Name: n, Method: zip.Store})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(members[n]); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// countingServer serves dir over HTTP on 127.0.0.1 and counts the
// requests per path.
func countingServer(t *testing.T, dir string) (*httptest.Server, func() map[string]int) {
	var mu sync.Mutex
	hits := map[string]int{}
	files := http.FileServer(http.Dir(dir))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		hits[r.URL.Path]++
		mu.Unlock()
		files.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv, func() map[string]int {
		mu.Lock()
		defer mu.Unlock()
		h := hits
		hits = map[string]int{}
		return h
	}
}

// checkOut: every file of m is in out with m's content (gzip-compressed
// unless raw), and out holds nothing else (no temporary file).
func checkOut(t *testing.T, m mirror, out string, skip ...string) {
	t.Helper()
	want := map[string]bool{}
	for _, f := range m.files {
		if slices.Contains(skip, f.Dest) {
			continue
		}
		want[f.Dest] = true
		if got := readContent(t, filepath.Join(out, filepath.FromSlash(f.Dest)), f.Raw); !bytes.Equal(got, m.content[f.Dest]) {
			t.Errorf("%s: content differs from the source's", f.Dest)
		}
	}
	filepath.WalkDir(out, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(out, p)
		if !want[filepath.ToSlash(rel)] {
			t.Errorf("unexpected file %s in the output", rel)
		}
		return nil
	})
}

// TestFetch fetches every file from a file:// mirror, then again from an
// HTTP server: nothing is downloaded for files present and checked; a
// file removed is fetched again, its zip downloaded once. With the corpora
// present the mirror holds them and the Manifest's hashes are checked.
func TestFetch(t *testing.T) {
	m := makeMirror(t, "", true)
	out := filepath.Join(t.TempDir(), "data")
	var log strings.Builder
	if err := Fetch(context.Background(), Options{Out: out, Base: "file://" + filepath.ToSlash(m.dir), Log: &log}, m.files); err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	if n := strings.Count(log.String(), "fetched from"); n != len(m.files) {
		t.Errorf("%d files fetched, want %d:\n%s", n, len(m.files), log.String())
	}
	checkOut(t, m, out)

	srv, hits := countingServer(t, m.dir)
	log.Reset()
	if err := Fetch(context.Background(), Options{Out: out, Base: srv.URL, Log: &log}, m.files); err != nil {
		t.Fatal(err)
	}
	if h := hits(); len(h) != 0 || strings.Count(log.String(), "present, sha256 checks") != len(m.files) {
		t.Errorf("second run downloaded %v:\n%s", h, log.String())
	}

	for _, dest := range []string{"conll2000/train.txt.gz", "conll2000/test.txt.gz", "ocr/letter.names.gz"} {
		if err := os.Remove(filepath.Join(out, filepath.FromSlash(dest))); err != nil {
			t.Fatal(err)
		}
	}
	if err := Fetch(context.Background(), Options{Out: out, Base: srv.URL}, m.files); err != nil {
		t.Fatal(err)
	}
	zipPath := "/" + manifestEntry(t, "conll2000/train.txt.gz").Source
	namesPath := "/" + manifestEntry(t, "ocr/letter.names.gz").Source
	if h := hits(); len(h) != 2 || h[zipPath] != 1 || h[namesPath] != 1 {
		t.Errorf("after removing three files: requests %v, want %s and %s once each", h, zipPath, namesPath)
	}
	checkOut(t, m, out)
}

// TestFetchCorrupt: a source whose content does not check, directly or
// as a zip member, is an error naming the file, the expected and the
// actual sha256, and leaves no file (nor temporary) behind; the other
// files are fetched.
func TestFetchCorrupt(t *testing.T) {
	for _, dest := range []string{"conll2000/train.txt.gz", "ud_english_ewt/en_ewt-ud-dev.conllu.gz", "treebank/treebank.zip"} {
		t.Run(dest, func(t *testing.T) {
			m := makeMirror(t, dest, false)
			srv, _ := countingServer(t, m.dir)
			out := t.TempDir()
			err := Fetch(context.Background(), Options{Out: out, Base: srv.URL}, m.files)
			want := manifestEntryOf(m, dest).SHA256
			if err == nil || !strings.Contains(err.Error(), filepath.Join(out, filepath.FromSlash(dest))) ||
				!strings.Contains(err.Error(), "expected "+want) || strings.Count(err.Error(), "sha256") != 1 {
				t.Fatalf("err %v; want one naming %s and expected %s", err, dest, want)
			}
			got := regexp.MustCompile(`sha256 ([0-9a-f]{64}), expected`).FindStringSubmatch(err.Error())
			if got == nil || got[1] == want {
				t.Errorf("err %v does not give the actual sha256", err)
			}
			checkOut(t, m, out, dest)
		})
	}
}

func manifestEntryOf(m mirror, dest string) File {
	for _, f := range m.files {
		if f.Dest == dest {
			return f
		}
	}
	return File{}
}

// TestFetchPresentDiffers: a file present with another content is an
// error, and is left as it was.
func TestFetchPresentDiffers(t *testing.T) {
	m := makeMirror(t, "", false)
	out := t.TempDir()
	dest := filepath.Join(out, "ocr", "letter.names.gz")
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte("edited\n"))
	zw.Close()
	writeFile(t, dest, gz.Bytes())
	err := Fetch(context.Background(), Options{Out: out, Base: m.dir, Corpora: []string{"ocr"}}, m.files)
	if err == nil || !strings.Contains(err.Error(), dest) || !strings.Contains(err.Error(), "remove it") {
		t.Fatalf("err %v", err)
	}
	if b, _ := os.ReadFile(dest); !bytes.Equal(b, gz.Bytes()) {
		t.Error("the present file was changed")
	}
	if _, err := os.Stat(filepath.Join(out, "ocr", "letter.data.gz")); err != nil {
		t.Errorf("the other file of the corpus: %v", err)
	}
	if _, err := os.Stat(filepath.Join(out, "conll2000")); !os.IsNotExist(err) {
		t.Errorf("-corpora ocr fetched conll2000 (%v)", err)
	}
}

// TestFetchMissingSource: a source the server does not have is an error
// naming its URL and the status.
func TestFetchMissingSource(t *testing.T) {
	m := makeMirror(t, "", false)
	if err := os.Remove(filepath.Join(m.dir, filepath.FromSlash(manifestEntry(t, "ocr/letter.names.gz").Source))); err != nil {
		t.Fatal(err)
	}
	srv, _ := countingServer(t, m.dir)
	err := Fetch(context.Background(), Options{Out: t.TempDir(), Base: srv.URL, Corpora: []string{"ocr"}}, m.files)
	if err == nil || !strings.Contains(err.Error(), "letter.names.txt: 404") {
		t.Fatalf("err %v", err)
	}
}

func TestParseFlags(t *testing.T) {
	t.Setenv(MirrorEnv, "")
	opts, err := parseFlags(nil, io.Discard)
	if err != nil || opts.Out != "data" || opts.Base != DefaultBase || opts.Corpora != nil {
		t.Errorf("defaults: %+v, %v", opts, err)
	}
	t.Setenv(MirrorEnv, "http://127.0.0.1:1")
	opts, err = parseFlags([]string{"-o", "d", "-corpora", "ocr,treebank"}, io.Discard)
	if err != nil || opts.Out != "d" || opts.Base != "http://127.0.0.1:1" || !slices.Equal(opts.Corpora, []string{"ocr", "treebank"}) {
		t.Errorf("%+v, %v", opts, err)
	}
	for _, args := range [][]string{{"-corpora", "wsj"}, {"extra"}} {
		if _, err := parseFlags(args, io.Discard); err == nil {
			t.Errorf("%q accepted", args)
		}
	}
}

// TestMakeMirror: a mirror laid out from fetched corpora serves a fetch
// into an empty directory that ends with the same files; a damaged corpus
// file is not mirrored.
func TestMakeMirror(t *testing.T) {
	m := makeMirror(t, "", true)
	out := filepath.Join(t.TempDir(), "data")
	if err := Fetch(context.Background(), Options{Out: out, Base: m.dir}, m.files); err != nil {
		t.Fatal(err)
	}
	mirrorDir := filepath.Join(t.TempDir(), "mirror")
	if err := MakeMirror(Options{Out: out, MakeMirror: mirrorDir}, m.files); err != nil {
		t.Fatal(err)
	}
	again := filepath.Join(t.TempDir(), "data")
	if err := Fetch(context.Background(), Options{Out: again, Base: "file://" + filepath.ToSlash(mirrorDir)}, m.files); err != nil {
		t.Fatal(err)
	}
	checkOut(t, m, again)

	// One byte of a fetched file changed: the mirror is refused, naming it.
	f := m.files[0]
	p := filepath.Join(out, filepath.FromSlash(f.Dest))
	writeFile(t, p, gzipBytes(t, append([]byte("x"), m.content[f.Dest]...)))
	err := MakeMirror(Options{Out: out, MakeMirror: filepath.Join(t.TempDir(), "m2")}, m.files)
	if err == nil || !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), "not mirrored") {
		t.Fatalf("MakeMirror over a damaged file: %v", err)
	}
}

func gzipBytes(t *testing.T, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}
