//go:build !purego

package train

import (
	"github.com/dualcrf/dualcrf/internal/cpu"
	"github.com/dualcrf/dualcrf/internal/num"
)

// The vector kernels of the table in kernels.go, their loops in
// kernels_amd64.s. Each uses its Go loop instead where the CPU lacks AVX2
// or FMA (cpu.AVX2FMA).

// mixKernel sets mu[j] = (1−γ)·mu[j] + γ·nu[j], four entries at a time
// where the CPU has AVX2 and FMA (its results then differ from mixGo's
// only by the rounding of fused multiply–adds).
func mixKernel(g float64, mu, nu []float64) {
	n := len(mu)
	nu = nu[:n]
	m := 0
	if cpu.AVX2FMA() {
		m = n &^ 3
		if m > 0 {
			mixAVX2Asm(g, mu[:m], nu[:m])
		}
	}
	mixGo(g, mu[m:], nu[m:])
}

// mixAVX2Asm runs mixKernel over len(mu) entries, a multiple of 4.
//
//go:noescape
func mixAVX2Asm(gamma float64, mu, nu []float64)

// blockRowsKernel is blockRowsAVX2 where the CPU has AVX2 and FMA, else
// blockRowsGo.
var blockRowsKernel = func() func(blk []float64, K int, B, node, sum []float64) float64 {
	if cpu.AVX2FMA() {
		return blockRowsAVX2
	}
	return blockRowsGo
}()

// blockRowsAVX2 is blockRowsGo with each row's K entries taken four at a
// time; its sums differ from blockRowsGo's only in rounding.
func blockRowsAVX2(blk []float64, K int, B, node, sum []float64) float64 {
	_, _, _, _ = blk[K*K-1], B[K*K-1], node[K-1], sum[K*K-1]
	return blockRowsAVX2Asm(blk, K, B, node, sum)
}

// blockRowsAVX2Asm runs blockRowsGo on a K×K block, K ≥ 1.
//
//go:noescape
func blockRowsAVX2Asm(blk []float64, K int, B, node, sum []float64) (muB float64)

// ratiosMomentsKernel is ratiosMomentsVec where the CPU has AVX2 and
// FMA, else ratiosMomentsGo.
var ratiosMomentsKernel = func() func(mu, logMu, nu, hs []float64, key []int32, mom []float64, neg bool) (float64, float64, int32, int32) {
	if cpu.AVX2FMA() {
		return ratiosMomentsVec
	}
	return ratiosMomentsGo
}()

// ratiosAcc carries the sums of the vector ratio sweeps lane by lane, and
// the key range, from one call of their loops to the next.
type ratiosAcc struct {
	xlogx, s0 [4]float64 // Σ μ log μ and Σ δ log μ of lane e: entries j ≡ e mod 4
	lo, hi    int32      // the least and greatest key below binKeys so far
}

// sums adds up the lanes of acc's sums, (0 + 2) + (1 + 3), as the AVX2
// loop always has.
func (a *ratiosAcc) sums() (xlogx, s0 float64) {
	x, s := &a.xlogx, &a.s0
	return (x[0] + x[2]) + (x[1] + x[3]), (s[0] + s[2]) + (s[1] + s[3])
}

// ratiosMomentsVec is ratiosMomentsGo four entries at a time in one sweep
// (ratiosMomentsAVX2Asm; where the CPU has AVX-512, the entries of whole
// eights by ratiosMomentsAVX512Asm, which computes the same bit for bit),
// with the remainder in Go. Keys, h and the key range are the same bit for
// bit as ratiosMomentsGo's, and so is every product added into the slots;
// the sums of the ratio sweep are added in another order.
func ratiosMomentsVec(mu, logMu, nu, hs []float64, key []int32, mom []float64, neg bool) (xlogx, s0 float64, lo, hi int32) {
	return ratiosMomentsLevel(mu, logMu, nu, hs, key, mom, neg, cpu.AVX512())
}

// ratiosMomentsLevel is ratiosMomentsVec, with the AVX-512 loop only when
// wide is true (the tests compare both).
func ratiosMomentsLevel(mu, logMu, nu, hs []float64, key []int32, mom []float64, neg, wide bool) (xlogx, s0 float64, lo, hi int32) {
	n := len(mu)
	logMu, nu, hs, key = logMu[:n], nu[:n], hs[:n], key[:n]
	acc := ratiosAcc{lo: binKeys, hi: -1}
	m := n &^ 3
	if m > 0 {
		_ = mom[binCopies*binStride*(binKeys+1)-1] // every key's slot lies within mom
		sign := 1.0
		if neg {
			sign = -1
		}
		w := 0
		if wide {
			w = n &^ 7
			if w > 0 {
				ratiosMomentsAVX512Asm(mu[:w], logMu[:w], nu[:w], hs[:w], key[:w], mom, sign, &acc)
			}
		}
		if m > w {
			ratiosMomentsAVX2Asm(mu[w:m], logMu[w:m], nu[w:m], hs[w:m], key[w:m], mom, sign, &acc)
		}
		xlogx, s0 = acc.sums()
	}
	x, s, l, h := ratiosMomentsGo(mu[m:], logMu[m:], nu[m:], hs[m:], key[m:], mom, neg)
	return xlogx + x, s0 + s, min(acc.lo, l), max(acc.hi, h)
}

// ratiosMomentsAVX2Asm runs ratiosMomentsGo over len(mu) entries, a
// positive multiple of 4, with sign = −1 for neg, adding into acc.
//
//go:noescape
func ratiosMomentsAVX2Asm(mu, logMu, nu, hs []float64, key []int32, mom []float64, sign float64, acc *ratiosAcc)

// ratiosMomentsAVX512Asm is ratiosMomentsAVX2Asm eight entries at a time,
// len(mu) a positive multiple of 8.
//
//go:noescape
func ratiosMomentsAVX512Asm(mu, logMu, nu, hs []float64, key []int32, mom []float64, sign float64, acc *ratiosAcc)

// logKernel sets dst[j] = log src[j] for normal positive src[j] (num.LogVec:
// four at a time where the CPU allows); other entries get an unspecified
// value, which callers mask (μ that is zero or subnormal is left to the
// exact list).
func logKernel(dst, src []float64) { num.LogVec(dst, src) }

// evalBinsKernel is evalBinsAVX2 where the CPU has AVX2 and FMA, else
// evalBinsGo.
var evalBinsKernel = func() func(g float64, rho, pm, logD []float64) (float64, float64) {
	if cpu.AVX2FMA() {
		return evalBinsAVX2
	}
	return evalBinsGo
}()

// evalBinsAVX2 is evalBinsGo four bins at a time. D_b and c_b are the same
// bit for bit as evalBinsGo's, and both read log D_b from logD (binLogs);
// the series and sums differ only by the rounding of fused multiply–adds
// and of H_k·(1/k) against H_k/k, and by the order of summation (four
// lanes, then across them). It needs len(rho) to be a multiple of 4, as
// edgeTerms.prepare pads it, and falls back on evalBinsGo otherwise.
func evalBinsAVX2(g float64, rho, pm, logD []float64) (s, s2 float64) {
	nb := len(rho)
	if nb%4 != 0 {
		return evalBinsGo(g, rho, pm, logD)
	}
	if nb == 0 {
		return 0, 0
	}
	return evalBinsAVX2Asm(g, rho, pm[:binMoments*nb], logD[:nb])
}

// evalBinsAVX2Asm runs evalBinsAVX2 over len(rho) bins, a positive multiple
// of 4, with len(pm) ≥ binMoments·len(rho) and len(logD) ≥ len(rho).
//
//go:noescape
func evalBinsAVX2Asm(gamma float64, rho, pm, logD []float64) (s, s2 float64)

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

// fusedAxpy reports whether axpyRows rounds with fused multiply–adds (its
// vector kernel, where the CPU has AVX2 and FMA).
func fusedAxpy() bool { return cpu.AVX2FMA() }

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
