package train_test

import (
	"context"
	"testing"

	"github.com/dualcrf/dualcrf/duals"
	"github.com/dualcrf/dualcrf/featurize"
	"github.com/dualcrf/dualcrf/internal/datatest"
	"github.com/dualcrf/dualcrf/pipeline"
	"github.com/dualcrf/dualcrf/train"
)

// BenchmarkSDCAEpochConll2000 times SDCA-GAP epochs on CoNLL-2000 (chunking
// templates, cut-off 3, λ = 1/n), one epoch per iteration after an
// untimed first epoch (sequential with float32 and float64 duals; the
// rounds on 1 and 2 workers; asynchronous steps, atomic and wild, on 2),
// with the CPU seconds of the process per epoch beside the wall, and L-BFGS
// iterations on the same problem, side by side: go test ./train -run '^$'
// -bench Conll2000 -benchtime 5x (-count 3 alternates them).
func BenchmarkSDCAEpochConll2000(b *testing.B) {
	path := datatest.Path(b, "conll2000", "train.txt.gz")
	set, err := featurize.Builtin("chunking")
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	t, _, err := featurize.Table(ctx, pipeline.Source{Path: path}, featurize.RunOptions{Templates: set, MinCount: 3})
	if err != nil {
		b.Fatal(err)
	}
	p, err := train.NewProblem(t.Data, 1/float64(t.Data.Len()), false)
	if err != nil {
		b.Fatal(err)
	}
	uniform, err := train.NewSampler(train.SamplerUniform, p.N(), train.SamplerOptions{})
	if err != nil {
		b.Fatal(err)
	}
	for _, m := range []struct {
		name   string
		method train.Method
	}{{"sdca-gap", &train.SDCA{Seed: 1, Workers: 1}}, {"sdca-gap-float64", &train.SDCA{Seed: 1, Workers: 1, DualPrecision: duals.Float64}},
		{"sdca-gap-rounds-1worker", &train.SDCA{Seed: 1, Workers: 1, RoundSize: train.DefaultRoundSize}},
		{"sdca-gap-rounds-2workers", &train.SDCA{Seed: 1, Workers: 2}},
		{"sdca-gap-async-atomic-2workers", &train.SDCA{Seed: 1, Workers: 2, Async: train.AsyncAtomic}},
		{"sdca-gap-async-wild-2workers", &train.SDCA{Seed: 1, Workers: 2, Async: train.AsyncWild}},
		{"sdca-uniform", &train.SDCA{Sampler: uniform, Seed: 1, Workers: 1}}, {"lbfgs", &train.LBFGS{}}} {
		b.Run(m.name, func(b *testing.B) {
			if err := m.method.Init(p); err != nil {
				b.Fatal(err)
			}
			if err := m.method.Epoch(ctx); err != nil { // the first epoch is the slowest: leave it out
				b.Fatal(err)
			}
			cpu0 := cpuSeconds()
			for b.Loop() {
				if err := m.method.Epoch(ctx); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(b.Elapsed().Seconds()/float64(b.N), "s/epoch")
			b.ReportMetric((cpuSeconds()-cpu0)/float64(b.N), "cpu-s/epoch")
		})
	}
	// The certificate pass of SDCA after one epoch: ŵ(μ) recomputed, then
	// P, D and every block gap on all cores.
	b.Run("sdca-certify", func(b *testing.B) {
		m := &train.SDCA{Seed: 1, Workers: 1}
		if err := m.Init(p); err != nil {
			b.Fatal(err)
		}
		if err := m.Epoch(ctx); err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			if _, err := m.Certify(ctx); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(b.Elapsed().Seconds()/float64(b.N), "s/pass")
	})
}
