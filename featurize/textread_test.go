package featurize

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// textCorpus writes n random CoNLL sentences (word, POS, label) over a
// vocabulary of `words` words and the given labels to a file.
func textCorpus(t *testing.T, rng *rand.Rand, n, words int, labels []string) string {
	t.Helper()
	var b strings.Builder
	for i := 0; i < n; i++ {
		for tok := 1 + rng.IntN(12); tok > 0; tok-- {
			fmt.Fprintf(&b, "w%d P%d %s\n", rng.IntN(words), rng.IntN(4), labels[rng.IntN(len(labels))])
		}
		b.WriteString("\n")
	}
	path := filepath.Join(t.TempDir(), "corpus.txt")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// textCrfsuite writes a CRFsuite attribute file with real values, over
// 2·attrs attributes.
func textCrfsuite(t *testing.T, rng *rand.Rand, n, attrs int) string {
	t.Helper()
	var b strings.Builder
	for i := 0; i < n; i++ {
		for tok := 1 + rng.IntN(6); tok > 0; tok-- {
			fmt.Fprintf(&b, "L%d\tx%d:%.3f\ty%d\n", rng.IntN(3), rng.IntN(attrs), rng.NormFloat64(), rng.IntN(attrs))
		}
		b.WriteString("\n")
	}
	path := filepath.Join(t.TempDir(), "corpus.crfsuite")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestTextReader featurizes test text with a training vocabulary both ways
// — Run writing a table read back whole, and TextReader's chunks — and
// checks that they agree, including the unknown attributes left out and
// the labels unknown to the vocabulary, kept and counted.
func TestTextReader(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	chunking, err := Builtin("chunking")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name         string
		input        InputOptions
		templates    *TemplateSet
		train, test  string
		trainLabels  int
		unknownLabel string
	}{
		{"conll", InputOptions{}, chunking,
			textCorpus(t, rng, 200, 60, []string{"B-NP", "I-NP", "O"}),
			textCorpus(t, rng, 150, 90, []string{"B-NP", "I-NP", "O", "B-LST"}), 3, "B-LST"},
		{"crfsuite", InputOptions{Format: "crfsuite"}, nil, textCrfsuite(t, rng, 100, 30), textCrfsuite(t, rng, 80, 45), 3, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			var trainBuf, testBuf bytes.Buffer
			if _, err := Run(ctx, c.train, &trainBuf, RunOptions{Input: c.input, Templates: c.templates}); err != nil {
				t.Fatal(err)
			}
			train, err := ReadTable(&trainBuf, "train", ReadOptions{SkipText: true})
			if err != nil {
				t.Fatal(err)
			}
			vocab, err := NewVocabulary(train.Data.AttrNames)
			if err != nil {
				t.Fatal(err)
			}
			opts := RunOptions{Input: c.input, Templates: c.templates, Vocab: vocab, Labels: train.Data.LabelNames}
			sum, err := Run(ctx, c.test, &testBuf, opts)
			if err != nil {
				t.Fatal(err)
			}
			want, err := ReadTable(&testBuf, "test", ReadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			tr, err := NewTextReader(c.test, opts, 40)
			if err != nil {
				t.Fatal(err)
			}
			defer tr.Close()
			var chunks []*Table
			dropped := 0
			for tr.Next() {
				chunks = append(chunks, tr.Chunk())
				dropped += tr.Chunk().Dropped
			}
			if err := tr.Err(); err != nil {
				t.Fatal(err)
			}
			checkChunkSizes(t, chunks, 40)
			got := tableJoin(t, chunks)
			if err := tableCompare(got.Data, want.Data); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got.Text, want.Text) || !reflect.DeepEqual(chunks[0].Columns, want.Columns) {
				t.Fatalf("text columns %v differ from Run's %v", chunks[0].Columns, want.Columns)
			}
			for k, v := range want.Metadata {
				if strings.HasPrefix(k, "dualcrf.") && k != "dualcrf.format" && k != "dualcrf.version" && chunks[0].Metadata[k] != v {
					t.Errorf("metadata %s = %q, Run wrote %q", k, chunks[0].Metadata[k], v)
				}
			}
			cov := sum.Coverage
			if cov == nil || dropped != cov.UnknownAttrs || dropped == 0 {
				t.Fatalf("TextReader dropped %d unknown attribute occurrences, Run's coverage %+v", dropped, cov)
			}
			if cov.Tokens != want.Data.NumTokens() || cov.Attrs != len(want.Data.Attrs)+dropped || cov.Labelled != cov.Tokens {
				t.Fatalf("coverage %+v of a table of %d tokens and %d known attribute occurrences", cov, want.Data.NumTokens(), len(want.Data.Attrs))
			}
			// A label unknown to the vocabulary is kept on its tokens,
			// appended to the label names, and counted.
			n := 0
			for _, y := range want.Data.Labels {
				if int(y) >= c.trainLabels {
					n++
					if want.Data.LabelNames[y] != c.unknownLabel {
						t.Fatalf("label %q beyond the training labels", want.Data.LabelNames[y])
					}
				}
			}
			if cov.UnknownLabels[c.unknownLabel] != n || cov.UnknownLabelled() != n || (c.unknownLabel != "" && n == 0) {
				t.Fatalf("%d tokens labelled %q, coverage counts %v", n, c.unknownLabel, cov.UnknownLabels)
			}
		})
	}
}

// TestCoverage checks what counts make an error and what a warning.
func TestCoverage(t *testing.T) {
	ok := Coverage{Tokens: 100, Attrs: 1000, UnknownAttrs: 96, Labelled: 100}
	if err := ok.Mismatch("t.arrow", "m.arrow"); err != nil || len(ok.Warnings("m.arrow")) != 0 {
		t.Fatalf("CoNLL-like test data (9.6%% unknown): %v %q", err, ok.Warnings("m.arrow"))
	}
	for _, c := range []struct {
		cov  Coverage
		want string
	}{
		{Coverage{Tokens: 10, Attrs: 50, UnknownAttrs: 50, Labelled: 10}, "t.arrow and m.arrow share no attribute: none of the 50 attribute occurrences of its 10 tokens"},
		{Coverage{Tokens: 10, Labelled: 10}, "share no attribute: none of the 0 attribute occurrences"},
		{Coverage{Tokens: 10, Attrs: 50, Labelled: 4, UnknownLabels: map[string]int{"X": 3, "Y": 1}}, "share no label: none of the gold labels of its 4 labelled tokens (X (3), Y (1))"},
	} {
		err := c.cov.Mismatch("t.arrow", "m.arrow")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.cov, err, c.want)
		}
	}
	if err := (Coverage{}).Mismatch("t", "m"); err != nil {
		t.Errorf("no tokens: %v", err)
	}
	partial := Coverage{Tokens: 10, Attrs: 1000, UnknownAttrs: 501, Labelled: 10, UnknownLabels: map[string]int{"B-LST": 2}}
	if err := partial.Mismatch("t", "m"); err != nil {
		t.Fatal(err)
	}
	w := partial.Warnings("m.arrow")
	if len(w) != 2 || !strings.HasPrefix(w[0], "501 of 1000 attribute occurrences (50.1%) are unknown to m.arrow") ||
		w[1] != "2 of 10 labelled tokens have a gold label m.arrow cannot predict (kept; scored as errors): B-LST (2)" {
		t.Fatalf("warnings %q", w)
	}
	if w := (Coverage{Tokens: 10, Attrs: 1000, UnknownAttrs: 500}).Warnings("m"); len(w) != 0 {
		t.Fatalf("exactly half unknown: %q", w)
	}
}
