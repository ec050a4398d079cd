package duals

import (
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"

	"github.com/dualcrf/dualcrf/crf"
	"github.com/dualcrf/dualcrf/crf/crftest"
)

// newStoreFunc makes an empty dual store for d at precision p; the test
// owns closing it.
type newStoreFunc func(t *testing.T, d *crf.Dataset, p Precision) Store

// TestStoreContract runs the one contract suite against every Store at
// every precision.
func TestStoreContract(t *testing.T) {
	for _, p := range Precisions {
		t.Run(p.String(), func(t *testing.T) {
			t.Run("memory", func(t *testing.T) {
				testStore(t, p, func(t *testing.T, d *crf.Dataset, p Precision) Store { return NewMemory(d, p) })
			})
			t.Run("file", func(t *testing.T) {
				testStore(t, p, func(t *testing.T, d *crf.Dataset, p Precision) Store {
					s, err := CreateFile(filepath.Join(t.TempDir(), "duals.bin"), d, p)
					if err != nil {
						t.Fatal(err)
					}
					return s
				})
			})
			t.Run("stream", func(t *testing.T) {
				testStore(t, p, func(t *testing.T, d *crf.Dataset, p Precision) Store {
					s, err := CreateStream(filepath.Join(t.TempDir(), "duals.stream"), d, StreamOptions{Precision: p})
					if err != nil {
						t.Fatal(err)
					}
					return s
				})
			})
		})
	}
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

func testStore(t *testing.T, p Precision, newStore newStoreFunc) {
	for name, d := range contractDatasets() {
		t.Run(name, func(t *testing.T) {
			s := newStore(t, d, p)
			if s.Precision() != p {
				t.Fatalf("Precision() = %v, made with %v", s.Precision(), p)
			}
			t.Run("shape", func(t *testing.T) { checkShape(t, s, d) })
			t.Run("round-trip", func(t *testing.T) { checkRoundTrip(t, s, d) })
			t.Run("disjoint", func(t *testing.T) { checkDisjoint(t, s, d) })
			if err := s.Close(); err != nil {
				t.Fatalf("Close: %v", err)
			}
			if err := s.Close(); err != nil {
				t.Fatalf("second Close: %v", err)
			}
		})
	}
}

// checkShape: n blocks, each of Precision().BlockBytes(T_i, K) bytes, zero,
// with no spare capacity an append could spill into a neighbour through.
func checkShape(t *testing.T, s Store, d *crf.Dataset) {
	if s.Len() != d.Len() {
		t.Fatalf("Len() = %d, dataset has %d sentences", s.Len(), d.Len())
	}
	for i := 0; i < d.Len(); i++ {
		want := s.Precision().BlockBytes(d.SentStart[i+1]-d.SentStart[i], d.NumLabels)
		b := s.Raw(i)
		if int64(len(b)) != want || int64(cap(b)) != want {
			t.Fatalf("Raw(%d): len %d cap %d, want %d", i, len(b), cap(b), want)
		}
		for j, x := range b {
			if x != 0 {
				t.Fatalf("Raw(%d)[%d] = %d in a new store, want 0", i, j, x)
			}
		}
	}
}

// randomChain returns the marginals of a random Markov chain of T tokens
// over K labels (entries spanning many magnitudes): consistent, positive
// and summing to one on every clique.
func randomChain(rng *rand.Rand, T, K int) []float64 {
	node := make([]float64, K)
	pos := func() float64 { return math.Exp(-12 * rng.Float64()) }
	s := 0.0
	for y := range node {
		node[y] = pos()
		s += node[y]
	}
	for y := range node {
		node[y] /= s
	}
	if T == 1 {
		return node
	}
	mu := make([]float64, (T-1)*K*K)
	next := make([]float64, K)
	for t := 0; t < T-1; t++ {
		clear(next)
		for y := 0; y < K; y++ {
			row := mu[(t*K+y)*K : (t*K+y+1)*K]
			rs := 0.0
			for y2 := range row {
				row[y2] = pos()
				rs += row[y2]
			}
			for y2 := range row {
				row[y2] *= node[y] / rs
				next[y2] += row[y2]
			}
		}
		node, next = next, node
	}
	return mu
}

// checkRoundTrip: Put sets its block to what Load then returns, bit for
// bit, and for float64 that is the block put.
func checkRoundTrip(t *testing.T, s Store, d *crf.Dataset) {
	rng := rand.New(rand.NewPCG(7, 7))
	K := d.NumLabels
	for i := 0; i < s.Len(); i++ {
		T := d.SentStart[i+1] - d.SentStart[i]
		mu := randomChain(rng, T, K)
		put := slices.Clone(mu)
		s.Put(i, put)
		got := make([]float64, len(mu))
		s.Load(i, got)
		for j := range got {
			if math.Float64bits(got[j]) != math.Float64bits(put[j]) {
				t.Fatalf("block %d entry %d: Load %v, Put left %v", i, j, got[j], put[j])
			}
			if s.Precision() == Float64 && put[j] != mu[j] {
				t.Fatalf("block %d entry %d: Put changed %v to %v in a float64 store", i, j, mu[j], put[j])
			}
			if math.Abs(put[j]-mu[j]) > roundTol(s.Precision())*mu[j]+1e-300 {
				t.Fatalf("block %d entry %d: put %v, stored %v", i, j, mu[j], put[j])
			}
		}
	}
}

// checkDisjoint puts a distinct block into every block, then loads them
// all back: no two blocks share memory.
func checkDisjoint(t *testing.T, s Store, d *crf.Dataset) {
	rng := rand.New(rand.NewPCG(9, 9))
	K := d.NumLabels
	want := make([][]float64, s.Len())
	for i := range want {
		want[i] = randomChain(rng, d.SentStart[i+1]-d.SentStart[i], K)
		s.Put(i, want[i])
		if ms, ok := s.(MarginalStore); ok {
			ms.Prefetch(i) // a hint: it changes nothing
		}
	}
	for i := range want {
		got := make([]float64, len(want[i]))
		s.Load(i, got)
		if !slices.Equal(got, want[i]) {
			t.Fatalf("block %d: loaded %v, put %v", i, got, want[i])
		}
	}
}

// f64 views block i of a Float64 store in place: writes to it are writes
// to the store.
func f64(s Store, i int) []float64 {
	v := float64View(s.Raw(i))
	return v[:len(v):len(v)]
}

// pattern is a value unique to (block, entry).
func pattern(i, j int) float64 { return float64(i)*1e5 + float64(j) + 0.5 }

// roundTol is the most a block's entries move, relatively, when put into a
// store of precision p: each edge's rounding compounds along the chain.
func roundTol(p Precision) float64 {
	switch p {
	case Float32:
		return 1e-6
	case BFloat16:
		return 0.05
	}
	return 0
}
