package train_test

import (
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/dualcrf/dualcrf/crf"
	"github.com/dualcrf/dualcrf/tables"
	"github.com/dualcrf/dualcrf/train"
)

func permuted(d *crf.Dataset, perm []int) *crf.Dataset {
	e := &crf.Dataset{NumAttrs: d.NumAttrs, NumLabels: d.NumLabels, AttrNames: d.AttrNames, LabelNames: d.LabelNames}
	e.SentStart = []int{0}
	e.AttrStart = []int{0}
	for _, i := range perm {
		for tok := d.SentStart[i]; tok < d.SentStart[i+1]; tok++ {
			e.Labels = append(e.Labels, d.Labels[tok])
			e.Attrs = append(e.Attrs, d.Attrs[d.AttrStart[tok]:d.AttrStart[tok+1]]...)
			if d.Values != nil {
				e.Values = append(e.Values, d.Values[d.AttrStart[tok]:d.AttrStart[tok+1]]...)
			}
			e.AttrStart = append(e.AttrStart, len(e.Attrs))
		}
		e.SentStart = append(e.SentStart, len(e.Labels))
	}
	return e
}

func TestStreamExperiment(t *testing.T) {
	path := os.Getenv("STREAMEXP")
	if path == "" {
		t.Skip("STREAMEXP not set")
	}
	f, _ := os.Open(path)
	ft, err := tables.ReadFeatureTable(f, path, tables.FeatureReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	d := ft.Data
	if os.Getenv("SHUFFLE") != "" {
		d = permuted(d, rand.New(rand.NewPCG(1, 2)).Perm(d.Len()))
	}
	p, _ := train.NewProblem(d, 1/float64(d.Len()), false)
	div, _ := strconv.Atoi(os.Getenv("BLOCKS"))
	s, err := train.CreateStreamStore(filepath.Join(t.TempDir(), "d"), d, train.StreamOptions{BlockBytes: train.DualBytes(d) / int64(max(div, 1))})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	smp, _ := train.NewSampler(os.Getenv("SAMPLER"), d.Len(), train.SamplerOptions{})
	m := &train.SDCA{Sampler: smp, Seed: 1, Duals: s}
	r, _ := strconv.Atoi(os.Getenv("ROUNDS"))
	m.SetStreamRounds(r)
	if div == 0 {
		m.Duals = nil
	}
	res, err := train.Train(context.Background(), p, train.Settings{MaxEpochs: 30, GapEvery: 1, Record: func(r train.EpochRecord) error {
		t.Logf("epoch %d gap %.4g est %.4g", r.Epoch, r.Gap, r.GapEstimate)
		return nil
	}}, m)
	if err != nil {
		t.Fatal(err)
	}
	t.Log(res.Last.Gap, s.Blocks())
}
