package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRun scores two sentences in CRF++'s output layout (word, POS, gold,
// predicted): "the deficit" predicted as two chunks, so two of four
// predicted chunks are right and two of three gold ones found — precision
// 50%, recall 66.67%, F1 57.14; it also refuses a one-column line, naming
// the file and line.
func TestRun(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "pred.txt")
	text := "He PRP B-NP B-NP\nreckons VBZ B-VP B-VP\n\n" +
		"the DT B-NP B-NP\ndeficit NN I-NP B-NP\n"
	if err := os.WriteFile(in, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := run([]string{in}, &out); err != nil {
		t.Fatal(err)
	}
	first := strings.SplitN(out.String(), "\n", 2)[0]
	if !strings.Contains(first, "processed 4 tokens with 3 phrases; found: 4 phrases; correct: 2.") {
		t.Errorf("report's first line: %q", first)
	}
	if !strings.Contains(out.String(), "FB1:  57.14") {
		t.Errorf("want FB1 57.14 in\n%s", out.String())
	}
	out.Reset()
	if err := run([]string{"-json", in}, &out); err != nil || !strings.Contains(out.String(), `"f1"`) {
		t.Errorf("-json: %v\n%s", err, out.String())
	}
	bad := filepath.Join(dir, "bad.txt")
	if err := os.WriteFile(bad, []byte("He B-NP B-NP\nreckons\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := run([]string{bad}, &out); err == nil || !strings.HasPrefix(err.Error(), bad+":2: ") {
		t.Errorf("one column: %v, want an error at %s:2", err, bad)
	}
}
