package crfsuite

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/dualcrf/dualcrf/crf"
	"github.com/dualcrf/dualcrf/crf/crftest"
)

// sizeModel is a random model of A attributes and K labels, a share of its
// weights zero (whole rows among them), with bias, start and end weights
// unless noBias.
func sizeModel(rng *rand.Rand, A, K int, zeros int, noBias bool) *crf.Model {
	lay := crf.Layout{NumAttrs: A, NumLabels: K, NoBias: noBias}
	w := crftest.RandomWeights(rng, lay, 1)
	for i := range w {
		if rng.IntN(zeros+1) != 0 {
			w[i] = 0
		}
	}
	m := &crf.Model{Layout: lay, Weights: w, Meta: map[string]string{}}
	for a := range A {
		m.AttrNames = append(m.AttrNames, fmt.Sprintf("w[%d]=%s", a, string(rune('a'+a%26))))
	}
	for y := range K {
		m.LabelNames = append(m.LabelNames, fmt.Sprintf("Label-%d", y))
	}
	return m
}

// TestSizeOf: the file size SizeOf works out is the size WriteModel
// writes, and the memory it estimates covers what WriteModel allocates,
// within a factor of 4.
func TestSizeOf(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for trial := range 30 {
		A, K := 1+rng.IntN(2000), 1+rng.IntN(9)
		m := sizeModel(rng, A, K, trial%4, trial%3 == 0)
		s := SizeOf(m)
		var buf bytes.Buffer
		buf.Grow(int(s.File))
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		if _, err := WriteModel(&buf, m); err != nil {
			t.Fatal(err)
		}
		runtime.ReadMemStats(&after)
		if int64(buf.Len()) != s.File {
			t.Fatalf("A=%d K=%d: SizeOf says %d bytes, WriteModel wrote %d", A, K, s.File, buf.Len())
		}
		if alloc := int64(after.TotalAlloc - before.TotalAlloc); alloc > s.Memory || 4*alloc < s.Memory {
			t.Fatalf("A=%d K=%d: WriteModel allocated %d bytes, SizeOf estimates %d", A, K, alloc, s.Memory)
		}
		if err := s.Check(); err != nil {
			t.Fatal(err)
		}
	}
	if err := (Size{File: 1 << 32}).Check(); !errors.Is(err, ErrNotExportable) {
		t.Fatalf("a file of 4 GiB: %v", err)
	}
}
