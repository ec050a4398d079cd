package train

import (
	"context"
	"math"
	"path/filepath"
	"testing"

	"github.com/dualcrf/dualcrf/duals"
)

// TestSDCAFileStoreBitIdentical: SDCA on a duals.File gives the weights and
// duals of SDCA on a duals.Memory bit for bit, and the duals read back from
// the file after Close are those duals.
func TestSDCAFileStoreBitIdentical(t *testing.T) {
	ctx := context.Background()
	run := func(p *Problem, store duals.Store) *SDCA {
		m := &SDCA{Seed: 7, Duals: store}
		if err := m.Init(p); err != nil {
			t.Fatal(err)
		}
		for e := 0; e < 4; e++ {
			if err := m.Epoch(ctx); err != nil {
				t.Fatal(err)
			}
		}
		return m
	}
	mem := run(randomProblem(t, 13, 40, 7, 15, 4, true, 0), nil)
	p := randomProblem(t, 13, 40, 7, 15, 4, true, 0)
	path := filepath.Join(t.TempDir(), "duals.bin")
	fstore, err := duals.CreateFile(path, p.Data, duals.DefaultPrecision)
	if err != nil {
		t.Fatal(err)
	}
	file := run(p, fstore)
	if file.duals != duals.Store(fstore) {
		t.Fatal("SDCA did not use the store it was given")
	}
	if mem.Counters().Steps != file.Counters().Steps || mem.Counters().Steps == 0 {
		t.Fatalf("steps: memory %d, file %d", mem.Counters().Steps, file.Counters().Steps)
	}
	for j, w := range mem.Weights() {
		if math.Float64bits(w) != math.Float64bits(file.Weights()[j]) {
			t.Fatalf("w[%d]: memory store %.17g, file store %.17g", j, w, file.Weights()[j])
		}
	}
	if err := fstore.Close(); err != nil {
		t.Fatal(err)
	}
	back, err := duals.OpenFile(path, p.Data)
	if err != nil {
		t.Fatal(err)
	}
	defer back.Close()
	moved := 0
	for i := 0; i < p.N(); i++ {
		a, b := loadBlock(mem.duals, i), loadBlock(back, i)
		for j := range a {
			if math.Float64bits(a[j]) != math.Float64bits(b[j]) {
				t.Fatalf("block %d entry %d: memory %g, file %g", i, j, a[j], b[j])
			}
		}
		if a[0] != initialEntry(p, i) {
			moved++
		}
	}
	if moved == 0 {
		t.Fatal("no block moved from μ⁰: the comparison proves nothing")
	}
}

// initialEntry is μ⁰_i[0] = ε/K² (+1−ε if the gold path starts 0→0), or
// ε/K (+1−ε) for a one-token sentence.
func initialEntry(p *Problem, i int) float64 {
	K := p.Layout.NumLabels
	y := p.Data.Sentence(i).Labels
	if len(y) == 1 {
		v := DefaultEpsilon / float64(K)
		if y[0] == 0 {
			v += 1 - DefaultEpsilon
		}
		return v
	}
	v := DefaultEpsilon / float64(K*K)
	if y[0] == 0 && y[1] == 0 {
		v += 1 - DefaultEpsilon
	}
	return v
}
