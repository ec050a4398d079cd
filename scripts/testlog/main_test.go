package main

import (
	"strings"
	"testing"
)

// events is a run of three packages: one passes with a skipped test and a
// line of its TestMain, one fails a test, one has no test files.
const events = `{"Action":"start","Package":"m/a"}
{"Action":"run","Package":"m/a","Test":"TestOK"}
{"Action":"output","Package":"m/a","Test":"TestOK","Output":"=== RUN   TestOK\n"}
{"Action":"output","Package":"m/a","Test":"TestOK","Output":"--- PASS: TestOK (0.00s)\n"}
{"Action":"pass","Package":"m/a","Test":"TestOK"}
{"Action":"run","Package":"m/a","Test":"TestAVX512"}
{"Action":"output","Package":"m/a","Test":"TestAVX512","Output":"=== RUN   TestAVX512\n"}
{"Action":"output","Package":"m/a","Test":"TestAVX512","Output":"    k_test.go:12: no AVX-512 here\n"}
{"Action":"output","Package":"m/a","Test":"TestAVX512","Output":"--- SKIP: TestAVX512 (0.00s)\n"}
{"Action":"skip","Package":"m/a","Test":"TestAVX512"}
{"Action":"output","Package":"m/a","Output":"a.test: 2 corpus tests skipped\n"}
{"Action":"output","Package":"m/a","Output":"PASS\n"}
{"Action":"pass","Package":"m/a","Elapsed":0.5}
{"Action":"start","Package":"m/b"}
{"Action":"run","Package":"m/b","Test":"TestBad"}
{"Action":"output","Package":"m/b","Test":"TestBad","Output":"=== RUN   TestBad\n"}
{"Action":"output","Package":"m/b","Test":"TestBad","Output":"    b_test.go:3: want 1, got 2\n"}
{"Action":"output","Package":"m/b","Test":"TestBad","Output":"--- FAIL: TestBad (0.00s)\n"}
{"Action":"fail","Package":"m/b","Test":"TestBad"}
{"Action":"output","Package":"m/b","Output":"FAIL\n"}
{"Action":"fail","Package":"m/b","Elapsed":0.1}
{"Action":"start","Package":"m/c"}
{"Action":"skip","Package":"m/c"}
`

func TestSummary(t *testing.T) {
	var out strings.Builder
	ok, err := run(strings.NewReader(events), &out)
	if err != nil {
		t.Fatal(err)
	}
	if ok {
		t.Error("a failed test: want a failed run")
	}
	got := out.String()
	for _, want := range []string{
		"a.test: 2 corpus tests skipped\nok  \tm/a\t0.500s\n",
		"b_test.go:3: want 1, got 2\n",
		"FAIL\tm/b\t",
		"?   \tm/c\t[no test files]\n",
		"skipped: 1\n  m/a TestAVX512: k_test.go:12: no AVX-512 here\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the summary lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "TestOK") {
		t.Errorf("a passing test's output is shown:\n%s", got)
	}
}

func TestPassingRun(t *testing.T) {
	var out strings.Builder
	ok, err := run(strings.NewReader(strings.Join(strings.Split(events, "\n")[:13], "\n")), &out)
	if err != nil || !ok {
		t.Fatalf("a passing run: ok %v, err %v\n%s", ok, err, out.String())
	}
}

// TestUnendedPackage: a test binary that dies leaves a package without a
// result, which is a failure, not a pass.
func TestUnendedPackage(t *testing.T) {
	var out strings.Builder
	ok, _ := run(strings.NewReader(strings.Join(strings.Split(events, "\n")[:5], "\n")), &out)
	if ok || !strings.Contains(out.String(), "FAIL\tm/a\t(no result") {
		t.Fatalf("a package without a result: ok %v\n%s", ok, out.String())
	}
}

// TestBuildFailure: a package that does not build fails the run and shows
// the compiler's lines.
func TestBuildFailure(t *testing.T) {
	in := `{"ImportPath":"m/d [m/d.test]","Action":"build-output","Output":"d.go:1: syntax error\n"}
{"ImportPath":"m/d [m/d.test]","Action":"build-fail"}
{"Action":"start","Package":"m/d"}
{"Action":"output","Package":"m/d","Output":"FAIL\tm/d [build failed]\n"}
{"Action":"fail","Package":"m/d","Elapsed":0}
`
	var out strings.Builder
	ok, _ := run(strings.NewReader(in), &out)
	if ok || !strings.Contains(out.String(), "d.go:1: syntax error") {
		t.Fatalf("a build failure: ok %v\n%s", ok, out.String())
	}
}
