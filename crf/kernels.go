package crf

import "math"

// kernels are the inner loops of the probability-domain lattice, on rows
// at a stride Kp (K rounded up to a multiple of 4) whose padding is zero.
// kern holds the implementation chosen for the CPU at start-up (see
// kernels_amd64.go); the Go versions below define what each computes.
type kernels struct {
	// scoreRows sets, for t < len(attrStart)−1, θ_t = bias +
	// Σ_{attrStart[t] ≤ j < attrStart[t+1]} w[attrs[j]·K : attrs[j]·K+K]
	// into theta[t·K : (t+1)·K] (bias nil counts as zero).
	scoreRows func(theta, w []float64, attrs []int32, attrStart []int, bias []float64, K, Kp int)
	// expRows sets dst[r·Kp+y] = exp(src[r·K+y] − m[r]) for r < rows,
	// y < K, and zero padding; m[r] is set to the maximum of src's row r
	// first. With m nil the shift is 0.
	expRows func(dst, src, m []float64, rows, K, Kp int)
	// forward runs the scaled forward recursion for t = 1..len(scale)−1.
	forward func(alpha, psi, etr, scale []float64, K, Kp int)
	// backward runs the scaled backward recursion from t = len(scale)−2
	// down to 0.
	backward func(beta, psi, etrT, scale, tmp []float64, K, Kp int)
	// marginals writes the edge marginals and, if sum is not nil, adds them
	// into sum.
	marginals func(dst, sum, alpha, beta, psi, etr, scale, tmp []float64, K, Kp int)
	// logMarginals writes the log edge marginals from their factors.
	logMarginals func(dst, fa, fc, transP []float64, K, Kp int)
}

// goKernels is the portable implementation.
var goKernels = kernels{
	scoreRows:    scoreRowsGo,
	expRows:      expRowsGo,
	forward:      forwardGo,
	backward:     backwardGo,
	marginals:    marginalsGo,
	logMarginals: logMarginalsGo,
}

// scoreRowsGo is kernels.scoreRows.
func scoreRowsGo(theta, w []float64, attrs []int32, attrStart []int, bias []float64, K, Kp int) {
	for t := 0; t+1 < len(attrStart); t++ {
		row := theta[t*K : (t+1)*K]
		if bias == nil {
			clear(row)
		} else {
			copy(row, bias[:K])
		}
		for _, a := range attrs[attrStart[t]:attrStart[t+1]] {
			off := int(a) * K
			u := w[off : off+K]
			for y := range row {
				row[y] += u[y]
			}
		}
	}
}

// expRowsGo is kernels.expRows with math.Exp.
func expRowsGo(dst, src, m []float64, rows, K, Kp int) {
	for r := 0; r < rows; r++ {
		row := src[r*K : (r+1)*K]
		shift := 0.0
		if m != nil {
			shift = row[0]
			for _, v := range row[1:] {
				shift = max(shift, v)
			}
			m[r] = shift
		}
		d := dst[r*Kp : (r+1)*Kp]
		for y, v := range row {
			d[y] = math.Exp(v - shift)
		}
		clear(d[K:])
	}
}

// forwardGo computes, for t = 1..T−1 (T = len(scale)), the forward row
// α̂_t = (Eᵀ α̂_{t−1}) ∘ ψ_t scaled to sum 1, and its sum before scaling in
// scale[t]. alpha and psi are T×Kp, etr = E is K×Kp; row 0 of alpha is
// given.
func forwardGo(alpha, psi, etr, scale []float64, K, Kp int) {
	for t := 1; t < len(scale); t++ {
		prev := alpha[(t-1)*Kp : t*Kp]
		cur := alpha[t*Kp : (t+1)*Kp]
		clear(cur)
		for y, ap := range prev[:K] {
			if ap == 0 {
				continue
			}
			e := etr[y*Kp : (y+1)*Kp]
			for y2, ev := range e {
				cur[y2] += ap * ev
			}
		}
		p := psi[t*Kp : (t+1)*Kp]
		for y2 := range cur {
			cur[y2] *= p[y2]
		}
		normalise(cur, &scale[t])
	}
}

// backwardGo computes, for t = T−2 down to 0 (T = len(scale)), the
// backward row β̂_t = E (ψ_{t+1} ∘ β̂_{t+1}) / c_{t+1}, with c = scale and
// E (K×Kp) given transposed as etrT; row T−1 of beta is given. tmp is Kp
// scratch.
func backwardGo(beta, psi, etrT, scale, tmp []float64, K, Kp int) {
	w := tmp[:Kp]
	for t := len(scale) - 2; t >= 0; t-- {
		next := beta[(t+1)*Kp : (t+2)*Kp]
		p := psi[(t+1)*Kp : (t+2)*Kp]
		inv := 1 / scale[t+1]
		for y2 := range w {
			w[y2] = p[y2] * next[y2] * inv
		}
		cur := beta[t*Kp : (t+1)*Kp]
		clear(cur)
		for y2, wv := range w[:K] {
			e := etrT[y2*Kp : (y2+1)*Kp]
			for y, ev := range e {
				cur[y] += wv * ev
			}
		}
	}
}

// marginalsGo writes, for t < T−1 (T = len(scale)), the edge marginals
// ν_t(y,y') = α̂_t(y) E[y,y'] ψ_{t+1}(y') β̂_{t+1}(y') / c_{t+1} to
// dst[(t·K+y)·K+y'] and, when sum (K×Kp) is not nil, adds each into
// sum[y·Kp+y']. tmp is Kp scratch.
func marginalsGo(dst, sum, alpha, beta, psi, etr, scale, tmp []float64, K, Kp int) {
	w := tmp[:Kp]
	for t := 0; t < len(scale)-1; t++ {
		p := psi[(t+1)*Kp : (t+2)*Kp]
		b := beta[(t+1)*Kp : (t+2)*Kp]
		inv := 1 / scale[t+1]
		for y2 := range w {
			w[y2] = p[y2] * b[y2] * inv
		}
		blk := dst[t*K*K : (t+1)*K*K]
		for y, av := range alpha[t*Kp : t*Kp+K] {
			e := etr[y*Kp : y*Kp+K]
			out := blk[y*K : (y+1)*K]
			for y2, ev := range e {
				out[y2] = av * ev * w[y2]
			}
			if sum != nil {
				s := sum[y*Kp : y*Kp+K]
				for y2, v := range out {
					s[y2] += v
				}
			}
		}
	}
}

// logMarginalsGo writes dst[(t·K+y)·K+y'] = fa[t·Kp+y] + B[y·Kp+y'] +
// fc[t·Kp+y'] for t < len(fa)/Kp, with B = transP (K×Kp).
func logMarginalsGo(dst, fa, fc, transP []float64, K, Kp int) {
	for t := 0; t < len(fa)/Kp; t++ {
		c := fc[t*Kp : t*Kp+K]
		blk := dst[t*K*K : (t+1)*K*K]
		for y, av := range fa[t*Kp : t*Kp+K] {
			tr := transP[y*Kp : y*Kp+K]
			out := blk[y*K : (y+1)*K]
			for y2, tv := range tr {
				out[y2] = av + tv + c[y2]
			}
		}
	}
}
