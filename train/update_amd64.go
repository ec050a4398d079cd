package train

import "golang.org/x/sys/cpu"

// updateKernel is updateAVX2 where the CPU has AVX2 and FMA, else updateGo.
var updateKernel = func() func(g float64, mu, logMu, nu, hs []float64, bin []int32, dc []float64) {
	if cpu.X86.HasAVX2 && cpu.X86.HasFMA {
		return updateAVX2
	}
	return updateGo
}()

// updateAVX2 is updateGo four entries at a time (gathering log D_b and c_b
// by bin), with the remainder in Go. Its results differ from updateGo's
// only by the rounding of fused multiply–adds. The gathers are not bounds
// checked: every bin[j] must be below len(dc)/2, as edgeTerms.prepare
// guarantees (bins are numbered as they are appended).
func updateAVX2(g float64, mu, logMu, nu, hs []float64, bin []int32, dc []float64) {
	n := len(mu)
	logMu, nu, hs, bin = logMu[:n], nu[:n], hs[:n], bin[:n]
	m := n &^ 3
	if m > 0 {
		updateAVX2Asm(g, mu[:m], logMu[:m], nu[:m], hs[:m], bin[:m], dc)
	}
	updateGo(g, mu[m:], logMu[m:], nu[m:], hs[m:], bin[m:], dc)
}

// updateAVX2Asm runs the update over len(mu) entries, a multiple of 4.
//
//go:noescape
func updateAVX2Asm(gamma float64, mu, logMu, nu, hs []float64, bin []int32, dc []float64)

// momentsKernel is momentsAVX2 where the CPU has AVX2 and FMA, else
// momentsGo.
var momentsKernel = func() func(mu, nu, hs []float64, bin []int32, mom []float64) {
	if cpu.X86.HasAVX2 && cpu.X86.HasFMA {
		return momentsAVX2
	}
	return momentsGo
}()

// momentsAVX2 is momentsGo with an entry's seven moments and its count
// added as two 4-wide vectors. Its sums
// differ from momentsGo's only in rounding. Like updateAVX2 it trusts that
// every bin[j] is below len(mom)/binStride.
func momentsAVX2(mu, nu, hs []float64, bin []int32, mom []float64) {
	n := len(mu)
	if n == 0 {
		return
	}
	momentsAVX2Asm(mu, nu[:n], hs[:n], bin[:n], mom)
}

// momentsAVX2Asm runs momentsAVX2 over len(mu) > 0 entries.
//
//go:noescape
func momentsAVX2Asm(mu, nu, hs []float64, bin []int32, mom []float64)

// ratiosKernel is ratiosAVX2 where the CPU has AVX2 and FMA, else ratiosGo.
var ratiosKernel = func() func(mu, logMu, nu, hs []float64, key []int32) (float64, float64, int32, int32) {
	if cpu.X86.HasAVX2 && cpu.X86.HasFMA {
		return ratiosAVX2
	}
	return ratiosGo
}()

// ratiosAVX2 is ratiosGo four entries at a time, with the remainder in Go.
// Keys, h and the key range are the same bit for bit; the two sums are
// added in another order.
func ratiosAVX2(mu, logMu, nu, hs []float64, key []int32) (xlogx, s0 float64, lo, hi int32) {
	n := len(mu)
	logMu, nu, hs, key = logMu[:n], nu[:n], hs[:n], key[:n]
	m := n &^ 3
	lo, hi = binKeys, -1
	if m > 0 {
		xlogx, s0, lo, hi = ratiosAVX2Asm(mu[:m], logMu[:m], nu[:m], hs[:m], key[:m])
	}
	x, s, l, h := ratiosGo(mu[m:], logMu[m:], nu[m:], hs[m:], key[m:])
	return xlogx + x, s0 + s, min(lo, l), max(hi, h)
}

// ratiosAVX2Asm runs ratiosGo over len(mu) entries, a positive multiple of 4.
//
//go:noescape
func ratiosAVX2Asm(mu, logMu, nu, hs []float64, key []int32) (xlogx, s0 float64, lo, hi int32)

// evalBinsKernel is evalBinsAVX2 where the CPU has AVX2 and FMA, else
// evalBinsGo.
var evalBinsKernel = func() func(g float64, rho, pm []float64) (float64, float64) {
	if cpu.X86.HasAVX2 && cpu.X86.HasFMA {
		return evalBinsAVX2
	}
	return evalBinsGo
}()

// evalBinsAVX2 is evalBinsGo four bins at a time, with log D_b from a
// vector logarithm (fdlibm's, as math.Log; within an ulp or two of log D_b
// relative to log D_b itself) instead of crf.Log. D_b and c_b are the same
// bit for bit as evalBinsGo's; the series and sums differ only by the
// rounding of fused multiply–adds and of H_k·(1/k) against H_k/k, and by
// the order of summation (four lanes, then across them). It needs
// len(rho) to be a multiple of 4, as edgeTerms.prepare pads it, and falls
// back on evalBinsGo otherwise; γ must be in [0, 1] and every ρ_b in
// [2^-60, 2^61], so that D_b is positive and normal.
func evalBinsAVX2(g float64, rho, pm []float64) (s, s2 float64) {
	nb := len(rho)
	if nb%4 != 0 {
		return evalBinsGo(g, rho, pm)
	}
	if nb == 0 {
		return 0, 0
	}
	return evalBinsAVX2Asm(g, rho, pm[:binMoments*nb])
}

// evalBinsAVX2Asm runs evalBinsAVX2 over len(rho) bins, a positive multiple
// of 4, with len(pm) ≥ binMoments·len(rho).
//
//go:noescape
func evalBinsAVX2Asm(gamma float64, rho, pm []float64) (s, s2 float64)

// logAVX2Asm sets dst[i] = log src[i] with the vector logarithm of
// evalBinsAVX2Asm, for len(src) a multiple of 4 and len(dst) ≥ len(src);
// every src[i] must be positive, finite and normal (other inputs give
// meaningless results). It is there for the tests.
//
//go:noescape
func logAVX2Asm(dst, src []float64)
