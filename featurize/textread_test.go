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

	"github.com/dualcrf/dualcrf/crf"
	"github.com/dualcrf/dualcrf/crf/crftest"
	"github.com/dualcrf/dualcrf/pipeline"
	"github.com/dualcrf/dualcrf/tables"
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
			if _, err := Run(ctx, pipeline.Source{Path: c.train}, &trainBuf, RunOptions{Input: c.input, Templates: c.templates}); err != nil {
				t.Fatal(err)
			}
			train, err := tables.ReadFeatureTable(&trainBuf, "train", tables.FeatureReadOptions{SkipText: true})
			if err != nil {
				t.Fatal(err)
			}
			vocab, err := NewVocabulary(train.Data.AttrNames)
			if err != nil {
				t.Fatal(err)
			}
			opts := RunOptions{Input: c.input, Templates: c.templates, Vocab: vocab, Labels: train.Data.LabelNames}
			sum, err := Run(ctx, pipeline.Source{Path: c.test}, &testBuf, opts)
			if err != nil {
				t.Fatal(err)
			}
			want, err := tables.ReadFeatureTable(&testBuf, "test", tables.FeatureReadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			tr, err := NewTextReader(pipeline.Source{Path: c.test}, opts, 40)
			if err != nil {
				t.Fatal(err)
			}
			defer tr.Close()
			var chunks []*tables.FeatureTable
			dropped := 0
			for tr.Next() {
				chunks = append(chunks, tr.Chunk())
				dropped += tr.Chunk().Dropped
			}
			if err := tr.Err(); err != nil {
				t.Fatal(err)
			}
			checkChunkSizes(t, chunks, 40)
			got := joinChunks(t, chunks)
			if err := crftest.CompareDatasets(got.Data, want.Data); err != nil {
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
	ok := tables.Coverage{Tokens: 100, Attrs: 1000, UnknownAttrs: 96, Labelled: 100}
	if err := ok.Mismatch("t.arrow", "m.arrow"); err != nil || len(ok.Warnings("m.arrow")) != 0 {
		t.Fatalf("CoNLL-like test data (9.6%% unknown): %v %q", err, ok.Warnings("m.arrow"))
	}
	for _, c := range []struct {
		cov  tables.Coverage
		want string
	}{
		{tables.Coverage{Tokens: 10, Attrs: 50, UnknownAttrs: 50, Labelled: 10}, "t.arrow and m.arrow share no attribute: none of the 50 attribute occurrences of its 10 tokens"},
		{tables.Coverage{Tokens: 10, Labelled: 10}, "share no attribute: none of the 0 attribute occurrences"},
		{tables.Coverage{Tokens: 10, Attrs: 50, Labelled: 4, UnknownLabels: map[string]int{"X": 3, "Y": 1}}, "share no label: none of the gold labels of its 4 labelled tokens (X (3), Y (1))"},
	} {
		err := c.cov.Mismatch("t.arrow", "m.arrow")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.cov, err, c.want)
		}
	}
	if err := (tables.Coverage{}).Mismatch("t", "m"); err != nil {
		t.Errorf("no tokens: %v", err)
	}
	partial := tables.Coverage{Tokens: 10, Attrs: 1000, UnknownAttrs: 501, Labelled: 10, UnknownLabels: map[string]int{"B-LST": 2}}
	if err := partial.Mismatch("t", "m"); err != nil {
		t.Fatal(err)
	}
	w := partial.Warnings("m.arrow")
	if len(w) != 2 || !strings.HasPrefix(w[0], "501 of 1000 attribute occurrences (50.1%) are unknown to m.arrow") ||
		w[1] != "2 of 10 labelled tokens have a gold label m.arrow cannot predict (kept; scored as errors): B-LST (2)" {
		t.Fatalf("warnings %q", w)
	}
	if w := (tables.Coverage{Tokens: 10, Attrs: 1000, UnknownAttrs: 500}).Warnings("m"); len(w) != 0 {
		t.Fatalf("exactly half unknown: %q", w)
	}
}

// joinChunks below joins TextReader's chunks into the one table Run writes,
// for crftest.CompareDatasets (package tables has its own for its reader's
// chunks: a test helper cannot import the package it tests from outside).

// joinChunks concatenates chunks into one table, checking that they number
// their sentences on and that every chunk's names are a prefix of the
// last's.
func joinChunks(t *testing.T, chunks []*tables.FeatureTable) *tables.FeatureTable {
	t.Helper()
	last := chunks[len(chunks)-1].Data
	d := &crf.Dataset{NumAttrs: last.NumAttrs, NumLabels: last.NumLabels, AttrNames: last.AttrNames, LabelNames: last.LabelNames,
		SentStart: []int{0}, AttrStart: []int{0}}
	out := &tables.FeatureTable{Data: d, Columns: chunks[0].Columns, Text: make([][]string, len(chunks[0].Columns))}
	real := false
	for k, c := range chunks {
		cd := c.Data
		if c.FirstSentence != d.Len() {
			t.Fatalf("chunk %d starts at sentence %d, want %d", k, c.FirstSentence, d.Len())
		}
		if !reflect.DeepEqual(cd.AttrNames, last.AttrNames[:cd.NumAttrs]) || !reflect.DeepEqual(cd.LabelNames, last.LabelNames[:cd.NumLabels]) {
			t.Fatalf("chunk %d: names are not a prefix of the last chunk's", k)
		}
		base := d.NumTokens()
		for i := 1; i < len(cd.SentStart); i++ {
			d.SentStart = append(d.SentStart, base+cd.SentStart[i])
		}
		for tok := 0; tok < cd.NumTokens(); tok++ {
			d.Labels = append(d.Labels, cd.Labels[tok])
			for j := cd.AttrStart[tok]; j < cd.AttrStart[tok+1]; j++ {
				d.Attrs = append(d.Attrs, cd.Attrs[j])
				v := 1.0
				if cd.Values != nil {
					v = cd.Values[j]
				}
				real = real || v != 1
				d.Values = append(d.Values, v)
			}
			d.AttrStart = append(d.AttrStart, len(d.Attrs))
		}
		for col := range out.Text {
			out.Text[col] = append(out.Text[col], c.Text[col]...)
		}
	}
	if !real {
		d.Values = nil
	}
	return out
}

// checkChunkSizes fails when a chunk is empty or holds more than
// chunkTokens−1 tokens plus its last sentence.
func checkChunkSizes(t *testing.T, chunks []*tables.FeatureTable, chunkTokens int) {
	t.Helper()
	for k, c := range chunks {
		d := c.Data
		n := d.Len()
		if n == 0 {
			t.Fatalf("chunk %d is empty", k)
		}
		if before := d.SentStart[n-1]; before >= chunkTokens {
			t.Fatalf("chunk %d: %d tokens before its last sentence, want < %d", k, before, chunkTokens)
		}
	}
}
