// Command streamconv compares, on a feature table, the certified duality gap
// per epoch of SDCA in memory, on the streamed dual store, and in memory with
// the streamed store's visiting order (each block of consecutive sentences in
// turn, uniform draws within it, blocks in a random order per epoch): the
// experiment that shows the streamed store's slower convergence comes from
// the order of the steps, not from the store (docs/bench-stream.md in the
// repository). From experiments/:
//
//	go run ./streamconv -blocks 9 -epochs 30 train.arrow
//
// It prints one line per certified epoch: mode, epoch, gap.
package main

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"

	"github.com/dualcrf/dualcrf/duals"
	"github.com/dualcrf/dualcrf/tables"
	"github.com/dualcrf/dualcrf/train"
)

func main() {
	blocks := flag.Int("blocks", 9, "number of blocks")
	epochs := flag.Int("epochs", 30, "epochs")
	every := flag.Int("every", 5, "certify every this many epochs")
	sampler := flag.String("sampler", "gap", "sampler of the in-memory and streamed runs")
	flag.Parse()
	if err := run(flag.Arg(0), *blocks, *epochs, *every, *sampler); err != nil {
		fmt.Fprintln(os.Stderr, "streamconv:", err)
		os.Exit(1)
	}
}

func run(path string, nb, epochs, every int, kind string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	ft, err := tables.ReadFeatureTable(f, path, tables.FeatureReadOptions{})
	if err != nil {
		return err
	}
	d := ft.Data
	p, err := train.NewProblem(d, 1/float64(d.Len()), false)
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "streamconv-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	for _, mode := range []string{"memory", "stream", "memory-block-order"} {
		m := &train.SDCA{Seed: 1, Workers: 1}
		if mode == "memory-block-order" {
			start := make([]int, nb+1)
			for b := range start {
				start[b] = b * d.Len() / nb
			}
			m.Sampler = &blockOrder{start: start, n: d.Len()}
		} else if m.Sampler, err = train.NewSampler(kind, d.Len(), train.SamplerOptions{}); err != nil {
			return err
		}
		if mode == "stream" {
			s, err := duals.CreateStream(filepath.Join(dir, "duals"), d, duals.StreamOptions{BlockBytes: duals.Bytes(d, duals.DefaultPrecision) / int64(nb)})
			if err != nil {
				return err
			}
			defer s.Close()
			m.Duals = s
		}
		_, err := train.Train(context.Background(), p, train.Settings{MaxEpochs: epochs, GapEvery: every, GapTol: 1e-300,
			Record: func(r train.EpochRecord) error {
				if r.Certified {
					fmt.Printf("%s\t%d\t%.4g\n", mode, r.Epoch, r.Gap)
				}
				return nil
			}}, m)
		if err != nil {
			return err
		}
	}
	return nil
}

// blockOrder draws as the streamed store visits: the blocks in a random
// order per epoch, |b| uniform draws within each.
type blockOrder struct {
	start []int
	n     int
	perm  []int
	pi, k int
}

func (s *blockOrder) Next(rng *rand.Rand) int {
	if s.perm == nil || s.k == s.start[s.perm[s.pi]+1]-s.start[s.perm[s.pi]] {
		s.k = 0
		if s.perm == nil || s.pi+1 == len(s.perm) {
			s.perm, s.pi = rng.Perm(len(s.start)-1), 0
		} else {
			s.pi++
		}
	}
	b := s.perm[s.pi]
	s.k++
	return s.start[b] + rng.IntN(s.start[b+1]-s.start[b])
}

func (s *blockOrder) Update(int, float64) {}
func (s *blockOrder) Refresh([]float64)   {}
func (s *blockOrder) Estimate() float64   { return 0 }
func (s *blockOrder) State() train.SamplerState {
	return train.SamplerState{Kind: "block-order", Gaps: make([]float64, s.n)}
}
func (s *blockOrder) Restore(train.SamplerState) error { return nil }
