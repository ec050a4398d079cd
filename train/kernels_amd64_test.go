//go:build !purego

package train

import (
	"math"
	"math/rand/v2"
	"testing"
	"unsafe"

	"github.com/dualcrf/dualcrf/internal/cpu"
)

// The tests here compare each AVX-512 loop (kernels_avx512_amd64.s) with
// the AVX2 loop it stands in for, bit for bit: the AVX-512 loops must
// compute exactly what the AVX2 ones do. Each AVX2 loop is checked against
// its Go twin in kernels_test.go.

// needAVX512 skips the test unless the AVX-512 kernels run here: they are
// compared with the AVX2 ones, bit for bit.
func needAVX512(t *testing.T) {
	t.Helper()
	if !cpu.AVX512() {
		t.Skip("no AVX-512 here (or a purego build): nothing to compare with the AVX2 kernels")
	}
}

// TestRatiosAccLayout checks the offsets of ratiosAcc's fields that both
// ratio loops read and write: the sums at 0 and 32, lo and hi at 64 and 68.
func TestRatiosAccLayout(t *testing.T) {
	var a ratiosAcc
	if o := [4]uintptr{unsafe.Offsetof(a.xlogx), unsafe.Offsetof(a.s0), unsafe.Offsetof(a.lo), unsafe.Offsetof(a.hi)}; o != [4]uintptr{0, 32, 64, 68} {
		t.Fatalf("ratiosAcc field offsets %v, the assembly expects [0 32 64 68]", o)
	}
}

// TestRatiosMomentsAVX512 checks that the AVX-512 ratio sweep computes
// exactly what the AVX2 one does: keys, h, the key range, the sums and
// every slot bit for bit, for lengths around multiples of 8 and both signs.
func TestRatiosMomentsAVX512(t *testing.T) {
	needAVX512(t)
	rng := rand.New(rand.NewPCG(17, 18))
	size := binCopies * binStride * (binKeys + 1)
	for n := 0; n < 300; n++ {
		mu, nu, logMu := randomRatios(rng, n)
		if n%3 == 0 { // NaN and infinite entries take the same path in both
			for j := range mu {
				switch rng.IntN(16) {
				case 0:
					mu[j] = math.NaN()
				case 1:
					nu[j] = math.Inf(1)
				case 2:
					logMu[j] = math.NaN()
				}
			}
		}
		neg := n%2 == 1
		hs, key, mom := make([]float64, n), make([]int32, n), make([]float64, size)
		hs2, key2, mom2 := make([]float64, n), make([]int32, n), make([]float64, size)
		x, s, lo, hi := ratiosMomentsLevel(mu, logMu, nu, hs, key, mom, neg, false)
		x2, s2, lo2, hi2 := ratiosMomentsLevel(mu, logMu, nu, hs2, key2, mom2, neg, true)
		if math.Float64bits(x) != math.Float64bits(x2) || math.Float64bits(s) != math.Float64bits(s2) || lo != lo2 || hi != hi2 {
			t.Fatalf("n=%d: AVX-512 sums %v %v range [%d, %d], AVX2 %v %v [%d, %d]", n, x2, s2, lo2, hi2, x, s, lo, hi)
		}
		for j := range mu {
			if key[j] != key2[j] || math.Float64bits(hs[j]) != math.Float64bits(hs2[j]) {
				t.Fatalf("n=%d entry %d: AVX-512 key %d h %g, AVX2 %d %g", n, j, key2[j], hs2[j], key[j], hs[j])
			}
		}
		for i := range mom {
			if math.Float64bits(mom[i]) != math.Float64bits(mom2[i]) {
				t.Fatalf("n=%d slot word %d: AVX-512 %.17g, AVX2 %.17g", n, i, mom2[i], mom[i])
			}
		}
	}
}

// BenchmarkRatiosAVX512 times the ratio and moments sweep on the edge
// entries of one CoNLL-2000 step (BenchmarkKernelPairs' 11,132 entries),
// side by side in one process: the AVX2 loop against the AVX-512 loop:
//
//	go test ./train -run '^$' -bench RatiosAVX512 -count 5
func BenchmarkRatiosAVX512(b *testing.B) {
	needAVX512Bench(b)
	const K, T = 22, 24
	rng := rand.New(rand.NewPCG(23, 24))
	n := (T - 1) * K * K
	mu, nu := make([]float64, n), make([]float64, n)
	for j := range mu {
		mu[j] = math.Exp(-30 * rng.Float64())
		nu[j] = mu[j] * math.Exp(0.5*rng.NormFloat64())
	}
	logMu, hs, key := make([]float64, n), make([]float64, n), make([]int32, n)
	logKernel(logMu, mu)
	slots := make([]float64, binCopies*binStride*(binKeys+1))
	var sink float64
	for _, c := range []struct {
		name string
		f    func()
	}{
		{"ratios/avx2", func() {
			x, _, _, _ := ratiosMomentsLevel(mu, logMu, nu, hs, key, slots, false, false)
			sink += x
		}},
		{"ratios/avx512", func() {
			x, _, _, _ := ratiosMomentsLevel(mu, logMu, nu, hs, key, slots, false, true)
			sink += x
		}},
	} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				c.f()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/entry")
		})
	}
	_ = sink
}

// needAVX512Bench skips the benchmark unless the AVX-512 kernels run here.
func needAVX512Bench(b *testing.B) {
	b.Helper()
	if !cpu.AVX512() {
		b.Skip("no AVX-512 here")
	}
}
