package train

import (
	"math"

	"github.com/dualcrf/dualcrf/internal/num"
)

// The line search needs, for γ in [0,1], S(γ) = Σ_e δ_e·log(μ_e + γδ_e) and
// S'(γ) = Σ_e δ_e²/(μ_e + γδ_e) over a block's edge entries — a logarithm
// per entry per evaluation, which would dominate the cost of SDCA. Instead
// the entries are binned by their ratio ρ = ν/μ: bin b has a centre ρ_b and
// holds entries with h = (ρ − ρ_b)/ρ_b in [−1/64, 1/64] (ρ's binary exponent
// and the top five bits of its mantissa). With D_b = 1 − γ + γρ_b and
// c_b = γρ_b/D_b (so 0 ≤ c_b ≤ 1 for every γ in [0,1]),
//
//	μ + γδ = μ·D_b·(1 + c_b·h),
//	S(γ)  = Σ δ log μ + Σ_b [H_b0·log D_b + Σ_k (−1)^{k+1} c_b^k H_bk / k],
//	S'(γ) = Σ_b [(ρ_b − 1)·Σ_k (−c_b)^k H_bk + ρ_b·Σ_k (−c_b)^k H_b,k+1] / D_b,
//
// with the moments H_bk = Σ_{j∈b} δ_j h_j^k, k ≤ 6, computed once per step
// (as c_b^-k·Σ δ_j h̃_j^k with h̃ = h·c_b the exact distance of ρ's mantissa
// from its cell's centre c_b, which spares a division per entry).
// Since |c_b·h| ≤ 1/64, the first term left out is below 2^-36 of the
// leading one — ample for a line search that stops at a sub-precision of
// 1e-3. An evaluation then costs a logarithm per occupied bin (typically a
// few hundred) instead of one per entry (about 11,000 for a CoNLL-2000
// sentence). log μ itself, for S(0) and the block gap, is taken once per
// step, four entries at a time, in a sweep of its own before the one that
// bins the entries (inside it, the logarithm's long chain of dependent
// operations stalled that sweep); it is not stored. Entries whose ratio is zero, extreme (outside 2^±60) or
// undefined, or whose μ is zero or subnormal, are evaluated exactly.
//
// Bins are addressed by key — ρ's binary exponent (offset by binExpSpan)
// and the top five bits of its mantissa — in a table of binKeys+1 slots,
// the last one the identity slot of the entries evaluated exactly, so that
// no step looks an entry's bin up: the moments are added straight into the
// key's slot, and each slot's eighth number counts its entries. A slot has
// binCopies copies, entry j adding into copy j mod binCopies, so that the
// many entries of one bin that follow each other late in training (ρ ≈ 1
// everywhere) do not wait on each other's stores; the copies are summed
// when the occupied bins are collected.
const (
	binMoments = 7  // H_0 … H_6
	binStride  = 8  // a slot: the moments, then the count of its entries
	binCopies  = 4  // copies of each slot, entry j adding into copy j mod 4
	binExpSpan = 60 // ρ's binary exponent range ±60 is binned
	binKeys    = (2*binExpSpan + 1) << 5
)

// edgeTerms holds what a step derives from its edge marginals.
type edgeTerms struct {
	xlogx float64 // Σ μ log μ: with Σ μ log ν, the edge part of the block gap
	s0    float64 // S(0) = Σ δ log μ
	// The occupied bins in key order, padded with empty bins (ρ = 1, no
	// moments) to a multiple of 4: their keys, centres ρ_b and moments
	// H_bk at pm[k·len(rho)+b] (structure of arrays, for evalBins).
	keys  []int32
	rho   []float64
	pm    []float64
	logD  []float64 // per bin: log D_b at the γ of the last evaluation
	slots []float64 // per key: the moments and count of a step in progress (zero between steps)
	key   []int32   // per entry: its key (binKeys for the exact list)
	h     []float64 // per entry: h̃ = (ρ − ρ_b)/2^e, the distance of ρ's mantissa from its cell's centre
	lmu   []float64 // per entry: log μ (this step's, not kept)
	exact []int32   // entries evaluated exactly
	lmuX  []float64 // log μ of each entry of the exact list
	// The separators (node marginals of the inner nodes), whose terms
	// S_sep(γ) = Σ_s δ_s·log(μ_s + γδ_s) enter φ' with the opposite sign:
	// they share the bins with moments of −δ_s, so that an evaluation
	// returns S − S_sep. Never updated: they follow from the edges.
	muS, nuS []float64
	s0S      float64 // S_sep(0)
	keyS     []int32
	hS       []float64
	exactS   []int32
	lmuXS    []float64
}

// prepare scans the edge entries (mu, nu) and the separator entries
// (muS, their logarithms lmuS, nuS; may be empty): Σ μ log μ over the
// edges, S(0) and S_sep(0), each entry's key and h, and the bins' moments.
// The edges' log μ is one vector sweep (logKernel); then one sweep per kind
// of entry, a vector kernel where the CPU allows (ratiosMomentsKernel: the
// sums, each entry's key and h, the range of keys met, and the moments
// added into the key's slot — for the separators the moments of −δ), and a
// last one collects the occupied slots of that range, in key order, and
// clears them for the next step.
func (e *edgeTerms) prepare(mu, nu, muS, lmuS, nuS []float64) {
	n := len(mu)
	nu = nu[:n]
	if e.slots == nil {
		e.slots = make([]float64, binCopies*binStride*(binKeys+1))
	}
	if cap(e.key) < n {
		e.key = make([]int32, n, n+n/2)
		e.h = make([]float64, n, n+n/2)
		e.lmu = make([]float64, n, n+n/2)
	}
	key, hs, lmu := e.key[:n], e.h[:n], e.lmu[:n]
	e.key, e.h, e.lmu = key, hs, lmu
	logKernel(lmu, mu)
	var lo, hi int32
	e.xlogx, e.s0, lo, hi = ratiosMomentsKernel(mu, lmu, nu, hs, key, e.slots, false)
	ns := len(muS)
	e.muS, e.nuS = muS, nuS[:ns]
	if cap(e.keyS) < ns {
		e.keyS = make([]int32, ns, ns+ns/2)
		e.hS = make([]float64, ns, ns+ns/2)
	}
	e.keyS, e.hS = e.keyS[:ns], e.hS[:ns]
	e.s0S = 0
	if ns > 0 {
		var l, h int32
		_, e.s0S, l, h = ratiosMomentsKernel(muS, lmuS[:ns], e.nuS, e.hS, e.keyS, e.slots, true)
		lo, hi = min(lo, l), max(hi, h)
	}
	e.keys, e.rho = e.keys[:0], e.rho[:0]
	for k := lo; k <= hi; k++ {
		if slotCount(e.slots, int(k)) != 0 {
			// The centre of key = ex<<5 | i: 2^(ex−binExpSpan)·(1 + (i+½)/32).
			bits := uint64(k>>5+1023-binExpSpan)<<52 | uint64(k&31)<<47 | 1<<46
			e.keys = append(e.keys, k)
			e.rho = append(e.rho, math.Float64frombits(bits))
		}
	}
	nb := len(e.keys)
	for len(e.rho)%4 != 0 {
		e.rho = append(e.rho, 1)
	}
	stride := len(e.rho)
	e.pm = grow(e.pm, binMoments*stride)
	for b, k := range e.keys {
		H := e.slots[binCopies*binStride*int(k) : binCopies*binStride*(int(k)+1)]
		// The sweep added the moments of h̃ = h·c (c the bin's mantissa
		// centre); those of h are c^-k times theirs.
		inv := 1 / (1 + (float64(k&31)+0.5)/32)
		f := 1.0
		for m := 0; m < binMoments; m++ {
			e.pm[m*stride+b] = f * ((H[m] + H[binStride+m]) + (H[2*binStride+m] + H[3*binStride+m]))
			f *= inv
		}
		clear(H)
	}
	for m := 0; m < binMoments; m++ {
		clear(e.pm[m*stride+nb : (m+1)*stride])
	}
	e.exact, e.lmuX, e.exactS, e.lmuXS = e.exact[:0], e.lmuX[:0], e.exactS[:0], e.lmuXS[:0]
	if slotCount(e.slots, binKeys) != 0 {
		clear(e.slots[binCopies*binStride*binKeys:])
		var x, s float64
		e.exact, e.lmuX, x, s = exactList(e.exact, e.lmuX, key, mu, nu)
		e.xlogx, e.s0 = e.xlogx+x, e.s0+s
		e.exactS, e.lmuXS, _, s = exactList(e.exactS, e.lmuXS, e.keyS, muS, e.nuS)
		e.s0S += s
	}
}

// slotCount returns the number of entries added into key k's slot.
func slotCount(slots []float64, k int) float64 {
	H := slots[binCopies*binStride*k : binCopies*binStride*(k+1)]
	return H[binStride-1] + H[2*binStride-1] + H[3*binStride-1] + H[4*binStride-1]
}

// exactList returns in dst[:0] the entries j with key binKeys and μ or ν
// positive — those evaluated exactly — and in lmu[:0] their log μ; and
// the parts of Σ μ log μ and Σ (ν − μ) log μ that the ratio sweep leaves
// to them: those of the entries with μ positive but subnormal.
func exactList(dst []int32, lmu []float64, key []int32, mu, nu []float64) ([]int32, []float64, float64, float64) {
	dst, lmu = dst[:0], lmu[:0]
	xlogx, s0 := 0.0, 0.0
	for j, k := range key {
		m := mu[j]
		if k != binKeys || !(m > 0 || nu[j] > 0) {
			continue
		}
		dst = append(dst, int32(j))
		l := math.Log(m)
		lmu = append(lmu, l)
		if m > 0 && m < minNormal {
			xlogx += m * l
			s0 += (nu[j] - m) * l
		}
	}
	return dst, lmu, xlogx, s0
}

// minNormal is the least normal float64, 2^-1022. The ratio sweep takes
// log μ only of normal μ; smaller positive μ go to the exact list.
const minNormal = 0x1p-1022

// eval returns S(γ) − S_sep(γ) and S'(γ) − S'_sep(γ) for the entries
// prepared (mu and nu are the edge entries given to prepare).
func (e *edgeTerms) eval(g float64, mu, nu []float64) (s, s2 float64) {
	e.logD = binLogs(g, e.rho, e.logD)
	bs, bs2 := evalBinsKernel(g, e.rho, e.pm, e.logD)
	ls, ls2 := exactTerms(e.exact, e.lmuX, mu, nu, g)
	s, s2 = e.s0-e.s0S+bs+ls, bs2+ls2
	if len(e.exactS) > 0 {
		ss, ss2 := exactTerms(e.exactS, e.lmuXS, e.muS, e.nuS, g)
		s, s2 = s-ss, s2-ss2
	}
	return s, s2
}

// exactTerms returns, over the entries idx (with log μ in lmu),
// Σ δ·(log x − log μ) and Σ δ²/x, x = (1−γ)μ + γν, δ = ν − μ, leaving out
// entries with x = 0 and counting log μ only where μ > 0 — what S(γ) − S(0)
// and S'(γ) owe to the entries evaluated exactly.
func exactTerms(idx []int32, lmu, mu, nu []float64, g float64) (s, s2 float64) {
	for k, j := range idx {
		m, v := mu[j], nu[j]
		d := v - m
		x := (1-g)*m + g*v // not m + γd, which loses ν ≪ μ near γ = 1
		if !(x > 0) {
			continue
		}
		lx := math.Log(x)
		if m > 0 {
			lx -= lmu[k]
		}
		s += d * lx
		s2 += d * d / x
	}
	return s, s2
}

// binLogs returns in dst log D_b for the bins of centres rho, with
// D_b = γ·ρ_b + (1 − γ) rounded as the evalBins kernels round it, four at a
// time by num.LogVec (D_b lies in [2^-60, 2^61] for γ in [0, 1]: a positive
// normal number).
func binLogs(g float64, rho, dst []float64) []float64 {
	dst = grow(dst, len(rho))
	for b, r := range rho {
		dst[b] = float64(g*r) + (1 - g)
	}
	num.LogVec(dst, dst)
	return dst
}

// update sets μ ← (1−γ)μ + γν (= μ + γδ, without losing ν ≪ μ near γ = 1).
func (e *edgeTerms) update(g float64, mu, nu []float64) {
	mixKernel(g, mu, nu)
}
