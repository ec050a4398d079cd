package train

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/dualcrf/dualcrf/crf"
	"github.com/dualcrf/dualcrf/duals"
)

// whatSerial is ŵ(μ) as one goroutine adds it up: crf.AddExpected
// sentence after sentence — the order what must reproduce bit for bit.
func whatSerial(p *Problem, store duals.Store) []float64 {
	w, err := p.whatSerial(nil, store)
	if err != nil {
		panic(err)
	}
	return w
}

// TestWhatSameBitsAnyWorkers: ŵ(μ) computed on 1, 2, 3, K and more
// goroutines, in chunks of one sentence to all, is the serial sum bit for bit, with integer and real
// attribute values, sentences of one token, with and without the bias and
// masks, at duals whose entries are random (no two sums alike), kept in
// float64 and in float32.
func TestWhatSameBitsAnyWorkers(t *testing.T) {
	cases := []struct {
		name string
		p    *Problem
	}{
		{"binary K=5", randomProblem(t, 1, 40, 6, 30, 5, false, 0)},
		{"real K=7", randomProblem(t, 2, 50, 4, 20, 7, true, 0)},
		{"one-token sentences", randomProblem(t, 3, 30, 1, 10, 4, true, 0)},
		{"no bias, masks", maskedProblem(t, 4, 40, 12, 0.05, true, true, true)},
		{"bias, masks", maskedProblem(t, 5, 40, 12, 0.05, false, true, true)},
	}
	for _, c := range cases {
		for _, prec := range duals.Precisions {
			p := c.p
			store := duals.NewMemory(p.Data, prec)
			rng := rand.New(rand.NewPCG(9, 9))
			for i := 0; i < p.N(); i++ {
				mu := make([]float64, crf.BlockLen(p.Data.Sentence(i).Len(), p.Layout.NumLabels))
				for j := range mu {
					mu[j] = rng.Float64() / 3
				}
				store.Put(i, mu)
			}
			want := whatSerial(p, store)
			for _, P := range []int{1, 2, 3, p.Layout.NumLabels, p.Layout.NumLabels + 5} {
				for _, chunk := range []int{1, 7, whatChunkTokens} {
					got, err := p.what(nil, store, P, chunk)
					if err != nil {
						t.Fatal(err)
					}
					sameBits(t, fmt.Sprintf("%s, %v duals, %d goroutines, chunks of %d tokens", c.name, prec, P, chunk), want, got)
				}
			}
		}
	}
}

// TestInitDualsAnyWorkers: the initial duals are the same bits on one
// goroutine as on several, and Init's ŵ(μ⁰) is the serial sum's.
func TestInitDualsAnyWorkers(t *testing.T) {
	p := randomProblem(t, 6, 300, 7, 25, 5, true, 0)
	blocks := func(workers int) []float64 {
		m := &SDCA{}
		if err := m.setup(p); err != nil {
			t.Fatal(err)
		}
		m.initDuals(0, p.N(), 0.01, workers)
		var all []float64
		for i := 0; i < p.N(); i++ {
			all = append(all, loadBlock(m.duals, i)...)
		}
		return all
	}
	sameBits(t, "initial duals", blocks(1), blocks(4))
	m := &SDCA{}
	if err := m.Init(p); err != nil {
		t.Fatal(err)
	}
	sameBits(t, "ŵ(μ⁰)", whatSerial(p, m.duals), m.Weights())
	c, err := m.Certify(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	sameBits(t, "certified ŵ(μ⁰)", m.Weights(), c.Weights)
}

// TestWhatStreamedSameBits: on a streamed store of several blocks, ŵ(μ)
// split over goroutines (within each block, the blocks in file order) is
// the serial sum bit for bit.
func TestWhatStreamedSameBits(t *testing.T) {
	p := randomProblem(t, 7, 120, 6, 20, 5, true, 0)
	s := newStream(t, p, filepath.Join(t.TempDir(), "duals.stream"), duals.Bytes(p.Data, duals.DefaultPrecision)/5, 0)
	m := &SDCA{Duals: s, Epsilon: 0.3}
	if err := m.Init(p); err != nil {
		t.Fatal(err)
	}
	if s.Blocks() < 3 {
		t.Fatalf("%d blocks, want several", s.Blocks())
	}
	want, err := p.whatSerial(nil, s)
	if err != nil {
		t.Fatal(err)
	}
	for _, P := range []int{2, 3} {
		got, err := p.what(nil, s, P, 7)
		if err != nil {
			t.Fatal(err)
		}
		sameBits(t, fmt.Sprintf("streamed, %d goroutines", P), want, got)
	}
}
