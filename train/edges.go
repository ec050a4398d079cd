package train

import (
	"math"

	"github.com/dualcrf/dualcrf/crf"
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
// with the moments H_bk = Σ_{j∈b} δ_j h_j^k, k ≤ 6, computed once per step.
// Since |c_b·h| ≤ 1/64, the first term left out is below 2^-36 of the
// leading one — ample for a line search that stops at a sub-precision of
// 1e-3; the stored log μ, which certificates and gap estimates read, is
// updated with a longer series, exact to rounding. An evaluation then costs a logarithm
// per occupied bin (typically a few hundred) instead of one per entry (about
// 11,000 for a CoNLL-2000 sentence). The stored log μ is updated the same
// way: log μ' = log μ + log D_b + log1p(c_b·h). Entries whose ratio is zero,
// extreme (outside 2^±60) or undefined are evaluated exactly.
const (
	binMoments = 7  // H_0 … H_6
	binStride  = 8  // a bin's moments take one cache line; the 8th is scratch
	binExpSpan = 60 // ρ's binary exponent range ±60 is binned
	binKeys    = (2*binExpSpan + 1) << 5
)

// ratioBin is one occupied bin.
type ratioBin struct {
	rho float64 // centre ρ_b
	// Per evaluation / update: log D_b and c_b at the last γ.
	logD, c float64
}

// edgeTerms holds what a step derives from its edge marginals. Bins are
// numbered from 1 in the order they are first met; bin 0 is the identity
// bin (log D = 0, c = 0) of the entries evaluated exactly, so that the
// update runs over all entries without a branch.
type edgeTerms struct {
	xlogx float64 // Σ μ log μ: with Σ μ log ν, the edge part of the block gap
	s0    float64 // S(0) = Σ δ log μ
	bins  []ratioBin
	mom   []float64 // per bin b: H_b0 … H_b6 at mom[binStride·b:]
	slot  []int32   // key → index into bins, valid when stamp[key] == gen
	stamp []uint32  // key → generation
	gen   uint32
	bin   []int32   // per entry: its bin (0 for the exact list); first its key
	h     []float64 // per entry: (ρ − ρ_b)/ρ_b
	exact []int32   // entries evaluated exactly
	dc    []float64 // per bin b: log D_b and c_b at dc[2b:], for update
}

// prepare scans the entries: Σ μ log μ, S(0), each entry's bin and h, and
// the bins' moments. It runs in three sweeps, two of them vector kernels
// where the CPU allows: ratiosKernel (the sums, each entry's key and h),
// the bin lookup below, and momentsKernel.
func (e *edgeTerms) prepare(mu, logMu, nu []float64) {
	n := len(mu)
	logMu, nu = logMu[:n], nu[:n]
	if e.slot == nil {
		e.slot = make([]int32, binKeys)
		e.stamp = make([]uint32, binKeys)
	}
	if e.gen++; e.gen == 0 {
		clear(e.stamp)
		e.gen = 1
	}
	if cap(e.bin) < n {
		e.bin = make([]int32, n, n+n/2)
		e.h = make([]float64, n, n+n/2)
	}
	bin, hs := e.bin[:n], e.h[:n]
	e.bin, e.h = bin, hs
	e.xlogx, e.s0 = ratiosKernel(mu, logMu, nu, hs, bin)
	// bin holds keys now; turn them into bin numbers.
	e.bins = append(e.bins[:0], ratioBin{}) // the identity bin
	e.exact = e.exact[:0]
	stamp, slot := e.stamp[:binKeys], e.slot[:binKeys]
	for j, key := range bin {
		if key < 0 {
			bin[j] = 0
			if mu[j] > 0 || nu[j] > 0 {
				e.exact = append(e.exact, int32(j))
			}
			continue
		}
		if stamp[key] != e.gen {
			stamp[key] = e.gen
			slot[key] = int32(len(e.bins))
			// The centre of key = ex<<5 | i: 2^(ex−binExpSpan)·(1 + (i+½)/32).
			bits := uint64(key>>5+1023-binExpSpan)<<52 | uint64(key&31)<<47 | 1<<46
			e.bins = append(e.bins, ratioBin{rho: math.Float64frombits(bits)})
		}
		bin[j] = slot[key]
	}
	e.mom = grow(e.mom, binStride*len(e.bins))
	clear(e.mom)
	momentsKernel(mu, nu, hs, bin, e.mom)
}

// ratiosGo returns Σ μ log μ and S(0) = Σ (ν − μ) log μ over the entries
// with μ > 0, and sets for every entry its key — ρ = ν/μ's binary exponent
// (offset by binExpSpan) and the top five bits of its mantissa, ex<<5 | i —
// and h = (ρ − ρ_b)/ρ_b relative to the centre of its cell. Entries with
// μ ≤ 0, or ρ zero, subnormal, outside 2^±60, infinite or NaN get key −1
// and h = 0: they are evaluated exactly.
func ratiosGo(mu, logMu, nu, hs []float64, key []int32) (xlogx, s0 float64) {
	n := len(mu)
	logMu, nu, hs, key = logMu[:n], nu[:n], hs[:n], key[:n]
	for j, m := range mu {
		key[j], hs[j] = -1, 0
		if !(m > 0) {
			continue
		}
		v, lm := nu[j], logMu[j]
		xlogx += m * lm
		s0 += (v - m) * lm
		bits := math.Float64bits(v / m)
		ex := int64(bits>>52) - (1023 - binExpSpan)
		if uint64(ex) > 2*binExpSpan {
			continue
		}
		key[j] = int32(ex<<5 | int64(bits>>47)&31)
		// With ρ = 2^e·m and ρ_b = 2^e·c: h = (m − c)/c, m − c exact.
		c := math.Float64frombits(bits&(31<<47) | 1023<<52 | 1<<46)
		hs[j] = (math.Float64frombits(bits&(1<<52-1)|1023<<52) - c) / c
	}
	return xlogx, s0
}

// momentsGo adds δ_j·h_j^k (k = 0 … 6) of every entry j to its bin's
// moments, mom[binStride·bin[j]+k], with δ = ν − μ.
func momentsGo(mu, nu, hs []float64, bin []int32, mom []float64) {
	n := len(mu)
	nu, hs, bin = nu[:n], hs[:n], bin[:n]
	for j, m := range mu {
		d, h := nu[j]-m, hs[j]
		H := (*[binStride]float64)(mom[binStride*int(bin[j]):])
		h2 := h * h
		d1, d2 := d*h, d*h2
		d3, d4 := d1*h2, d2*h2
		H[0] += d
		H[1] += d1
		H[2] += d2
		H[3] += d3
		H[4] += d4
		H[5] += d3 * h2
		H[6] += d4 * h2
	}
}

// eval returns S(γ) and S'(γ), and leaves log D_b and c_b of γ in the bins.
func (e *edgeTerms) eval(g float64, mu, logMu, nu []float64) (s, s2 float64) {
	s = e.s0
	for i := 1; i < len(e.bins); i++ {
		b := &e.bins[i]
		D := 1 - g + g*b.rho
		c := g * b.rho / D
		b.logD, b.c = crf.Log(D), c
		H := (*[binStride]float64)(e.mom[binStride*i:])
		// Σ_{k≥1} (−1)^{k+1} c^k H_k/k = c·(H_1 − c(H_2/2 − c(H_3/3 − …))).
		t := H[6] / 6
		t = H[5]/5 - c*t
		t = H[4]/4 - c*t
		t = H[3]/3 - c*t
		t = H[2]/2 - c*t
		t = H[1] - c*t
		s += H[0]*b.logD + c*t
		// P0 = Σ_{k=0}^{5} (−c)^k H_k, P1 = Σ_{k=0}^{5} (−c)^k H_{k+1}.
		p0 := H[5]
		p1 := H[6]
		for k := 4; k >= 0; k-- {
			p0 = H[k] - c*p0
			p1 = H[k+1] - c*p1
		}
		s2 += ((b.rho-1)*p0 + b.rho*p1) / D
	}
	ls, ls2 := crf.LineTermsAt(e.exact, mu, logMu, nu, g)
	return s + ls, s2 + ls2
}

// update sets μ ← (1−γ)μ + γν (= μ + γδ, without losing ν ≪ μ near γ = 1)
// and log μ ← log μ + log D_b + log1p(c_b·h), then takes the logs of the
// exact list. The identity bin makes the loop branch-free, so that it runs
// four entries at a time where the CPU allows (updateKernel).
func (e *edgeTerms) update(g float64, mu, logMu, nu []float64) {
	// log D_b and c_b side by side, read by entry through its bin.
	e.dc = grow(e.dc, 2*len(e.bins))
	dc := e.dc
	dc[0], dc[1] = 0, 0
	for i := 1; i < len(e.bins); i++ {
		rho := e.bins[i].rho
		D := 1 - g + g*rho
		dc[2*i], dc[2*i+1] = crf.Log(D), g*rho/D
	}
	n := len(mu)
	updateKernel(g, mu, logMu[:n], nu[:n], e.h[:n], e.bin[:n], dc)
	crf.LogAt(e.exact, logMu, mu)
}

// updateGo is the update's loop over entries: μ ← (1−γ)μ + γν and
// log μ ← log μ + log D_b + log1p(c_b·h) with (log D_b, c_b) at dc[2b:].
func updateGo(g float64, mu, logMu, nu, hs []float64, bin []int32, dc []float64) {
	n := len(mu)
	logMu, nu, hs, bin = logMu[:n], nu[:n], hs[:n], bin[:n]
	for j, m := range mu {
		mu[j] = (1-g)*m + g*nu[j]
		b := (*[2]float64)(dc[2*int(bin[j]):])
		q := b[1] * hs[j]
		// log1p(q) = q·(1 − q/2 + q²/3 − … − q⁷/8); |q| ≤ 1/64, so the
		// next term is below 2^-57 of the sum. Estrin's scheme.
		q2 := q * q
		l := (1 - q*(1.0/2)) + q2*(1.0/3-q*(1.0/4)) + q2*q2*((1.0/5-q*(1.0/6))+q2*(1.0/7-q*(1.0/8)))
		logMu[j] += b[0] + q*l
	}
}
