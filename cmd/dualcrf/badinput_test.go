package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/dualcrf/dualcrf/internal/datatest"
	"github.com/dualcrf/dualcrf/schemas"
)

// The bad-input catalogue is data, in the manner of Miller's cases/: each
// directory of testdata/cases holds one run of the command, in-process
// (run) (see
// testdata/cases/README.md): `cmd`, the argument line; optionally `stdin`,
// the path of the file fed on standard input; and the golden files `exit`,
// `stderr` and `stdout` (absent when empty). `go test -run TestBadInput
// -update` rewrites the golden files from what the command does, so adding a
// case is making a directory with a `cmd` file and running -update.
//
// Every case runs in an empty directory, which is also TMPDIR, with
// relative output paths. Whatever the golden files say, a failing run
// (non-zero exit) must leave that directory empty (neither its output nor a
// temporary file) and write nothing to standard output, where the next
// stage of a pipe would read it; no run may panic.

// update rewrites the golden files of testdata/cases.
var update = flag.Bool("update", false, "rewrite the exit, stderr and stdout files of testdata/cases from the binary's behaviour")

// casesDir holds the catalogue.
const casesDir = "testdata/cases"

// caseEnv holds the values of the placeholders a case may use.
type caseEnv struct {
	fix  string // {fix}: the fixtures made by badFixtures
	td   string // {td}: the package's testdata directory
	data string // {data}: the corpora (datatest.Dir), set only for the cases that use it
}

// caseFiles are the names a case directory reserves; any other file is an
// input of the case, reached as {case}/NAME.
var caseFiles = []string{"cmd", "stdin", "exit", "stderr", "stdout"}

func TestBadInput(t *testing.T) {
	f := fixtures(t)
	env := caseEnv{fix: badFixtures(t, f), td: abs(t, "testdata")}
	dirs, err := filepath.Glob(filepath.Join(casesDir, "[0-9]*"))
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(dirs)
	if len(dirs) == 0 {
		t.Fatalf("no cases under %s", casesDir)
	}
	for _, dir := range dirs {
		t.Run(filepath.Base(dir), func(t *testing.T) { runCase(t, env, abs(t, dir)) })
	}
}

// runCase runs the case in dir and checks or (with -update) rewrites its
// golden files.
func runCase(t *testing.T, env caseEnv, dir string) {
	line, err := readCaseCmd(filepath.Join(dir, "cmd"))
	if err != nil {
		t.Fatal(err)
	}
	words, err := splitArgs(line)
	if err != nil {
		t.Fatalf("%s/cmd: %v", dir, err)
	}
	stdinFile, err := os.ReadFile(filepath.Join(dir, "stdin"))
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	if strings.Contains(line, "{data}") || strings.Contains(string(stdinFile), "{data}") {
		env.data = datatest.Dir(t) // skipped (or failed, in CI) without the corpora
	}
	expand := strings.NewReplacer("{fix}", env.fix, "{td}", env.td, "{data}", env.data, "{case}", dir).Replace
	args := make([]string, len(words))
	for i, w := range words {
		args[i] = expand(w)
	}
	stdin := ""
	if stdinFile != nil {
		stdin = expand(strings.TrimSpace(string(stdinFile)))
		if !filepath.IsAbs(stdin) {
			stdin = filepath.Join(dir, stdin)
		}
	}
	work := t.TempDir()
	r := runInProcess(t, work, stdin, args...)
	noPanic(t, r)
	if r.code != 0 {
		if len(r.stdout) > 0 {
			t.Errorf("a failed stage wrote %d bytes to standard output (the next stage's input): %.200q", len(r.stdout), r.stdout)
		}
		if left := dirEntries(t, work); len(left) > 0 {
			t.Errorf("the failed stage left %v behind", left)
		}
	}
	norm := caseNormaliser(env, dir, work)
	got := map[string][]byte{
		"exit":   []byte(strconv.Itoa(r.code) + "\n"),
		"stderr": norm(r.stderr),
		"stdout": norm(r.stdout),
	}
	for _, name := range []string{"exit", "stderr", "stdout"} {
		path := filepath.Join(dir, name)
		if *update {
			writeGolden(t, path, got[name], name == "stdout")
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil && !(os.IsNotExist(err) && name == "stdout") {
			t.Errorf("%v (run with -update to write it)", err)
			continue
		}
		if !bytes.Equal(got[name], want) {
			t.Errorf("dualcrf %s\n%s differs from %s\n--- got:\n%s--- want:\n%s", line, name, path, got[name], want)
		}
	}
}

// runInProcess runs the command as run does, in-process, in dir (also
// TMPDIR), with standard input read from the file stdin ("": the null
// device, as a child process gets).
func runInProcess(t *testing.T, dir, stdin string, args ...string) result {
	t.Helper()
	t.Chdir(dir)
	t.Setenv("TMPDIR", dir)
	if stdin == "" {
		stdin = os.DevNull
	}
	in, err := os.Open(stdin)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	var out, errb bytes.Buffer
	code := run(context.Background(), append([]string{"dualcrf"}, args...), in, &out, &errb)
	return result{args: args, stdout: out.Bytes(), stderr: errb.Bytes(), code: code}
}

// readCaseCmd returns the argument line of a cmd file: its one line that is
// neither blank nor a comment ('#').
func readCaseCmd(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	var lines []string
	for _, l := range strings.Split(string(b), "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			lines = append(lines, l)
		}
	}
	if len(lines) != 1 {
		return "", fmt.Errorf("%s: want one argument line (and # comments), found %d", path, len(lines))
	}
	return lines[0], nil
}

// writeGolden writes a golden file; an empty optional one is removed.
func writeGolden(t *testing.T, path string, b []byte, optional bool) {
	t.Helper()
	if optional && len(b) == 0 {
		if err := os.Remove(path); err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		return
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// durationRE matches the durations and rates that differ run to run.
var durationRE = regexp.MustCompile(`\b\d+(\.\d+)?(ns|µs|us|ms|s)\b|\(\d+ tokens/s\)`)

// workersRE matches what depends on the machine's cores: the workers of a
// parallel SDCA (whose model does not) and their busy share.
var workersRE = regexp.MustCompile(`\b\d+ workers\b|busy \d+%`)

// planLineRE matches a dry run's lines of memory figures, which depend on
// the machine (its physical memory, its cores); planSizeRE their sizes.
var (
	planLineRE = regexp.MustCompile(`(?m)^plan: (memory|Go heap): .*$`)
	planSizeRE = regexp.MustCompile(`\b\d+(\.\d+)?(e-\d+)? (GiB|MiB|B)\b`)
)

// tempRE matches the random part of temporary file names.
var tempRE = regexp.MustCompile(`(\.tmp-|dualcrf-stdin-)\d+`)

// caseNormaliser returns a function that makes a run's output comparable
// across machines: the placeholders' paths are written back as
// placeholders, the run's directory as {dir}, durations as {dur}, rates as
// {rate}, the random part of temporary file names as *, the workers of a
// parallel SDCA and their busy share as {workers} and {busy}, and a dry
// run's memory figures as {size}.
func caseNormaliser(env caseEnv, dir, work string) func([]byte) []byte {
	pairs := [][2]string{{dir, "{case}"}, {env.fix, "{fix}"}, {env.td, "{td}"}, {env.data, "{data}"}, {work, "{dir}"}, {binDir, "{bin}"}}
	sort.SliceStable(pairs, func(i, j int) bool { return len(pairs[i][0]) > len(pairs[j][0]) })
	var old []string
	for _, p := range pairs {
		if p[0] != "" { // {data} is unset in the cases that do not use it
			old = append(old, p[0], p[1])
		}
	}
	r := strings.NewReplacer(old...)
	return func(b []byte) []byte {
		s := tempRE.ReplaceAllString(r.Replace(string(b)), "${1}*")
		s = workersRE.ReplaceAllStringFunc(s, func(m string) string {
			if strings.HasPrefix(m, "busy") {
				return "busy {busy}"
			}
			return "{workers} workers"
		})
		s = planLineRE.ReplaceAllStringFunc(s, func(line string) string { return planSizeRE.ReplaceAllString(line, "{size}") })
		return []byte(durationRE.ReplaceAllStringFunc(s, func(m string) string {
			if strings.HasPrefix(m, "(") {
				return "({rate} tokens/s)"
			}
			return "{dur}"
		}))
	}
}

// splitArgs splits an argument line into words as a shell would without
// expansions: runs of spaces separate words, single quotes keep everything
// up to the next single quote, double quotes everything up to the next
// unescaped double quote, and a backslash outside single quotes escapes the
// next character.
func splitArgs(line string) ([]string, error) {
	var words []string
	var cur strings.Builder
	inWord := false
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case c == ' ' || c == '\t':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
			continue
		case c == '\'':
			j := strings.IndexByte(line[i+1:], '\'')
			if j < 0 {
				return nil, fmt.Errorf("unterminated ' in %q", line)
			}
			cur.WriteString(line[i+1 : i+1+j])
			i += j + 1
		case c == '"':
			i++
			for ; i < len(line) && line[i] != '"'; i++ {
				if line[i] == '\\' && i+1 < len(line) {
					i++
				}
				cur.WriteByte(line[i])
			}
			if i == len(line) {
				return nil, fmt.Errorf("unterminated \" in %q", line)
			}
		case c == '\\' && i+1 < len(line):
			i++
			cur.WriteByte(line[i])
		default:
			cur.WriteByte(c)
		}
		inWord = true
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, nil
}

// TestSplitArgs pins the quoting rules of the cmd files.
func TestSplitArgs(t *testing.T) {
	for _, c := range []struct {
		line string
		want []string
	}{
		{"a  b\tc", []string{"a", "b", "c"}},
		{`--lambda '' x`, []string{"--lambda", "", "x"}},
		{`-t 'a b' "c \"d\"" e\ f`, []string{"-t", "a b", `c "d"`, "e f"}},
		{`x'y'z`, []string{"xyz"}},
	} {
		got, err := splitArgs(c.line)
		if err != nil || strings.Join(got, "\x00") != strings.Join(c.want, "\x00") || len(got) != len(c.want) {
			t.Errorf("splitArgs(%q) = %q, %v; want %q", c.line, got, err, c.want)
		}
	}
	for _, bad := range []string{`a 'b`, `a "b`} {
		if _, err := splitArgs(bad); err == nil {
			t.Errorf("splitArgs(%q): no error", bad)
		}
	}
}

var (
	badOnce sync.Once
	badDir  string
	badErr  error
)

// badFixtures makes the tables the cases read, in a directory it returns:
// the good train, test, model and pred (.arrow) of fixtures; malformed or
// misused ones: nolabels, onelabel, version2, nan (train tables),
// ner (another template set), half (a truncated test table), predhalf,
// modelhalf, nogold (predictions without gold); and the other kinds of
// file the tool writes: log.arrow (a training log, with model1.arrow),
// pred.parquet, pred.conll, test.file.arrow (IPC file format with zstd)
// and scores.arrow (eval --arrow).
func badFixtures(t *testing.T, f fixtureSet) string {
	t.Helper()
	badOnce.Do(func() { badDir, badErr = makeBadFixtures(t, f) })
	if badErr != nil {
		t.Fatal(badErr)
	}
	return badDir
}

func makeBadFixtures(t *testing.T, f fixtureSet) (string, error) {
	dir := filepath.Join(binDir, "bad")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	p := func(name string) string { return filepath.Join(dir, name) }
	for _, name := range []string{"train.arrow", "test.arrow", "model.arrow", "pred.arrow"} {
		if err := os.Link(filepath.Join(f.dir, name), p(name)); err != nil {
			return "", err
		}
	}
	stripLabels(t, f.trainText, p("train.nolabels.txt"))
	stripLabels(t, f.testText, p("test.nolabels.txt"))
	rewriteLines(t, f.trainText, p("onelabel.txt"), func(fl []string) []string {
		fl[len(fl)-1] = "B-NP"
		return fl
	})
	crf := "A\tw=a\tlen:1.5\nB\tw=b\tlen:2\n\nB\tw=b\tlen:0.5\nA\tw=a\n\n"
	if err := os.WriteFile(p("real.crf"), []byte(crf), 0o644); err != nil {
		return "", err
	}
	// A model whose labels are B-A and E-A only: under iobes, no labelling
	// of a sentence of one token is allowed.
	be := "B-A\tw=a\nE-A\tw=b\n\nB-A\tw=b\nE-A\tw=a\n\n"
	if err := os.WriteFile(p("be.crf"), []byte(be), 0o644); err != nil {
		return "", err
	}
	steps := [][]string{
		{"featurize", "-f", "crfsuite", "-o", p("be.arrow"), p("be.crf")},
		{"train", "-q", "--max-epochs", "2", "-o", p("be-model.arrow"), p("be.arrow")},
		// Part-of-speech tags (the corpus without its chunk column).
		{"featurize", "-o", p("pos.arrow"), p("train.nolabels.txt")},
		{"train", "-q", "--max-epochs", "2", "-o", p("pos-model.arrow"), p("pos.arrow")},
		{"decode", "-m", p("pos-model.arrow"), "--chunk-confidence", "-o", p("pos-pred.arrow"), p("pos.arrow")},
		{"decode", "-m", f.model, "--nbest", "3", "-o", p("nbest.arrow"), f.test},
		{"train", "-q", "--no-bias", "--max-epochs", "2", "-o", p("nobias-model.arrow"), f.train},
		{"featurize", "--no-labels", "-o", p("nolabels.arrow"), p("train.nolabels.txt")},
		{"featurize", "-o", p("onelabel.arrow"), p("onelabel.txt")},
		{"featurize", "-t", "ner", "-o", p("ner.arrow"), f.testText},
		{"featurize", "-f", "crfsuite", "-o", p("real.arrow"), p("real.crf")},
		{"decode", "-m", f.model, "--text", p("test.nolabels.txt"), "--no-labels", "-o", p("nogold.arrow")},
		{"train", "-q", "--max-epochs", "1", "--log", p("log.arrow"), "-o", p("model1.arrow"), f.train},
		{"decode", "-m", f.model, "--format", "parquet", "-o", p("pred.parquet"), f.test},
		{"decode", "-m", f.model, "--format", "conll", "-o", p("pred.conll"), f.test},
		{"featurize", "--model", f.model, "--ipc", "file", "--compression", "zstd", "-o", p("test.file.arrow"), f.testText},
		{"eval", "--arrow", p("scores.arrow"), f.pred},
	}
	for _, args := range steps {
		if out, err := command(dir, args...).CombinedOutput(); err != nil {
			return "", fmt.Errorf("dualcrf %v: %v\n%s", args, err, out)
		}
	}
	if err := truncateCopy(f.test, p("half.arrow")); err != nil {
		return "", err
	}
	if err := truncateCopy(f.pred, p("predhalf.arrow")); err != nil {
		return "", err
	}
	if err := truncateCopy(f.model, p("modelhalf.arrow")); err != nil {
		return "", err
	}
	version2 := func(md map[string]string) { md[schemas.KeyVersion] = "2" }
	if err := rewriteStream(f.train, p("version2.arrow"), version2, nil); err != nil {
		return "", err
	}
	if err := rewriteStream(p("real.arrow"), p("nan.arrow"), nil, nanValues); err != nil {
		return "", err
	}
	return dir, nil
}

// truncateCopy writes the first half of src's bytes to dst.
func truncateCopy(src, dst string) error {
	b, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	return os.WriteFile(dst, b[:len(b)/2], 0o644)
}

// rewriteStream copies the Arrow IPC stream src to dst with arrow-go,
// passing the schema metadata through md and each column through col
// (either may be nil). col returns a new reference.
func rewriteStream(src, dst string, md func(map[string]string), col func(name string, a arrow.Array) arrow.Array) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	rd, err := ipc.NewReader(in)
	if err != nil {
		return fmt.Errorf("read %s: %w", src, err)
	}
	defer rd.Release()
	old := rd.Schema()
	meta := map[string]string{}
	for i, k := range old.Metadata().Keys() {
		meta[k] = old.Metadata().Values()[i]
	}
	if md != nil {
		md(meta)
	}
	m := arrow.MetadataFrom(meta)
	schema := arrow.NewSchema(old.Fields(), &m)
	var buf bytes.Buffer
	w := ipc.NewWriter(&buf, ipc.WithSchema(schema))
	for rd.Next() {
		rec := rd.RecordBatch()
		cols := make([]arrow.Array, rec.NumCols())
		for i := range cols {
			a := rec.Column(i)
			if col != nil {
				cols[i] = col(schema.Field(i).Name, a)
			} else {
				a.Retain()
				cols[i] = a
			}
		}
		nr := array.NewRecordBatch(schema, cols, rec.NumRows())
		for _, a := range cols {
			a.Release()
		}
		err := w.Write(nr)
		nr.Release()
		if err != nil {
			return fmt.Errorf("write %s: %w", dst, err)
		}
	}
	if err := rd.Err(); err != nil {
		return fmt.Errorf("read %s: %w", src, err)
	}
	if err := w.Close(); err != nil {
		return err
	}
	return os.WriteFile(dst, buf.Bytes(), 0o644)
}

// nanValues replaces every attribute value of the values column by NaN.
func nanValues(name string, a arrow.Array) arrow.Array {
	l, ok := a.(*array.List)
	if name != schemas.ColValues || !ok {
		a.Retain()
		return a
	}
	child := l.ListValues()
	b := array.NewFloat64Builder(memory.DefaultAllocator)
	defer b.Release()
	for i := 0; i < child.Len(); i++ {
		b.Append(math.NaN())
	}
	nc := b.NewFloat64Array()
	defer nc.Release()
	d := array.NewData(l.DataType(), l.Len(), l.Data().Buffers(), []arrow.ArrayData{nc.Data()}, l.NullN(), l.Data().Offset())
	defer d.Release()
	return array.MakeFromData(d)
}
