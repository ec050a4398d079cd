package decode

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"reflect"
	"testing"
)

// randomSentences draws n sentences of tags, odd ones included, with
// predictions that mostly agree with gold.
func randomSentences(r *rand.Rand, n int) []sentence {
	vocab := []string{"O", "B-NP", "I-NP", "B-VP", "I-VP", "E-NP", "S-VP", "I-PP", "B-PP", "[", "]", ".", "B", "X-A", ".-A"}
	out := make([]sentence, n)
	for i := range out {
		m := 1 + r.IntN(8)
		for range m {
			g := vocab[r.IntN(len(vocab))]
			p := g
			if r.IntN(4) == 0 {
				p = vocab[r.IntN(len(vocab))]
			}
			out[i].gold = append(out[i].gold, g)
			out[i].pred = append(out[i].pred, p)
		}
	}
	return out
}

// TestCountsMergeEqualsWhole scores a corpus whole and in parts, merges
// the parts' counts in every rotation of their order, and wants the same
// scores and the same conlleval report, for each scheme.
func TestCountsMergeEqualsWhole(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, opts := range []EvalOptions{{}, {Scheme: SchemeAuto}, {NoChunks: true}} {
		for trial := range 50 {
			sents := randomSentences(r, 1+r.IntN(30))
			whole := NewEvaluator(opts)
			for _, s := range sents {
				if err := whole.Add(s.gold, s.pred); err != nil {
					t.Fatal(err)
				}
			}
			// Cut into parts; skip corpora where a part but the last
			// ends inside a chunk (TestCountsMergeOpen covers those).
			var parts []Counts
			ok := true
			for len(sents) > 0 {
				k := 1 + r.IntN(len(sents))
				e := NewEvaluator(opts)
				for _, s := range sents[:k] {
					if err := e.Add(s.gold, s.pred); err != nil {
						t.Fatal(err)
					}
				}
				sents = sents[k:]
				c := e.Counts()
				if c.Open && len(sents) > 0 {
					ok = false
				}
				parts = append(parts, c)
			}
			if !ok {
				continue
			}
			want := whole.Result()
			var wantText bytes.Buffer
			if err := whole.WriteConlleval(&wantText); err != nil {
				t.Fatal(err)
			}
			for rot := range parts {
				var c Counts
				c.Options = opts
				for i := range parts {
					if err := c.Merge(parts[(rot+i)%len(parts)]); err != nil {
						t.Fatalf("%+v trial %d: %v", opts, trial, err)
					}
				}
				e := EvaluatorFromCounts(c)
				if got := e.Result(); !reflect.DeepEqual(got, want) {
					t.Fatalf("%+v trial %d rotation %d: merged scores\n%+v\nwant\n%+v", opts, trial, rot, got, want)
				}
				var text bytes.Buffer
				if err := e.WriteConlleval(&text); err != nil {
					t.Fatal(err)
				}
				if text.String() != wantText.String() {
					t.Fatalf("%+v trial %d: merged report\n%s\nwant\n%s", opts, trial, &text, &wantText)
				}
			}
		}
	}
}

// TestCountsMergeOpen: a chunk left open by odd tags ("X-A" then ".-A":
// the boundary does not close it) is credited at the end like conlleval
// does; two open parts refuse to merge, and other options too.
func TestCountsMergeOpen(t *testing.T) {
	open := NewEvaluator(EvalOptions{})
	if err := open.Add(tags("X-A .-A"), tags("X-A .-A")); err != nil {
		t.Fatal(err)
	}
	c := open.Counts()
	if !c.Open {
		t.Fatalf("counts %+v: want Open", c)
	}
	if got, want := EvaluatorFromCounts(c).Result(), open.Result(); !reflect.DeepEqual(got, want) {
		t.Errorf("round trip of open counts: %+v, want %+v", got, want)
	}
	d := open.Counts()
	if err := d.Merge(c); !errors.Is(err, ErrOpenChunk) {
		t.Errorf("merging two open parts: %v, want ErrOpenChunk", err)
	}
	e := NewEvaluator(EvalOptions{NoChunks: true}).Counts()
	if err := e.Merge(c); err == nil {
		t.Error("merging counts of other options: no error")
	}
}
