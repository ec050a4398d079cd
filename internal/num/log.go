// Package num holds the numeric kernels that crf and train share: a fast
// table logarithm, its vector form, the line-search sums of an SDCA step,
// the junction-tree divergence and a parallel loop over indices.
package num

import "math"

// Log is a table-driven natural logarithm, several times faster than
// math.Log, with an absolute error below 2.5e-16·max(1, |log x|) on normal
// positive inputs (the tests check it across the whole range) — what sums
// of δ·log x need. The SDCA line search spends most of its time here.
//
// x = 2^e·m with m in [1, 2); c is the midpoint of m's 1/1024-wide cell,
// read with 1/c and log c from a table by the mantissa's top ten bits, so
// log x = e·ln2 + log c + log1p(r) with r = (m−c)/c, |r| < 2^-11, and
// log1p(r) to r⁵ (the next term is below 2^-66). No branch depends on x
// except the rare one for zero, subnormal, negative and non-finite input.
func Log(x float64) float64 {
	if v, ok := logInline(x); ok {
		return v
	}
	return math.Log(x)
}

// logInline is Log for normal positive x, written so that the kernels
// below can have it inlined; ok is false when x needs math.Log.
func logInline(x float64) (float64, bool) {
	b := math.Float64bits(x)
	ex := int(b>>52) & 0x7ff
	if ex == 0 || ex == 0x7ff || b>>63 != 0 {
		return 0, false
	}
	t := &logTable[(b>>42)&1023]
	m := math.Float64frombits(b&(1<<52-1) | 1023<<52)
	r := (m - t.c) * t.inv
	r2 := r * r
	p := r + r2*((-1.0/2+r*(1.0/3))+r2*(-1.0/4+r*(1.0/5)))
	fe := float64(ex - 1023)
	return fe*ln2Hi + (t.logc + (p + fe*ln2Lo)), true
}

const (
	ln2Hi = 6.93147180369123816490e-01 // high bits of ln 2, exact times small ints
	ln2Lo = 1.90821492927058770002e-10 // ln 2 − ln2Hi
)

type logEntry struct{ c, inv, logc float64 }

// logTable holds, for the mantissa cell i (m in [1+i/1024, 1+(i+1)/1024)),
// its midpoint c, 1/c and log c. It is computed once and never written again.
var logTable = func() (tab [1024]logEntry) {
	for i := range tab {
		c := 1 + (float64(i)+0.5)/1024
		tab[i] = logEntry{c: c, inv: 1 / c, logc: math.Log(c)}
	}
	return tab
}()

// LogInto sets dst[i] = log src[i] (−Inf for zero entries): LogVec, with
// the entries that are not positive normal numbers taken by math.Log.
func LogInto(dst, src []float64) {
	dst = dst[:len(src)]
	LogVec(dst, src)
	for i, x := range src {
		if !(x >= 0x1p-1022 && x <= math.MaxFloat64) {
			dst[i] = math.Log(x)
		}
	}
}

// logVecGo is LogVec's loop: the table logarithm, entry by entry.
func logVecGo(dst, src []float64) {
	dst = dst[:len(src)]
	for i, x := range src {
		v, ok := logInline(x)
		if !ok {
			v = math.Log(x)
		}
		dst[i] = v
	}
}

// LineTerms returns, for x = (1−γ)μ + γν entry by entry,
// s = Σ (ν−μ)·log x and s2 = Σ (ν−μ)²/x over the entries with x > 0 —
// the two sums the SDCA line search needs for each clique.
func LineTerms(mu, nu []float64, gamma float64) (s, s2 float64) {
	nu = nu[:len(mu)]
	for i, m := range mu {
		d := nu[i] - m
		x := (1-gamma)*m + gamma*nu[i] // not m + γd, which loses ν ≪ μ near γ = 1
		lx, ok := logInline(x)
		if !ok {
			if !(x > 0) {
				continue
			}
			lx = math.Log(x)
		}
		s += d * lx
		s2 += d * d / x
	}
	return s, s2
}
