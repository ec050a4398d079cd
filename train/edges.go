package train

import (
	"math"

	"github.com/dualcrf/dualcrf/crf"
)

// The line search needs, for γ in [0,1], S(γ) = Σ_e δ_e·log(μ_e + γδ_e) and
// S'(γ) = Σ_e δ_e²/(μ_e + γδ_e) over the block's edge entries — a logarithm
// per entry per evaluation, which dominates the cost of SDCA. With
// u = δ/μ, log(μ+γδ) = log μ + log1p(γu), and for |u| ≤ seriesLimit
//
//	Σ δ·log1p(γu) = Σ_k (−1)^{k+1} γ^k M_k / k,   Σ δu/(1+γu) = Σ_k (−γ)^{k−1} M_k,
//
// with the moments M_k = Σ δ·u^k computed once per step. Entries with larger
// |u| (few, once training has settled) are evaluated exactly. The stored
// log μ is updated the same way, so no step takes a logarithm of an entry
// whose marginal barely moved. With |γu| ≤ 1/32 and ten terms the series
// are exact to rounding (the first term left out is below 2^-50·|γu|).
const (
	seriesLimit = 1.0 / 32
	seriesTerms = 10
)

// edgeTerms holds what a step derives from its edge marginals.
type edgeTerms struct {
	gap   float64 // Σ μ (log μ − log ν): the edge part of the block gap
	s0    float64 // S(0) = Σ δ log μ
	s20   float64 // S'(0) = Σ δ²/μ
	mom   [seriesTerms]float64
	u     []float64 // δ/μ per entry
	large []int32   // entries with |u| > seriesLimit (or μ = 0)
}

// prepare scans the entries once: gap, S(0), S'(0), the moments and the
// list of entries to evaluate exactly.
func (e *edgeTerms) prepare(mu, logMu, nu, logNu []float64) {
	n := len(mu)
	logMu, nu, logNu = logMu[:n], nu[:n], logNu[:n]
	if cap(e.u) < n {
		e.u = make([]float64, n, n+n/2)
	}
	u := e.u[:n]
	e.u = u
	e.large = e.large[:0]
	var gap, s0, s20 float64
	var m1, m2, m3, m4, m5, m6, m7, m8, m9, m10 float64
	for j, m := range mu {
		v := nu[j]
		d := v - m
		if !(m > 0) {
			u[j] = 0
			if v > 0 {
				e.large = append(e.large, int32(j))
			}
			continue
		}
		lm := logMu[j]
		gap += m * (lm - logNu[j])
		s0 += d * lm
		r := d / m
		u[j] = r
		s20 += d * r
		if math.Abs(r) > seriesLimit {
			e.large = append(e.large, int32(j))
			continue
		}
		p := d * r
		m1 += p
		p *= r
		m2 += p
		p *= r
		m3 += p
		p *= r
		m4 += p
		p *= r
		m5 += p
		p *= r
		m6 += p
		p *= r
		m7 += p
		p *= r
		m8 += p
		p *= r
		m9 += p
		p *= r
		m10 += p
	}
	e.gap, e.s0, e.s20 = gap, s0, s20
	e.mom = [seriesTerms]float64{m1, m2, m3, m4, m5, m6, m7, m8, m9, m10}
}

// eval returns S(γ) and S'(γ).
func (e *edgeTerms) eval(g float64, mu, logMu, nu []float64) (s, s2 float64) {
	// Series part: Σ_k (−1)^{k+1} γ^k M_k/k and Σ_k (−γ)^{k−1} M_k, by Horner.
	var ps, pd float64
	for k := seriesTerms; k >= 1; k-- {
		mk := e.mom[k-1]
		ps = mk/float64(k) - g*ps
		pd = mk - g*pd
	}
	s = e.s0 + g*ps
	s2 = pd
	for _, j := range e.large {
		m := mu[j]
		d := nu[j] - m
		x := m + g*d
		if !(x > 0) {
			continue
		}
		if m > 0 {
			s += d * (crf.Log(x) - logMu[j])
		} else {
			s += d * crf.Log(x)
		}
		s2 += d * d / x
	}
	return s, s2
}

// update sets μ ← μ + γδ and log μ ← log μ + log1p(γu).
func (e *edgeTerms) update(g float64, mu, logMu, nu []float64) {
	n := len(mu)
	logMu, nu, u := logMu[:n], nu[:n], e.u[:n]
	for j, m := range mu {
		r := u[j]
		mu[j] = m + g*(nu[j]-m)
		y := g * r
		// log1p(y) = y − y²/2 + y³/3 − … to y^10.
		l := 1.0 / 10
		l = 1.0/9 - y*l
		l = 1.0/8 - y*l
		l = 1.0/7 - y*l
		l = 1.0/6 - y*l
		l = 1.0/5 - y*l
		l = 1.0/4 - y*l
		l = 1.0/3 - y*l
		l = 1.0/2 - y*l
		l = 1 - y*l
		logMu[j] += y * l
	}
	for _, j := range e.large { // overwrite the inexact series values
		logMu[j] = crf.Log(mu[j])
	}
}
