package crf_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/dualcrf/dualcrf/crf"
	"github.com/dualcrf/dualcrf/crf/crftest"
	"github.com/dualcrf/dualcrf/internal/num"
)

const tol = 1e-9

func close(a, b float64) bool {
	return math.Abs(a-b) <= tol*max(1, math.Abs(a), math.Abs(b))
}

func assertSlice(t *testing.T, what string, got, want []float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: len %d, want %d", what, len(got), len(want))
	}
	for i := range want {
		if !close(got[i], want[i]) {
			t.Fatalf("%s[%d] = %.15g, want %.15g", what, i, got[i], want[i])
		}
	}
}

// TestAgainstBruteForce checks every quantity of the lattice against
// enumeration of all K^T label paths on random tiny chains, for ordinary
// weights (probability-domain recursions) and for huge weights (the
// log-domain fallback).
func TestAgainstBruteForce(t *testing.T) {
	for _, sd := range []float64{0.7, 3, 400} {
		for K := 1; K <= 4; K++ {
			for T := 1; T <= 5; T++ {
				for _, noBias := range []bool{false, true} {
					name := fmt.Sprintf("sd%g/K%d/T%d/nobias=%v", sd, K, T, noBias)
					t.Run(name, func(t *testing.T) { checkBrute(t, sd, K, T, noBias) })
				}
			}
		}
	}
}

func checkBrute(t *testing.T, sd float64, K, T int, noBias bool) {
	rng := rand.New(rand.NewPCG(uint64(K*100+T), uint64(sd*10)))
	const A = 6
	for trial := 0; trial < 5; trial++ {
		d := crftest.RandomDataset(rng, 1, 1, A, K, true)
		// Rebuild with exactly T tokens.
		d = fixedLength(rng, A, K, T)
		lay := crf.Layout{NumAttrs: A, NumLabels: K, NoBias: noBias}
		w := crftest.RandomWeights(rng, lay, sd)
		w2 := crftest.RandomWeights(rng, lay, sd)
		s := d.Sentence(0)
		j := crftest.Enumerate(lay, w, s)
		j2 := crftest.Enumerate(lay, w2, s)

		lat := crf.NewLattice(K)
		lat.SetScores(lay, w, s)
		logZ := lat.ForwardBackward()
		if !close(logZ, j.LogZ) {
			t.Fatalf("log Z = %.15g, want %.15g", logZ, j.LogZ)
		}
		wantBlock, wantNode := j.Marginals()
		node := make([]float64, T*K)
		lat.NodeMarginals(node)
		assertSlice(t, "node marginals", node, wantNode)
		block := make([]float64, crf.BlockLen(T, K))
		logBlock := make([]float64, len(block))
		lat.Marginals(block, logBlock)
		assertSlice(t, "clique marginals", block, wantBlock)
		for i, lv := range logBlock {
			if wantBlock[i] > 1e-300 && math.Abs(lv-math.Log(wantBlock[i])) > tol*max(1, math.Abs(lv)) {
				t.Fatalf("log marginal[%d] = %.15g, want %.15g", i, lv, math.Log(wantBlock[i]))
			}
		}
		if T >= 2 {
			fa, fc := make([]float64, (T-1)*K), make([]float64, (T-1)*K)
			lat.LogEdgeFactors(fa, fc)
			B := lat.Trans()
			for tt := 0; tt < T-1; tt++ {
				for y := 0; y < K; y++ {
					for y2 := 0; y2 < K; y2++ {
						lv := fa[tt*K+y] + B[y*K+y2] + fc[tt*K+y2]
						if want := wantBlock[(tt*K+y)*K+y2]; want > 1e-300 && math.Abs(lv-math.Log(want)) > tol*max(1, math.Abs(lv)) {
							t.Fatalf("log edge factors at t=%d (%d,%d): %.15g, want %.15g", tt, y, y2, lv, math.Log(want))
						}
					}
				}
			}
		}
		checkMarginalsSum(t, lat, block, T, K)
		derived := make([]float64, T*K)
		crf.NodeFromBlock(block, T, K, derived)
		assertSlice(t, "node from block", derived, wantNode)

		path := make([]int32, T)
		score := lat.Viterbi(path)
		bestPath, bestScore := j.Best()
		if !close(score, bestScore) {
			t.Fatalf("Viterbi score %.15g, want %.15g", score, bestScore)
		}
		for i := range path {
			if path[i] != bestPath[i] {
				t.Fatalf("Viterbi path %v, want %v", path, bestPath)
			}
		}
		if sc := lat.Score(path); !close(sc, score) {
			t.Fatalf("Score(path) = %g, Viterbi %g", sc, score)
		}

		if sd > 10 {
			continue // entropies of near-deterministic joints are ~0: nothing to compare
		}
		if h := crf.Entropy(block, T, K, make([]float64, T*K), true); !close(h, j.Entropy()) {
			t.Fatalf("entropy %.15g, want %.15g", h, j.Entropy())
		}
		lat.SetScores(lay, w2, s)
		lat.ForwardBackward()
		block2 := make([]float64, len(block))
		log2 := make([]float64, len(block))
		lat.Marginals(block2, log2)
		node2 := make([]float64, T*K)
		crf.NodeFromBlock(block2, T, K, node2)
		want := crftest.KL(j, j2)
		if kl := num.KL(block, block2, log2, T, K, node, node2); !close(kl, want) {
			t.Fatalf("KL with log ν %.15g, want %.15g", kl, want)
		}
		if kl := num.KL(block, block2, nil, T, K, node, node2); !close(kl, want) {
			t.Fatalf("KL %.15g, want %.15g", kl, want)
		}

		// E_μ[F] from marginals vs Σ_paths p(y) F(x,y).
		gotE := make([]float64, lay.Dim())
		crf.AddExpected(gotE, lay, s, wantNode, wantBlock, 2)
		wantE := make([]float64, lay.Dim())
		for i, p := range j.Paths {
			crf.AddFeatures(wantE, lay, s, p, 2*j.Prob[i])
		}
		assertSlice(t, "expected features", gotE, wantE)
	}
}

// fixedLength returns a one-sentence dataset of exactly T tokens with real
// values.
func fixedLength(rng *rand.Rand, A, K, T int) *crf.Dataset {
	for {
		d := crftest.RandomDataset(rng, 1, T, A, K, true)
		if d.Sentence(0).Len() == T {
			return d
		}
	}
}

// TestDotMatchesFeatures checks w·F(x,y) = ⟨w, AddFeatures⟩.
func TestDotMatchesFeatures(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	d := crftest.RandomDataset(rng, 20, 6, 7, 3, true)
	lay := crf.Layout{NumAttrs: 7, NumLabels: 3}
	w := crftest.RandomWeights(rng, lay, 1)
	for i := 0; i < d.Len(); i++ {
		s := d.Sentence(i)
		f := make([]float64, lay.Dim())
		crf.AddFeatures(f, lay, s, s.Labels, 1)
		dot := 0.0
		for k := range f {
			dot += f[k] * w[k]
		}
		if got := crf.Dot(w, lay, s, s.Labels); !close(got, dot) {
			t.Fatalf("sentence %d: Dot %g, want %g", i, got, dot)
		}
	}
}

func TestLayout(t *testing.T) {
	l := crf.Layout{NumAttrs: 74658, NumLabels: 22}
	if got := l.Dim(); got != 1643026 {
		t.Fatalf("d = %d, want 74,658·22 + 22² + 3·22 = 1,643,026", got)
	}
	ocr := crf.Layout{NumAttrs: 128, NumLabels: 26}
	if got := ocr.Dim(); got != 4082 {
		t.Fatalf("OCR d = %d, want 4,082 (paper Table 1)", got)
	}
	if l.End()+22 != l.Dim() || l.Trans() != 74658*22 {
		t.Fatalf("offsets inconsistent: %+v", l)
	}
	nb := crf.Layout{NumAttrs: 3, NumLabels: 2, NoBias: true}
	if nb.Dim() != 10 || nb.Bias() != -1 {
		t.Fatalf("no-bias layout %d %d", nb.Dim(), nb.Bias())
	}
}

// checkMarginalsSum checks MarginalsSum against Marginals' block: the same
// block, and the sum of its K×K edge blocks (zeros for T = 1).
func checkMarginalsSum(t *testing.T, lat *crf.Lattice, block []float64, T, K int) {
	t.Helper()
	got := make([]float64, len(block))
	sum := make([]float64, K*K)
	for i := range sum {
		sum[i] = math.NaN() // must be overwritten
	}
	lat.MarginalsSum(got, sum)
	assertSlice(t, "MarginalsSum block", got, block)
	want := make([]float64, K*K)
	for tt := 0; tt < T-1; tt++ {
		for i, v := range block[tt*K*K : (tt+1)*K*K] {
			want[i] += v
		}
	}
	for i := range want {
		if math.Abs(sum[i]-want[i]) > 1e-12 || math.IsNaN(sum[i]) {
			t.Fatalf("MarginalsSum sum[%d] = %.15g, want %.15g", i, sum[i], want[i])
		}
	}
}
