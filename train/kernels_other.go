//go:build !amd64 || purego

package train

import "github.com/dualcrf/dualcrf/internal/num"

// mixKernel is mixGo: there is no vector kernel for this architecture.
func mixKernel(g float64, mu, nu []float64) { mixGo(g, mu, nu) }

// evalBinsKernel is evalBinsGo: there is no vector kernel for this architecture.
var evalBinsKernel = evalBinsGo

// blockRowsKernel is blockRowsGo: there is no vector kernel for this architecture.
var blockRowsKernel = blockRowsGo

// axpyRows is axpyRowsGo: there is no vector kernel for this architecture.
func axpyRows(dst []float64, dstRow []int32, src []float64, srcRow []int32, scale []float64, c float64, K int) {
	axpyRowsGo(dst, dstRow, src, srcRow, scale, c, K)
}

// dotKernel is dot: there is no vector kernel for this architecture.
func dotKernel(a, b []float64) float64 { return dot(a, b) }

// fusedAxpy reports whether axpyRows rounds with fused multiply–adds: never
// on this architecture.
func fusedAxpy() bool { return false }

// prefetchRows does nothing on this architecture.
func prefetchRows(w []float64, rows []int32, K int) {}

// ratiosMomentsKernel is ratiosMomentsGo: there is no vector kernel for this architecture.
var ratiosMomentsKernel = ratiosMomentsGo

// logKernel sets dst[j] = log src[j] (num.LogVec).
func logKernel(dst, src []float64) { num.LogVec(dst, src) }
