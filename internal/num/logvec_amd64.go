//go:build !purego

package num

import "github.com/dualcrf/dualcrf/internal/cpu"

// LogVec sets dst[i] = log src[i] for every src[i] that is a positive,
// finite, normal number — four at a time with a vector logarithm (fdlibm's,
// within two ulps of math.Log) where the CPU has AVX2 and FMA (eight at a
// time, with the same results bit for bit, where it has AVX-512), else
// entry by entry with Log. For other entries dst[i] is unspecified; LogInto handles
// them.
func LogVec(dst, src []float64) {
	n := len(src)
	dst = dst[:n]
	m := 0
	if cpu.AVX2FMA() {
		m = n &^ 3
		logVecLevel(dst[:m], src[:m], cpu.AVX512())
	}
	logVecGo(dst[m:], src[m:])
}

// logVecLevel runs the vector loops over len(src) entries, a multiple of 4:
// where wide is true (the CPU has AVX-512), logVecAVX512Asm over whole
// eights, which computes what logVecAsm does bit for bit, and logVecAsm
// over the rest.
func logVecLevel(dst, src []float64, wide bool) {
	m, w := len(src), 0
	if wide {
		w = m &^ 7
		if w > 0 {
			logVecAVX512Asm(dst[:w], src[:w])
		}
	}
	if m > w {
		logVecAsm(dst[w:m], src[w:m])
	}
}

// logVecAsm runs LogVec's vector loop over len(src) entries, a multiple of 4.
//
//go:noescape
func logVecAsm(dst, src []float64)

// logVecAVX512Asm is logVecAsm eight entries at a time, len(src) a
// positive multiple of 8.
//
//go:noescape
func logVecAVX512Asm(dst, src []float64)
