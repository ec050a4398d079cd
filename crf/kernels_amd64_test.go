//go:build !purego

package crf

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/dualcrf/dualcrf/internal/cpu"
)

// near reports whether a and b agree to within rel relative error (or
// are both zero).
func near(a, b, rel float64) bool {
	return a == b || math.Abs(a-b) <= rel*max(math.Abs(a), math.Abs(b))
}

func assertNear(t *testing.T, what string, got, want []float64, rel float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: len %d, want %d", what, len(got), len(want))
	}
	for i := range want {
		if !near(got[i], want[i], rel) {
			t.Fatalf("%s[%d] = %.17g, want %.17g", what, i, got[i], want[i])
		}
	}
}

// padded returns rows×Kp random entries in (0, 1] with zero padding.
func padded(rng *rand.Rand, rows, K, Kp int) []float64 {
	v := make([]float64, rows*Kp)
	for r := 0; r < rows; r++ {
		for y := 0; y < K; y++ {
			v[r*Kp+y] = 1 - rng.Float64()
		}
	}
	return v
}

func clone(v []float64) []float64 { return append([]float64(nil), v...) }

// TestAVX2KernelsMatchGo checks each assembly kernel against its Go
// version on random inputs, for K that are and are not multiples of 4.
func TestAVX2KernelsMatchGo(t *testing.T) {
	if !cpu.AVX2FMA() {
		t.Skip("no AVX2/FMA")
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for K := 1; K <= 23; K++ {
		Kp := padK(K)
		for _, T := range []int{1, 2, 3, 7} {
			// exp rows, with and without the shift.
			src := make([]float64, T*K, T*K+4)
			for i := range src {
				src[i] = 40 * rng.NormFloat64()
			}
			for _, shift := range []bool{false, true} {
				var m1, m2 []float64
				if shift {
					m1, m2 = make([]float64, T), make([]float64, T)
				}
				d1, d2 := make([]float64, T*Kp), make([]float64, T*Kp)
				for i := range d1 {
					d1[i], d2[i] = math.NaN(), math.NaN()
				}
				expRowsAVX2(d1, src, m1, T, K, Kp)
				expRowsGo(d2, src, m2, T, K, Kp)
				assertNear(t, "expRows", d1, d2, 5e-16)
				assertNear(t, "expRows max", m1, m2, 0)
			}

			etr := padded(rng, K, K, Kp)
			psi := padded(rng, T, K, Kp)
			scale := make([]float64, T)
			for i := range scale {
				scale[i] = 0.5 + rng.Float64()
			}
			a1 := padded(rng, T, K, Kp)
			a2, s2 := clone(a1), clone(scale)
			forwardAVX2(a1, psi, etr, scale, K, Kp)
			forwardGo(a2, psi, etr, s2, K, Kp)
			assertNear(t, "forward", a1, a2, 1e-14)
			assertNear(t, "forward scale", scale, s2, 1e-14)

			b1 := padded(rng, T, K, Kp)
			b2 := clone(b1)
			backwardAVX2(b1, psi, etr, scale, make([]float64, Kp), K, Kp)
			backwardGo(b2, psi, etr, scale, make([]float64, Kp), K, Kp)
			assertNear(t, "backward", b1, b2, 1e-14)

			n := BlockLen(T, K)
			for _, withSum := range []bool{false, true} {
				m1, m2 := make([]float64, n+3), make([]float64, n+3)
				m1[n], m1[n+1], m1[n+2] = 7, 8, 9 // must survive
				copy(m2[n:], m1[n:])
				var sum1, sum2 []float64
				if withSum {
					sum1, sum2 = padded(rng, K, K, Kp), nil
					sum2 = clone(sum1)
				}
				if T > 1 {
					marginalsAVX2(m1[:n], sum1, a1, b1, psi, etr, scale, make([]float64, Kp), K, Kp)
					marginalsGo(m2[:n], sum2, a1, b1, psi, etr, scale, make([]float64, Kp), K, Kp)
				}
				assertNear(t, "marginals", m1, m2, 1e-15)
				assertNear(t, "marginals sum", sum1, sum2, 1e-14)
			}

			l1, l2 := make([]float64, n+3), make([]float64, n+3)
			l1[n], l2[n] = 5, 5
			fa, fc := padded(rng, T-1, K, Kp), padded(rng, T-1, K, Kp)
			logMarginalsAVX2(l1[:n], fa, fc, etr, K, Kp)
			logMarginalsGo(l2[:n], fa, fc, etr, K, Kp)
			assertNear(t, "log marginals", l1, l2, 0)
		}
	}
}

// TestExpRowsAccuracy checks the vector exp against math.Exp over its whole
// range, and that it hands what it cannot do to math.Exp.
func TestExpRowsAccuracy(t *testing.T) {
	if !cpu.AVX2FMA() {
		t.Skip("no AVX2/FMA")
	}
	rng := rand.New(rand.NewPCG(5, 6))
	const n = 1 << 16
	src := make([]float64, n, n+4)
	for i := range src {
		src[i] = -708 + 1417*rng.Float64()
	}
	src[0], src[1], src[2], src[3] = -708, 709, 0, -1e-300
	dst := make([]float64, n)
	if !expRowsAsm(dst, src, nil, n/4, 4, 4) {
		t.Fatal("in-range input reported out of range")
	}
	for i, x := range src {
		if want := math.Exp(x); !near(dst[i], want, 5e-16) {
			t.Fatalf("exp(%g) = %.17g, want %.17g", x, dst[i], want)
		}
	}
	for _, x := range []float64{-709, 710, math.NaN(), math.Inf(-1), math.Inf(1)} {
		src := []float64{0, x, 1, 2}
		if expRowsAsm(make([]float64, 4), src, nil, 1, 4, 4) {
			t.Fatalf("exp(%g) not reported out of range", x)
		}
		d := make([]float64, 4)
		expRowsAVX2(d, src, nil, 1, 4, 4)
		if !(d[1] == math.Exp(x)) && !math.IsNaN(x) {
			t.Fatalf("exp(%g) = %g after fallback", x, d[1])
		}
	}
}

// TestScoreRowsMatchesGo checks scoreRowsAVX2 against scoreRowsGo (bit for
// bit: the additions are made in the same order), with and without bias,
// and that an attribute beyond cap(w) still panics.
func TestScoreRowsMatchesGo(t *testing.T) {
	if !cpu.AVX2FMA() {
		t.Skip("no AVX2/FMA")
	}
	rng := rand.New(rand.NewPCG(8, 9))
	const A = 50
	for K := 1; K <= 23; K++ {
		Kp := padK(K)
		w := make([]float64, A*K+K*K+3*K)
		for i := range w {
			w[i] = rng.NormFloat64()
		}
		for _, T := range []int{1, 2, 5} {
			attrStart := []int{0}
			var attrs []int32
			for range T {
				for range rng.IntN(6) {
					attrs = append(attrs, int32(rng.IntN(A)))
				}
				attrStart = append(attrStart, len(attrs))
			}
			for _, bias := range [][]float64{nil, w[A*K+K*K:]} {
				th1 := make([]float64, T*K, T*K+4)
				th2 := make([]float64, T*K)
				scoreRowsAVX2(th1, w[:A*K], attrs, attrStart, bias, K, Kp)
				scoreRowsGo(th2, w[:A*K], attrs, attrStart, bias, K, Kp)
				assertNear(t, "scoreRows", th1, th2, 0)
			}
		}
	}
	defer func() {
		if recover() == nil {
			t.Fatal("attribute beyond cap(w) did not panic")
		}
	}()
	w := make([]float64, 10*6+36+18)
	scoreRowsAVX2(make([]float64, 6, 10), w[:60], []int32{100}, []int{0, 1}, nil, 6, 8)
}
