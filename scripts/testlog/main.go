// Command testlog reads the events of `go test -json` on standard input and
// writes what `go test` writes without -json — a line per package, the
// output of every test that failed and of every package that did not build —
// and then a list of every test that was skipped, with the reason it gave.
// `go test ./...` hides the output of passing packages, so a skipped test
// never shows in a log; .ci/run pipes the tests through this command so that
// its log says what did not run:
//
//	go test ./... -json | go run ./scripts/testlog
//
// It exits 1 when a test or a package failed, or when the input ends
// without a package's result (a test binary killed, say).
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
)

// event is one line of test2json's output (go doc test2json).
type event struct {
	Action     string
	Package    string
	Test       string
	Output     string
	Elapsed    float64
	ImportPath string
}

// key names a test within its package; Test is empty for the package's
// own output (TestMain, build errors).
type key struct{ pkg, test string }

// skip is one skipped test and the lines it printed.
type skip struct {
	pkg, test, reason string
}

// summary is what the events said, in the order packages ended.
type summary struct {
	out     io.Writer
	output  map[key][]string // each running test's (and package's) output
	build   map[string][]string
	started map[string]bool
	ended   map[string]bool
	skips   []skip
	failed  bool
}

func newSummary(out io.Writer) *summary {
	return &summary{out: out, output: map[key][]string{}, build: map[string][]string{},
		started: map[string]bool{}, ended: map[string]bool{}}
}

// add takes one event.
func (s *summary) add(e event) {
	k := key{e.Package, e.Test}
	switch e.Action {
	case "start":
		s.started[e.Package] = true
	case "build-output":
		s.build[e.ImportPath] = append(s.build[e.ImportPath], e.Output)
	case "build-fail":
		s.failed = true
		fmt.Fprintf(s.out, "# %s\n%s", e.ImportPath, strings.Join(s.build[e.ImportPath], ""))
	case "output":
		s.output[k] = append(s.output[k], e.Output)
	case "skip":
		if e.Test != "" {
			s.skips = append(s.skips, skip{e.Package, e.Test, reason(s.output[k])})
		} else {
			s.ended[e.Package] = true
			fmt.Fprintf(s.out, "?   \t%s\t[no test files]\n", e.Package)
		}
		delete(s.output, k)
	case "pass":
		if e.Test == "" {
			s.ended[e.Package] = true
			// A package's own lines (TestMain's, such as a count of corpus tests
			// skipped) are shown: they are rare and say what the run left out.
			for _, l := range s.output[k] {
				if l != "PASS\n" && !strings.HasPrefix(l, "ok  ") {
					fmt.Fprintf(s.out, "%s", l)
				}
			}
			fmt.Fprintf(s.out, "ok  \t%s\t%.3fs\n", e.Package, e.Elapsed)
		}
		delete(s.output, k)
	case "fail":
		s.failed = true
		if e.Test == "" {
			s.ended[e.Package] = true
			fmt.Fprintf(s.out, "%sFAIL\t%s\t%.3fs\n", strings.Join(s.output[k], ""), e.Package, e.Elapsed)
		} else {
			fmt.Fprintf(s.out, "%s", strings.Join(s.output[k], ""))
		}
		delete(s.output, k)
	}
}

// reason is what a skipped test printed, without the lines the testing
// package adds around it.
func reason(lines []string) string {
	var kept []string
	for _, l := range lines {
		t := strings.TrimSpace(l)
		if t == "" || strings.HasPrefix(t, "=== ") || strings.HasPrefix(t, "--- SKIP") {
			continue
		}
		kept = append(kept, t)
	}
	return strings.Join(kept, " ")
}

// finish writes the skipped tests and says whether the run passed.
func (s *summary) finish() bool {
	var unended []string
	for p := range s.started {
		if !s.ended[p] {
			unended = append(unended, p)
		}
	}
	sort.Strings(unended)
	for _, p := range unended {
		fmt.Fprintf(s.out, "FAIL\t%s\t(no result: the test binary ended without one)\n", p)
		s.failed = true
	}
	if len(s.skips) == 0 {
		fmt.Fprintln(s.out, "skipped: none")
	} else {
		fmt.Fprintf(s.out, "skipped: %d\n", len(s.skips))
		for _, sk := range s.skips {
			fmt.Fprintf(s.out, "  %s %s: %s\n", strings.TrimPrefix(sk.pkg, "github.com/dualcrf/dualcrf/"), sk.test, sk.reason)
		}
	}
	return !s.failed
}

// run reads events from in and writes the summary to out; it returns false
// when the tests failed.
func run(in io.Reader, out io.Writer) (bool, error) {
	s := newSummary(out)
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 64<<10), 64<<20)
	for sc.Scan() {
		line := sc.Bytes()
		var e event
		if len(line) == 0 || line[0] != '{' || json.Unmarshal(line, &e) != nil {
			// go test writes a few lines that are not events (a build
			// failure's summary line, "FAIL" at the end): show them.
			if len(line) > 0 {
				fmt.Fprintf(out, "%s\n", line)
			}
			continue
		}
		s.add(e)
	}
	if err := sc.Err(); err != nil {
		return false, fmt.Errorf("read the events: %w", err)
	}
	return s.finish(), nil
}

func main() {
	ok, err := run(os.Stdin, os.Stdout)
	if err != nil {
		fmt.Fprintln(os.Stderr, "testlog:", err)
		os.Exit(1)
	}
	if !ok {
		os.Exit(1)
	}
}
