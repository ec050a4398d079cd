package main

// End-to-end tests of the dualcrf binary: TestMain builds it once, and the
// tests run it with os/exec, connected by real pipes where a shell would
// pipe, so buffering, exit statuses and SIGPIPE behave as they do for users.

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/dualcrf/dualcrf/internal/datatest"
)

// bin is the dualcrf binary built by TestMain; binDir holds it and the
// shared fixtures.
var bin, binDir string

// TestMain builds the binary; datatest.Main runs the tests and says how many
// corpus tests were skipped for want of the corpora.
func TestMain(m *testing.M) {
	os.Exit(testMain(m))
}

func testMain(m *testing.M) int {
	dir, err := os.MkdirTemp("", "dualcrf-cli-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	binDir, bin = dir, filepath.Join(dir, "dualcrf")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "go build ./cmd/dualcrf:", err)
		return 1
	}
	return datatest.Main(m)
}

// result is what one run of the binary produced.
type result struct {
	args     []string
	stdout   []byte
	stderr   []byte
	code     int            // exit status; -1 when killed by a signal
	signal   syscall.Signal // the signal that ended it, if any
	startErr error
}

func (r result) String() string {
	return fmt.Sprintf("dualcrf %s: exit %d (signal %v)\nstderr:\n%s", strings.Join(r.args, " "), r.code, r.signal, r.stderr)
}

// command prepares a run of the binary in dir with args.
func command(dir string, args ...string) *exec.Cmd {
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	// Temporary files (spooled standard input) go to dir too, so a test
	// that wants dir empty afterwards also sees them cleaned up.
	cmd.Env = append(os.Environ(), "TMPDIR="+dir)
	return cmd
}

// finish fills r from a command that has ended with err.
func finish(r *result, cmd *exec.Cmd, err error) {
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		r.code = ee.ExitCode()
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			r.signal = ws.Signal()
		}
	default:
		r.startErr = err
		r.code = -2
	}
}

// runBinary runs the binary in dir with stdin read from the file stdin ("" =
// empty input) and returns what it wrote and its status.
func runBinary(t *testing.T, dir, stdin string, args ...string) result {
	t.Helper()
	cmd := command(dir, args...)
	if stdin != "" {
		f, err := os.Open(stdin)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		cmd.Stdin = f
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	r := result{args: args}
	finish(&r, cmd, cmd.Run())
	r.stdout, r.stderr = out.Bytes(), errb.Bytes()
	if r.startErr != nil {
		t.Fatalf("dualcrf %v: %v", args, r.startErr)
	}
	return r
}

// mustRun runs the command in process (runInProcess: in dir, which is also
// TMPDIR) and fails the test unless it succeeds. Tests of exit statuses,
// signals, SIGPIPE and terminals run the built binary (runBinary).
func mustRun(t *testing.T, dir string, args ...string) result {
	t.Helper()
	r := runInProcess(t, dir, "", args...)
	if r.code != 0 {
		t.Fatalf("%v", r)
	}
	return r
}

// shellPipe runs stages connected by OS pipes, as `a | b | c` in a shell:
// the first stage reads stdin (a file, "" = empty), the last one's output
// is returned in its result. It waits for every stage.
func shellPipe(t *testing.T, dir, stdin string, stages ...[]string) []result {
	t.Helper()
	cmds := make([]*exec.Cmd, len(stages))
	res := make([]result, len(stages))
	errbufs := make([]bytes.Buffer, len(stages))
	var parentEnds []*os.File
	for i, args := range stages {
		cmds[i] = command(dir, args...)
		cmds[i].Stderr = &errbufs[i]
		res[i].args = args
	}
	if stdin != "" {
		f, err := os.Open(stdin)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		cmds[0].Stdin = f
	}
	for i := 0; i+1 < len(cmds); i++ {
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		cmds[i].Stdout, cmds[i+1].Stdin = w, r
		parentEnds = append(parentEnds, r, w)
	}
	var last bytes.Buffer
	cmds[len(cmds)-1].Stdout = &last
	for i, c := range cmds {
		if err := c.Start(); err != nil {
			t.Fatalf("start stage %d: %v", i, err)
		}
	}
	// The children hold their own copies; the parent's must go so that
	// each reader sees end of file when its writer exits.
	for _, f := range parentEnds {
		f.Close()
	}
	for i, c := range cmds {
		finish(&res[i], c, c.Wait())
		res[i].stderr = errbufs[i].Bytes()
	}
	res[len(res)-1].stdout = last.Bytes()
	return res
}

// mustShellPipe is pipeline that fails the test unless every stage succeeds.
func mustShellPipe(t *testing.T, dir, stdin string, stages ...[]string) []result {
	t.Helper()
	res := shellPipe(t, dir, stdin, stages...)
	for _, r := range res {
		if r.code != 0 {
			t.Fatalf("%v", r)
		}
	}
	return res
}

// abs returns the absolute path of a file under the package directory.
func abs(t *testing.T, rel string) string {
	t.Helper()
	p, err := filepath.Abs(rel)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// corpus is what a CoNLL column file holds, counted directly from the text.
type corpus struct {
	sentences  int
	tokens     int
	lines      [][]string // token lines of each sentence
	labelCount map[string]int
	chunks     int // gold chunks by conlleval's rules
}

// readCorpus counts the sentences, tokens, labels (last column) and
// conlleval chunks of a CoNLL file, gzip-compressed when it ends in .gz.
func readCorpus(t *testing.T, path string) corpus {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var r io.Reader = f
	if strings.HasSuffix(path, ".gz") {
		gz, err := gzip.NewReader(f)
		if err != nil {
			t.Fatal(err)
		}
		defer gz.Close()
		r = gz
	}
	c := corpus{labelCount: map[string]int{}}
	var cur []string
	var labels []string
	flush := func() {
		if len(cur) > 0 {
			c.sentences++
			c.lines = append(c.lines, cur)
			c.chunks += countChunks(labels)
		}
		cur, labels = nil, nil
	}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := strings.TrimRight(sc.Text(), "\r")
		if strings.TrimSpace(line) == "" {
			flush()
			continue
		}
		fields := strings.Fields(line)
		cur = append(cur, line)
		labels = append(labels, fields[len(fields)-1])
		c.labelCount[fields[len(fields)-1]]++
		c.tokens++
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	flush()
	return c
}

// countChunks counts the chunks of an IOB tag sequence by conlleval's
// start-of-chunk rule: B-X, or I-X after O or after another type.
func countChunks(tags []string) int {
	n := 0
	prevTag, prevType := "O", ""
	for _, tag := range tags {
		kind, typ, _ := strings.Cut(tag, "-")
		switch {
		case kind == "B", kind == "I" && (prevTag == "O" || prevType != typ):
			n++
		}
		if kind == "O" {
			typ = ""
		}
		prevTag, prevType = kind, typ
	}
	return n
}

// stripLabels writes src without its last column to dst (text to tag).
func stripLabels(t *testing.T, src, dst string) {
	t.Helper()
	rewriteLines(t, src, dst, func(fields []string) []string { return fields[:len(fields)-1] })
}

// rewriteLines copies a CoNLL file, passing each token line's fields
// through fn.
func rewriteLines(t *testing.T, src, dst string, fn func([]string) []string) {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) > 0 {
			line = strings.Join(fn(f), " ")
		}
		out.WriteString(line)
		out.WriteByte('\n')
	}
	if err := os.WriteFile(dst, []byte(out.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// Fixtures shared by the tests: a small training table and model made from
// testdata/train150.txt and the test slice featurized with that model.
type fixtureSet struct {
	dir       string
	trainText string // testdata/train150.txt, absolute
	testText  string // testdata/test50.txt, absolute
	train     string // feature table of trainText
	model     string // model trained on train (gap ≤ 1e-2)
	test      string // feature table of testText with the model's vocabulary
	pred      string // decode of test
	err       error
	log       string
}

var (
	fixOnce sync.Once
	fix     fixtureSet
)

// fixtures builds the shared fixtures on first use.
func fixtures(t *testing.T) fixtureSet {
	t.Helper()
	fixOnce.Do(func() { fix = buildFixtures() })
	if fix.err != nil {
		t.Fatalf("fixtures: %v\n%s", fix.err, fix.log)
	}
	return fix
}

func buildFixtures() fixtureSet {
	f := fixtureSet{dir: filepath.Join(binDir, "fixtures")}
	if err := os.MkdirAll(f.dir, 0o755); err != nil {
		f.err = err
		return f
	}
	var err error
	if f.trainText, err = filepath.Abs("testdata/train150.txt"); err != nil {
		f.err = err
		return f
	}
	if f.testText, err = filepath.Abs("testdata/test50.txt"); err != nil {
		f.err = err
		return f
	}
	p := func(name string) string { return filepath.Join(f.dir, name) }
	f.train, f.model, f.test, f.pred = p("train.arrow"), p("model.arrow"), p("test.arrow"), p("pred.arrow")
	// The fixtures are made in their directory from copies of the texts,
	// with relative names, so the paths they record (dualcrf.source) and
	// so their bytes do not depend on where the tests run.
	for _, name := range []string{"train150.txt", "test50.txt"} {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err == nil {
			err = os.WriteFile(p(name), b, 0o644)
		}
		if err != nil {
			f.err = err
			return f
		}
	}
	steps := [][]string{
		{"featurize", "-o", "train.arrow", "train150.txt"},
		{"train", "-q", "--gap-tol", "1e-2", "--max-epochs", "50", "-o", "model.arrow", "train.arrow"},
		{"featurize", "--model", "model.arrow", "-o", "test.arrow", "test50.txt"},
		{"decode", "-m", "model.arrow", "-o", "pred.arrow", "test.arrow"},
	}
	for _, args := range steps {
		cmd := command(f.dir, args...)
		out, err := cmd.CombinedOutput()
		f.log += fmt.Sprintf("$ dualcrf %s\n%s", strings.Join(args, " "), out)
		if err != nil {
			f.err = fmt.Errorf("dualcrf %s: %w", args[0], err)
			return f
		}
	}
	return f
}

// dirEntries lists the names in dir.
func dirEntries(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	names := make([]string, len(ents))
	for i, e := range ents {
		names[i] = e.Name()
	}
	return names
}

// noPanic fails when stderr carries a Go panic or goroutine trace.
func noPanic(t *testing.T, r result) {
	t.Helper()
	for _, s := range []string{"panic", "goroutine "} {
		if bytes.Contains(r.stderr, []byte(s)) {
			t.Errorf("%v\nstderr holds %q", r, s)
		}
	}
}
