package train

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"testing"

	"github.com/dualcrf/dualcrf/crf"
	"github.com/dualcrf/dualcrf/crf/crftest"
	"github.com/dualcrf/dualcrf/duals"
)

// observedPair returns two problems over the same random data in CRFsuite's
// feature space (observed pairs and transitions): one with a Mask over the
// dense layout, one with the sparse layout of the same pairs.
func observedPair(t *testing.T, seed uint64, n, A, K int, real, noBias bool) (dense, sparse *Problem) {
	t.Helper()
	mk := func() *Problem {
		p := randomProblem(t, seed, n, 6, A, K, real, 0)
		p.Layout.NoBias = noBias
		p.TransMask = ObservedTransitions(p.Data)
		return p
	}
	dense, sparse = mk(), mk()
	dense.Mask = ObservedMask(dense.Data)
	sparse.Layout.Free = ObservedFree(sparse.Data)
	if err := sparse.checkLayout(); err != nil {
		t.Fatal(err)
	}
	if dense.FreeWeights() != sparse.FreeWeights() || sparse.Layout.Dim() >= dense.Layout.Dim() {
		t.Fatalf("free weights: dense %d of %d, sparse %d of %d", dense.FreeWeights(), dense.Layout.Dim(), sparse.FreeWeights(), sparse.Layout.Dim())
	}
	return dense, sparse
}

// sameResult checks that a run on the sparse layout gave the dense run's
// weights and certificates, bit for bit.
func sameResult(t *testing.T, dense, sparse *Problem, want, got *Result) {
	t.Helper()
	wd, zero := sparse.Layout.Compact(want.Weights)
	if !zero {
		t.Fatal("the dense run moved a weight outside the feature space")
	}
	sameBits(t, "weights (sparse run vs the dense run's free weights)", wd, got.Weights)
	sameBits(t, "weights expanded", want.Weights, sparse.Layout.Expand(got.Weights))
	if len(want.Records) != len(got.Records) {
		t.Fatalf("%d epochs dense, %d sparse", len(want.Records), len(got.Records))
	}
	for e, r := range want.Records {
		g := got.Records[e]
		if math.Float64bits(r.Primal) != math.Float64bits(g.Primal) || math.Float64bits(r.Dual) != math.Float64bits(g.Dual) ||
			r.Steps != g.Steps || r.LineSearch != g.LineSearch {
			t.Fatalf("epoch %d: dense P %.17g D %.17g (%d steps, %d evaluations), sparse P %.17g D %.17g (%d, %d)",
				e, r.Primal, r.Dual, r.Steps, r.LineSearch, g.Primal, g.Dual, g.Steps, g.LineSearch)
		}
	}
}

// TestSparseLayoutSameWeights trains every method on CRFsuite's feature
// space twice, with a Mask over the dense weights and with the sparse
// layout of the same pairs, and checks that the two runs are the same bit
// for bit: every weight, every certificate, every count of steps and line
// searches. The sparse layout changes where the weights are, not a number.
func TestSparseLayoutSameWeights(t *testing.T) {
	type method struct {
		name string
		make func(p *Problem) Method
	}
	methods := []method{
		{"sdca", func(p *Problem) Method { return &SDCA{Sampler: kindSampler(t, SamplerGap, p), Seed: 3} }},
		{"sdca-l1", func(p *Problem) Method {
			p.L1 = 0.02 // the elastic net: proximal SDCA
			return &SDCA{Sampler: kindSampler(t, SamplerGap, p), Seed: 3}
		}},
		{"lbfgs-l1", func(p *Problem) Method { p.L1 = 0.02; return &LBFGS{} }}, // OWL-QN
		{"sdca-uniform", func(p *Problem) Method { return &SDCA{Sampler: kindSampler(t, SamplerUniform, p), Seed: 3} }},
		{"sdca-workers2", func(p *Problem) Method { return &SDCA{Sampler: kindSampler(t, SamplerGap, p), Seed: 3, Workers: 2} }},
		{"bcfw", func(p *Problem) Method { return &BCFW{Sampler: kindSampler(t, SamplerGap, p), Seed: 3} }},
		{"oeg", func(p *Problem) Method { return &OEG{Seed: 3} }},
		{"sag", func(p *Problem) Method { return &SAG{Seed: 3} }},
		{"lbfgs", func(p *Problem) Method { return &LBFGS{} }},
	}
	for _, real := range []bool{false, true} {
		for _, noBias := range []bool{false, true} {
			for _, me := range methods {
				t.Run(fmt.Sprintf("%s/real=%v/nobias=%v", me.name, real, noBias), func(t *testing.T) {
					dense, sparse := observedPair(t, 31, 40, 60, 5, real, noBias)
					set := Settings{MaxEpochs: 4, GapTol: 1e-300, GapEvery: 1}
					want, err := Train(context.Background(), dense, set, me.make(dense))
					if err != nil {
						t.Fatal(err)
					}
					got, err := Train(context.Background(), sparse, set, me.make(sparse))
					if err != nil {
						t.Fatal(err)
					}
					sameResult(t, dense, sparse, want, got)
					if sparse.L1 > 0 {
						zeros := 0
						for _, x := range got.Weights {
							if x == 0 {
								zeros++
							}
						}
						if zeros == 0 || zeros == len(got.Weights) {
							t.Fatalf("%d of %d free weights zero: the ℓ1 term should make some, not all, zero", zeros, len(got.Weights))
						}
					}
				})
			}
		}
	}
}

// TestSparseLayoutStreamed is TestSparseLayoutSameWeights for SDCA with its
// duals streamed from disk in several blocks, for the ℓ2 objective and the
// elastic net.
func TestSparseLayoutStreamed(t *testing.T) {
	for _, l1 := range []float64{0, 0.02} {
		t.Run(fmt.Sprint("l1=", l1), func(t *testing.T) { sparseLayoutStreamed(t, l1) })
	}
}

// sparseLayoutStreamed is TestSparseLayoutStreamed with an ℓ1 weight l1.
func sparseLayoutStreamed(t *testing.T, l1 float64) {
	dense, sparse := observedPair(t, 32, 120, 60, 5, true, true)
	dense.L1, sparse.L1 = l1, l1
	bb := duals.Bytes(dense.Data, duals.DefaultPrecision) / 5
	run := func(p *Problem) *Result {
		s := newStream(t, p, filepath.Join(t.TempDir(), "duals.stream"), bb, 0)
		if s.Blocks() < 4 {
			t.Fatalf("%d blocks, want several", s.Blocks())
		}
		res, err := Train(context.Background(), p, Settings{MaxEpochs: 4, GapTol: 1e-300, GapEvery: 1},
			&SDCA{Sampler: kindSampler(t, SamplerGap, p), Seed: 5, Duals: s})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	sameResult(t, dense, sparse, run(dense), run(sparse))
}

// TestSparseLayoutResumesDenseSnapshot stops a run on the dense layout
// (Mask) after two epochs with a snapshot, and resumes it on the sparse
// layout of the same feature space: the snapshot's dense weights are
// compacted, and the run ends as the uninterrupted dense one, bit for bit.
func TestSparseLayoutResumesDenseSnapshot(t *testing.T) {
	dense, sparse := observedPair(t, 33, 40, 60, 5, true, false)
	set := Settings{MaxEpochs: 5, GapTol: 1e-300, GapEvery: 1, CheckpointEvery: 1}
	want, err := Train(context.Background(), dense, Settings{MaxEpochs: 5, GapTol: 1e-300, GapEvery: 1}, &SDCA{Seed: 7, Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	first := set
	first.MaxEpochs = 2
	if _, err := resumeRun(t, dense, first, dir, context.Background()); err != nil {
		t.Fatal(err)
	}
	got, err := resumeRun(t, sparse, set, dir, context.Background())
	if err != nil {
		t.Fatal(err)
	}
	sameResult(t, dense, sparse, want, got)
}

// TestSparseLayoutBruteForce trains SDCA on a sparse layout and checks its
// certificate against enumeration of every path of every sentence, under
// the weights laid out densely: P(w), D(μ) from the duals' chains, and the
// gap identity.
func TestSparseLayoutBruteForce(t *testing.T) {
	_, p := observedPair(t, 34, 12, 9, 3, true, false)
	K := p.Layout.NumLabels
	m := &SDCA{Seed: 4}
	res, err := Train(context.Background(), p, Settings{MaxEpochs: 4, GapTol: 1e-300}, m)
	if err != nil {
		t.Fatal(err)
	}
	lay := p.Layout.Dense()
	w := p.Layout.Expand(res.Weights)
	n := float64(p.N())
	wsq := dot(w, w)
	loss, ent, kl := 0.0, 0.0, 0.0
	for i := 0; i < p.N(); i++ {
		s := p.Data.Sentence(i)
		nu := crftest.Enumerate(lay, w, s)
		loss += nu.LogZ - crf.Dot(w, lay, s, s.Labels)
		pm := chainJoint(loadBlock(m.duals, i), s.Len(), K, nu.Paths)
		for k, q := range pm {
			if q > 0 {
				ent -= q * math.Log(q)
				kl += q * (math.Log(q) - math.Log(nu.Prob[k]))
			}
		}
	}
	P, D := p.Lambda/2*wsq+loss/n, -p.Lambda/2*wsq+ent/n
	if !relClose(P, res.Last.Primal, 1e-10) || !relClose(D, res.Last.Dual, 1e-9) || !relClose(P-D, kl/n, 1e-6) {
		t.Fatalf("brute force P %.15g D %.15g KL %.15g; certificate P %.15g D %.15g gap %.15g",
			P, D, kl/n, res.Last.Primal, res.Last.Dual, res.Last.Gap)
	}
}

// TestObserveFeatures checks the choice of layout: sparse where at most
// half of the attribute–label pairs are observed, a Mask otherwise, the
// same pairs either way.
func TestObserveFeatures(t *testing.T) {
	few := randomProblem(t, 35, 10, 4, 200, 6, false, 0) // ~100 tokens: few of the 1200 pairs
	if !few.ObserveFeatures() || few.Mask != nil {
		t.Fatal("few observed pairs: want the sparse layout")
	}
	many := randomProblem(t, 35, 200, 6, 4, 3, false, 0) // every pair seen
	if many.ObserveFeatures() || many.Mask == nil || many.Layout.Free != nil {
		t.Fatal("every pair observed: want a Mask over the dense layout")
	}
	m := ObservedMask(few.Data)
	f := few.Layout.Free
	K := few.Layout.NumLabels
	count := 0
	for j, ok := range m {
		if ok {
			count++
			if few.Layout.Index(int32(j/K), j%K) < 0 {
				t.Fatalf("pair %d observed but not free", j)
			}
		}
	}
	if count != f.Len() {
		t.Fatalf("%d pairs observed, %d free", count, f.Len())
	}
	bad := *few
	bad.Mask = m
	if bad.checkLayout() == nil {
		t.Fatal("a Mask with a sparse layout was accepted")
	}
}
