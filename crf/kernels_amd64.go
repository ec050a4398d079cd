//go:build !purego

package crf

import "github.com/dualcrf/dualcrf/internal/cpu"

// kern is avx2Kernels where the CPU has AVX2 and FMA, else goKernels.
var kern = func() kernels {
	if cpu.AVX2FMA() {
		return avx2Kernels
	}
	return goKernels
}()

// avx2Kernels are the kernels in kernels_amd64.s. Their results differ
// from goKernels' by rounding only: fused multiply–adds, sums added four
// lanes at a time, and an exp within an ulp or so of math.Exp.
var avx2Kernels = kernels{
	scoreRows:    scoreRowsAVX2,
	expRows:      expRowsAVX2,
	forward:      forwardAVX2,
	backward:     backwardAVX2,
	marginals:    marginalsAVX2,
	logMarginals: logMarginalsAVX2,
}

// scoreRowsAVX2 is scoreRowsAsm, or scoreRowsGo where the assembly could
// not read a whole padded row (short buffers, tiny K) or finds an
// attribute row outside w (then scoreRowsGo panics as it should).
func scoreRowsAVX2(theta, w []float64, attrs []int32, attrStart []int, bias []float64, K, Kp int) {
	T := len(attrStart) - 1
	limit := min(len(w)-K, cap(w)-Kp)
	if T < 1 || cap(theta) < (T-1)*K+Kp || bias != nil && cap(bias) < Kp || limit < 0 ||
		!scoreRowsAsm(theta[:cap(theta)], w, attrs, attrStart, bias[:cap(bias)], K, Kp, limit) {
		scoreRowsGo(theta, w, attrs, attrStart, bias, K, Kp)
	}
}

//go:noescape
func scoreRowsAsm(theta, w []float64, attrs []int32, attrStart []int, bias []float64, K, Kp, limit int) (ok bool)

// expRowsAVX2 is expRowsAsm, or expRowsGo when src cannot be read a whole
// padded row past its last row or some shifted entry is outside the range
// expRowsAsm handles (huge or NaN scores).
func expRowsAVX2(dst, src, m []float64, rows, K, Kp int) {
	if rows == 0 {
		return
	}
	dst = dst[:rows*Kp]
	if m != nil {
		m = m[:rows]
	}
	if cap(src) < (rows-1)*K+Kp || !expRowsAsm(dst, src[:cap(src)], m, rows, K, Kp) {
		expRowsGo(dst, src, m, rows, K, Kp)
	}
}

//go:noescape
func expRowsAsm(dst, src, m []float64, rows, K, Kp int) (ok bool)

// forwardAVX2 is forwardAsm after checking the slices' lengths.
func forwardAVX2(alpha, psi, etr, scale []float64, K, Kp int) {
	T := len(scale)
	if T < 2 {
		return
	}
	_, _, _ = alpha[T*Kp-1], psi[T*Kp-1], etr[K*Kp-1]
	forwardAsm(alpha, psi, etr, scale, K, Kp)
}

//go:noescape
func forwardAsm(alpha, psi, etr, scale []float64, K, Kp int)

// backwardAVX2 is backwardAsm after checking the slices' lengths.
func backwardAVX2(beta, psi, etrT, scale, tmp []float64, K, Kp int) {
	T := len(scale)
	if T < 2 {
		return
	}
	_, _, _, _ = beta[T*Kp-1], psi[T*Kp-1], etrT[K*Kp-1], tmp[Kp-1]
	backwardAsm(beta, psi, etrT, scale, tmp, K, Kp)
}

//go:noescape
func backwardAsm(beta, psi, etrT, scale, tmp []float64, K, Kp int)

// marginalsAVX2 is marginalsAsm after checking the slices' lengths.
func marginalsAVX2(dst, sum, alpha, beta, psi, etr, scale, tmp []float64, K, Kp int) {
	T := len(scale)
	if T < 2 {
		return
	}
	n := (T - 1) * K * K
	_, _, _, _, _ = dst[n-1], alpha[T*Kp-1], beta[T*Kp-1], psi[T*Kp-1], etr[K*Kp-1]
	_ = tmp[Kp-1]
	if sum != nil {
		_ = sum[K*Kp-1]
	}
	marginalsAsm(dst, sum, alpha, beta, psi, etr, scale, tmp, K, Kp, tailRow(dst[:n], K, Kp))
}

//go:noescape
func marginalsAsm(dst, sum, alpha, beta, psi, etr, scale, tmp []float64, K, Kp int, tail *float64)

// logMarginalsAVX2 is logMarginalsAsm after checking the slices' lengths.
func logMarginalsAVX2(dst, fa, fc, transP []float64, K, Kp int) {
	n := len(fa) / Kp
	if n == 0 {
		return
	}
	fa = fa[:n*Kp]
	_, _, _ = dst[n*K*K-1], fc[n*Kp-1], transP[K*Kp-1]
	logMarginalsAsm(dst, fa, fc, transP, K, Kp, tailRow(dst[:n*K*K], K, Kp))
}

//go:noescape
func logMarginalsAsm(dst, fa, fc, transP []float64, K, Kp int, tail *float64)

// tailRow returns the first K-wide row of dst (len(dst) a positive
// multiple of K) whose Kp-wide store would run past dst's end: the rows the
// assembly stores under a mask.
func tailRow(dst []float64, K, Kp int) *float64 {
	i := len(dst) - K
	for i >= K && i-K+Kp > len(dst) {
		i -= K
	}
	return &dst[i]
}
