package train

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/dualcrf/dualcrf/crf"
	"github.com/dualcrf/dualcrf/crf/crftest"
	"github.com/dualcrf/dualcrf/internal/num"
)

// TestPassDualTermsMatchEntryByEntry checks the certificate pass's H̃(μ_i)
// and D̃(μ_i‖ν_i) — one vector logarithm sweep over μ and Σ μ log ν from the
// factors of log ν — against crf.Entropy and num.KL, which take a scalar
// logarithm per entry of μ and of ν (the crf tests check them against
// enumeration): at SDCA's duals after two epochs, at duals with zero and
// subnormal entries, and at weights that put the lattice in its
// log-domain regime.
func TestPassDualTermsMatchEntryByEntry(t *testing.T) {
	for _, tc := range []struct {
		name string
		sd   float64 // weights drawn with this spread; 0: SDCA's own
		tiny bool    // zero and subnormal entries put into μ
	}{{"sdca", 0, false}, {"tiny", 0, true}, {"spread3", 3, false}, {"logdomain", 400, true}} {
		t.Run(tc.name, func(t *testing.T) {
			p := randomProblem(t, 41, 40, 7, 9, 4, true, 0)
			m := &SDCA{Seed: 2}
			if err := m.Init(p); err != nil {
				t.Fatal(err)
			}
			for range 2 {
				if err := m.Epoch(context.Background()); err != nil {
					t.Fatal(err)
				}
			}
			K := p.Layout.NumLabels
			if tc.tiny {
				rng := rand.New(rand.NewPCG(9, 9))
				for i := 0; i < p.N(); i++ {
					mu := loadBlock(m.duals, i)
					for e := 0; (e+1)*K*K <= len(mu); e++ {
						// Move mass around a cycle of the clique — row and
						// column sums, hence consistency, kept — so that one
						// entry falls to zero (even e) or to a subnormal.
						blk := mu[e*K*K : (e+1)*K*K]
						y1, y2 := rng.IntN(K), rng.IntN(K)
						z1, z2 := rng.IntN(K), rng.IntN(K)
						if y1 == y2 || z1 == z2 || blk[y2*K+z2] < blk[y1*K+z1] {
							continue
						}
						x := blk[y1*K+z1]
						if e%2 == 1 {
							x -= 0x1p-1060
						}
						blk[y1*K+z1] -= x
						blk[y2*K+z2] -= x
						blk[y1*K+z2] += x
						blk[y2*K+z1] += x
					}
				}
			}
			w := m.st.w
			if tc.sd > 0 {
				w = crftest.RandomWeights(rand.New(rand.NewPCG(5, uint64(tc.sd))), p.Layout, tc.sd)
			}
			r, err := p.pass(context.Background(), w, m.duals, false)
			if err != nil {
				t.Fatal(err)
			}
			lat := crf.NewLattice(K)
			ent := 0.0
			for i := 0; i < p.N(); i++ {
				s := p.Data.Sentence(i)
				T := s.Len()
				mu := loadBlock(m.duals, i)
				lat.SetScores(p.Layout, w, s)
				lat.ForwardBackward()
				nu, logNu := make([]float64, len(mu)), make([]float64, len(mu))
				lat.Marginals(nu, logNu)
				muN, nuN := make([]float64, T*K), make([]float64, T*K)
				lat.NodeMarginals(nuN)
				h := crf.Entropy(mu, T, K, muN, true)
				g := num.KL(mu, nu, logNu, T, K, muN, nuN)
				ent += h
				if math.Abs(r.Gaps[i]-g) > 1e-12*max(1, math.Abs(h), g) {
					t.Fatalf("sentence %d (T=%d): block gap %.15g, entry by entry %.15g", i, T, r.Gaps[i], g)
				}
			}
			ent /= float64(p.N())
			if !relClose(r.Entropy, ent, 1e-12) {
				t.Fatalf("mean entropy %.15g, entry by entry %.15g", r.Entropy, ent)
			}
		})
	}
}
