package train

import (
	"math"

	"github.com/dualcrf/dualcrf/crf"
)

// The kernels of an SDCA step are the inner loops below, in pure Go: each
// one's vector twin (kernels_amd64.go and kernels_amd64.s, used where the
// CPU has AVX2 and FMA: internal/cpu) computes what it computes, up to the
// rounding each twin's comment states, and kernels_test.go checks every
// pair. Where the CPU also has AVX-512 (cpu.AVX512), some twins run loops
// of kernels_avx512_amd64.s that compute exactly what their AVX2 loops do,
// bit for bit, eight entries at a time (kernels_amd64_test.go checks each
// against its AVX2 loop). kernels_other.go makes each kernel its Go loop
// on other architectures and under the purego tag.
//
//	kernel               Go loop          what it does
//	dotKernel            dot              Σ a·b (the direction's ‖v‖²)
//	axpyRows             axpyRowsGo       rows of dst += f·rows of src (direction, update of w)
//	blockRowsKernel      blockRowsGo      a block's node sums, edge sums and Σ μ·B
//	ratiosMomentsKernel  ratiosMomentsGo  ratio keys, S(0), and the bins' moments (edgeTerms.prepare)
//	evalBinsKernel       evalBinsGo       the bins' parts of φ' and φ'' (edgeTerms.eval)
//	mixKernel            mixGo            μ ← (1−γ)μ + γν
//	logKernel            num.LogVec       log μ, four (AVX-512: eight) at a time (internal/num's kernel)
//	prefetchRows         (none)           fetch the next sentence's weight rows

// dot returns Σ a[i]·b[i] over len(a) (len(b) ≥ len(a)), in order:
// dotKernel's Go loop, and the plain dot product of the package.
func dot(a, b []float64) float64 {
	s := 0.0
	for i, v := range a {
		s += v * b[i]
	}
	return s
}

// axpyRowsGo is axpyRows' loop: for k < len(dstRow), with d = dstRow[k],
// s = srcRow[k] (k when srcRow is nil) and f = c·scale[k] (c when scale
// is nil), dst[d·K : d·K+K] += f·src[s·K : s·K+K].
func axpyRowsGo(dst []float64, dstRow []int32, src []float64, srcRow []int32, scale []float64, c float64, K int) {
	for k, d := range dstRow {
		s := k
		if srcRow != nil {
			s = int(srcRow[k])
		}
		f := c
		if scale != nil {
			f *= scale[k]
		}
		out, in := dst[int(d)*K:int(d)*K+K], src[s*K:s*K+K]
		for y, x := range in {
			out[y] += f * x
		}
	}
}

// axpySparseRows adds γ·vr[r·K : r·K+K] to the weights of attribute
// rows[r] in the sparse layout lay, at its free labels: axpyRows on the
// free weights, each rounded as axpyRows rounds it (a fused multiply–add
// where the CPU has AVX2 and FMA), so that they are the dense run's bits.
func axpySparseRows(w []float64, lay crf.Layout, rows []int32, vr []float64, gamma float64) {
	K := lay.NumLabels
	fused := fusedAxpy()
	for r, a := range rows {
		lo, hi := lay.Span(a)
		u, v := w[lo:hi], vr[r*K:r*K+K]
		if fused {
			for k, y := range lay.RowLabels(a) {
				u[k] = math.FMA(gamma, v[y], u[k])
			}
			continue
		}
		for k, y := range lay.RowLabels(a) {
			u[k] += gamma * v[y]
		}
	}
}

// prefetchWeights asks for the weights of the attributes a in rows to be
// brought into the cache (prefetchRows); in a sparse layout, whose rows are
// a word or two, it reads each row's first word and returns their sum, for
// the caller to keep (so that the loads are made).
func prefetchWeights(w []float64, lay crf.Layout, rows []int32) (sink float64) {
	if lay.Free == nil {
		prefetchRows(w, rows, lay.NumLabels)
		return 0
	}
	for _, a := range rows {
		sink += w[lay.Free.Start[a]]
	}
	return sink
}

// blockRowsGo sets node[y] to the sum of row y of the K×K block blk, adds
// blk into sum, and returns Σ blk·B.
func blockRowsGo(blk []float64, K int, B, node, sum []float64) (muB float64) {
	blk, B, sum = blk[:K*K], B[:K*K], sum[:K*K]
	for y := range node[:K] {
		r, b, acc := blk[y*K:(y+1)*K], B[y*K:(y+1)*K], sum[y*K:(y+1)*K]
		s, d := 0.0, 0.0
		for y2, v := range r {
			s += v
			d += v * b[y2]
			acc[y2] += v
		}
		node[y] = s
		muB += d
	}
	return muB
}

// mixGo sets mu[j] = (1−γ)·mu[j] + γ·nu[j].
func mixGo(g float64, mu, nu []float64) {
	nu = nu[:len(mu)]
	for j, m := range mu {
		mu[j] = (1-g)*m + g*nu[j]
	}
}

// ratiosGo returns Σ μ log μ and S(0) = Σ (ν − μ) log μ over the entries
// with normal μ (≥ 2^-1022), with log μ from logMu, and sets for every
// entry its key — ρ = ν/μ's binary exponent (offset by binExpSpan) and the
// top five bits of its mantissa, ex<<5 | i — and h̃ = m − c, the distance
// (exact) of ρ's mantissa m from the centre c of its cell, so that
// h = (ρ − ρ_b)/ρ_b = h̃/c: no division per entry beyond ρ's own. Entries
// with μ zero or subnormal, or ρ zero, subnormal, outside 2^±60, infinite or
// NaN get key binKeys and h̃ = 0: they are evaluated exactly. lo and hi are the least and greatest key below binKeys (binKeys
// and −1 when there is none).
func ratiosGo(mu, logMu, nu, hs []float64, key []int32) (xlogx, s0 float64, lo, hi int32) {
	n := len(mu)
	logMu, nu, hs, key = logMu[:n], nu[:n], hs[:n], key[:n]
	lo, hi = binKeys, -1
	for j, m := range mu {
		key[j], hs[j] = binKeys, 0
		if !(m >= minNormal) {
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
		k := int32(ex<<5 | int64(bits>>47)&31)
		key[j] = k
		lo, hi = min(lo, k), max(hi, k)
		// With ρ = 2^e·m and ρ_b = 2^e·c: h̃ = m − c, exact; h = h̃/c.
		c := math.Float64frombits(bits&(31<<47) | 1023<<52 | 1<<46)
		hs[j] = math.Float64frombits(bits&(1<<52-1)|1023<<52) - c
	}
	return xlogx, s0, lo, hi
}

// momentsGo adds δ_j·h_j^k (k = 0 … 6) of every entry j to the moments of
// copy c = j mod binCopies of its slot, mom[binStride·(binCopies·key[j]+c)+k],
// with δ = ν − μ, and counts the entry in that copy's eighth number.
func momentsGo(mu, nu, hs []float64, key []int32, mom []float64) {
	n := len(mu)
	nu, hs, key = nu[:n], hs[:n], key[:n]
	for j, m := range mu {
		d, h := nu[j]-m, hs[j]
		H := (*[binStride]float64)(mom[binStride*(binCopies*int(key[j])+j%binCopies):])
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
		H[7]++
	}
}

// ratiosMomentsGo is ratiosGo followed by momentsGo on the same entries,
// with the moments of −δ (μ and ν swapped) for neg: the two sweeps that
// ratiosMomentsKernel makes one.
func ratiosMomentsGo(mu, logMu, nu, hs []float64, key []int32, mom []float64, neg bool) (xlogx, s0 float64, lo, hi int32) {
	xlogx, s0, lo, hi = ratiosGo(mu, logMu, nu, hs, key)
	if neg {
		momentsGo(nu[:len(mu)], mu, hs, key, mom)
	} else {
		momentsGo(mu, nu, hs, key, mom)
	}
	return xlogx, s0, lo, hi
}

// evalBinsGo returns the bins' parts of S(γ) and S'(γ),
//
//	Σ_b [H_b0·log D_b + Σ_{k≥1} (−1)^{k+1} c_b^k H_bk/k]  and
//	Σ_b [(ρ_b − 1)·Σ_{k=0}^{5} (−c_b)^k H_bk + ρ_b·Σ_{k=0}^{5} (−c_b)^k H_b,k+1] / D_b,
//
// with D_b = γρ_b + (1 − γ) and c_b = γρ_b/D_b, for the bins of centres
// rho, moments H_bk = pm[k·len(rho)+b] (k < binMoments) and log D_b in logD
// (binLogs).
func evalBinsGo(g float64, rho, pm, logD []float64) (s, s2 float64) {
	nb := len(rho)
	pm, logD = pm[:binMoments*nb], logD[:nb]
	for b, r := range rho {
		D := float64(g*r) + (1 - g)
		c := g * r / D
		var H [binMoments]float64
		for k := range H {
			H[k] = pm[k*nb+b]
		}
		// Σ_{k≥1} (−1)^{k+1} c^k H_k/k = c·(H_1 − c(H_2/2 − c(H_3/3 − …))).
		t := H[6] / 6
		t = H[5]/5 - c*t
		t = H[4]/4 - c*t
		t = H[3]/3 - c*t
		t = H[2]/2 - c*t
		t = H[1] - c*t
		s += H[0]*logD[b] + c*t
		// P0 = Σ_{k=0}^{5} (−c)^k H_k, P1 = Σ_{k=0}^{5} (−c)^k H_{k+1}.
		p0 := H[5]
		p1 := H[6]
		for k := 4; k >= 0; k-- {
			p0 = H[k] - c*p0
			p1 = H[k+1] - c*p1
		}
		s2 += ((r-1)*p0 + r*p1) / D
	}
	return s, s2
}
