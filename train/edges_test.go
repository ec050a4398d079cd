package train

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/dualcrf/dualcrf/internal/num"
)

// TestEdgeTermsMatchExact checks the binned series of S(γ) − S_sep(γ),
// S'(γ) − S'_sep(γ) and the log μ update against direct evaluation, on
// marginals spanning many orders of magnitude (including ratios outside
// the binned range and zeros), with and without separator entries.
func TestEdgeTermsMatchExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 9))
	draw := func(n int) (mu, nu []float64) {
		mu, nu = make([]float64, n), make([]float64, n)
		for j := range mu {
			mu[j] = math.Exp(-rng.Float64() * 60)
			if rng.IntN(50) == 0 {
				mu[j] = 3e-310 * rng.Float64() // subnormal: evaluated exactly
			}
			switch rng.IntN(10) {
			case 0:
				nu[j] = 0
			case 1:
				nu[j] = mu[j] * math.Exp(-rng.Float64()*100) // ratio below 2^-60
			case 2:
				nu[j] = mu[j] * (1 + 1e-3*rng.NormFloat64())
			default:
				nu[j] = math.Exp(-rng.Float64() * 60)
			}
		}
		return mu, nu
	}
	abs := func(mu, nu []float64, g float64) (scale float64) {
		for j := range mu {
			scale += math.Abs(nu[j]-mu[j]) * (1 + math.Abs(math.Log((1-g)*mu[j]+g*nu[j])))
		}
		return scale
	}
	for trial := 0; trial < 50; trial++ {
		n := 1 + rng.IntN(3000)
		mu, nu := draw(n)
		var muS, nuS []float64
		if trial%2 == 1 {
			muS, nuS = draw(rng.IntN(300))
		}
		lmuS := make([]float64, len(muS))
		num.LogInto(lmuS, muS)
		var e edgeTerms
		e.prepare(mu, nu, muS, lmuS, nuS)
		for _, g := range []float64{1e-6, 0.01, 0.3, 0.77, 0.999, 1} {
			s, s2 := e.eval(g, mu, nu)
			ws, ws2 := num.LineTerms(mu, nu, g)
			ss, ss2 := num.LineTerms(muS, nuS, g)
			scale := abs(mu, nu, g) + abs(muS, nuS, g)
			if math.Abs(s-(ws-ss)) > 1e-12*scale {
				t.Fatalf("trial %d γ=%g: S − S_sep = %.17g, exact %.17g (scale %g)", trial, g, s, ws-ss, scale)
			}
			if math.Abs(s2-(ws2-ss2)) > 1e-9*(math.Abs(ws2)+math.Abs(ss2)) {
				t.Fatalf("trial %d γ=%g: S' − S'_sep = %.17g, exact %.17g", trial, g, s2, ws2-ss2)
			}
		}
		g := rng.Float64()
		want := make([]float64, n)
		for j := range mu {
			want[j] = (1-g)*mu[j] + g*nu[j]
		}
		e.update(g, mu, nu)
		for j := range mu {
			if math.Abs(mu[j]-want[j]) > 4e-16*want[j] {
				t.Fatalf("trial %d entry %d: updated μ %.17g, want %.17g", trial, j, mu[j], want[j])
			}
		}
	}
}
