package decode

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/dualcrf/dualcrf/tables"
)

// TestProbabilitiesInUnitInterval: the confidences, chunk confidences and
// log-probabilities decode writes are probabilities (in [0, 1]) or their
// logarithms (≤ 0), rounding included. A token forced to its label has a
// marginal of exactly 1 in exact arithmetic, computed as exp(log α + log β
// − log Z), which rounds above 1 about half the time.
func TestProbabilitiesInUnitInterval(t *testing.T) {
	m, d := bioModel(21, 200, 6)
	rng := rand.New(rand.NewPCG(22, 23))
	text := make([]string, d.NumTokens())
	for tok := range text {
		text[tok] = "_"
		if rng.IntN(2) == 0 {
			text[tok] = "O"
		}
	}
	tab := &tables.FeatureTable{Data: d, Columns: []string{"force"}, Text: [][]string{text}}
	for _, opts := range []Options{
		{ForceColumn: "force", Marginals: true, ChunkConfidence: true, NBest: 3},
		{Constraints: ConstraintsBIO, ForceColumn: "force", Marginals: true, ChunkConfidence: true, NBest: 3},
		{Marginals: true, ChunkConfidence: true, NBest: 2},
	} {
		p, err := decodeFeatureTable(context.Background(), m, tab, opts)
		if err != nil {
			t.Fatal(err)
		}
		check := func(what string, conf, chunk []float64, logp float64) {
			t.Helper()
			for tok, c := range conf {
				if !(c >= 0 && c <= 1) {
					t.Fatalf("%+v: %s: token %d: confidence %v outside [0, 1]", opts, what, tok, c)
				}
			}
			for tok, c := range chunk {
				if !math.IsNaN(c) && !(c >= 0 && c <= 1) {
					t.Fatalf("%+v: %s: token %d: chunk confidence %v outside [0, 1]", opts, what, tok, c)
				}
			}
			if !(logp <= 0) {
				t.Fatalf("%+v: %s: log-probability %v above 0", opts, what, logp)
			}
		}
		check("best labellings", p.Confidence, p.ChunkConfidence, 0)
		for i, lp := range p.LogProb {
			check("best labelling", nil, nil, lp)
			for _, a := range p.Alternatives[i] {
				check("alternative", a.Confidence, a.ChunkConfidence, a.LogProb)
			}
		}
	}
}
