package duals

import (
	"errors"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/dualcrf/dualcrf/crf"
	"github.com/dualcrf/dualcrf/internal/platform"
)

// benchLayout is a CoNLL-2000-sized layout: 8,936 sentences of 1–47 tokens
// (mean 24), K = 22: ≈ 0.8 GB per array. -short scales it to 2,000.
func benchLayout(b *testing.B) *crf.Dataset {
	n := 8936
	if testing.Short() {
		n = 2000
	}
	rng := rand.New(rand.NewPCG(2000, 22))
	lens := make([]int, n)
	for i := range lens {
		lens[i] = 1 + rng.IntN(47)
	}
	return lengthsDataset(lens, 22)
}

// sweep reads and writes every entry of every block, visiting the blocks in
// a random order as SDCA does.
func sweep(s Store, order []int) {
	for _, i := range order {
		mu := f64(s, i)
		for j, x := range mu {
			mu[j] = 0.5*x + 0.25
		}
	}
}

// BenchmarkStoreSweep: ns per entry of a full read+write sweep in random
// block order. memory; file-warm (steady state, pages mapped); file-sync
// (the sweep plus msync, as after each checkpoint); file-cold (the page
// cache is dropped before each sweep: duals larger than RAM) with
// MADV_NORMAL and MADV_RANDOM.
func BenchmarkStoreSweep(b *testing.B) {
	d := benchLayout(b)
	entries := BlockOffsets(d)[d.Len()]
	order := rand.New(rand.NewPCG(1, 2)).Perm(d.Len())
	report := func(b *testing.B) {
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(entries), "ns/entry")
		b.ReportMetric(float64(Bytes(d, Float64))/1e9, "GB")
	}
	b.Run("memory", func(b *testing.B) {
		s := NewMemory(d, Float64)
		sweep(s, order)
		for b.Loop() {
			sweep(s, order)
		}
		report(b)
	})
	file := func(b *testing.B, advice platform.Advice, cold, sync bool) {
		path := filepath.Join(b.TempDir(), "duals.bin")
		s, err := CreateFile(path, d, Float64)
		if err != nil {
			b.Fatal(err)
		}
		defer func() { s.Close() }()
		if err := s.advise(advice); err != nil {
			b.Fatal(err)
		}
		sweep(s, order)
		for b.Loop() {
			if cold {
				b.StopTimer()
				s = dropCache(b, s, d, advice)
				b.StartTimer()
			}
			sweep(s, order)
			if sync {
				if err := s.Sync(); err != nil {
					b.Fatal(err)
				}
			}
		}
		report(b)
	}
	b.Run("file-warm", func(b *testing.B) { file(b, platform.AccessNormal, false, false) })
	b.Run("file-sync", func(b *testing.B) { file(b, platform.AccessNormal, false, true) })
	b.Run("file-cold-normal", func(b *testing.B) { file(b, platform.AccessNormal, true, false) })
	b.Run("file-cold-random", func(b *testing.B) { file(b, platform.AccessRandom, true, false) })
}

// dropCache closes s, evicts its file from the page cache and reopens it.
func dropCache(b *testing.B, s *File, d *crf.Dataset, advice platform.Advice) *File {
	path := s.Path()
	if err := s.Close(); err != nil {
		b.Fatal(err)
	}
	if err := platform.DropCache(path); errors.Is(err, errors.ErrUnsupported) {
		b.Skip(err)
	} else if err != nil {
		b.Fatal(err)
	}
	s, err := OpenFile(path, d)
	if err != nil {
		b.Fatal(err)
	}
	if err := s.advise(advice); err != nil {
		b.Fatal(err)
	}
	return s
}
