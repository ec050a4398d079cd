// Command getdata downloads the corpora that dualcrf's tests, benchmarks
// and paper figures read, and lays them out as they expect (data/README.md):
//
//	go run ./scripts/getdata -o data
//	DUALCRF_DATA=data go test ./...
//
// Each file is taken from its public source (GitHub's raw file server:
// NLTK's data packages, the UD English EWT release r2.16, the OCR letters
// as published with Le Priol et al.'s code), extracted from its zip when
// it comes in one, checked against the sha256 of its content recorded
// here, and written gzip-compressed (the treebank zip as downloaded) to a
// temporary file renamed into place. A file already present whose content
// checks is not downloaded again; one whose content differs is an error
// (nothing is overwritten). -mirror replaces https://raw.githubusercontent.com
// by another server, or by a directory (file:// URL or path) laid out the
// same way.
package main

import (
	"archive/zip"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
)

// DefaultBase is the server the sources' paths are relative to.
const DefaultBase = "https://raw.githubusercontent.com"

// MirrorEnv names the environment variable that sets -mirror's default.
const MirrorEnv = "DUALCRF_DATA_MIRROR"

// File is one file of the corpora: where it goes, where it comes from and
// what its content must be.
type File struct {
	Dest   string // path under the output directory, slash-separated: "conll2000/train.txt.gz"
	Source string // path under the base URL: "nltk/nltk_data/<commit>/packages/corpora/conll2000.zip"
	Member string // the zip member to extract from Source; "" for Source itself
	Raw    bool   // written as downloaded (a zip kept whole); else gzip-compressed
	SHA256 string // of the content: uncompressed, or as downloaded when Raw
}

// Corpus returns the corpus a file belongs to: the first element of Dest.
func (f File) Corpus() string { return strings.SplitN(f.Dest, "/", 2)[0] }

const (
	nltk = "nltk/nltk_data/5db857e6f7df11eabb5e5665836db9ec8df07e28/packages/corpora/"
	ewt  = "UniversalDependencies/UD_English-EWT/r2.16/"
	ocr  = "remilepriol/sdca4crf/3e95ac2919a08e7b93bb0b1dac9e42e37e001a4d/data/ocr/"
)

// Manifest lists the files of the corpora, with the sha256 of their
// content as published (data/README.md gives the same figures).
var Manifest = []File{
	{Dest: "conll2000/train.txt.gz", Source: nltk + "conll2000.zip", Member: "conll2000/train.txt",
		SHA256: "82033cd7a72b209923a98007793e8f9de3abc1c8b79d646c50648eb949b87cea"},
	{Dest: "conll2000/test.txt.gz", Source: nltk + "conll2000.zip", Member: "conll2000/test.txt",
		SHA256: "73b7b1e565fa75a1e22fe52ecdf41b6624d6f59dacb591d44252bf4d692b1628"},
	{Dest: "conll2000/README.gz", Source: nltk + "conll2000.zip", Member: "conll2000/README",
		SHA256: "80395a26ff3d67e162d8c5ed4a7b9e71f8838677da04be57eeb8497b0d047633"},
	{Dest: "conll2002/ned.train.gz", Source: nltk + "conll2002.zip", Member: "conll2002/ned.train",
		SHA256: "0a419dcb356b62c8cff38515675550b3d5dbea9f45a1c4956328dbd5cc7fcdbc"},
	{Dest: "conll2002/ned.testa.gz", Source: nltk + "conll2002.zip", Member: "conll2002/ned.testa",
		SHA256: "51259d4bfe52462f211d3d0b67173a7ecbfa296e199f6c6bd0895f4c78155057"},
	{Dest: "conll2002/ned.testb.gz", Source: nltk + "conll2002.zip", Member: "conll2002/ned.testb",
		SHA256: "2aa748edb82e6f9c4d82e57a4bed69ded18cfa4803122c75070335d513517488"},
	{Dest: "conll2002/README.gz", Source: nltk + "conll2002.zip", Member: "conll2002/README",
		SHA256: "dad94e4cfac29a8cb2c73eccdc8c43d676b6b51c69266935846f5a397243c793"},
	{Dest: "ud_english_ewt/en_ewt-ud-train.conllu.gz", Source: ewt + "en_ewt-ud-train.conllu",
		SHA256: "3fb78e2b55482c8ee00caa653af436c88c9e5bc9a73ce26e4ae3ddc79d2b7e7b"},
	{Dest: "ud_english_ewt/en_ewt-ud-dev.conllu.gz", Source: ewt + "en_ewt-ud-dev.conllu",
		SHA256: "531a54ff90d6ab12201c5a50c3e78e6ddac4de69abc4bce5d275d3cd29efe2b6"},
	{Dest: "ud_english_ewt/en_ewt-ud-test.conllu.gz", Source: ewt + "en_ewt-ud-test.conllu",
		SHA256: "e266e515a0a7547657ed3d90d9ba46487d6bd251f27ad4269d4e8a427c8555cd"},
	{Dest: "ud_english_ewt/LICENSE.txt.gz", Source: ewt + "LICENSE.txt",
		SHA256: "b3d1b0f4c6ae151f7eb78738f46ebd5ee140f8a7f76501ba26af123140d35ae7"},
	{Dest: "ud_english_ewt/README.md.gz", Source: ewt + "README.md",
		SHA256: "099677d6938869b4e855e6ec6548fc24ffeb5fce90e1cd985847f7049664f29e"},
	{Dest: "ud_english_ewt/stats.xml.gz", Source: ewt + "stats.xml",
		SHA256: "1e1e44c4f97b181fc775b42f819895955db4bbda0eaabee01cb590ccf00e89b4"},
	{Dest: "treebank/treebank.zip", Source: nltk + "treebank.zip", Raw: true,
		SHA256: "9da92d76c3666cfb6cddeaed0f7e86b344cce0f0928a286d439e555f19c37399"},
	{Dest: "ocr/letter.data.gz", Source: ocr + "letter.data.tsv",
		SHA256: "535363d0b7bc34246b1f8731719540f526b6807b12dda5d430d011d160bc7882"},
	{Dest: "ocr/letter.names.gz", Source: ocr + "letter.names.txt",
		SHA256: "21270007b5d73ce65fda788b3b8c3df6a09056d39e850275b6ee7d91903b66f4"},
}

// Options are getdata's settings.
type Options struct {
	Out     string   // the output directory
	Base    string   // the URL (http, https, file) or directory the Sources are under
	Corpora []string // the corpora to fetch; nil for all
	Client  *http.Client
	Log     io.Writer // one line per file
	// MakeMirror, when set, is a directory to lay out as a mirror of the
	// sources from the corpora in Out (each checked first) instead of
	// fetching: a machine without the internet then fetches from a copy of
	// it with -mirror.
	MakeMirror string
}

func main() {
	if err := run(context.Background(), os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "getdata:", err)
		os.Exit(1)
	}
}

// run is the command without the exit: flags, then Fetch of the Manifest.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	opts, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}
	opts.Log = stdout
	if opts.MakeMirror != "" {
		return MakeMirror(opts, Manifest)
	}
	return Fetch(ctx, opts, Manifest)
}

// parseFlags reads the command line into Options.
func parseFlags(args []string, stderr io.Writer) (Options, error) {
	fs := flag.NewFlagSet("getdata", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var opts Options
	fs.StringVar(&opts.Out, "o", "data", "output directory")
	mirror := os.Getenv(MirrorEnv)
	if mirror == "" {
		mirror = DefaultBase
	}
	fs.StringVar(&opts.Base, "mirror", mirror, "base URL or directory replacing "+DefaultBase+" (default $"+MirrorEnv+")")
	fs.StringVar(&opts.MakeMirror, "make-mirror", "", "instead of fetching, lay out a mirror of the sources in this directory from the corpora in -o (checked first), for machines without the internet")
	corpora := fs.String("corpora", "", "comma-separated corpora to fetch (default all): "+strings.Join(corpusNames(Manifest), ","))
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: go run ./scripts/getdata [-o dir] [-mirror url] [-corpora list]\n"+
			"       go run ./scripts/getdata [-o dir] [-corpora list] -make-mirror mirrordir\n\n"+
			"Downloads the corpora (data/README.md: sources, terms, sha256) into dir, checking each file;\n"+
			"or lays out a mirror of their sources from dir, for -mirror on another machine.\n\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return opts, err
	}
	if fs.NArg() > 0 {
		return opts, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	known := corpusNames(Manifest)
	if *corpora != "" {
		for _, c := range strings.Split(*corpora, ",") {
			if !slices.Contains(known, c) {
				return opts, fmt.Errorf("-corpora: unknown corpus %q (known: %s)", c, strings.Join(known, ", "))
			}
			opts.Corpora = append(opts.Corpora, c)
		}
	}
	return opts, nil
}

// corpusNames returns the corpora of files, in order of first appearance.
func corpusNames(files []File) []string {
	var names []string
	for _, f := range files {
		if !slices.Contains(names, f.Corpus()) {
			names = append(names, f.Corpus())
		}
	}
	return names
}

// Fetch brings every file of files (of opts.Corpora, when set) into
// opts.Out: a file present with the right content is kept, one with
// another content is an error, a missing one is downloaded (each Source
// once), checked and written atomically. It goes on after a failed file
// and returns all the errors.
func Fetch(ctx context.Context, opts Options, files []File) error {
	if opts.Client == nil {
		opts.Client = http.DefaultClient
	}
	if opts.Log == nil {
		opts.Log = io.Discard
	}
	var errs []error
	downloads := map[string][]byte{} // source → its bytes, each downloaded once
	failed := map[string]error{}     // source → why its download failed, not tried again
	for _, f := range files {
		if opts.Corpora != nil && !slices.Contains(opts.Corpora, f.Corpus()) {
			continue
		}
		dest := filepath.Join(opts.Out, filepath.FromSlash(f.Dest))
		got, err := ContentSHA256(dest, f.Raw)
		switch {
		case err == nil && got == f.SHA256:
			fmt.Fprintf(opts.Log, "%s: present, sha256 checks\n", dest)
			continue
		case err == nil:
			errs = append(errs, fmt.Errorf("%s is present with sha256 %s, expected %s: remove it to fetch it again", dest, got, f.SHA256))
			continue
		case !errors.Is(err, os.ErrNotExist):
			errs = append(errs, fmt.Errorf("%s is present but unreadable (%w): remove it to fetch it again", dest, err))
			continue
		}
		src := join(opts.Base, f.Source)
		if err := failed[src]; err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", dest, err))
			continue
		}
		body, ok := downloads[src]
		if !ok {
			if body, err = download(ctx, opts.Client, src); err != nil {
				failed[src] = err
				errs = append(errs, fmt.Errorf("%s: %w", dest, err))
				continue
			}
			downloads[src] = body
		}
		content, from := body, src
		if f.Member != "" {
			if content, err = zipMember(body, f.Member); err != nil {
				errs = append(errs, fmt.Errorf("%s: %s: %w", dest, src, err))
				continue
			}
			from = src + " (" + f.Member + ")"
		}
		if got := sum(content); got != f.SHA256 {
			errs = append(errs, fmt.Errorf("%s: the content of %s has sha256 %s, expected %s: not written", dest, from, got, f.SHA256))
			continue
		}
		if err := writeAtomic(dest, content, f.Raw); err != nil {
			errs = append(errs, err)
			continue
		}
		fmt.Fprintf(opts.Log, "%s: fetched from %s, sha256 checks\n", dest, from)
	}
	return errors.Join(errs...)
}

// MakeMirror lays out opts.MakeMirror as the server holds the sources of
// files (of opts.Corpora, when set), from the corpora in opts.Out: each
// file's content is checked against its sha256 first, a source that is a
// zip is rebuilt holding the members the files take from it (the zip's
// own bytes differ from the published one; Fetch checks members by their
// content), and every file is written atomically. Fetch with -mirror
// pointing at the directory then gives files equal to those in opts.Out.
func MakeMirror(opts Options, files []File) error {
	if opts.Log == nil {
		opts.Log = io.Discard
	}
	zips := map[string]map[string][]byte{} // Source → member → content
	var order []string
	for _, f := range files {
		if opts.Corpora != nil && !slices.Contains(opts.Corpora, f.Corpus()) {
			continue
		}
		from := filepath.Join(opts.Out, filepath.FromSlash(f.Dest))
		content, err := contentOf(from, f.Raw)
		if err != nil {
			return fmt.Errorf("%s: %w", from, err)
		}
		if got := sum(content); got != f.SHA256 {
			return fmt.Errorf("%s has sha256 %s, expected %s: not mirrored", from, got, f.SHA256)
		}
		if f.Member == "" {
			if err := writeAtomic(filepath.Join(opts.MakeMirror, filepath.FromSlash(f.Source)), content, true); err != nil {
				return err
			}
			continue
		}
		if zips[f.Source] == nil {
			zips[f.Source] = map[string][]byte{}
			order = append(order, f.Source)
		}
		zips[f.Source][f.Member] = content
	}
	for _, src := range order {
		var buf bytes.Buffer
		zw := zip.NewWriter(&buf)
		members := zips[src]
		names := make([]string, 0, len(members))
		for n := range members {
			names = append(names, n)
		}
		slices.Sort(names)
		for _, n := range names {
			w, err := zw.Create(n)
			if err == nil {
				_, err = w.Write(members[n])
			}
			if err != nil {
				return fmt.Errorf("mirror %s: %w", src, err)
			}
		}
		if err := zw.Close(); err != nil {
			return fmt.Errorf("mirror %s: %w", src, err)
		}
		if err := writeAtomic(filepath.Join(opts.MakeMirror, filepath.FromSlash(src)), buf.Bytes(), true); err != nil {
			return err
		}
	}
	fmt.Fprintf(opts.Log, "mirror of %s laid out in %s: fetch from it with -mirror %s\n", opts.Out, opts.MakeMirror, opts.MakeMirror)
	return nil
}

// contentOf returns the content of the file at p: as stored when raw,
// else gzip-decompressed.
func contentOf(p string, raw bool) ([]byte, error) {
	b, err := os.ReadFile(p)
	if err != nil || raw {
		return b, err
	}
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("not gzip: %w", err)
	}
	defer zr.Close()
	return io.ReadAll(zr)
}

// join returns the location of rel under base, a URL or a directory.
func join(base, rel string) string {
	return strings.TrimRight(base, "/") + "/" + rel
}

// download reads loc: an http(s) URL, a file URL or a local path.
func download(ctx context.Context, client *http.Client, loc string) ([]byte, error) {
	u, err := url.Parse(loc)
	if err == nil && (u.Scheme == "http" || u.Scheme == "https") {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, loc, nil)
		if err != nil {
			return nil, err
		}
		req.Header.Set("User-Agent", "dualcrf-getdata")
		resp, err := client.Do(req)
		if err != nil {
			return nil, err
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return nil, fmt.Errorf("GET %s: %s", loc, resp.Status)
		}
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			return nil, fmt.Errorf("GET %s: %w", loc, err)
		}
		return b, nil
	}
	p := loc
	if err == nil && u.Scheme == "file" {
		p = filepath.FromSlash(u.Path)
		if len(p) > 2 && p[0] == '\\' && p[2] == ':' { // file:///C:/x on Windows
			p = p[1:]
		}
	}
	return os.ReadFile(p)
}

// zipMember returns the content of the member name of the zip archive b.
func zipMember(b []byte, name string) ([]byte, error) {
	zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		return nil, fmt.Errorf("not a zip archive: %w", err)
	}
	for _, zf := range zr.File {
		if zf.Name != name {
			continue
		}
		rc, err := zf.Open()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		defer rc.Close()
		c, err := io.ReadAll(rc)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		return c, nil
	}
	return nil, fmt.Errorf("no member %s in the zip archive", name)
}

// ContentSHA256 returns the hex sha256 of the content of the file at p:
// as stored when raw, else of its gzip-decompressed bytes.
func ContentSHA256(p string, raw bool) (string, error) {
	f, err := os.Open(p)
	if err != nil {
		return "", err
	}
	defer f.Close()
	var r io.Reader = f
	if !raw {
		zr, err := gzip.NewReader(f)
		if err != nil {
			return "", fmt.Errorf("not gzip: %w", err)
		}
		defer zr.Close()
		r = zr
	}
	h := sha256.New()
	if _, err := io.Copy(h, r); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// sum is the hex sha256 of b.
func sum(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// writeAtomic writes content (gzip-compressed unless raw) to a temporary
// file beside dest and renames it to dest; on failure nothing is left.
func writeAtomic(dest string, content []byte, raw bool) (err error) {
	dir := filepath.Dir(dest)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, "."+path.Base(filepath.ToSlash(dest))+".tmp-*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
			err = fmt.Errorf("writing %s: %w", dest, err)
		}
	}()
	if raw {
		_, err = tmp.Write(content)
	} else {
		var zw *gzip.Writer
		if zw, err = gzip.NewWriterLevel(tmp, gzip.DefaultCompression); err != nil {
			return err
		}
		if _, err = zw.Write(content); err != nil {
			return err
		}
		err = zw.Close()
	}
	if err != nil {
		return err
	}
	if err = tmp.Chmod(0o644); err != nil {
		return err
	}
	if err = tmp.Sync(); err != nil {
		return err
	}
	if err = tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), dest)
}
