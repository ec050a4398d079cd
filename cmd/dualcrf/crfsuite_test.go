package main

import (
	"bufio"
	"compress/gzip"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dualcrf/dualcrf/internal/datatest"
)

// crfsuiteVar names the CRFsuite binary the interoperability test runs
// (scripts/ci-crfsuite.sh builds it from CRFsuite 0.12.2's sources and sets it).
const crfsuiteVar = "DUALCRF_CRFSUITE"

// crfsuiteBinary returns the crfsuite binary of $DUALCRF_CRFSUITE; without
// it the test is skipped, or fails where the inputs are required (CI).
func crfsuiteBinary(t *testing.T) string {
	t.Helper()
	path := os.Getenv(crfsuiteVar)
	if path == "" {
		if datatest.Required() {
			t.Fatalf("$%s is not set: CI builds CRFsuite (scripts/ci-crfsuite.sh) and names its binary there", crfsuiteVar)
		}
		t.Skipf("$%s is not set: no CRFsuite binary to check the export with", crfsuiteVar)
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("$%s: %v", crfsuiteVar, err)
	}
	return path
}

// crfsuiteEscape escapes an attribute name for CRFsuite's text format.
func crfsuiteEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, `:`, `\:`).Replace(s)
}

// writeCRFsuiteAttributes writes the first maxSents sentences of a CoNLL
// chunking file (word POS chunk) as a CRFsuite attribute file: the label,
// then word and POS attributes of a window of ±1 (with __BOS__/__EOS__
// beyond the ends) and two real-valued attributes (the word's length / 10
// and the share of its letters in upper case), so that names with colons
// and backslashes and real values all go through both tools.
func writeCRFsuiteAttributes(t *testing.T, src, dst string, maxSents int) (sents, tokens int) {
	t.Helper()
	f, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	out, err := os.Create(dst)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriter(out)
	var sent [][3]string
	flush := func() {
		if len(sent) == 0 {
			return
		}
		at := func(i, col int) string {
			switch {
			case i < 0:
				return "__BOS__"
			case i >= len(sent):
				return "__EOS__"
			}
			if col == 0 {
				return strings.ToLower(sent[i][0])
			}
			return sent[i][col]
		}
		for i, tok := range sent {
			fields := []string{tok[2]}
			for _, d := range []int{-1, 0, 1} {
				fields = append(fields, crfsuiteEscape(fmt.Sprintf("w[%d]=%s", d, at(i+d, 0))),
					crfsuiteEscape(fmt.Sprintf("pos[%d]=%s", d, at(i+d, 1))))
			}
			fields = append(fields, crfsuiteEscape("w[0]|pos[0]="+at(i, 0)+"|"+at(i, 1)))
			upper := 0
			for _, r := range tok[0] {
				if r >= 'A' && r <= 'Z' {
					upper++
				}
			}
			fields = append(fields, fmt.Sprintf("len:%g", float64(len(tok[0]))/10),
				fmt.Sprintf("upper:%g", float64(upper)/float64(len(tok[0]))))
			fmt.Fprintln(w, strings.Join(fields, "\t"))
		}
		fmt.Fprintln(w)
		sents++
		tokens += len(sent)
		sent = sent[:0]
	}
	sc := bufio.NewScanner(zr)
	for sc.Scan() && sents < maxSents {
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			flush()
			continue
		}
		if len(f) != 3 {
			t.Fatalf("%s: line %q: want word, POS and chunk", src, sc.Text())
		}
		sent = append(sent, [3]string{f[0], f[1], f[2]})
	}
	if sents < maxSents {
		flush()
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
	return sents, tokens
}

// lastColumn returns the last field of every non-blank line of a CoNLL
// or CRFsuite output, and the number of sentences (blank-line separated).
func lastColumn(t *testing.T, text string) (labels []string, sents int) {
	t.Helper()
	inSent := false
	for _, line := range strings.Split(text, "\n") {
		f := strings.Fields(line)
		if len(f) == 0 {
			if inSent {
				sents++
			}
			inSent = false
			continue
		}
		inSent = true
		labels = append(labels, f[len(f)-1])
	}
	if inSent {
		sents++
	}
	return labels, sents
}

// TestExportCRFsuiteTagsAsDecode exports a model trained on CRFsuite's
// objective (observed feature space, no bias) and has CRFsuite 0.12.2 tag
// CoNLL-2000 test with it: every token must get the label dualcrf's own
// decode gives it. The model is trained on the first 3000 training
// sentences for 8 epochs (the export's exactness does not depend on
// convergence), with transitions observed, so that the model has zero
// transition weights too; the whole test set is tagged. The elastic net's
// model (CRFsuite's c1 = c2 = 0.1; on 1000 sentences), most of whose
// weights are zero and left out of its file — attributes included, so the
// test set is featurized against a smaller vocabulary — is tagged too.
func TestExportCRFsuiteTagsAsDecode(t *testing.T) {
	for _, tc := range []struct {
		name  string
		sents int
		train []string
	}{{"l2", 3000, []string{"--max-epochs", "8"}}, {"l1", 1000, []string{"--max-epochs", "6", "--l1", "0.1/n", "--lambda", "0.2/n"}}} {
		t.Run(tc.name, func(t *testing.T) { exportTagsAsDecode(t, tc.sents, tc.train) })
	}
}

// exportTagsAsDecode is TestExportCRFsuiteTagsAsDecode on the first sents
// training sentences with the training flags train.
func exportTagsAsDecode(t *testing.T, sents int, train []string) {
	crfsuite := crfsuiteBinary(t)
	dir := t.TempDir()
	trainTxt, testTxt := filepath.Join(dir, "train.crfsuite.txt"), filepath.Join(dir, "test.crfsuite.txt")
	writeCRFsuiteAttributes(t, datatest.Path(t, "conll2000", "train.txt.gz"), trainTxt, sents)
	testSents, testTokens := writeCRFsuiteAttributes(t, datatest.Path(t, "conll2000", "test.txt.gz"), testTxt, 1<<30)

	mustRun(t, dir, "featurize", "--input-format", "crfsuite", "-o", "train.arrow", trainTxt)
	args := append([]string{"train", "--feature-space", "observed", "--transitions", "observed", "--no-bias", "--quiet"}, train...)
	mustRun(t, dir, append(args, "-o", "model.arrow", "train.arrow")...)
	mustRun(t, dir, "export", "--format", "crfsuite", "-o", "model.crfsuite", "model.arrow")
	mustRun(t, dir, "featurize", "--input-format", "crfsuite", "--model", "model.arrow", "-o", "test.arrow", testTxt)
	mustRun(t, dir, "decode", "-m", "model.arrow", "-o", "pred.conll", "test.arrow")

	pred, err := os.ReadFile(filepath.Join(dir, "pred.conll"))
	if err != nil {
		t.Fatal(err)
	}
	ours, oursSents := lastColumn(t, string(pred))
	cmd := exec.Command(crfsuite, "tag", "-m", filepath.Join(dir, "model.crfsuite"), testTxt)
	cmd.Env = append(os.Environ(), "LD_LIBRARY_PATH="+filepath.Join(filepath.Dir(filepath.Dir(crfsuite)), "lib"))
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("crfsuite tag: %v", err)
	}
	theirs, theirSents := lastColumn(t, string(out))
	if len(ours) != testTokens || len(theirs) != testTokens || oursSents != testSents || theirSents != testSents {
		t.Fatalf("test set of %d sentences, %d tokens: decode gave %d sentences, %d labels; crfsuite %d, %d",
			testSents, testTokens, oursSents, len(ours), theirSents, len(theirs))
	}
	equal := 0
	var diffs []string
	for i := range ours {
		if ours[i] == theirs[i] {
			equal++
		} else if len(diffs) < 5 {
			diffs = append(diffs, fmt.Sprintf("token %d: decode %s, crfsuite %s", i, ours[i], theirs[i]))
		}
	}
	t.Logf("CoNLL-2000 test: crfsuite tag and decode agree on %d of %d tokens (%d sentences)", equal, testTokens, testSents)
	if equal != testTokens {
		t.Errorf("crfsuite tag disagrees with decode on %d of %d tokens: %s", testTokens-equal, testTokens, strings.Join(diffs, "; "))
	}
}
