package featurize

import (
	"strings"
	"testing"

	"github.com/dualcrf/dualcrf/internal/datatest"
	"github.com/dualcrf/dualcrf/pipeline"
)

// TestSuspectLabels: a chunk label whose type is one edit from a frequent
// type, or a label equal to a frequent one but for case, is a suspect when
// rare; other scheme positions of a frequent type (I-PRT next to B-PRT)
// and POS tags one edit apart (NNPS next to NNP) are not.
func TestSuspectLabels(t *testing.T) {
	c := newLabelCounts()
	add := func(label string, n, line int) {
		c.n[label], c.first[label] = n, line
	}
	add("B-PER", 600, 1)
	add("I-PER", 300, 2)
	add("B-MISC", 400, 3)
	add("B-PRT", 500, 4)
	add("NNP", 900, 5)
	add("O", 5000, 6)
	add("B-PERS", 1, 77)  // a typo of PER
	add("B-MSIC", 2, 88)  // a swap
	add("b-PER", 1, 99)   // case
	add("I-PRT", 2, 10)   // the inside of a frequent type
	add("NNPS", 3, 11)    // a POS tag
	add("B-LOC", 3, 12)   // rare, but like no frequent type
	add("I-MISC", 12, 13) // not rare
	got := strings.Join(c.suspectLabels("in.txt"), "\n")
	for _, want := range []string{`label "B-PERS" is seen 1 time (first on line 77), and "B-PER" 600 times`,
		`label "B-MSIC" is seen 2 times (first on line 88), and "B-MISC" 400 times`, `label "b-PER" is seen 1 time (first on line 99), and "B-PER" 600 times`} {
		if !strings.Contains(got, want) {
			t.Errorf("warnings lack %q:\n%s", want, got)
		}
	}
	for _, not := range []string{`"I-PRT"`, `"NNPS"`, `"B-LOC"`, `"I-MISC"`} {
		if strings.Contains(got, not) {
			t.Errorf("warnings name %s:\n%s", not, got)
		}
	}
	if n := strings.Count(got, "\n") + 1; n != 3 {
		t.Errorf("%d warnings, want 3:\n%s", n, got)
	}
}

// noSuspects checks that the labels of the corpus at path raise no
// warning.
func noSuspects(t *testing.T, path, format string, xpos bool) {
	t.Helper()
	r, closer, err := OpenReader(pipeline.Source{Path: path}, InputOptions{Format: format, XPOS: xpos})
	if err != nil {
		t.Fatal(err)
	}
	defer closer.Close()
	counts := newLabelCounts()
	for r.Scan() {
		counts.add(r.Sentence())
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	if w := counts.suspectLabels(path); len(w) > 0 {
		t.Errorf("%s (%d labels): %s", path, len(counts.n), strings.Join(w, "\n"))
	}
}

// TestSuspectLabelsCorpora: the corpora's own label sets, rare labels
// included (CoNLL-2000's I-PRT and B-LST, EWT's rare tags), raise no
// warning: the slices the repository carries, then the full corpora.
func TestSuspectLabelsCorpora(t *testing.T) {
	noSuspects(t, datatest.Carried(t, "cmd", "dualcrf", "demodata", "train.txt.gz"), "conll", false)
	ewt := datatest.Carried(t, "testdata", "corpora", "ud_english_ewt", "en_ewt-ud-dev.conllu.gz")
	noSuspects(t, ewt, "conllu", false)
	noSuspects(t, ewt, "conllu", true)
	noSuspects(t, datatest.Path(t, "conll2000", "train.txt.gz"), "conll", false)
	noSuspects(t, datatest.Path(t, "conll2002", "ned.train.gz"), "conll", false)
}
