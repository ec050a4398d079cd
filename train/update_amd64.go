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
