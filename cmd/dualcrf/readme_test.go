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
// of README.md, in order, in one shell, from the root of a fresh copy of
// the repository whose parent holds shared/data (so the README's
// ../shared/data resolves), with the dualcrf that `go install ./cmd/dualcrf`
// puts on PATH. Blocks marked ```sh dev (commands for the repository
// itself, such as go test), ```sh root (installing system files), ```crontab
// and blocks in other languages (Python, SQL, Go: stage's Example runs that one) are
// not run. It takes minutes (CoNLL-2000 is trained three times), so it runs only
// with -readme (.ci/run passes it):
//
//	go test ./cmd/dualcrf -run TestREADME -readme -v

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
	switch info {
	case "sh":
		return true, true
	case "sh dev", "sh root", "crontab", "python", "sql", "go":
		return false, true
	}
	return false, false
}

// readmeText reads the repository's README.md.
func readmeText(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestREADMEBlocks checks, quickly, what TestREADME relies on: the README's
// fences pair up, every block is marked as run (sh) or as not run (sh dev,
// python, sql), and the run blocks call dualcrf and not the test suite.
func TestREADMEBlocks(t *testing.T) {
	blocks, err := readmeBlocks(readmeText(t))
	if err != nil {
		t.Fatalf("README.md: %v", err)
	}
	runs := 0
	for _, b := range blocks {
		run, known := readmeRunnable(b.info)
		if !known {
			t.Errorf("README.md:%d: block marked %q: mark it sh (run by TestREADME), sh dev, sh root, crontab, python, sql or go", b.line, b.info)
		}
		if !run {
			continue
		}
		runs++
		if strings.Contains(b.text, "go test") || strings.Contains(b.text, ".ci/run") {
			t.Errorf("README.md:%d: a run block calls the test suite; mark it sh dev", b.line)
		}
	}
	if runs < 3 {
		t.Errorf("README.md has %d sh blocks to run; want the pipeline, CRFsuite and long-job examples", runs)
	}
}

// TestREADME runs the README's sh blocks (see the top of this file).
func TestREADME(t *testing.T) {
	if !*readme {
		t.Skip("runs with -readme: go test ./cmd/dualcrf -run TestREADME -readme (minutes)")
	}
	blocks, err := readmeBlocks(readmeText(t))
	if err != nil {
		t.Fatalf("README.md: %v", err)
	}
	data := datatest.Dir(t) // the README's examples read the shared data
	tmp := t.TempDir()
	clone := filepath.Join(tmp, "dualcrf")
	copyTracked(t, abs(t, filepath.Join("..", "..")), clone)
	if err := os.MkdirAll(filepath.Join(tmp, "shared"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(data, filepath.Join(tmp, "shared", "data")); err != nil {
		t.Fatal(err)
	}
	gobin := filepath.Join(tmp, "bin")
	env := readmeEnv(gobin)
	install := exec.Command("go", "install", "./cmd/dualcrf")
	install.Dir, install.Env = clone, append(env, "GOBIN="+gobin)
	if out, err := install.CombinedOutput(); err != nil {
		t.Fatalf("go install ./cmd/dualcrf (the README's install line): %v\n%s", err, out)
	}

	var script strings.Builder
	script.WriteString("set -Eeuo pipefail\nreadme_line=0\n")
	script.WriteString(`trap '{ rc=$? cmd=$BASH_COMMAND; set +x; } 2>/dev/null; ` +
		`echo "README.md:$readme_line: the sh block starting there failed: \"$cmd\" exited with status $rc" >&2' ERR` + "\n")
	script.WriteString("PS4='+ README.md:$readme_line: '\nset -x\n")
	n := 0
	for _, b := range blocks {
		if run, _ := readmeRunnable(b.info); run {
			fmt.Fprintf(&script, "readme_line=%d\n%s", b.line, b.text)
			n++
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
	t.Logf("%d sh blocks of README.md ran in %.0f s", n, time.Since(t0).Seconds())
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
// default ../shared/data is what is tried.
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
