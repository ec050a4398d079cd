package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/dualcrf/dualcrf/internal/datatest"
)

// The README's examples are run as a user would run them: every ```sh block
// of README.md and then of the docs pages that continue it (readmeDocs), in
// order, in one shell, from the root of a fresh copy of the repository, with
// the dualcrf that `go install ./cmd/dualcrf` puts on PATH. The README's own
// `go run ./scripts/getdata` fetches the corpora into the copy's data/ — from
// a mirror laid out from the test's corpora (getdata -make-mirror, through
// DUALCRF_DATA_MIRROR), as no network is at hand — so nothing but the clone
// and that command is assumed. Blocks marked ```sh dev
// (commands for the repository itself, such as go test), ```sh example:
// REASON (an example to read, with the reason it is not run: it needs a
// tool CI does not have, or trains for many minutes, or is the record of a
// measurement), ```sh root (installing system files), ```crontab and blocks
// in other languages (Python, SQL, Go: stage's Example runs that one) are
// not run. It
// takes minutes (CoNLL-2000 is trained several times), so it runs only with
// -readme (.ci/run passes it):
//
//	go test ./cmd/dualcrf -run TestREADME -readme -v

// readmeDocs are the pages whose sh blocks TestREADME runs, in this order:
// the README first, then the docs pages whose examples use the files the
// README's examples made.
var readmeDocs = []string{"README.md", "docs/decoding.md", "docs/explain.md", "docs/plots.md", "docs/checkpoints.md", "docs/corpora.md", "docs/long-runs.md", "docs/run.md", "docs/lake.md"}

// readme enables TestREADME.
var readme = flag.Bool("readme", false, "run README.md's sh blocks in a fresh copy of the repository (TestREADME; minutes)")

// readmeBlock is one fenced code block of a Markdown file.
type readmeBlock struct {
	line int    // 1-based line of the opening fence
	info string // the info string after ```: "sh", "sh dev", "python", …
	text string // the lines between the fences
}

// readmeFence matches an opening or closing fence at the start of a line.
var readmeFence = regexp.MustCompile("^```(.*)$")

// readmeBlocks returns the fenced code blocks of a Markdown text.
func readmeBlocks(md string) ([]readmeBlock, error) {
	var blocks []readmeBlock
	var cur *readmeBlock
	var body strings.Builder
	for i, l := range strings.Split(md, "\n") {
		m := readmeFence.FindStringSubmatch(l)
		switch {
		case m == nil && cur != nil:
			body.WriteString(l + "\n")
		case m == nil:
		case cur == nil:
			cur = &readmeBlock{line: i + 1, info: strings.TrimSpace(m[1])}
			body.Reset()
		case strings.TrimSpace(m[1]) != "":
			return nil, fmt.Errorf("line %d: a fence opens inside the block of line %d", i+1, cur.line)
		default:
			cur.text = body.String()
			blocks = append(blocks, *cur)
			cur = nil
		}
	}
	if cur != nil {
		return nil, fmt.Errorf("line %d: the block is not closed", cur.line)
	}
	return blocks, nil
}

// readmeRunnable says whether TestREADME runs a block with this info string;
// known is false for an info string it does not know, which TestREADMEBlocks
// refuses, so that no block escapes the check by a typo.
func readmeRunnable(info string) (run, known bool) {
	if reason, ok := strings.CutPrefix(info, "sh example:"); ok {
		return false, strings.TrimSpace(reason) != ""
	}
	switch info {
	case "sh":
		return true, true
	case "", "sh dev", "sh root", "crontab", "python", "sql", "go", "yaml", "json", "text":
		return false, true
	}
	return false, false
}

// readmeText reads a Markdown page of the repository (a path relative to
// its root, with slashes).
func readmeText(t *testing.T, page string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", filepath.FromSlash(page)))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// repoPages lists the Markdown pages of the repository: README.md and every
// .md file under docs/, data/ and experiments/.
func repoPages(t *testing.T) []string {
	t.Helper()
	pages := []string{"README.md"}
	for _, dir := range []string{"docs", "data", "experiments"} {
		err := filepath.WalkDir(filepath.Join("..", "..", dir), func(path string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".md") {
				return err
			}
			rel, err := filepath.Rel(filepath.Join("..", ".."), path)
			pages = append(pages, filepath.ToSlash(rel))
			return err
		})
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
	}
	return pages
}

// TestREADMEBlocks checks, quickly, what TestREADME relies on: every page's
// fences pair up, every block is marked as run (sh) or as not run (sh dev,
// python, sql, …), only the pages of readmeDocs have blocks to run, and the
// run blocks call dualcrf and not the test suite.
func TestREADMEBlocks(t *testing.T) {
	listed := map[string]bool{}
	for _, p := range readmeDocs {
		listed[p] = true
	}
	runs := 0
	for _, page := range repoPages(t) {
		blocks, err := readmeBlocks(readmeText(t, page))
		if err != nil {
			t.Fatalf("%s: %v", page, err)
		}
		for _, b := range blocks {
			run, known := readmeRunnable(b.info)
			if !known {
				t.Errorf("%s:%d: block marked %q: mark it sh (run by TestREADME), sh example: REASON (not run, and why), sh dev, sh root, crontab, python, sql, go, yaml, json or text", page, b.line, b.info)
			}
			if !run {
				continue
			}
			runs++
			if !listed[page] {
				t.Errorf("%s:%d: a block to run on a page TestREADME does not run: add the page to readmeDocs or mark the block sh example: REASON", page, b.line)
			}
			if strings.Contains(b.text, "go test") || strings.Contains(b.text, ".ci/run") {
				t.Errorf("%s:%d: a run block calls the test suite; mark it sh dev", page, b.line)
			}
		}
	}
	if runs < 5 {
		t.Errorf("%d sh blocks to run; want the quickstart, plain text, own data, long-run and job examples", runs)
	}
}

// TestREADME runs the README's sh blocks (see the top of this file).
func TestREADME(t *testing.T) {
	if !*readme {
		t.Skip("runs with -readme: go test ./cmd/dualcrf -run TestREADME -readme (minutes)")
	}
	data := datatest.Dir(t) // the README's examples read the shared data
	tmp := t.TempDir()
	clone := filepath.Join(tmp, "dualcrf")
	copyTracked(t, abs(t, filepath.Join("..", "..")), clone)
	gobin := filepath.Join(tmp, "bin")
	mirror := filepath.Join(tmp, "mirror")
	env := append(readmeEnv(gobin), "DUALCRF_DATA_MIRROR="+mirror)
	mk := exec.Command("go", "run", "./scripts/getdata", "-o", data, "-make-mirror", mirror)
	mk.Dir, mk.Env = clone, env
	if out, err := mk.CombinedOutput(); err != nil {
		t.Fatalf("getdata -make-mirror (the mirror the README's fetch reads): %v\n%s", err, out)
	}
	install := exec.Command("go", "install", "./cmd/dualcrf")
	install.Dir, install.Env = clone, append(env, "GOBIN="+gobin)
	if out, err := install.CombinedOutput(); err != nil {
		t.Fatalf("go install ./cmd/dualcrf (the README's install line): %v\n%s", err, out)
	}

	var script strings.Builder
	script.WriteString("set -Eeuo pipefail\nreadme_at=README.md:0\n")
	script.WriteString(`trap '{ rc=$? cmd=$BASH_COMMAND; set +x; } 2>/dev/null; ` +
		`echo "$readme_at: the sh block starting there failed: \"$cmd\" exited with status $rc" >&2' ERR` + "\n")
	script.WriteString("PS4='+ $readme_at: '\nset -x\n")
	n := 0
	for _, page := range readmeDocs {
		blocks, err := readmeBlocks(readmeText(t, page))
		if err != nil {
			t.Fatalf("%s: %v", page, err)
		}
		for _, b := range blocks {
			if run, _ := readmeRunnable(b.info); run {
				// Each block starts at the clone's root, as its page says.
				fmt.Fprintf(&script, "readme_at=%s:%d\ncd %q\n%s", page, b.line, clone, b.text)
				n++
			}
		}
	}
	scriptPath := filepath.Join(tmp, "readme.sh")
	if err := os.WriteFile(scriptPath, []byte(script.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	logPath := filepath.Join(tmp, "readme.log")
	log, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	cmd := exec.Command("bash", scriptPath)
	cmd.Dir, cmd.Env, cmd.Stdout, cmd.Stderr = clone, env, log, log
	t0 := time.Now()
	err = cmd.Run()
	t.Logf("%d sh blocks of %s ran in %.0f s", n, strings.Join(readmeDocs, ", "), time.Since(t0).Seconds())
	out, _ := os.ReadFile(logPath)
	if err != nil {
		failed := ""
		for _, l := range strings.Split(string(out), "\n") {
			if strings.Contains(l, "the sh block starting there failed") {
				failed = l
			}
		}
		t.Fatalf("%s\n(bash: %v)\nthe run's output, last 40 lines:\n%s", failed, err, lastLines(string(out), 40))
	}
	if testing.Verbose() {
		t.Logf("the run's output:\n%s", out)
	}
}

// readmeEnv is the environment of the README's commands: the test's, with
// gobin first on PATH and without DUALCRF_DATA, so that the README's
// default data/ (which its getdata block fills) is what is read.
func readmeEnv(gobin string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "DUALCRF_DATA=") && !strings.HasPrefix(kv, "PATH=") {
			env = append(env, kv)
		}
	}
	return append(env, "PATH="+gobin+string(os.PathListSeparator)+os.Getenv("PATH"))
}

// copyTracked copies the files git tracks in the repository at root (as
// they are in the working tree) to dst: what a fresh clone holds, with the
// uncommitted edits of tracked files.
func copyTracked(t *testing.T, root, dst string) {
	t.Helper()
	ls := exec.Command("git", "ls-files", "-z")
	ls.Dir = root
	out, err := ls.Output()
	if err != nil {
		t.Fatalf("git ls-files in %s: %v", root, err)
	}
	for _, name := range strings.Split(strings.TrimRight(string(out), "\x00"), "\x00") {
		src := filepath.Join(root, name)
		info, err := os.Lstat(src)
		if os.IsNotExist(err) {
			continue // deleted in the working tree
		} else if err != nil {
			t.Fatal(err)
		}
		to := filepath.Join(dst, name)
		if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
			t.Fatal(err)
		}
		if info.Mode()&os.ModeSymlink != 0 {
			target, err := os.Readlink(src)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(target, to); err != nil {
				t.Fatal(err)
			}
			continue
		}
		b, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(to, b, info.Mode().Perm()); err != nil {
			t.Fatal(err)
		}
	}
}

// lastLines returns the last n lines of s.
func lastLines(s string, n int) string {
	var lines []string
	sc := bufio.NewScanner(strings.NewReader(s))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		lines = append(lines, sc.Text())
		if len(lines) > n {
			lines = lines[1:]
		}
	}
	return strings.Join(lines, "\n")
}

// docLink matches a Markdown link or image target: [text](target) or
// ![alt](target).
var docLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// TestDocLinks: every relative link of README.md and the docs pages names
// a file or directory of the repository, and an anchor-only link (#x) a
// heading of its own page, so that a reader who follows one lands somewhere.
func TestDocLinks(t *testing.T) {
	root := filepath.Join("..", "..")
	for _, page := range repoPages(t) {
		text := readmeText(t, page)
		anchors := map[string]bool{}
		for _, l := range strings.Split(text, "\n") {
			if strings.HasPrefix(l, "#") {
				anchors[headingAnchor(strings.TrimLeft(l, "# "))] = true
			}
		}
		for _, m := range docLink.FindAllStringSubmatch(text, -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			if strings.HasPrefix(target, "#") {
				if !anchors[target[1:]] {
					t.Errorf("%s: link %s: no such heading on the page", page, target)
				}
				continue
			}
			target, _, _ = strings.Cut(target, "#")
			p := filepath.Join(root, filepath.Dir(filepath.FromSlash(page)), filepath.FromSlash(target))
			if _, err := os.Stat(p); err != nil {
				t.Errorf("%s: link %s: %v", page, m[1], err)
			}
		}
	}
}

// headingAnchor is the anchor GitHub gives a heading: lower case, spaces
// to hyphens, punctuation other than hyphens and underscores dropped.
func headingAnchor(h string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(h)) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r > 127:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// readmeGoImports are the imports the README's Go block may use.
var readmeGoImports = []string{"bytes", "context", "fmt", "os", "github.com/dualcrf/dualcrf/stage"}

// TestREADMEGo builds the README's Go block as the body of a function
// returning an error, and runs it on the embedded CoNLL-2000 slice (copied
// as train.txt.gz and test.txt.gz, the names the block reads): the code a
// reader copies compiles against today's API and does what it says.
func TestREADMEGo(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a program (-short)")
	}
	blocks, err := readmeBlocks(readmeText(t, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	var code string
	for _, b := range blocks {
		if b.info == "go" {
			code = b.text
		}
	}
	if code == "" {
		t.Fatal("README.md has no go block")
	}
	root := abs(t, filepath.Join("..", ".."))
	src, err := os.MkdirTemp(root, ".readme-go-") // inside the module, hidden from ./...
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(src) })
	var prog strings.Builder
	prog.WriteString("package main\n\nimport (\n")
	for _, imp := range readmeGoImports {
		fmt.Fprintf(&prog, "\t%q\n", imp)
	}
	prog.WriteString(")\n\nvar _ = bytes.MinRead\nvar _ = fmt.Sprint\n\n" +
		"func main() {\n\tif err := run(); err != nil {\n\t\tfmt.Fprintln(os.Stderr, err)\n\t\tos.Exit(1)\n\t}\n}\n\n" +
		"func run() error {\n" + code + "\treturn nil\n}\n")
	if err := os.WriteFile(filepath.Join(src, "main.go"), []byte(prog.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	exe := filepath.Join(work, "readme-go")
	build := exec.Command("go", "build", "-o", exe, "./"+filepath.Base(src))
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("the README's Go block does not build: %v\n%s\n%s", err, out, prog.String())
	}
	for _, name := range []string{"train.txt.gz", "test.txt.gz"} {
		b, err := demoData.ReadFile("demodata/" + name)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(work, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	run := exec.Command(exe)
	run.Dir = work
	out, err := run.CombinedOutput()
	if err != nil || !regexp.MustCompile(`^gap \d\.\de-0[4-9] after \d+ epochs; accuracy 9\d\.\d\d%\n$`).Match(out) {
		t.Fatalf("the README's Go block ran: %v\n%s", err, out)
	}
	t.Logf("the README's Go block printed: %s", out)
}

// docHeadings returns the headings of a Markdown page outside its code
// blocks, with their lines.
func docHeadings(md string) (heads []string, lines []int) {
	fenced := false
	for i, l := range strings.Split(md, "\n") {
		if strings.HasPrefix(l, "```") {
			fenced = !fenced
			continue
		}
		if !fenced && strings.HasPrefix(l, "#") {
			heads = append(heads, strings.TrimSpace(l))
			lines = append(lines, i+1)
		}
	}
	return heads, lines
}

// TestDocHeadings: no page holds a heading twice. A section pasted twice
// is the usual cause, and the two copies drift apart; a link to the second
// lands on the first.
func TestDocHeadings(t *testing.T) {
	for _, page := range repoPages(t) {
		heads, lines := docHeadings(readmeText(t, page))
		first := map[string]int{}
		for i, h := range heads {
			if l, ok := first[h]; ok {
				t.Errorf("%s:%d: %q again (first at line %d)", page, lines[i], h, l)
				continue
			}
			first[h] = lines[i]
		}
	}
}

// docProcessWords match words about how a page was made rather than about
// the product: who asked for a design or suggested it, what else was
// running while a figure was taken, the first person telling its story, the
// headings of a task list. A figure needs the machine, its load and the
// command; the rest is not the reader's business.
var docProcessWords = []*regexp.Regexp{
	regexp.MustCompile(`(?i)\bsessions?\b`),
	regexp.MustCompile(`(?i)\b(the|a) (brief|lead)\b`),
	regexp.MustCompile(`(?i)\breview(er|ers)\b`),
	regexp.MustCompile(`(?i)\bsuggest(ed|ion|s)?\b`),
	regexp.MustCompile(`(?i)\bother (jobs|runs|sessions|processes|builds)\b`),
	regexp.MustCompile(`(?i)\b(at the request|as asked|were asked|was asked)\b`),
	regexp.MustCompile(`(?i)\bissue ?#?[0-9]+`),
	regexp.MustCompile(`(?i)\bmust show\b`),
	regexp.MustCompile(`(^|[\s(])I (first|tried|measured|chose|drew|ran|found|think|kept|used|moved|took)\b`),
	regexp.MustCompile(`(?i)\bwe (first|tried|chose|measured|found|ran|were)\b`),
}

// TestDocWords: the pages speak about the product (docProcessWords).
func TestDocWords(t *testing.T) {
	for _, page := range repoPages(t) {
		fenced := false
		for i, l := range strings.Split(readmeText(t, page), "\n") {
			if strings.HasPrefix(l, "```") {
				fenced = !fenced
				continue
			}
			if fenced {
				continue
			}
			for _, re := range docProcessWords {
				if m := re.FindString(l); m != "" {
					t.Errorf("%s:%d: %q speaks of how the page was made, not of dualcrf: %s", page, i+1, strings.TrimSpace(m), strings.TrimSpace(l))
				}
			}
		}
	}
}

// TestDocWordsCatch: the patterns find what they are for and leave the
// product's words alone.
func TestDocWordsCatch(t *testing.T) {
	bad := []string{"measured while other sessions were running", "the brief's suggestion", "## Must show 2: convergence",
		"I first drew blocks", "load 20 (2 cores shared with six other jobs)", "as asked in issue 24"}
	good := []string{"the numeric helpers under crf", "I-PER after I-MISC", "a model trained briefly",
		"the next 2^(k−1) line searches of i are skipped", "load average 12–16, 2 cores"}
	match := func(s string) bool {
		for _, re := range docProcessWords {
			if re.MatchString(s) {
				return true
			}
		}
		return false
	}
	for _, s := range bad {
		if !match(s) {
			t.Errorf("%q is not caught", s)
		}
	}
	for _, s := range good {
		if match(s) {
			t.Errorf("%q is caught", s)
		}
	}
}
