package decode

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/dualcrf/dualcrf/crf"
	"github.com/dualcrf/dualcrf/crf/crftest"
)

// TestDecodeMatchesEnumeration checks predictions, confidences and sentence
// log-probabilities against brute force, with 1 and 3 workers.
func TestDecodeMatchesEnumeration(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	d := crftest.RandomDataset(rng, 300, 5, 9, 3, true)
	lay := crf.Layout{NumAttrs: 9, NumLabels: 3}
	m := &crf.Model{Layout: lay, Weights: crftest.RandomWeights(rng, lay, 1.5), AttrNames: d.AttrNames, LabelNames: d.LabelNames}
	for _, workers := range []int{1, 3} {
		p, err := Decode(context.Background(), m, d, Options{Marginals: true, Workers: workers})
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < d.Len(); i++ {
			s := d.Sentence(i)
			j := crftest.Enumerate(lay, m.Weights, s)
			best, score := j.Best()
			off := d.SentStart[i]
			for tt, y := range best {
				if p.Labels[off+tt] != y {
					t.Fatalf("workers %d sentence %d: predicted %v, want %v", workers, i, p.Labels[off:off+len(best)], best)
				}
			}
			if lp := score - j.LogZ; math.Abs(p.LogProb[i]-lp) > 1e-9 {
				t.Fatalf("sentence %d: log p = %g, want %g", i, p.LogProb[i], lp)
			}
			_, node := j.Marginals()
			for tt, y := range best {
				if c := node[tt*3+int(y)]; math.Abs(p.Confidence[off+tt]-c) > 1e-9 {
					t.Fatalf("sentence %d token %d: confidence %g, want %g", i, tt, p.Confidence[off+tt], c)
				}
			}
		}
	}
}

// TestRemap checks that attributes are matched by name and unknown ones
// dropped, so a table featurized with another vocabulary decodes the same.
func TestRemap(t *testing.T) {
	m := &crf.Model{AttrNames: []string{"a", "b", "c"}}
	d := &crf.Dataset{NumAttrs: 4, AttrNames: []string{"c", "zz", "a", "b"},
		SentStart: []int{0, 2}, AttrStart: []int{0, 2, 4}, Attrs: []int32{0, 1, 2, 3}, Labels: []int32{0, 0}}
	r := Remap(m, d)
	want := []int32{2, -1, 0, 1}
	for i := range want {
		if r[i] != want[i] {
			t.Fatalf("remap %v, want %v", r, want)
		}
	}
	out := Apply(d, r, 3, m.AttrNames)
	if got := out.Attrs; len(got) != 3 || got[0] != 2 || got[1] != 0 || got[2] != 1 || out.AttrStart[1] != 1 || out.AttrStart[2] != 3 {
		t.Fatalf("applied attrs %v starts %v", out.Attrs, out.AttrStart)
	}
	if Remap(m, &crf.Dataset{AttrNames: []string{"a", "b"}}) != nil {
		t.Fatal("a prefix of the model's vocabulary should need no remap")
	}
}
