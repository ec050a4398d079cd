package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"sync/atomic"
	"testing"

	"github.com/dualcrf/dualcrf/schemas"
	"github.com/dualcrf/dualcrf/tables"
)

// readFeatureTable reads a whole feature table file.
func readFeatureTable(t *testing.T, path string) *tables.FeatureTable {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tab, err := tables.ReadFeatureTable(f, path, tables.FeatureReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return tab
}

// TestDecodeStreams pipes a feature table of 500,000 tokens (the test slice
// over and over) into decode and checks that predictions come out while the
// table goes in: decode is never more than about three chunks of 65,536
// tokens (and its buffers) behind its input, so its memory does not grow
// with the input. A decode that reads its whole input
// first is the whole input behind when its first line comes out.
func TestDecodeStreams(t *testing.T) {
	const total = 500_000
	f := fixtures(t)
	test := readFeatureTable(t, f.test)
	d := test.Data
	cmd := command(t.TempDir(), "decode", "-m", f.model, "--format", "conll", "-")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var written atomic.Int64 // tokens handed to the table writer
	wrote := make(chan error, 1)
	go func() {
		defer stdin.Close()
		w, err := tables.NewFeatureWriter(stdin, tables.FeatureOptions{Columns: test.Columns, AttrNames: d.AttrNames,
			LabelNames: d.LabelNames, Metadata: map[string]string{schemas.KeyTemplates: test.Metadata[schemas.KeyTemplates]},
			BatchTokens: 1024})
		if err != nil {
			wrote <- err
			return
		}
		for written.Load() < total {
			for i := 0; i < d.Len(); i++ {
				s := tableSentence(test, i)
				written.Add(int64(len(s.Attrs)))
				if err := w.Write(s); err != nil {
					w.Abort()
					wrote <- err
					return
				}
			}
		}
		wrote <- w.Close()
	}()
	sc := bufio.NewScanner(stdout)
	out, behind := int64(0), int64(0)
	for sc.Scan() {
		if sc.Text() != "" {
			out++
			behind = max(behind, written.Load()-out)
		}
	}
	werr := <-wrote
	if err := cmd.Wait(); err != nil || werr != nil || sc.Err() != nil {
		t.Fatalf("decode: %v; writing its input: %v; reading its output: %v\n%s", err, werr, sc.Err(), stderr.Bytes())
	}
	if out != written.Load() {
		t.Fatalf("decode wrote %d tokens for %d", out, written.Load())
	}
	t.Logf("decode of %d tokens was at most %d tokens behind its input", out, behind)
	if behind > total*3/5 {
		t.Fatalf("decode was up to %d tokens behind its input of %d: it does not stream (three chunks are 196,608 tokens)", behind, out)
	}
}

// tableSentence returns sentence i of a feature table as FeatureWriter
// takes it.
func tableSentence(tab *tables.FeatureTable, i int) *tables.FeatureSentence {
	d := tab.Data
	lo, hi := d.SentStart[i], d.SentStart[i+1]
	s := &tables.FeatureSentence{}
	for tok := lo; tok < hi; tok++ {
		row := make([]string, len(tab.Columns))
		for c := range row {
			row[c] = tab.Text[c][tok]
		}
		s.Tokens = append(s.Tokens, row)
		l := ""
		if y := d.Labels[tok]; y >= 0 {
			l = d.LabelNames[y]
		}
		s.Labels = append(s.Labels, l)
		s.Attrs = append(s.Attrs, d.Attrs[d.AttrStart[tok]:d.AttrStart[tok+1]])
	}
	return s
}

// TestDecodeChunkSizes checks that the chunk size changes nothing in the
// output, and that decode --text equals featurize --model | decode.
func TestDecodeChunkSizes(t *testing.T) {
	f := fixtures(t)
	dir := t.TempDir()
	for _, args := range [][]string{{}, {"--format", "conll"}, {"--marginals"}, {"--marginals", "--format", "parquet"}} {
		base := append([]string{"decode", "-m", f.model}, args...)
		whole := mustRun(t, dir, append(base, f.test)...)
		for _, n := range []string{"1", "7", "500"} {
			chunked := mustRun(t, dir, append(append(base, "--chunk-tokens", n), f.test)...)
			if !bytes.Equal(chunked.stdout, whole.stdout) {
				t.Errorf("decode %v --chunk-tokens %s: output differs from one chunk's", args, n)
			}
		}
	}
	piped := mustShellPipe(t, dir, "", []string{"featurize", "--model", f.model, f.testText},
		[]string{"decode", "-m", f.model, "--format", "conll", "--chunk-tokens", "100"})
	text := mustRun(t, dir, "decode", "-m", f.model, "--text", f.testText, "--format", "conll", "--chunk-tokens", "100")
	if !bytes.Equal(piped[1].stdout, text.stdout) {
		t.Errorf("decode --text differs from featurize --model | decode")
	}
	if r := runBinary(t, dir, "", "decode", "-m", f.model, "--chunk-tokens", "0", f.test); r.code != 1 ||
		!bytes.Contains(r.stderr, []byte("--chunk-tokens 0: want an integer ≥ 1")) {
		t.Errorf("--chunk-tokens 0: %v", r)
	}
}

// TestDecodeMismatch checks that decode says when the model and the data
// do not fit: nothing shared is an error naming both
// files, a partial fit a warning with counts; and that featurize --model
// keeps a label the model does not know, with a warning.
func TestDecodeMismatch(t *testing.T) {
	f := fixtures(t)
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	model := regexp.QuoteMeta(f.model)

	// A table of another vocabulary (synthetic attributes and labels): no
	// attribute in common.
	mustRun(t, dir, "synth", "-n", "20", "-o", "synth.arrow")
	r := runBinary(t, dir, "", "decode", "-m", f.model, "synth.arrow")
	wantStderr(t, r, 1, `decode: synth.arrow and `+model+` share no attribute: none of the \d+ attribute occurrences of its \d+ tokens`)
	if len(r.stdout) != 0 && bytes.HasSuffix(r.stdout, []byte{0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0}) {
		t.Errorf("decode of a mismatched table wrote a complete stream")
	}

	// The same text under labels the model has never seen: no label in
	// common. featurize --model keeps the labels and warns.
	rewriteLines(t, f.testText, p("relabelled.txt"), func(fl []string) []string {
		fl[len(fl)-1] = "X-" + fl[len(fl)-1]
		return fl
	})
	r = runBinary(t, dir, "", "featurize", "--model", f.model, "-o", "relabelled.arrow", "relabelled.txt")
	wantStderr(t, r, 0, `featurize: warning: (\d+) of \d+ labelled tokens have a gold label `+model+` cannot predict \(kept; scored as errors\): X-I-NP \(\d+\), X-B-NP`)
	r = runBinary(t, dir, "", "decode", "-m", f.model, "relabelled.arrow")
	wantStderr(t, r, 1, `decode: relabelled.arrow and `+model+` share no label: none of the gold labels of its \d+ labelled tokens \(X-I-NP`)
	r = runBinary(t, dir, "", "decode", "-m", f.model, "--text", "relabelled.txt")
	wantStderr(t, r, 1, `decode: relabelled.txt and `+model+` share no label`)

	// Three tokens with a new label: kept (inspect lists it), a warning
	// from featurize and from decode, and eval counts the tokens as errors.
	n := 0
	rewriteLines(t, f.testText, p("newlabel.txt"), func(fl []string) []string {
		if n++; n%100 == 1 && n < 300 {
			fl[len(fl)-1] = "B-NEW"
		}
		return fl
	})
	r = runBinary(t, dir, "", "featurize", "--model", f.model, "-o", "newlabel.arrow", "newlabel.txt")
	wantStderr(t, r, 0, `featurize: warning: 3 of \d+ labelled tokens have a gold label `+model+` cannot predict \(kept; scored as errors\): B-NEW \(3\)$`)
	if ins := mustRun(t, dir, "inspect", "newlabel.arrow").stdout; !regexp.MustCompile(`(?m)^  B-NEW +3$`).Match(ins) {
		t.Errorf("inspect newlabel.arrow does not list B-NEW with 3 tokens:\n%s", ins)
	}
	r = runBinary(t, dir, "", "decode", "-m", f.model, "-o", "newlabel.pred.arrow", "newlabel.arrow")
	wantStderr(t, r, 0, `decode: warning: 3 of \d+ labelled tokens have a gold label `+model+` cannot predict \(kept; scored as errors\): B-NEW \(3\)$`)
	if gold, correct := labelScore(t, mustRun(t, dir, "eval", "--json", "newlabel.pred.arrow").stdout, "B-NEW"); gold != 3 || correct != 0 {
		t.Errorf("eval: B-NEW has %d gold tokens, %d correct; want 3, 0", gold, correct)
	}

	// Most of the text in words and tags the model has never seen (four
	// sentences of five scrambled), featurized with the model's templates
	// but its own vocabulary: a warning with the share, and the result.
	s := 0
	rewriteLines(t, f.testText, p("scrambled.txt"), func(fl []string) []string {
		if s++; s%5 != 0 {
			fl[0], fl[1] = "zz"+fl[0], "zz"+fl[1]
		}
		return fl
	})
	mustRun(t, dir, "featurize", "-o", "scrambled.arrow", "scrambled.txt")
	r = runBinary(t, dir, "", "decode", "-m", f.model, "scrambled.arrow")
	wantStderr(t, r, 0, `decode: warning: (\d+) of (\d+) attribute occurrences \((\d+\.\d)%\) are unknown to `+model+` and play no part`)
	r = runBinary(t, dir, "", "featurize", "--model", f.model, "-o", "/dev/null", "scrambled.txt")
	wantStderr(t, r, 0, `featurize: warning: \d+ of \d+ attribute occurrences \(\d+\.\d%\) are unknown to `+model)

	// The test slice itself fits: no warning.
	r = runBinary(t, dir, "", "decode", "-m", f.model, f.test)
	if r.code != 0 || bytes.Contains(r.stderr, []byte("warning")) {
		t.Errorf("decode of the test slice: %v", r)
	}
}

// wantStderr fails unless r exited with code and its stderr matches the
// regular expression (multi-line mode).
func wantStderr(t *testing.T, r result, code int, re string) {
	t.Helper()
	if r.code != code || !regexp.MustCompile(`(?m)`+re).Match(r.stderr) {
		t.Errorf("exit %d, want %d; stderr should match %s:\n%v", r.code, code, re, r)
	}
	noPanic(t, r)
}

// labelScore returns what eval --json says of a label: gold and correct
// tokens.
func labelScore(t *testing.T, out []byte, label string) (gold, correct int) {
	t.Helper()
	var e evalReport
	if err := json.Unmarshal(out, &e); err != nil {
		t.Fatalf("eval --json: %v\n%s", err, out)
	}
	for _, l := range e.Labels {
		if l.Label == label {
			return l.Gold, l.Correct
		}
	}
	t.Fatalf("eval --json has no entry for label %s:\n%s", label, out)
	return 0, 0
}
