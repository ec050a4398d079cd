package crf_test

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/dualcrf/dualcrf/crf"
)

// scoredPath is one label path of a brute-force enumeration.
type scoredPath struct {
	path  []int32
	score float64
}

// allPaths enumerates the K^T label paths of the lattice's potentials
// with a finite score, best first (ties by path, lexicographically).
func allPaths(lat *crf.Lattice, T, K int) []scoredPath {
	var out []scoredPath
	path := make([]int32, T)
	var rec func(t int)
	rec = func(t int) {
		if t == T {
			if s := lat.Score(path); !math.IsInf(s, -1) {
				out = append(out, scoredPath{slices.Clone(path), s})
			}
			return
		}
		for y := 0; y < K; y++ {
			path[t] = int32(y)
			rec(t + 1)
		}
	}
	rec(0)
	slices.SortStableFunc(out, func(a, b scoredPath) int { return cmp.Compare(b.score, a.score) })
	return out
}

// randomMask forbids about a third of the transitions, starts and ends and
// forces about a quarter of the tokens; it keeps label 0 allowed
// everywhere unless forced, so most masks leave some path.
func randomMask(rng *rand.Rand, T, K int) (trans, start, end []bool, forced []int32) {
	trans, start, end = make([]bool, K*K), make([]bool, K), make([]bool, K)
	for i := range trans {
		trans[i] = i%K == 0 || rng.IntN(3) > 0
	}
	for y := range start {
		start[y] = y == 0 || rng.IntN(3) > 0
		end[y] = y == 0 || rng.IntN(3) > 0
	}
	forced = make([]int32, T)
	for t := range forced {
		forced[t] = -1
		if rng.IntN(4) == 0 {
			forced[t] = int32(rng.IntN(K))
		}
	}
	return trans, start, end, forced
}

// TestNBestAndMaskAgainstEnumeration checks NBest, Viterbi, log Z, the node
// marginals and LogMessages of masked and unmasked tiny lattices against
// the enumeration of every label path.
func TestNBestAndMaskAgainstEnumeration(t *testing.T) {
	for _, masked := range []bool{false, true} {
		for K := 1; K <= 4; K++ {
			for T := 1; T <= 5; T++ {
				t.Run(fmt.Sprintf("masked=%v/K%d/T%d", masked, K, T), func(t *testing.T) {
					rng := rand.New(rand.NewPCG(uint64(K*10+T), 7))
					for trial := 0; trial < 6; trial++ {
						checkNBest(t, rng, T, K, masked)
					}
				})
			}
		}
	}
}

func checkNBest(t *testing.T, rng *rand.Rand, T, K int, masked bool) {
	node := make([]float64, T*K)
	trans := make([]float64, K*K)
	for i := range node {
		node[i] = rng.NormFloat64() * 1.5
	}
	for i := range trans {
		trans[i] = rng.NormFloat64() * 1.5
	}
	lat := crf.NewLattice(K)
	lat.SetPotentials(T, node, trans)
	if masked {
		lat.Mask(randomMask(rng, T, K))
	}
	want := allPaths(lat, T, K)
	logZ := lat.ForwardBackwardLog()
	if len(want) == 0 {
		if !math.IsInf(logZ, -1) {
			t.Fatalf("no allowed path, log Z = %g, want −Inf", logZ)
		}
		if got := lat.NBest(3, make([]int32, 3*T), make([]float64, 3)); got != 0 {
			t.Fatalf("no allowed path, NBest found %d", got)
		}
		return
	}
	scores := make([]float64, len(want))
	for i, p := range want {
		scores[i] = p.score
	}
	if z := crf.LogSumExp(scores); !close(logZ, z) {
		t.Fatalf("log Z = %.15g, want %.15g", logZ, z)
	}
	for _, n := range []int{1, 2, 5, len(want), len(want) + 3} {
		paths := make([]int32, n*T)
		sc := make([]float64, n)
		got := lat.NBest(n, paths, sc)
		if got != min(n, len(want)) {
			t.Fatalf("NBest(%d) found %d paths, want %d", n, got, min(n, len(want)))
		}
		for r := 0; r < got; r++ {
			if !close(sc[r], want[r].score) {
				t.Fatalf("NBest(%d) rank %d score %.15g, want %.15g", n, r, sc[r], want[r].score)
			}
			p := paths[r*T : (r+1)*T]
			if s := lat.Score(p); !close(s, sc[r]) {
				t.Fatalf("NBest(%d) rank %d: path %v scores %g, NBest says %g", n, r, p, s, sc[r])
			}
			// Equal scores may come in either order; distinct ones must match.
			if (r+1 >= len(want) || !close(want[r].score, want[r+1].score)) && (r == 0 || !close(want[r].score, want[r-1].score)) &&
				!slices.Equal(p, want[r].path) {
				t.Fatalf("NBest(%d) rank %d path %v, want %v", n, r, p, want[r].path)
			}
		}
		for r := 0; r < got; r++ {
			for q := 0; q < r; q++ {
				if slices.Equal(paths[r*T:(r+1)*T], paths[q*T:(q+1)*T]) {
					t.Fatalf("NBest(%d): ranks %d and %d are the same path", n, q, r)
				}
			}
		}
	}
	vpath := make([]int32, T)
	vscore := lat.Viterbi(vpath)
	one := make([]int32, T)
	lat.NBest(1, one, make([]float64, 1))
	if !close(vscore, want[0].score) || !slices.Equal(vpath, one) {
		t.Fatalf("Viterbi %v (%g), NBest(1) %v, best %g", vpath, vscore, one, want[0].score)
	}
	// Node marginals and the messages against the enumeration.
	wantNode := make([]float64, T*K)
	for _, p := range want {
		pr := math.Exp(p.score - logZ)
		for tt, y := range p.path {
			wantNode[tt*K+int(y)] += pr
		}
	}
	gotNode := make([]float64, T*K)
	lat.NodeMarginals(gotNode)
	assertSlice(t, "node marginals", gotNode, wantNode)
	checkMessages(t, lat, T, K, logZ, wantNode)
}

// checkMessages checks α_t(y)·β_t(y)/Z against the node marginals.
func checkMessages(t *testing.T, lat *crf.Lattice, T, K int, logZ float64, wantNode []float64) {
	t.Helper()
	a, b := make([]float64, K), make([]float64, K)
	for tt := 0; tt < T; tt++ {
		lat.LogMessages(tt, a, b)
		for y := 0; y < K; y++ {
			if p := math.Exp(a[y] + b[y] - logZ); !close(p, wantNode[tt*K+y]) {
				t.Fatalf("α·β/Z at t=%d y=%d: %.15g, want %.15g", tt, y, p, wantNode[tt*K+y])
			}
		}
	}
}

// TestLogMessagesScaled checks LogMessages after the probability-domain
// forward–backward, and that ForwardBackwardLog agrees with it.
func TestLogMessagesScaled(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, dims := range [][2]int{{1, 3}, {4, 3}, {6, 5}} {
		T, K := dims[0], dims[1]
		node := make([]float64, T*K)
		trans := make([]float64, K*K)
		for i := range node {
			node[i] = rng.NormFloat64() * 2
		}
		for i := range trans {
			trans[i] = rng.NormFloat64()
		}
		lat := crf.NewLattice(K)
		lat.SetPotentials(T, node, trans)
		want := allPaths(lat, T, K)
		scores := make([]float64, len(want))
		for i, p := range want {
			scores[i] = p.score
		}
		z := crf.LogSumExp(scores)
		wantNode := make([]float64, T*K)
		for _, p := range want {
			for tt, y := range p.path {
				wantNode[tt*K+int(y)] += math.Exp(p.score - z)
			}
		}
		if logZ := lat.ForwardBackward(); !close(logZ, z) {
			t.Fatalf("T%d K%d: log Z %g, want %g", T, K, logZ, z)
		}
		checkMessages(t, lat, T, K, z, wantNode)
		if logZ := lat.ForwardBackwardLog(); !close(logZ, z) {
			t.Fatalf("T%d K%d: log-domain log Z %g, want %g", T, K, logZ, z)
		}
		checkMessages(t, lat, T, K, z, wantNode)
	}
}
