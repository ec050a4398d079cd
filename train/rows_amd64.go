//go:build !purego

package train

import "github.com/dualcrf/dualcrf/internal/cpu"

// axpyRows adds, for k < len(dstRow), f·src[s·K : s·K+K] to
// dst[d·K : d·K+K], with d = dstRow[k], s = srcRow[k] (k when srcRow is
// nil) and f = c·scale[k] (c when scale is nil). Every row named must lie
// within its slice; the vector kernel does not check.
func axpyRows(dst []float64, dstRow []int32, src []float64, srcRow []int32, scale []float64, c float64, K int) {
	if len(dstRow) == 0 || K == 0 {
		return
	}
	if !cpu.AVX2FMA() {
		axpyRowsGo(dst, dstRow, src, srcRow, scale, c, K)
		return
	}
	if srcRow != nil {
		srcRow = srcRow[:len(dstRow)]
	} else {
		_ = src[len(dstRow)*K-1]
	}
	if scale != nil {
		scale = scale[:len(dstRow)]
	}
	axpyRowsAVX2Asm(dst, dstRow, src, srcRow, scale, c, K)
}

// axpyRowsAVX2Asm runs axpyRows, len(dstRow) > 0.
//
//go:noescape
func axpyRowsAVX2Asm(dst []float64, dstRow []int32, src []float64, srcRow []int32, scale []float64, c float64, K int)

// dotKernel returns Σ a[i]·b[i] (len(b) ≥ len(a)), eight at a time in two
// vector accumulators where the CPU allows.
func dotKernel(a, b []float64) float64 {
	n := len(a)
	b = b[:n]
	m := n &^ 7
	s := 0.0
	if m > 0 && cpu.AVX2FMA() {
		s = dotAVX2Asm(a[:m], b[:m])
	} else {
		m = 0
	}
	return s + dot(a[m:], b[m:])
}

// dotAVX2Asm returns Σ a[i]·b[i], len(a) a positive multiple of 8.
//
//go:noescape
func dotAVX2Asm(a, b []float64) float64

// prefetchRows asks for the weight rows w[a·K : a·K+K] of the attributes
// a in rows to be brought into the cache: the rows of the next step's
// sentence, requested while this step finishes. Every row must lie within
// w; the kernel does not check.
func prefetchRows(w []float64, rows []int32, K int) {
	if len(rows) > 0 && K > 0 {
		prefetchRowsAsm(w, rows, K)
	}
}

// prefetchRowsAsm issues the prefetches of prefetchRows, len(rows) > 0.
//
//go:noescape
func prefetchRowsAsm(w []float64, rows []int32, K int)
