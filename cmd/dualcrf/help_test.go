package main

import (
	"bytes"
	"io"
	"os"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/urfave/cli/v2"
)

// stages are the dualcrf stages the help must list.
var stages = []string{"featurize", "inspect", "train", "decode", "eval", "explain", "export", "demo", "synth", "run", "plot"}

// TestHelp checks that `dualcrf --help` (and `dualcrf`, `dualcrf help`)
// lists every stage with a one-line purpose on standard output.
func TestHelp(t *testing.T) {
	dir := t.TempDir()
	line := regexp.MustCompile(`(?m)^   (\w+) {2,}(\S.*)$`)
	for _, args := range [][]string{{"--help"}, {}, {"help"}} {
		r := mustRun(t, dir, args...)
		if len(r.stderr) != 0 {
			t.Errorf("dualcrf %v wrote to stderr: %s", args, r.stderr)
		}
		_, cmds, ok := strings.Cut(string(r.stdout), "\nCOMMANDS:\n")
		if !ok {
			t.Fatalf("dualcrf %v: no COMMANDS section:\n%s", args, r.stdout)
		}
		cmds, _, _ = strings.Cut(cmds, "\n\n")
		purpose := map[string]string{}
		for _, m := range line.FindAllStringSubmatch(cmds, -1) {
			purpose[m[1]] = m[2]
		}
		for _, s := range stages {
			if p := purpose[s]; len(strings.Fields(p)) < 4 {
				t.Errorf("dualcrf %v: stage %s has purpose %q, want a one-line sentence", args, s, p)
			}
		}
		if len(purpose) != len(stages) {
			t.Errorf("dualcrf %v lists %d commands, want the %d stages: %v", args, len(purpose), len(stages), purpose)
		}
	}
}

// TestStageHelp checks that each stage's help shows a runnable example
// starting with "dualcrf STAGE".
func TestStageHelp(t *testing.T) {
	dir := t.TempDir()
	for _, s := range stages {
		for _, args := range [][]string{{s, "--help"}, {"help", s}} {
			r := mustRun(t, dir, args...)
			found := false
			for _, l := range strings.Split(string(r.stdout), "\n") {
				if strings.HasPrefix(strings.TrimSpace(l), "dualcrf "+s+" ") {
					found = true
				}
			}
			if !found {
				t.Errorf("dualcrf %s: no example line starting with \"dualcrf %s\":\n%s", strings.Join(args, " "), s, r.stdout)
			}
		}
	}
}

// TestFlagHelp checks every stage's flags in its help: each visible flag is
// in one of the categories (input, solver, output…) under which the help
// groups them, in their order; no flag shows two defaults; and no text
// cites the paper's equation numbers, which a user does not have at hand.
func TestFlagHelp(t *testing.T) {
	dir := t.TempDir()
	order := categoryOrder()
	eq := regexp.MustCompile(`(?i)\beq(uation)?s?\.?\s*\(?[0-9]`)
	for _, cmd := range newApp(nil, io.Discard, io.Discard).Commands {
		var cats []string
		for _, f := range cmd.Flags {
			cf, ok := f.(cli.CategorizableFlag)
			if !ok || !cf.IsVisible() {
				continue
			}
			if c := cf.GetCategory(); !slices.Contains(order, c) {
				t.Errorf("%s --%s: category %q, want one of %v", cmd.Name, f.Names()[0], c, order)
			} else if !slices.Contains(cats, c) {
				cats = append(cats, c)
			}
		}
		help := string(mustRun(t, dir, cmd.Name, "--help").stdout)
		if eq.MatchString(help) {
			t.Errorf("%s --help cites an equation number: %q", cmd.Name, eq.FindString(help))
		}
		_, opts, _ := strings.Cut(help, "\nOPTIONS:\n")
		at := -1
		for _, c := range order {
			if !slices.Contains(cats, c) {
				continue
			}
			i := strings.Index(opts, "\n   "+c+":\n")
			if i < 0 && strings.HasPrefix(opts, "   "+c+":\n") {
				i = 0
			}
			if i <= at {
				t.Errorf("%s --help: category %s missing or out of order:\n%s", cmd.Name, c, opts)
			}
			at = i
		}
		for _, line := range strings.Split(opts, "\n") {
			if strings.HasPrefix(strings.TrimSpace(line), "-") && strings.Count(line, "(default:") > 1 {
				t.Errorf("%s --help: a flag with two defaults: %s", cmd.Name, strings.TrimSpace(line))
			}
		}
		if !strings.Contains(opts, "--help, -h") {
			t.Errorf("%s --help does not list --help:\n%s", cmd.Name, opts)
		}
	}
}

// TestClosedPipe closes each stage's standard output after 100 bytes, as
// `dualcrf featurize big | head -c 100` does: the stage must end quietly
// (status 0, or killed by SIGPIPE), without a panic trace.
func TestClosedPipe(t *testing.T) {
	f := fixtures(t)
	train, test := abs(t, "demodata/train.txt.gz"), abs(t, "demodata/test.txt.gz")
	for _, c := range []struct {
		name string
		args []string
	}{
		{"featurize", []string{"featurize", train}},
		{"featurize-file-zstd", []string{"featurize", "--ipc", "file", "--compression", "zstd", train}},
		{"decode", []string{"decode", "-m", f.model, "--text", test}},
		{"decode-conll", []string{"decode", "-m", f.model, "--format", "conll", "--text", test}},
		{"decode-parquet", []string{"decode", "-m", f.model, "--format", "parquet", "--text", test}},
	} {
		args := c.args
		t.Run(c.name, func(t *testing.T) {
			r := headClose(t, t.TempDir(), 100, args...)
			noPanic(t, r)
			if r.code != 0 && r.signal != syscall.SIGPIPE {
				t.Errorf("stage did not end quietly on a closed pipe: %v", r)
			}
			t.Logf("dualcrf %s | head -c 100: exit %d, signal %v", strings.Join(args, " "), r.code, r.signal)
		})
	}
}

// headClose runs the binary with its standard output on a pipe, reads n
// bytes from the pipe and closes it, then waits for the process.
func headClose(t *testing.T, dir string, n int, args ...string) result {
	t.Helper()
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd := command(dir, args...)
	var errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = pw, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pw.Close()
	head := make([]byte, n)
	got, err := io.ReadFull(pr, head)
	if err != nil {
		t.Errorf("read %d bytes of the stage's output: got %d, %v", n, got, err)
	}
	pr.Close()
	r := result{args: args}
	finish(&r, cmd, cmd.Wait())
	r.stderr = errb.Bytes()
	return r
}

// TestPipeFailure checks that a stage failing in the middle of a pipeline
// makes the next one fail too, with neither leaving a file behind.
func TestPipeFailure(t *testing.T) {
	dir := t.TempDir()
	res := shellPipe(t, dir, abs(t, "testdata/bad/ragged.txt"),
		[]string{"featurize"},
		[]string{"train", "-o", "model.arrow", "-"})
	if res[0].code == 0 || !bytes.Contains(res[0].stderr, []byte("<stdin>:5: expected 3 columns")) {
		t.Errorf("featurize of ragged input: %v", res[0])
	}
	if res[1].code == 0 || !bytes.Contains(res[1].stderr, []byte("<stdin>: ")) {
		t.Errorf("train after a failed featurize: %v", res[1])
	}
	for _, r := range res {
		noPanic(t, r)
	}
	if left := dirEntries(t, dir); len(left) > 0 {
		t.Errorf("the failed pipeline left %v behind", left)
	}
}
