package duals

import (
	"math"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/dualcrf/dualcrf/crf"
	"github.com/dualcrf/dualcrf/crf/crftest"
)

// newStoreFunc makes an empty dual store for d; the test owns closing it.
type newStoreFunc func(t *testing.T, d *crf.Dataset) Store

// TestStoreContract runs the one contract suite against every Store.
func TestStoreContract(t *testing.T) {
	t.Run("memory", func(t *testing.T) {
		testStore(t, func(t *testing.T, d *crf.Dataset) Store { return NewMemory(d) })
	})
	t.Run("file", func(t *testing.T) {
		testStore(t, func(t *testing.T, d *crf.Dataset) Store {
			s, err := CreateFile(filepath.Join(t.TempDir(), "duals.bin"), d)
			if err != nil {
				t.Fatal(err)
			}
			return s
		})
	})
}

// contractDatasets are the layouts every store must handle: sentences of
// one token (blocks of K) among longer ones, a single sentence, none.
func contractDatasets() map[string]*crf.Dataset {
	rng := rand.New(rand.NewPCG(42, 1))
	return map[string]*crf.Dataset{
		"random":   crftest.RandomDataset(rng, 40, 7, 9, 4, false),
		"real":     crftest.RandomDataset(rng, 25, 5, 6, 3, true),
		"single":   crftest.RandomDataset(rng, 1, 9, 3, 5, false),
		"one-tok":  lengthsDataset([]int{1, 1, 1}, 3),
		"no-sents": lengthsDataset(nil, 4),
	}
}

// lengthsDataset is a dataset of sentences of the given lengths, no
// attributes, gold label (t mod K).
func lengthsDataset(lens []int, K int) *crf.Dataset {
	d := &crf.Dataset{NumLabels: K, SentStart: []int{0}, AttrStart: []int{0}}
	for _, T := range lens {
		for t := 0; t < T; t++ {
			d.Labels = append(d.Labels, int32(t%K))
			d.AttrStart = append(d.AttrStart, 0)
		}
		d.SentStart = append(d.SentStart, len(d.Labels))
	}
	return d
}

func testStore(t *testing.T, newStore newStoreFunc) {
	for name, d := range contractDatasets() {
		t.Run(name, func(t *testing.T) {
			s := newStore(t, d)
			t.Run("shape", func(t *testing.T) { checkShape(t, s, d) })
			t.Run("write-through", func(t *testing.T) { checkWriteThrough(t, s) })
			t.Run("disjoint", func(t *testing.T) { checkDisjoint(t, s) })
			if err := s.Close(); err != nil {
				t.Fatalf("Close: %v", err)
			}
			if err := s.Close(); err != nil {
				t.Fatalf("second Close: %v", err)
			}
		})
	}
}

// checkShape: n blocks, each of crf.BlockLen(T_i, K) entries, zero, with no
// spare capacity an append could spill into a neighbour through.
func checkShape(t *testing.T, s Store, d *crf.Dataset) {
	if s.Len() != d.Len() {
		t.Fatalf("Len() = %d, dataset has %d sentences", s.Len(), d.Len())
	}
	for i := 0; i < d.Len(); i++ {
		want := crf.BlockLen(d.SentStart[i+1]-d.SentStart[i], d.NumLabels)
		for _, v := range []struct {
			name string
			b    []float64
		}{{"Block", s.Block(i)}} {
			if len(v.b) != want || cap(v.b) != want {
				t.Fatalf("%s(%d): len %d cap %d, want %d", v.name, i, len(v.b), cap(v.b), want)
			}
			for j, x := range v.b {
				if x != 0 || math.Signbit(x) {
					t.Fatalf("%s(%d)[%d] = %g in a new store, want +0", v.name, i, j, x)
				}
			}
		}
	}
}

// checkWriteThrough: a write to a returned slice is seen by a fresh call.
func checkWriteThrough(t *testing.T, s Store) {
	for i := 0; i < s.Len(); i++ {
		s.Block(i)[0] = 0.25
		s.Block(i)[len(s.Block(i))-1] = -1.5
		if got := s.Block(i)[0]; got != 0.25 {
			t.Fatalf("Block(%d)[0] = %g after writing 0.25", i, got)
		}
		if b := s.Block(i); b[len(b)-1] != -1.5 {
			t.Fatalf("Block(%d)[last] = %g after writing -1.5", i, b[len(b)-1])
		}
	}
}

// pattern is a value unique to (block, entry).
func pattern(i, j int) float64 { return float64(i)*1e5 + float64(j) + 0.5 }

// checkDisjoint writes a distinct value into every entry of every block,
// then reads them all back: no two blocks share memory.
func checkDisjoint(t *testing.T, s Store) {
	for i := 0; i < s.Len(); i++ {
		for j := range s.Block(i) {
			s.Block(i)[j] = pattern(i, j)
		}
	}
	for i := 0; i < s.Len(); i++ {
		for j := range s.Block(i) {
			if got, want := s.Block(i)[j], pattern(i, j); got != want {
				t.Fatalf("Block(%d)[%d] = %g, wrote %g", i, j, got, want)
			}
		}
	}
}
