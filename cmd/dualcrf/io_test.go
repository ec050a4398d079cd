package main

// End-to-end tests of what a stage reads and writes: concatenated
// Arrow input, outputs that would overwrite an input, output formats named
// by the file, kills in the middle of a write, FIFOs and unbounded lines.

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/dualcrf/dualcrf/arrowio"
	"github.com/dualcrf/dualcrf/internal/fifotest"
	"github.com/dualcrf/dualcrf/tables"
)

// concatFiles writes the concatenation of srcs to dst.
func concatFiles(t *testing.T, dst string, srcs ...string) {
	t.Helper()
	var all []byte
	for _, s := range srcs {
		b, err := os.ReadFile(s)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, b...)
	}
	if err := os.WriteFile(dst, all, 0o644); err != nil {
		t.Fatal(err)
	}
}

// evalCounts is what eval --json reports, as far as these tests need.
type evalCounts struct {
	Sentences int `json:"sentences"`
	Tokens    int `json:"tokens"`
	Correct   int `json:"correct_tokens"`
}

func parseEvalJSON(t *testing.T, r result) evalCounts {
	t.Helper()
	var c evalCounts
	if err := json.Unmarshal(r.stdout, &c); err != nil {
		t.Fatalf("%v\neval --json: %v\n%s", r, err, r.stdout)
	}
	return c
}

// countRows counts the rows of an Arrow table.
func countRows(t *testing.T, data []byte) int {
	t.Helper()
	rr, err := tables.OpenRecordReader(bytes.NewReader(data), "output", arrowio.ReaderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer rr.Release()
	n := 0
	for rr.Next() {
		n += int(rr.RecordBatch().NumRows())
	}
	if err := rr.Err(); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestConcatenatedPipes: `cat a b | decode | eval` decodes and scores the
// rows of both tables (formerly: a's only, exit 0), and so does eval on
// concatenated prediction tables; a table followed by another kind of
// table or by garbage is refused, naming the place.
func TestConcatenatedPipes(t *testing.T) {
	f := fixtures(t)
	dir := t.TempDir()
	b := filepath.Join(dir, "b.arrow")
	mustRun(t, dir, "featurize", "--model", f.model, "-o", b, f.trainText)
	ab := filepath.Join(dir, "ab.arrow")
	concatFiles(t, ab, f.test, b)

	evalOf := func(stdin string) evalCounts {
		res := mustShellPipe(t, dir, stdin, []string{"decode", "-m", f.model, "-"}, []string{"eval", "--json", "-"})
		return parseEvalJSON(t, res[1])
	}
	ea, eb, eab := evalOf(f.test), evalOf(b), evalOf(ab)
	want := evalCounts{ea.Sentences + eb.Sentences, ea.Tokens + eb.Tokens, ea.Correct + eb.Correct}
	if eab != want || ea.Sentences != 50 || eb.Sentences != 150 {
		t.Fatalf("cat a b | decode | eval: %+v; a %+v, b %+v; want %+v", eab, ea, eb, want)
	}
	res := runBinary(t, dir, ab, "decode", "-m", f.model, "-")
	if res.code != 0 {
		t.Fatalf("%v", res)
	}
	if n := countRows(t, res.stdout); n != want.Tokens {
		t.Fatalf("cat a b | decode wrote %d rows, want %d", n, want.Tokens)
	}

	// Prediction tables, concatenated: eval scores both.
	pb := filepath.Join(dir, "pb.arrow")
	mustRun(t, dir, "decode", "-m", f.model, "-o", pb, b)
	pab := filepath.Join(dir, "pab.arrow")
	concatFiles(t, pab, f.pred, pb)
	if got := parseEvalJSON(t, mustRun(t, dir, "eval", "--json", pab)); got != want {
		t.Fatalf("eval of concatenated predictions: %+v, want %+v", got, want)
	}

	// Refused: a prediction table after a feature table, garbage after a table.
	mixed := filepath.Join(dir, "mixed.arrow")
	concatFiles(t, mixed, f.test, f.pred)
	junk := filepath.Join(dir, "junk.arrow")
	concatFiles(t, junk, f.test, f.testText)
	size := func(p string) int64 {
		st, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		return st.Size()
	}
	for _, c := range []struct {
		stdin, want string
	}{
		{mixed, fmt.Sprintf("<stdin>: stream 2 at byte %d does not match the first", size(f.test))},
		{junk, fmt.Sprintf("<stdin>: the bytes at offset %d, after the end of the Arrow IPC stream, are not another Arrow IPC stream or file", size(f.test))},
	} {
		r := runBinary(t, dir, c.stdin, "decode", "-m", f.model, "-")
		noPanic(t, r)
		if r.code != 1 || !strings.Contains(string(r.stderr), c.want) {
			t.Errorf("%v\nwant exit 1 and %q", r, c.want)
		}
	}
}

// digest returns the SHA-256 of a file's bytes.
func digest(t *testing.T, path string) [32]byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return sha256.Sum256(b)
}

// TestOutputIsInput: an output that is an input or another output is
// refused before anything is written, whatever names it (formerly each of
// these destroyed a file).
func TestOutputIsInput(t *testing.T) {
	f := fixtures(t)
	dir := t.TempDir()
	cp := func(src, name string) string {
		dst := filepath.Join(dir, name)
		b, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dst, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return dst
	}
	model, table, text, pred := cp(f.model, "m.arrow"), cp(f.test, "test.arrow"), cp(f.trainText, "train.txt"), cp(f.pred, "pred.arrow")
	if err := os.Symlink("m.arrow", filepath.Join(dir, "link.arrow")); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(table, filepath.Join(dir, "hard.arrow")); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		stdin string
		args  []string
		want  string
	}{
		{"", []string{"decode", "-m", "m.arrow", "-o", "m.arrow", "test.arrow"}, "output -o m.arrow is the same file as input -m m.arrow"},
		{"", []string{"decode", "-m", "m.arrow", "-o", "./m.arrow", "test.arrow"}, "output -o ./m.arrow is the same file as input -m m.arrow"},
		{"", []string{"decode", "-m", "m.arrow", "-o", "link.arrow", "test.arrow"}, "output -o link.arrow is the same file as input -m m.arrow"},
		{"", []string{"decode", "-m", "m.arrow", "-o", "hard.arrow", "test.arrow"}, "output -o hard.arrow is the same file as input test.arrow"},
		{"", []string{"train", "-q", "--log", "x.arrow", "-o", "x.arrow", "test.arrow"}, "outputs -o x.arrow and --log x.arrow are the same file"},
		{"", []string{"train", "-q", "--valid", "test.arrow", "-o", "test.arrow", "test.arrow"}, "output -o test.arrow is the same file as input test.arrow"},
		{"", []string{"featurize", "-o", "train.txt", "train.txt"}, "output -o train.txt is the same file as input train.txt"},
		{text, []string{"featurize", "-o", "train.txt", "-"}, "output -o train.txt is the same file as input - (standard input)"},
		{"", []string{"featurize", "--vocab", "test.arrow", "-o", "test.arrow", "train.txt"}, "is the same file as input --vocab test.arrow"},
		{"", []string{"eval", "--arrow", "pred.arrow", "pred.arrow"}, "output --arrow pred.arrow is the same file as input pred.arrow"},
	}
	before := map[string][32]byte{}
	for _, p := range []string{model, table, text, pred} {
		before[p] = digest(t, p)
	}
	for _, c := range cases {
		r := runBinary(t, dir, c.stdin, c.args...)
		noPanic(t, r)
		if r.code != 1 || !strings.Contains(string(r.stderr), c.want) {
			t.Errorf("%v\nwant exit 1 and %q", r, c.want)
		}
		for p, h := range before {
			if digest(t, p) != h {
				t.Fatalf("%v\nchanged %s", r, p)
			}
		}
	}
	if names := dirEntries(t, dir); !reflect.DeepEqual(names, []string{"hard.arrow", "link.arrow", "m.arrow", "pred.arrow", "test.arrow", "train.txt"}) {
		t.Errorf("directory holds %v", names)
	}
}

// TestOutputFormatByName: the extension of -o decides what is written when
// no flag does, and contradictions are refused (formerly -o x.parquet wrote
// an Arrow stream). featurize, train and eval write Parquet too.
func TestOutputFormatByName(t *testing.T) {
	f := fixtures(t)
	dir := t.TempDir()
	head := func(name string, n int) string {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b[:min(n, len(b))])
	}
	mustRun(t, dir, "decode", "-m", f.model, "-o", "p.parquet", f.test)
	if h := head("p.parquet", 4); h != "PAR1" {
		t.Errorf("decode -o p.parquet starts with %q, want PAR1", h)
	}
	mustRun(t, dir, "decode", "-m", f.model, "-o", "p.conll", f.test)
	if h := head("p.conll", 9); h != "Rockwell " {
		t.Errorf("decode -o p.conll starts with %q", h)
	}
	mustRun(t, dir, "featurize", "--model", f.model, "-o", "t.parquet", f.testText)
	if h := head("t.parquet", 4); h != "PAR1" {
		t.Errorf("featurize -o t.parquet starts with %q, want PAR1", h)
	}
	mustRun(t, dir, "featurize", "--model", f.model, "-o", "t.feather", f.testText)
	if h := head("t.feather", 6); h != "ARROW1" {
		t.Errorf("featurize -o t.feather starts with %q, want ARROW1", h)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"decode", "-m", f.model, "--format", "arrow", "-o", "q.parquet", f.test}, "-o q.parquet names Parquet by its extension, but --format arrow asks for Arrow IPC"},
		{[]string{"featurize", "--model", f.model, "--output-format", "arrow", "-o", "q.parquet", f.testText}, "-o q.parquet names Parquet by its extension, but --output-format arrow asks for Arrow IPC"},
		{[]string{"featurize", "--model", f.model, "--ipc", "file", "-o", "q.parquet", f.testText}, "featurize: --ipc applies to Arrow IPC output, not Parquet"},
		{[]string{"featurize", "--model", f.model, "--ipc", "stream", "-o", "q.feather", f.testText}, "--ipc stream asks for an IPC stream"},
		{[]string{"train", "-q", "-o", "q.conll", f.train}, "train: -o q.conll names CoNLL text"},
		{[]string{"train", "-q", "-o", "m.arrow", "--log", "q.txt", f.train}, "train: --log q.txt names CoNLL text"},
		{[]string{"eval", "--arrow", "q.txt", f.pred}, "eval: --arrow q.txt names CoNLL text"},
	} {
		r := runBinary(t, dir, "", c.args...)
		if r.code != 1 || !strings.Contains(string(r.stderr), c.want) {
			t.Errorf("%v\nwant exit 1 and %q", r, c.want)
		}
	}
	if names := dirEntries(t, dir); !reflect.DeepEqual(names, []string{"p.conll", "p.parquet", "t.feather", "t.parquet"}) {
		t.Errorf("directory holds %v", names)
	}
}

// waitForFDs waits until process pid has n files under dir open, so that
// a kill hits it in the middle of writing there.
func waitForFDs(t *testing.T, pid int, dir string, n int) {
	t.Helper()
	fds := fmt.Sprintf("/proc/%d/fd", pid)
	for i := 0; i < 2000; i++ {
		ents, _ := os.ReadDir(fds)
		open := 0
		for _, e := range ents {
			if target, err := os.Readlink(filepath.Join(fds, e.Name())); err == nil && strings.HasPrefix(target, dir+"/") {
				open++
			}
		}
		if open >= n {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("process %d never had %d files open in %s", pid, n, dir)
}

// TestKillLeavesNothing: featurize killed with SIGKILL while writing its
// output, or while spooling standard input, leaves nothing that a re-run of
// the same command does not clean (formerly: a .NAME.tmp-* file and a
// dualcrf-stdin-* spool that stayed for good).
func TestKillLeavesNothing(t *testing.T) {
	if _, err := os.Stat("/proc/self/fd"); err != nil {
		t.Skip("needs /proc to see the stage's open files")
	}
	f := fixtures(t)
	text, err := os.ReadFile(f.trainText)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		args  []string
		files int // open in the directory when it is killed
	}{
		{"output", []string{"featurize", "--model", f.model, "-o", "out.arrow", "-"}, 1}, // one pass: writes as it reads
		{"spool", []string{"featurize", "-o", "out.arrow", "-"}, 2},                      // two passes: the output and the spool
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			cmd := command(dir, c.args...)
			stdin, err := cmd.StdinPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			if _, err := stdin.Write(text[:len(text)/2]); err != nil {
				t.Fatal(err)
			}
			waitForFDs(t, cmd.Process.Pid, dir, c.files)
			if err := cmd.Process.Kill(); err != nil {
				t.Fatal(err)
			}
			cmd.Wait()
			stdin.Close()
			left := dirEntries(t, dir)
			r := runBinary(t, dir, f.trainText, c.args...)
			if r.code != 0 {
				t.Fatalf("%v", r)
			}
			if names := dirEntries(t, dir); !reflect.DeepEqual(names, []string{"out.arrow"}) {
				t.Fatalf("after kill -9 (left %v) and a re-run, the directory holds %v; want [out.arrow]", left, names)
			}
		})
	}
}

// waitExit waits for cmd, killing it and failing the test if it hangs.
func waitExit(t *testing.T, cmd *exec.Cmd, what string) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return err
	case <-time.After(time.Minute): // a hang, not a slow run
		cmd.Process.Kill()
		<-done
		t.Fatalf("%s: still running after a minute", what)
		return nil
	}
}

// TestFeaturizeStreams: featurize reads a process substitution and a named
// FIFO whole (formerly: "no sentences", and a hang), and a featurize
// blocked on a FIFO or a pipe ends on SIGINT or SIGTERM (formerly it hung).
func TestFeaturizeStreams(t *testing.T) {
	f := fixtures(t)
	text, err := os.ReadFile(f.trainText)
	if err != nil {
		t.Fatal(err)
	}
	const want = "featurize: 150 sentences, 3479 tokens"

	// <(cat train.txt): the input is /dev/fd/3, a pipe.
	dir := t.TempDir()
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd := command(dir, "featurize", "-o", "sub.arrow", "/dev/fd/3")
	cmd.ExtraFiles = []*os.File{pr}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pr.Close()
	go func() { pw.Write(text); pw.Close() }()
	if err := waitExit(t, cmd, "featurize /dev/fd/3"); err != nil || !strings.Contains(stderr.String(), want) {
		t.Errorf("featurize /dev/fd/3: %v\n%s", err, stderr.String())
	}

	// A named FIFO.
	fifo := filepath.Join(dir, "in.fifo")
	fifotest.Make(t, fifo)
	go func() {
		if w, err := os.OpenFile(fifo, os.O_WRONLY, 0); err == nil {
			w.Write(text)
			w.Close()
		}
	}()
	cmd = command(dir, "featurize", "-o", "fifo.arrow", fifo)
	stderr.Reset()
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if err := waitExit(t, cmd, "featurize FIFO"); err != nil || !strings.Contains(stderr.String(), want) {
		t.Errorf("featurize FIFO: %v\n%s", err, stderr.String())
	}

	// Blocked: on a FIFO without a writer, on a FIFO or a pipe whose writer
	// is idle; then a signal.
	for _, c := range []struct {
		name   string
		signal syscall.Signal
	}{
		{"no writer", syscall.SIGTERM}, {"idle FIFO writer", syscall.SIGINT}, {"idle pipe", syscall.SIGTERM},
	} {
		blockDir := t.TempDir()
		fifo := filepath.Join(blockDir, "in.fifo")
		args := []string{"featurize", "-o", "out.arrow", fifo}
		fifotest.Make(t, fifo)
		cmd := command(blockDir, args...)
		var idle *os.File
		switch c.name {
		case "idle FIFO writer":
			w, err := os.OpenFile(fifo, os.O_RDWR, 0) // a writer that never writes (RDWR: does not wait for a reader)
			if err != nil {
				t.Fatal(err)
			}
			idle = w
		case "idle pipe":
			args[len(args)-1] = "-"
			cmd = command(blockDir, args...)
			r, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			cmd.Stdin, idle = r, w
			defer r.Close()
		}
		stderr.Reset()
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// Its output is open once its signal handler is in place; then give
		// it a moment to block (it must end whenever the signal comes).
		waitForFDs(t, cmd.Process.Pid, blockDir, 1)
		time.Sleep(100 * time.Millisecond)
		cmd.Process.Signal(c.signal)
		err := waitExit(t, cmd, "featurize blocked on "+c.name)
		if idle != nil {
			idle.Close()
		}
		var ee *exec.ExitError
		if !errors.As(err, &ee) || (ee.ExitCode() != 130 && ee.ExitCode() != 143) {
			t.Errorf("%s, %v: %v (want exit 130 or 143)\n%s", c.name, c.signal, err, stderr.String())
		}
		if names := dirEntries(t, blockDir); !reflect.DeepEqual(names, []string{"in.fifo"}) {
			t.Errorf("%s: left %v", c.name, names)
		}
	}
}

// TestFeaturizeUnbounded: endless or huge lines are refused after the
// limit with a clear error, without a stack trace or a leftover spool (on
// main /dev/zero ended in "fatal error: out of memory" and an endless pipe
// was spooled to disk whole).
func TestFeaturizeUnbounded(t *testing.T) {
	f := fixtures(t)
	dir := t.TempDir()
	const want = "line longer than 1048576 bytes (the limit, --max-line-bytes"

	// /dev/zero, with the address space bounded so that a regression
	// fails fast instead of taking the machine's memory.
	args := []string{bin, "featurize", "-o", "zero.arrow", "/dev/zero"}
	if p, err := exec.LookPath("prlimit"); err == nil {
		args = append([]string{p, "--as=4294967296"}, args...)
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Dir, cmd.Env = dir, append(os.Environ(), "TMPDIR="+dir)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	err := waitExit(t, cmd, "featurize /dev/zero")
	r := result{args: args[1:], stderr: stderr.Bytes(), code: cmd.ProcessState.ExitCode()}
	noPanic(t, r)
	if err == nil || r.code != 1 || !strings.Contains(stderr.String(), "/dev/zero:1: "+want) {
		t.Errorf("%v", r)
	}

	// An endless pipe: the stage reads little more than the limit.
	cmd = command(dir, "featurize", "-o", "pipe.arrow", "-")
	w, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr.Reset()
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	written := make(chan int64, 1)
	go func() {
		zeros := make([]byte, 64<<10)
		var n int64
		for n < 256<<20 {
			k, err := w.Write(zeros)
			n += int64(k)
			if err != nil {
				break
			}
		}
		w.Close()
		written <- n
	}()
	err = waitExit(t, cmd, "featurize an endless pipe")
	n := <-written
	if err == nil || !strings.Contains(stderr.String(), "<stdin>:1: "+want) || n > 16<<20 {
		t.Errorf("endless pipe: %v after %d bytes\n%s", err, n, stderr.String())
	}
	if names := dirEntries(t, dir); len(names) != 0 {
		t.Errorf("left %v", names)
	}

	// The limits are settable, and checked.
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"featurize", "--max-line-bytes", "10", "-o", "x.arrow", f.trainText}, f.trainText + ":1: line longer than 10 bytes"},
		{[]string{"featurize", "--max-sentence-tokens", "5", "-o", "x.arrow", f.trainText}, f.trainText + ":6: the sentence that begins at line 1 has more than 5 tokens"},
		{[]string{"featurize", "--max-line-bytes", "0", "-o", "x.arrow", f.trainText}, "--max-line-bytes 0: want at least 1"},
		{[]string{"featurize", "--max-sentence-tokens", "-1", "-o", "x.arrow", f.trainText}, "--max-sentence-tokens -1: want at least 1"},
	} {
		r := runBinary(t, dir, "", c.args...)
		if r.code != 1 || !strings.Contains(string(r.stderr), c.want) {
			t.Errorf("%v\nwant exit 1 and %q", r, c.want)
		}
	}
	mustRun(t, dir, "featurize", "--max-line-bytes", "100", "--max-sentence-tokens", "100", "-o", "x.arrow", f.trainText)
}

// compressFile writes src compressed with format ("gzip" or "zstd") into
// dir, named after src with ".gz" or ".zst" added, and returns its path.
func compressFile(t *testing.T, dir, src, format string) string {
	t.Helper()
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	ext := ".gz"
	switch format {
	case "gzip":
		zw := gzip.NewWriter(&buf)
		zw.Write(data)
		err = zw.Close()
	case "zstd":
		ext = ".zst"
		zw, _ := zstd.NewWriter(&buf)
		zw.Write(data)
		err = zw.Close()
	}
	if err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(dir, filepath.Base(src)+ext)
	if err := os.WriteFile(dst, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return dst
}

// TestCompressedInputs: every stage that reads Arrow reads it gzip- or
// zstd-compressed, named or on standard input, as it reads it plain (on
// main, train, decode, eval and inspect refused a .zst file as "not an
// Arrow IPC stream or file", while featurize read .zst text).
func TestCompressedInputs(t *testing.T) {
	f := fixtures(t)
	dir := t.TempDir()
	evalPlain := mustRun(t, dir, "eval", "--json", f.pred).stdout
	decodePlain := mustRun(t, dir, "decode", "-m", f.model, "--format", "conll", f.test).stdout
	inspectPlain := runBinary(t, dir, f.model, "inspect", "-").stdout
	for _, format := range []string{"gzip", "zstd"} {
		t.Run(format, func(t *testing.T) {
			train, model := compressFile(t, dir, f.train, format), compressFile(t, dir, f.model, format)
			test, pred := compressFile(t, dir, f.test, format), compressFile(t, dir, f.pred, format)
			for _, in := range []struct{ arg, stdin string }{{train, ""}, {"-", train}} {
				r := runBinary(t, dir, in.stdin, "train", "-q", "--max-epochs", "2", "-o", "m.arrow", in.arg)
				if r.code != 0 || !bytes.Contains(r.stderr, []byte("train: 150 sentences")) {
					t.Errorf("train of %s (stdin %q): %v", in.arg, in.stdin, r)
				}
			}
			if got := mustRun(t, dir, "decode", "-m", model, "--format", "conll", test).stdout; !bytes.Equal(got, decodePlain) {
				t.Errorf("decode of the %s model and table differs from decode of the plain ones", format)
			}
			if got := runBinary(t, dir, test, "decode", "-m", model, "--format", "conll", "-").stdout; !bytes.Equal(got, decodePlain) {
				t.Errorf("decode of the %s table on standard input differs from decode of the plain one", format)
			}
			if got := mustRun(t, dir, "eval", "--json", pred).stdout; !bytes.Equal(got, evalPlain) {
				t.Errorf("eval of %s: %s, of the plain table: %s", pred, got, evalPlain)
			}
			if got := runBinary(t, dir, pred, "eval", "--json", "-").stdout; !bytes.Equal(got, evalPlain) {
				t.Errorf("eval of %s on standard input: %s, of the plain table: %s", pred, got, evalPlain)
			}
			if got := runBinary(t, dir, model, "inspect", "-").stdout; !bytes.Equal(got, inspectPlain) {
				t.Errorf("inspect of %s:\n%s\nof the plain model:\n%s", model, got, inspectPlain)
			}
			mustRun(t, dir, "featurize", "--model", model, "-o", "t.arrow", f.testText)
		})
	}
}
