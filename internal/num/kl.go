package num

import "math"

// KL returns the junction-tree divergence D̃(μ‖ν) = Σ_edges KL(μ_e‖ν_e) −
// Σ_separators KL(μ_s‖ν_s) of two marginal blocks of a sentence of T
// tokens and K labels (the layout of crf.BlockLen: K node entries when
// T = 1, else T−1 K×K edge tables). logNu, when not nil, holds log ν (as
// produced by crf.Lattice.Marginals); muNode and nuNode are T×K node
// marginals of μ and ν. A result that rounds below zero is returned as
// zero.
func KL(mu, nu, logNu []float64, T, K int, muNode, nuNode []float64) float64 {
	n := K
	if T > 1 {
		n = (T - 1) * K * K
	}
	d := 0.0
	for i, m := range mu[:n] {
		if m <= 0 {
			continue
		}
		var ln float64
		if logNu != nil {
			ln = logNu[i]
		} else {
			ln = math.Log(nu[i])
		}
		d += m * (math.Log(m) - ln)
	}
	if T > 2 {
		s := 0.0
		for i, m := range muNode[K : (T-1)*K] {
			if m <= 0 {
				continue
			}
			s += m * math.Log(m/nuNode[K+i])
		}
		d -= s
	}
	return max(d, 0)
}
