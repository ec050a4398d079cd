package crf_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/dualcrf/dualcrf/crf"
	"github.com/dualcrf/dualcrf/crf/crftest"
)

// sparseCase is a random tiny problem in a sparse layout: the layout, its
// weights, and the same weights in the dense layout (zeros off the free
// pairs).
type sparseCase struct {
	lay, dense crf.Layout
	w, wd      []float64
	d          *crf.Dataset
}

func newSparseCase(rng *rand.Rand, A, K, T int, p float64, noBias, real bool) sparseCase {
	d := crftest.RandomDataset(rng, 3, T, A, K, real)
	lay := crf.Layout{NumAttrs: A, NumLabels: K, NoBias: noBias, Free: crftest.RandomFree(rng, A, K, p)}
	w := crftest.RandomWeights(rng, lay, 0.8)
	return sparseCase{lay: lay, dense: lay.Dense(), w: w, wd: lay.Expand(w), d: d}
}

// TestSparseLayoutAgainstBruteForce checks the lattice on a sparse U
// against enumeration of every label path under the same weights laid out
// densely (zeros off the free pairs), and the sparse scores against the
// dense ones bit for bit: each node score is the same sum in the same
// order.
func TestSparseLayoutAgainstBruteForce(t *testing.T) {
	for _, p := range []float64{0, 0.3, 1} {
		for K := 1; K <= 4; K++ {
			for _, noBias := range []bool{false, true} {
				for _, real := range []bool{false, true} {
					t.Run(fmt.Sprintf("p%g/K%d/nobias=%v/real=%v", p, K, noBias, real), func(t *testing.T) {
						rng := rand.New(rand.NewPCG(uint64(K), uint64(p*10)))
						for trial := 0; trial < 4; trial++ {
							c := newSparseCase(rng, 7, K, 5, p, noBias, real)
							if err := c.lay.Free.Check(7, K); err != nil {
								t.Fatal(err)
							}
							if got, want := c.lay.Dim(), c.lay.Free.Len()+K*K+map[bool]int{false: 3 * K, true: 0}[noBias]; got != want {
								t.Fatalf("Dim = %d, want %d", got, want)
							}
							for i := 0; i < c.d.Len(); i++ {
								checkSparseSentence(t, c, c.d.Sentence(i))
							}
						}
					})
				}
			}
		}
	}
}

func checkSparseSentence(t *testing.T, c sparseCase, s crf.Sentence) {
	t.Helper()
	K, T := c.lay.NumLabels, s.Len()
	j := crftest.Enumerate(c.dense, c.wd, s)
	sp, dn := crf.NewLattice(K), crf.NewLattice(K)
	sp.SetScores(c.lay, c.w, s)
	dn.SetScores(c.dense, c.wd, s)
	for i, v := range dn.Node()[:T*K] {
		if got := sp.Node()[i]; math.Float64bits(got) != math.Float64bits(v) {
			t.Fatalf("node score %d: sparse %v, dense %v", i, got, v)
		}
	}
	if logZ := sp.ForwardBackward(); !close(logZ, j.LogZ) {
		t.Fatalf("log Z = %.15g, want %.15g", logZ, j.LogZ)
	}
	block, node := j.Marginals()
	got := make([]float64, T*K)
	sp.NodeMarginals(got)
	assertSlice(t, "node marginals", got, node)
	path := make([]int32, T)
	score := sp.Viterbi(path)
	best, bestScore := j.Best()
	if !close(score, bestScore) || !close(crf.Dot(c.wd, c.dense, s, path), bestScore) { // ties: any best path
		t.Fatalf("Viterbi %v (%g), want %v (%g)", path, score, best, bestScore)
	}
	// Dot and AddFeatures: a path's score, and its features' dot with w.
	if d, want := crf.Dot(c.w, c.lay, s, s.Labels), crf.Dot(c.wd, c.dense, s, s.Labels); math.Float64bits(d) != math.Float64bits(want) {
		t.Fatalf("Dot = %v, dense %v", d, want)
	}
	g, gd := make([]float64, c.lay.Dim()), make([]float64, c.dense.Dim())
	crf.AddFeatures(g, c.lay, s, s.Labels, 1.5)
	crf.AddFeatures(gd, c.dense, s, s.Labels, 1.5)
	checkCompacts(t, "features", c.lay, g, gd, false) // the dense sum has the pairs that are not free too
	// AddExpected: on the sparse layout, the dense sums at the free pairs.
	clear(g)
	clear(gd)
	crf.AddExpected(g, c.lay, s, node, block, -0.7)
	crf.AddExpected(gd, c.dense, s, node, block, -0.7)
	checkCompacts(t, "expected features", c.lay, g, gd, false)
}

// checkCompacts checks that the sparse g is the dense gd at the free pairs,
// bit for bit; with zeros, that gd is zero elsewhere.
func checkCompacts(t *testing.T, what string, lay crf.Layout, g, gd []float64, zeros bool) {
	t.Helper()
	c, zero := lay.Compact(gd)
	if zeros && !zero {
		t.Fatalf("%s: the dense vector has a non-zero weight off the free pairs", what)
	}
	for i := range g {
		if math.Float64bits(g[i]) != math.Float64bits(c[i]) {
			t.Fatalf("%s[%d] = %v, dense %v", what, i, g[i], c[i])
		}
	}
}

// TestLayoutIndex checks Span, RowLabels, Index, Expand and Compact against
// one another on random sparse layouts, and Row's refusal of them.
func TestLayoutIndex(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 2))
	const A, K = 9, 5
	lay := crf.Layout{NumAttrs: A, NumLabels: K, Free: crftest.RandomFree(rng, A, K, 0.4)}
	w := crftest.RandomWeights(rng, lay, 1)
	wd := lay.Expand(w)
	for a := int32(0); a < A; a++ {
		lo, hi := lay.Span(a)
		labels := lay.RowLabels(a)
		if len(labels) != hi-lo {
			t.Fatalf("attribute %d: %d labels for span %d..%d", a, len(labels), lo, hi)
		}
		for y := 0; y < K; y++ {
			k := lay.Index(a, y)
			free := slices.Contains(labels, int32(y))
			switch {
			case free && (k < lo || k >= hi || labels[k-lo] != int32(y)):
				t.Fatalf("Index(%d, %d) = %d, outside its span or on another label", a, y, k)
			case !free && k != -1:
				t.Fatalf("Index(%d, %d) = %d for a pair that is not free", a, y, k)
			case free && wd[int(a)*K+y] != w[k]:
				t.Fatalf("Expand: weight (%d, %d) %v, want %v", a, y, wd[int(a)*K+y], w[k])
			case !free && wd[int(a)*K+y] != 0:
				t.Fatalf("Expand: weight (%d, %d) %v off the free pairs", a, y, wd[int(a)*K+y])
			}
		}
	}
	back, zero := lay.Compact(wd)
	if !zero || !slices.Equal(back, w) {
		t.Fatalf("Compact(Expand(w)) = %v (zero %v), want %v", back, zero, w)
	}
	wd[lay.Dense().Row(0)+K-1] += 1
	if lo, hi := lay.Span(0); hi > lo && lay.RowLabels(0)[hi-lo-1] == K-1 {
		wd[lay.Dense().Row(0)] += 1 // make sure some pair off the free ones is non-zero
	}
	if _, zero := lay.Compact(wd); zero && lay.Free.Len() < A*K {
		t.Fatal("Compact missed a non-zero weight off the free pairs")
	}
	defer func() {
		if recover() == nil {
			t.Fatal("Row of a sparse layout did not panic")
		}
	}()
	lay.Row(0)
}
