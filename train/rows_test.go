package train

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestAxpyRows checks axpyRows (the vector kernel where the CPU has one)
// against axpyRowsGo for every K mod 4, with and without source rows and
// scales, rows named more than once, and that no entry outside the named
// rows changes.
func TestAxpyRows(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for K := 1; K <= 9; K++ {
		for _, withSrc := range []bool{false, true} {
			for _, withScale := range []bool{false, true} {
				nDst, nJobs := 7, 12
				dst := make([]float64, nDst*K+3)
				for j := range dst {
					dst[j] = rng.NormFloat64()
				}
				src := make([]float64, nJobs*K)
				for j := range src {
					src[j] = rng.NormFloat64()
				}
				dstRow := make([]int32, nJobs)
				for k := range dstRow {
					dstRow[k] = int32(rng.IntN(nDst))
				}
				var srcRow []int32
				if withSrc {
					srcRow = make([]int32, nJobs)
					for k := range srcRow {
						srcRow[k] = int32(rng.IntN(nJobs))
					}
				}
				var scale []float64
				if withScale {
					scale = make([]float64, nJobs)
					for k := range scale {
						scale[k] = rng.NormFloat64()
					}
				}
				want := append([]float64(nil), dst...)
				axpyRowsGo(want, dstRow, src, srcRow, scale, -0.37, K)
				axpyRows(dst, dstRow, src, srcRow, scale, -0.37, K)
				for j := range dst {
					if math.Abs(dst[j]-want[j]) > 1e-14*max(1, math.Abs(want[j])) {
						t.Fatalf("K=%d src %v scale %v entry %d: %.17g, Go %.17g", K, withSrc, withScale, j, dst[j], want[j])
					}
				}
			}
		}
	}
}

// TestDotKernel checks dotKernel against dot for lengths around multiples of 8.
func TestDotKernel(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	for n := 0; n < 40; n++ {
		a, b := make([]float64, n), make([]float64, n+2)
		scale := 0.0
		for j := range a {
			a[j], b[j] = rng.NormFloat64(), rng.NormFloat64()
			scale += math.Abs(a[j] * b[j])
		}
		if got, want := dotKernel(a, b), dot(a, b[:n]); math.Abs(got-want) > 1e-15*scale {
			t.Fatalf("n=%d: %.17g, want %.17g", n, got, want)
		}
	}
}
