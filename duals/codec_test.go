package duals

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// codecShapes are the (T, K) of the blocks the codec tests take: one-token
// sentences, one edge, K of 1, K around the vector width and its
// multiples, CoNLL-2000's 22 and EWT XPOS's 49 labels.
var codecShapes = [][2]int{{1, 1}, {1, 5}, {2, 1}, {5, 1}, {2, 3}, {3, 4}, {4, 5}, {6, 7}, {3, 8}, {9, 9}, {4, 13}, {24, 22}, {17, 49}}

// checkChain fails unless mu is the block of a chain of T tokens over K
// labels: every entry in [0,1], every clique summing to one and adjacent
// edges agreeing on their node, to tol.
func checkChain(t *testing.T, mu []float64, T, K int, tol float64) {
	t.Helper()
	for j, x := range mu {
		if !(x >= 0 && x <= 1) {
			t.Fatalf("entry %d is %v", j, x)
		}
	}
	F := firstLen(len(mu), K)
	for at := 0; at < len(mu); at += F {
		if s := rowSum64(mu[at : at+F]); math.Abs(s-1) > tol {
			t.Fatalf("clique at %d sums to %v", at, s)
		}
		F = K * K
	}
	for e := 0; e+1 < T-1; e++ {
		for y := 0; y < K; y++ {
			in, out := 0.0, 0.0
			for x := 0; x < K; x++ {
				in += mu[(e*K+x)*K+y]
				out += mu[((e+1)*K+y)*K+x]
			}
			if math.Abs(in-out) > tol*max(in, 1e-300) && math.Abs(in-out) > 1e-300 {
				t.Fatalf("edges %d and %d disagree on label %d: %v in, %v out", e, e+1, y, in, out)
			}
		}
	}
}

// TestFloat32Codec: a chain put through a compact codec (float32,
// bfloat16) comes back a chain (consistent and summing to one to
// rounding), within the codec's rounding of the block put, and loading it
// again gives the same bits.
func TestFloat32Codec(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 1))
	for _, p := range []Precision{Float32, BFloat16} {
		for _, sh := range codecShapes {
			T, K := sh[0], sh[1]
			t.Run(fmt.Sprintf("%v-T%d-K%d", p, T, K), func(t *testing.T) {
				for range 5 {
					mu := randomChain(rng, T, K)
					raw := make([]byte, p.BlockBytes(T, K))
					got := slices.Clone(mu)
					p.Encode(raw, got, K)
					checkChain(t, got, T, K, 1e-14)
					for j := range mu {
						// Each edge's rounding compounds along the chain.
						if rel := math.Abs(got[j]-mu[j]) / mu[j]; !(rel < roundTol(p)) {
							t.Fatalf("entry %d: put %v, stored %v (relative error %.3g)", j, mu[j], got[j], rel)
						}
					}
					again := make([]float64, len(mu))
					p.Decode(again, raw, K)
					if !bitsEqual(again, got) {
						t.Fatal("Decode differs from the block Encode left")
					}
					p.Decode(again, raw, K)
					if !bitsEqual(again, got) {
						t.Fatal("a second Decode differs from the first")
					}
				}
			})
		}
	}
}

// TestFloat32CodecDegenerate: rows of zero mass, blocks of zeros (a store
// never written) and tiny masses decode to chains, never to NaN.
func TestFloat32CodecDegenerate(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 1))
	for _, p := range []Precision{Float32, BFloat16} {
		testDegenerate(t, rng, p)
	}
}

func testDegenerate(t *testing.T, rng *rand.Rand, p Precision) {
	for _, sh := range codecShapes {
		T, K := sh[0], sh[1]
		raw := make([]byte, p.BlockBytes(T, K))
		mu := make([]float64, len(raw)/int(p.EntryBytes()))
		// All zero bytes: the first clique uniform, every row uniform.
		p.Decode(mu, raw, K)
		checkChain(t, mu, T, K, 1e-13)
		// A chain with whole rows of zero mass and others below 2^-1000.
		mu = randomChain(rng, T, K)
		for at := K * K; at+K <= len(mu); at += K * K {
			clear(mu[at : at+K])
			if at+2*K <= len(mu) && K > 1 {
				for j := at + K; j < at+2*K; j++ {
					mu[j] *= 0x1p-1010
				}
			}
		}
		p.Encode(raw, mu, K)
		checkChain(t, mu, T, K, 1e-13)
	}
}

// TestFloat64Codec: float64 blocks are stored and loaded unchanged.
func TestFloat64Codec(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 1))
	mu := randomChain(rng, 6, 5)
	raw := make([]byte, Float64.BlockBytes(6, 5))
	put := slices.Clone(mu)
	Float64.Encode(raw, put, 5)
	got := make([]float64, len(mu))
	Float64.Decode(got, raw, 5)
	if !bitsEqual(put, mu) || !bitsEqual(got, mu) {
		t.Fatal("float64 codec changed the block")
	}
}

// TestPrecisionNames: each precision parses from its name; others are
// refused.
func TestPrecisionNames(t *testing.T) {
	for _, p := range Precisions {
		q, err := ParsePrecision(p.String())
		if err != nil || q != p || !p.Valid() {
			t.Fatalf("%v: parsed %v, %v", p, q, err)
		}
	}
	for _, s := range []string{"", "float16", "Float32", "64"} {
		if _, err := ParsePrecision(s); err == nil {
			t.Fatalf("%q accepted", s)
		}
	}
	if Precision(0).Valid() || Precision(4).Valid() {
		t.Fatal("an unknown precision is valid")
	}
}

func bitsEqual(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for j := range a {
		if math.Float64bits(a[j]) != math.Float64bits(b[j]) {
			return false
		}
	}
	return true
}

// FuzzFloat32Decode decodes arbitrary bytes as a float32 or bfloat16 block
// of a sentence of T tokens over K labels: never a panic, and whenever every
// stored number is finite and not negative (what the readers of files
// check), a chain — entries in [0,1], cliques summing to one, adjacent
// edges agreeing on their node — whatever the numbers.
func FuzzFloat32Decode(f *testing.F) {
	rng := rand.New(rand.NewPCG(6, 1))
	for _, sh := range [][2]int{{1, 3}, {2, 2}, {4, 3}, {3, 5}} {
		for _, p := range []Precision{Float32, BFloat16} {
			mu := randomChain(rng, sh[0], sh[1])
			raw := make([]byte, p.BlockBytes(sh[0], sh[1]))
			p.Encode(raw, mu, sh[1])
			f.Add(raw, uint8(sh[0]), uint8(sh[1]), p == BFloat16)
		}
	}
	f.Fuzz(func(t *testing.T, b []byte, tt, kk uint8, b16 bool) {
		T, K := 1+int(tt%8), 1+int(kk%7)
		p := Float32
		if b16 {
			p = BFloat16
		}
		raw := make([]byte, p.BlockBytes(T, K))
		copy(raw, b)
		mu := make([]float64, len(raw)/int(p.EntryBytes()))
		p.Decode(mu, raw, K)
		if p == Float32 {
			for _, x := range float32View(raw) {
				if !(x >= 0) || math.IsInf(float64(x), 0) {
					return
				}
			}
		} else {
			for _, c := range uint16View(raw) {
				if x := bf16Value(c); !(x >= 0) || math.IsInf(x, 0) {
					return
				}
			}
		}
		checkChain(t, mu, T, K, 1e-12)
	})
}

// TestDecodeMarginals: DecodeMarginals gives Decode's block bit for bit
// and, to rounding, the block's node marginals and summed edges as
// computed from it; EncodeMarginals gives Encode's block. For both
// precisions, every shape.
func TestDecodeMarginals(t *testing.T) {
	rng := rand.New(rand.NewPCG(12, 1))
	for _, p := range Precisions {
		for _, sh := range codecShapes {
			T, K := sh[0], sh[1]
			mu := randomChain(rng, T, K)
			raw := make([]byte, p.BlockBytes(T, K))
			put := slices.Clone(mu)
			p.Encode(raw, put, K)
			got, node, sum := make([]float64, len(mu)), make([]float64, T*K), make([]float64, K*K)
			p.DecodeMarginals(got, raw, T, K, node, sum)
			if !bitsEqual(got, put) {
				t.Fatalf("%v T%d K%d: DecodeMarginals's block differs from Decode's", p, T, K)
			}
			wantNode, wantSum := make([]float64, T*K), make([]float64, K*K)
			marginals64(got, T, K, wantNode, wantSum)
			for j := range wantNode {
				if math.Abs(node[j]-wantNode[j]) > 1e-14*max(wantNode[j], 1e-300) {
					t.Fatalf("%v T%d K%d: node %d is %v, the block's %v", p, T, K, j, node[j], wantNode[j])
				}
			}
			for j := range wantSum {
				if T > 1 && math.Abs(sum[j]-wantSum[j]) > 1e-14*max(wantSum[j], 1e-300) {
					t.Fatalf("%v T%d K%d: sum %d is %v, the block's %v", p, T, K, j, sum[j], wantSum[j])
				}
			}
			again, node2, sum2 := slices.Clone(mu), make([]float64, T*K), make([]float64, K*K)
			p.EncodeMarginals(make([]byte, len(raw)), again, T, K, node2, sum2)
			if !bitsEqual(again, put) || !bitsEqual(node2, node) || (T > 1 && !bitsEqual(sum2, sum)) {
				t.Fatalf("%v T%d K%d: EncodeMarginals differs from Encode and DecodeMarginals", p, T, K)
			}
		}
	}
}
