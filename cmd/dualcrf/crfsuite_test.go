package main

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/dualcrf/dualcrf/crf"
	"github.com/dualcrf/dualcrf/featurize"
	"github.com/dualcrf/dualcrf/internal/datatest"
	"github.com/dualcrf/dualcrf/stage"
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

// headSentences writes the first n sentences of a gzipped CoNLL file to
// dst as plain text.
func headSentences(t *testing.T, src, dst string, n int) {
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
	var b strings.Builder
	sc := bufio.NewScanner(zr)
	for sc.Scan() && n > 0 {
		b.WriteString(sc.Text() + "\n")
		if strings.TrimSpace(sc.Text()) == "" {
			n--
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// gzipConllRows reads the sentences of a gzipped CoNLL file as rows of
// their token columns, the label (the last column) left out.
func gzipConllRows(t *testing.T, path string) [][][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	text, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	sents := conllRows(string(text))
	for _, s := range sents {
		for i, row := range s {
			s[i] = row[:len(row)-1]
		}
	}
	return sents
}

// tiedTokens scores, with the model in dir, decode's labelling (ours) and
// CRFsuite's (theirs) of every sentence of the corpus test where they
// differ; each pair must tie (equal scores to 1e-9, relative: both best
// paths). It returns the tokens they label differently.
func tiedTokens(t *testing.T, dir, test string, ours, theirs []string) int {
	t.Helper()
	m, err := stage.ReadModel(context.Background(), stage.File(filepath.Join(dir, "model.arrow")))
	if err != nil {
		t.Fatal(err)
	}
	f, err := featurize.FromModel(m, "model.arrow")
	if err != nil {
		t.Fatal(err)
	}
	table, _, err := stage.FeaturizeTable(context.Background(), stage.File(test), stage.FeaturizeOptions{Like: f})
	if err != nil {
		t.Fatal(err)
	}
	labelID := map[string]int32{}
	for i, l := range m.LabelNames {
		labelID[l] = int32(i)
	}
	differ, tok := 0, 0
	for i := range table.Data.Len() {
		s := table.Data.Sentence(i)
		a, b := make([]int32, s.Len()), make([]int32, s.Len())
		same := true
		for j := range a {
			a[j], b[j] = labelID[ours[tok+j]], labelID[theirs[tok+j]]
			if a[j] != b[j] {
				same = false
				differ++
			}
		}
		if !same {
			sa, sb := crf.Dot(m.Weights, m.Layout, s, a), crf.Dot(m.Weights, m.Layout, s, b)
			if math.Abs(sa-sb) > 1e-9*(1+math.Abs(sa)) {
				t.Errorf("sentence %d: crfsuite's path scores %.12g, decode's %.12g: not a tie", i, sb, sa)
			}
		}
		tok += s.Len()
	}
	return differ
}

// crfsuiteTag runs crfsuite tag -p with model on the attribute file attrs
// and returns its labels, the number of sentences and each sentence's
// probability of its best path (as CRFsuite prints it, %f).
func crfsuiteTag(t *testing.T, bin, model, attrs string) (labels []string, sents int, probs []string) {
	t.Helper()
	cmd := exec.Command(bin, "tag", "-p", "-m", model, attrs)
	cmd.Env = append(os.Environ(), "LD_LIBRARY_PATH="+filepath.Join(filepath.Dir(filepath.Dir(bin)), "lib"))
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("crfsuite tag: %v", err)
	}
	var kept []string
	for _, line := range strings.Split(string(out), "\n") {
		if p, ok := strings.CutPrefix(line, "@probability\t"); ok {
			probs = append(probs, p)
		} else if !strings.HasPrefix(line, "@") {
			kept = append(kept, line)
		}
	}
	labels, sents = lastColumn(t, strings.Join(kept, "\n"))
	return labels, sents, probs
}

// decodeProbabilities runs decode --nbest 1 with model in dir on the
// input args and returns each sentence's probability of its best path
// ("# 0 P" in CoNLL output, %f).
func decodeProbabilities(t *testing.T, dir, model string, args ...string) []string {
	t.Helper()
	mustRun(t, dir, append([]string{"decode", "-m", model, "--nbest", "1", "--format", "conll", "-o", "nbest.conll"}, args...)...)
	b, err := os.ReadFile(filepath.Join(dir, "nbest.conll"))
	if err != nil {
		t.Fatal(err)
	}
	var probs []string
	for _, line := range strings.Split(string(b), "\n") {
		if p, ok := strings.CutPrefix(line, "# 0 "); ok {
			probs = append(probs, p)
		}
	}
	return probs
}

// sameProbabilities counts the sentences whose probabilities, as the two
// tools print them (six decimals), agree to the last digit (one unit of it
// for rounding), failing the test when the counts of sentences differ.
func sameProbabilities(t *testing.T, a, b []string) int {
	t.Helper()
	if len(a) != len(b) || len(a) == 0 {
		t.Fatalf("%d probabilities from crfsuite, %d from decode", len(a), len(b))
	}
	n := 0
	for i := range a {
		x, err1 := strconv.ParseFloat(a[i], 64)
		y, err2 := strconv.ParseFloat(b[i], 64)
		if err1 == nil && err2 == nil && math.Abs(x-y) <= 1.5e-6 {
			n++
		} else if i-n < 5 {
			t.Logf("sentence %d: crfsuite's best path has probability %s, decode's %s", i, a[i], b[i])
		}
	}
	return n
}

// TestExportDefaultModel exports a model trained as train does by default
// (the chunking templates featurize chooses, bias, start and end weights),
// on the first 1000 sentences of CoNLL-2000 train, and checks on the whole
// test set that
//
//   - CRFsuite 0.12.2's tagger, given `featurize --model M --output-format
//     crfsuite` lines, gives every sentence's best path the probability
//     decode --nbest 1 gives it (both print six decimals), so that the
//     exported model is the same distribution, its normaliser included;
//   - it gives every token the label dualcrf's decode gives —
//     or, where they differ, the two label paths tie: their scores under
//     the model are equal to 1e-9 (relative), so that each is a best path
//     and only the order of floating-point sums chose between them;
//   - the Python module export wrote beside the model (run by python3)
//     gives every token exactly featurize's attributes, names, values and
//     order.
//
// The elastic net's model (--l1), whose file leaves out its zero weights
// and the attributes all of whose weights are zero, is checked the same
// way: the module still gives featurize's attributes, and the tagger
// ignores those the model lacks as decode does.
func TestExportDefaultModel(t *testing.T) {
	for _, tc := range []struct {
		name  string
		train []string
	}{{"l2", nil}, {"l1", []string{"--l1", "1/n"}}} {
		t.Run(tc.name, func(t *testing.T) { exportDefaultModel(t, tc.train) })
	}
}

// exportDefaultModel is TestExportDefaultModel with the training flags
// train added.
func exportDefaultModel(t *testing.T, train []string) {
	crfsuiteBin := crfsuiteBinary(t)
	python := datatest.Python3(t)
	dir := t.TempDir()
	testGz := datatest.Path(t, "conll2000", "test.txt.gz")
	headSentences(t, datatest.Path(t, "conll2000", "train.txt.gz"), filepath.Join(dir, "train.txt"), 1000)
	mustRun(t, dir, "featurize", "-o", "train.arrow", "train.txt")
	mustRun(t, dir, append(append([]string{"train", "--max-epochs", "3", "--quiet"}, train...), "-o", "model.arrow", "train.arrow")...)
	r := mustRun(t, dir, "export", "--format", "crfsuite", "-o", "model.crfsuite", "model.arrow")
	if !strings.Contains(string(r.stderr), "@bias (every token), @start (the first) and @end (the last)") || !strings.Contains(string(r.stderr), "model_features.py") {
		t.Errorf("export's summary does not name the markers and the module:\n%s", r.stderr)
	}
	mustRun(t, dir, "featurize", "--model", "model.arrow", "--output-format", "crfsuite", "-o", "test.crfsuite.txt", testGz)
	mustRun(t, dir, "decode", "-m", "model.arrow", "-o", "pred.conll", "--text", testGz)

	pred, err := os.ReadFile(filepath.Join(dir, "pred.conll"))
	if err != nil {
		t.Fatal(err)
	}
	ours, oursSents := lastColumn(t, string(pred))
	theirs, theirSents, theirProbs := crfsuiteTag(t, crfsuiteBin, filepath.Join(dir, "model.crfsuite"), filepath.Join(dir, "test.crfsuite.txt"))
	if n := sameProbabilities(t, theirProbs, decodeProbabilities(t, dir, "model.arrow", "--text", testGz)); n != len(theirProbs) {
		t.Errorf("the best path's probability differs on %d sentences", len(theirProbs)-n)
	}
	rows := gzipConllRows(t, testGz)
	tokens := 0
	for _, s := range rows {
		tokens += len(s)
	}
	if len(ours) != tokens || len(theirs) != tokens || oursSents != len(rows) || theirSents != len(rows) {
		t.Fatalf("test set of %d sentences, %d tokens: decode gave %d sentences, %d labels; crfsuite %d, %d",
			len(rows), tokens, oursSents, len(ours), theirSents, len(theirs))
	}

	// Where the labels differ, score both paths with the model.
	equal, ties := 0, 0
	for i := range ours {
		if ours[i] == theirs[i] {
			equal++
		}
	}
	if equal != tokens {
		ties = tiedTokens(t, dir, testGz, ours, theirs)
	}
	t.Logf("CoNLL-2000 test, default chunking model with bias, start and end weights: crfsuite tag and decode agree on %d of %d tokens (%d sentences); %d tokens differ within tied paths",
		equal, tokens, len(rows), ties)

	// The Python module against featurize's CRFsuite lines.
	cs, err := os.Open(filepath.Join(dir, "test.crfsuite.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	cr := featurize.NewCRFsuiteReader(cs, "test.crfsuite.txt")
	var input bytes.Buffer
	enc := json.NewEncoder(&input)
	for _, s := range rows {
		if err := enc.Encode(s); err != nil {
			t.Fatal(err)
		}
	}
	py := exec.Command(python, "-c", `import json, sys
sys.path.insert(0, sys.argv[1])
import model_features as m
for line in sys.stdin:
    print(json.dumps([[[n, v.hex()] for n, v in a] for a in m.sent2attributes(json.loads(line))]))
    assert [[n for n, _ in a] for a in m.sent2attributes(json.loads(line))] == m.sent2features(json.loads(line))
`, dir)
	py.Stdin = &input
	var pyErr bytes.Buffer
	py.Stderr = &pyErr
	pyOut, err := py.Output()
	if err != nil {
		t.Fatalf("python3: %v\n%s", err, pyErr.String())
	}
	lines := strings.Split(strings.TrimSuffix(string(pyOut), "\n"), "\n")
	compared, attrs := 0, 0
	for i := 0; cr.Scan(); i++ {
		if i >= len(lines) {
			t.Fatalf("python gave %d sentences, featurize more", len(lines))
		}
		var got [][][2]string
		if err := json.Unmarshal([]byte(lines[i]), &got); err != nil {
			t.Fatal(err)
		}
		want := cr.Sentence().Attrs
		if len(got) != len(want) {
			t.Fatalf("sentence %d: python %d tokens, featurize %d", i, len(got), len(want))
		}
		for j := range want {
			if len(got[j]) != len(want[j]) {
				t.Fatalf("sentence %d token %d: python %d attributes, featurize %d", i, j, len(got[j]), len(want[j]))
			}
			for k, a := range want[j] {
				v, err := strconv.ParseFloat(got[j][k][1], 64)
				if err != nil || got[j][k][0] != a.Name || v != a.Value {
					t.Fatalf("sentence %d token %d attribute %d: python %q = %s, featurize %q = %v", i, j, k, got[j][k][0], got[j][k][1], a.Name, a.Value)
				}
				attrs++
			}
			compared++
		}
	}
	if err := cr.Err(); err != nil {
		t.Fatal(err)
	}
	if compared != tokens {
		t.Fatalf("compared %d tokens of %d", compared, tokens)
	}
	t.Logf("the Python module's attributes equal featurize's on %d of %d tokens (%d attributes)", compared, tokens, attrs)
}

// TestExportWithoutTemplates: a model trained on a table made without text
// (synth's) exports with its markers and no Python module, saying so;
// asking for the module by name is an error naming the reason, which
// leaves neither file.
func TestExportWithoutTemplates(t *testing.T) {
	dir := t.TempDir()
	mustRun(t, dir, "synth", "--sentences", "20", "--attrs", "50", "--labels", "3", "-o", "syn.arrow")
	mustRun(t, dir, "train", "-q", "--max-epochs", "1", "-o", "model.arrow", "syn.arrow")
	r := mustRun(t, dir, "export", "--format", "crfsuite", "-o", "model.crfsuite", "model.arrow")
	if !strings.Contains(string(r.stderr), "no Python feature module: model.arrow records no feature templates") ||
		!strings.Contains(string(r.stderr), "give them to CRFsuite's tagger") {
		t.Errorf("stderr:\n%s", r.stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "model_features.py")); !os.IsNotExist(err) {
		t.Errorf("a Python module was written: %v", err)
	}
	os.Remove(filepath.Join(dir, "model.crfsuite"))
	r = runInProcess(t, dir, "", "export", "--format", "crfsuite", "-o", "model.crfsuite", "--features-py", "f.py", "model.arrow")
	if r.code != 1 || !strings.Contains(string(r.stderr), "--features-py f.py: model.arrow records no feature templates") {
		t.Errorf("exit %d, stderr:\n%s", r.code, r.stderr)
	}
	for _, name := range []string{"model.crfsuite", "f.py"} {
		if _, err := os.Stat(filepath.Join(dir, name)); !os.IsNotExist(err) {
			t.Errorf("%s was written by a failed export: %v", name, err)
		}
	}
}

// TestExportEscapes trains a default model (bias, start and end weights)
// on a small corpus whose words hold ':' and '\' — written escaped in
// CRFsuite's lines, twice escaped where the templates escape '\' too — and
// non-ASCII letters, and checks that CRFsuite 0.12.2 tags it with the
// model export wrote exactly as decode does: the same labels, and every
// sentence's best path with the same probability (which any attribute
// CRFsuite failed to find would change).
func TestExportEscapes(t *testing.T) {
	crfsuiteBin := crfsuiteBinary(t)
	dir := t.TempDir()
	words := []string{`a:b`, `c\d`, `\:`, `x\\`, `:`, `é:\`, `::`, `plain`, `Ünï`, `\`}
	var text strings.Builder
	for i := range 120 {
		for j := range 3 + i%4 {
			w := words[(i*7+j*3)%len(words)]
			label := "O"
			switch {
			case strings.Contains(w, `\`):
				label = "B-BS"
			case strings.Contains(w, ":"):
				label = "B-CO"
			}
			fmt.Fprintf(&text, "%s P%d %s\n", w, j%2, label)
		}
		text.WriteString("\n")
	}
	if err := os.WriteFile(filepath.Join(dir, "corpus.txt"), []byte(text.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	mustRun(t, dir, "featurize", "--template", "ner", "-o", "train.arrow", "corpus.txt")
	mustRun(t, dir, "train", "--max-epochs", "5", "--quiet", "-o", "model.arrow", "train.arrow")
	mustRun(t, dir, "export", "--format", "crfsuite", "-o", "model.crfsuite", "model.arrow")
	mustRun(t, dir, "featurize", "--model", "model.arrow", "--output-format", "crfsuite", "-o", "corpus.crfsuite.txt", "corpus.txt")
	attrs, err := os.ReadFile(filepath.Join(dir, "corpus.crfsuite.txt"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`w[0]=a\:b`, `w[0]=c\\\\d`, `w[0]=\\\\\:`, `@bias`} {
		if !strings.Contains(string(attrs), want) {
			t.Errorf("CRFsuite lines lack %q", want)
		}
	}
	mustRun(t, dir, "decode", "-m", "model.arrow", "-o", "pred.conll", "--text", "corpus.txt")
	pred, err := os.ReadFile(filepath.Join(dir, "pred.conll"))
	if err != nil {
		t.Fatal(err)
	}
	ours, _ := lastColumn(t, string(pred))
	theirs, _, probs := crfsuiteTag(t, crfsuiteBin, filepath.Join(dir, "model.crfsuite"), filepath.Join(dir, "corpus.crfsuite.txt"))
	if strings.Join(ours, " ") != strings.Join(theirs, " ") {
		t.Errorf("crfsuite tag and decode disagree:\n decode   %v\n crfsuite %v", ours, theirs)
	}
	if n := sameProbabilities(t, probs, decodeProbabilities(t, dir, "model.arrow", "--text", "corpus.txt")); n != len(probs) {
		t.Errorf("the best path's probability differs on %d of %d sentences", len(probs)-n, len(probs))
	}
}
