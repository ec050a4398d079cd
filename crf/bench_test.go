package crf_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/dualcrf/dualcrf/crf"
	"github.com/dualcrf/dualcrf/crf/crftest"
)

// benchSentence is a CoNLL-2000-like sentence: K = 22 labels, T = 24 tokens,
// 19 binary attributes per token drawn from 75,000.
func benchSentence() (crf.Layout, []float64, crf.Sentence) {
	rng := rand.New(rand.NewPCG(7, 7))
	const A, K, T = 75000, 22, 24
	d := &crf.Dataset{NumAttrs: A, NumLabels: K, SentStart: []int{0, T}, AttrStart: []int{0}}
	for t := 0; t < T; t++ {
		for j := 0; j < 19; j++ {
			d.Attrs = append(d.Attrs, int32(rng.IntN(A)))
		}
		d.AttrStart = append(d.AttrStart, len(d.Attrs))
		d.Labels = append(d.Labels, int32(rng.IntN(K)))
	}
	lay := crf.Layout{NumAttrs: A, NumLabels: K}
	return lay, crftest.RandomWeights(rng, lay, 0.5), d.Sentence(0)
}

func BenchmarkOracle(b *testing.B) {
	lay, w, s := benchSentence()
	lat := crf.NewLattice(lay.NumLabels)
	block := make([]float64, crf.BlockLen(s.Len(), lay.NumLabels))
	logBlock := make([]float64, len(block))
	b.ReportAllocs()
	for b.Loop() {
		lat.SetScores(lay, w, s)
		lat.ForwardBackward()
		lat.Marginals(block, logBlock)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(s.Len()), "ns/token")
}

func BenchmarkViterbi(b *testing.B) {
	lay, w, s := benchSentence()
	lat := crf.NewLattice(lay.NumLabels)
	path := make([]int32, s.Len())
	b.ReportAllocs()
	for b.Loop() {
		lat.SetScores(lay, w, s)
		lat.Viterbi(path)
	}
}

func BenchmarkLog(b *testing.B) {
	x := make([]float64, 1024)
	for i := range x {
		x[i] = float64(i+1) / 1e3
	}
	s := 0.0
	for b.Loop() {
		for _, v := range x {
			s += math.Log(v)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1024, "ns/log")
	_ = s
}

// BenchmarkScores times a sentence's node and edge scores (SetScores, the
// oracle's first part) and the whole oracle (with forward–backward and the
// marginals) with the dense U of CoNLL-2000's full feature space
// and with the observed space's free pairs held dense (a mask: the same
// arithmetic) and sparse, at CoNLL-2000's 22 labels (2.4 observed labels an
// attribute) and EWT XPOS's 49 (1.5). cpu-ns/token is the process's CPU
// time, which a loaded machine's other work does not inflate as it does
// the wall clock.
func BenchmarkScores(b *testing.B) {
	for _, c := range []struct {
		K    int
		free float64 // observed labels per attribute
	}{{22, 2.4}, {49, 1.5}} {
		rng := rand.New(rand.NewPCG(7, 7))
		const A, T = 75000, 24
		d := &crf.Dataset{NumAttrs: A, NumLabels: c.K, SentStart: []int{0, T}, AttrStart: []int{0}}
		for t := 0; t < T; t++ {
			for j := 0; j < 19; j++ {
				d.Attrs = append(d.Attrs, int32(rng.IntN(A)))
			}
			d.AttrStart = append(d.AttrStart, len(d.Attrs))
			d.Labels = append(d.Labels, int32(rng.IntN(c.K)))
		}
		s := d.Sentence(0)
		sparse := crf.Layout{NumAttrs: A, NumLabels: c.K, Free: crftest.RandomFree(rng, A, c.K, c.free/float64(c.K))}
		w := crftest.RandomWeights(rng, sparse, 0.5)
		dense := sparse.Dense()
		wd := sparse.Expand(w)
		for _, l := range []struct {
			name string
			lay  crf.Layout
			w    []float64
		}{{"dense", dense, wd}, {"sparse", sparse, w}} {
			b.Run(fmt.Sprintf("K%d/%s/scores", c.K, l.name), func(b *testing.B) {
				lat := crf.NewLattice(c.K)
				c0 := cpuTime()
				for b.Loop() {
					lat.SetScores(l.lay, l.w, s)
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(s.Len()), "ns/token")
				b.ReportMetric(float64((cpuTime()-c0).Nanoseconds())/float64(b.N)/float64(s.Len()), "cpu-ns/token")
			})
			b.Run(fmt.Sprintf("K%d/%s/oracle", c.K, l.name), func(b *testing.B) {
				lat := crf.NewLattice(c.K)
				block := make([]float64, crf.BlockLen(s.Len(), c.K))
				logBlock := make([]float64, len(block))
				c0 := cpuTime()
				for b.Loop() {
					lat.SetScores(l.lay, l.w, s)
					lat.ForwardBackward()
					lat.Marginals(block, logBlock)
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(s.Len()), "ns/token")
				b.ReportMetric(float64((cpuTime()-c0).Nanoseconds())/float64(b.N)/float64(s.Len()), "cpu-ns/token")
			})
		}
	}
}
