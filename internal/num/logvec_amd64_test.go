//go:build !purego

package num

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/dualcrf/dualcrf/internal/cpu"
)

// TestLogAVX2 checks the vector logarithm of LogVec (logVecAsm) against
// math.Log over the whole range of positive normal doubles (bit patterns
// drawn uniformly, so every exponent is met), at the reduction's seams
// (powers of 2, √½, √2 and their neighbours, the smallest normal and the
// largest double) and next to 1, where log x is tiny and must still be
// accurate relative to itself (1 ± k·2^-53, 1 ± 2^-j, 1 ± 1e-12, …).
// The bound: within 2 ulps of math.Log (itself within 1 ulp of log x), and
// exactly 0 at x = 1.
func TestLogAVX2(t *testing.T) {
	if !cpu.AVX2FMA() {
		t.Skip("no AVX2 and FMA")
	}
	xs := logInputs()
	for len(xs)%4 != 0 {
		xs = append(xs, 1)
	}
	got := make([]float64, len(xs))
	logVecAsm(got, xs)
	worst, worstX := 0.0, 1.0
	for i, x := range xs {
		want := math.Log(x)
		if want == 0 {
			if got[i] != 0 {
				t.Fatalf("log %.17g = %.17g, want 0", x, got[i])
			}
			continue
		}
		ulp := math.Abs(math.Nextafter(want, math.Inf(1)) - want)
		if d := math.Abs(got[i]-want) / ulp; d > worst {
			worst, worstX = d, x
		}
		if !(math.Abs(got[i]-want) <= 2*ulp) {
			t.Fatalf("log %.17g = %.17g, math.Log %.17g (%.3g ulps)", x, got[i], want, math.Abs(got[i]-want)/ulp)
		}
	}
	t.Logf("%d inputs, greatest difference from math.Log %.3g ulp (at %.17g)", len(xs), worst, worstX)
}

// logInputs returns TestLogAVX2's inputs, positive normal doubles: bit
// patterns drawn uniformly, D_b's range, the reduction's seams and the
// neighbourhood of 1.
func logInputs() []float64 {
	rng := rand.New(rand.NewPCG(13, 14))
	var xs []float64
	for range 1 << 20 {
		xs = append(xs, math.Float64frombits(0x0010000000000000+rng.Uint64N(0x7fefffffffffffff-0x0010000000000000+1)))
	}
	for range 1 << 16 {
		xs = append(xs, math.Exp2(120*rng.Float64()-60)) // the range of D_b in train's line search
	}
	for k := 0; k <= 2000; k++ {
		xs = append(xs, 1+float64(k)*0x1p-52, 1-float64(k)*0x1p-53)
	}
	for j := 1; j <= 60; j++ {
		d := math.Exp2(-float64(j))
		xs = append(xs, 1+d, 1-d, math.Nextafter(1+d, 2), math.Nextafter(1-d, 0))
	}
	for j := 1; j <= 300; j++ {
		d := math.Pow(10, -float64(j)/20)
		xs = append(xs, 1+d, 1-d, 1+d*rng.Float64(), 1-d*rng.Float64())
	}
	xs = append(xs, 1+1e-12, 1-1e-12, 1+1e-15, 1-1e-15)
	for e := -1022; e <= 1023; e++ {
		p := math.Ldexp(1, e)
		xs = append(xs, p, math.Nextafter(p, 0), math.Nextafter(p, math.Inf(1)))
	}
	for _, x := range []float64{math.Sqrt2, math.Sqrt2 / 2} {
		for e := -1000; e <= 1000; e += 7 {
			p := math.Ldexp(x, e)
			xs = append(xs, p, math.Nextafter(p, 0), math.Nextafter(p, math.Inf(1)))
		}
	}
	xs = append(xs, 0x1p-1022, math.MaxFloat64, 0x1p-60, 0x1p60)
	var tail []float64
	for i := range xs {
		if xs[i] < 0x1p-1022 || xs[i] > math.MaxFloat64 { // Nextafter below the smallest normal
			continue
		}
		tail = append(tail, xs[i])
	}
	return tail
}

// TestLogAVX512 checks that LogVec's AVX-512 loop computes exactly what its
// AVX2 loop does, bit for bit, on TestLogAVX2's inputs and on entries
// outside LogVec's domain (zero, subnormal, negative, infinite, NaN), whose
// results are unspecified but must still not differ, for every length
// modulo 8.
func TestLogAVX512(t *testing.T) {
	if !cpu.AVX512() {
		t.Skip("no AVX-512 here: nothing to compare with the AVX2 loop")
	}
	xs := logInputs()
	odd := []float64{0, math.Copysign(0, -1), 0x1p-1074, 0x1p-1023, math.Nextafter(0x1p-1022, 0), -1, -0x1p-1022,
		math.Inf(1), math.Inf(-1), math.NaN(), math.MaxFloat64}
	rng := rand.New(rand.NewPCG(15, 16))
	for i := range 4096 {
		j := rng.IntN(len(xs))
		xs[j] = odd[i%len(odd)]
	}
	xs = append(xs, odd...)
	for cut := 0; cut < 8; cut++ {
		n := (len(xs) - cut) &^ 3
		got, want := make([]float64, n), make([]float64, n)
		logVecLevel(got, xs[cut:cut+n], true)
		logVecLevel(want, xs[cut:cut+n], false)
		for i := range n {
			if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
				t.Fatalf("log %.17g: AVX-512 %.17g (%#x), AVX2 %.17g (%#x)", xs[cut+i], got[i], math.Float64bits(got[i]), want[i], math.Float64bits(want[i]))
			}
		}
	}
}

// BenchmarkLogVecLevels times LogVec's AVX2 loop against its AVX-512 loop,
// side by side in one process, per entry of BenchmarkLogVec's block (a
// CoNLL-2000 sentence's 11,616 edge entries):
//
//	go test ./internal/num -run '^$' -bench LogVecLevels -count 5
func BenchmarkLogVecLevels(b *testing.B) {
	if !cpu.AVX512() {
		b.Skip("no AVX-512 here")
	}
	src := make([]float64, 11616)
	for i := range src {
		src[i] = math.Exp(-float64(i%977) / 7)
	}
	dst := make([]float64, len(src))
	for _, wide := range []bool{false, true} {
		b.Run(map[bool]string{false: "avx2", true: "avx512"}[wide], func(b *testing.B) {
			for b.Loop() {
				logVecLevel(dst, src, wide)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(src)), "ns/entry")
		})
	}
}
