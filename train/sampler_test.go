package train

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// chiSquare returns Pearson's statistic of counts against probabilities p (categories with p = 0 must
// have count 0, checked by the caller) and its degrees of freedom.
func chiSquare(counts []int, p []float64, draws int) (stat float64, dof int) {
	for i, c := range counts {
		if p[i] == 0 {
			continue
		}
		e := p[i] * float64(draws)
		stat += (float64(c) - e) * (float64(c) - e) / e
		dof++
	}
	return stat, dof - 1
}

// chiBound is a bound that a chi-square variable with dof degrees of freedom exceeds with probability
// far below 1e-6: the mean plus 10 standard deviations plus 20 (for small dof).
func chiBound(dof int) float64 { return float64(dof) + 10*math.Sqrt(2*float64(dof)) + 20 }

// assertFrequencies draws from next and compares the frequencies with p by chi-square.
func assertFrequencies(t *testing.T, next func() int, p []float64, draws int) {
	t.Helper()
	counts := make([]int, len(p))
	for range draws {
		counts[next()]++
	}
	for i, c := range counts {
		if p[i] == 0 && c > 0 {
			t.Fatalf("index %d has probability 0 but was drawn %d times", i, c)
		}
	}
	stat, dof := chiSquare(counts, p, draws)
	t.Logf("chi-square %.1f with %d dof (bound %.1f)", stat, dof, chiBound(dof))
	if stat > chiBound(dof) {
		t.Errorf("chi-square %.1f with %d dof exceeds %.1f\ncounts %v\nprobabilities %v", stat, dof, chiBound(dof), counts, p)
	}
}

// normalized returns w / Σw.
func normalized(w []float64) []float64 {
	var s float64
	for _, x := range w {
		s += x
	}
	p := make([]float64, len(w))
	for i, x := range w {
		p[i] = x / s
	}
	return p
}

// leafSum is Σ w in a plain loop, the reference for the tree total.
func leafSum(w []float64) float64 {
	var s float64
	for _, x := range w {
		s += x
	}
	return s
}

func TestSumTreeTotalAfterUpdates(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	for _, n := range []int{1, 2, 3, 7, 64, 1000} {
		tr := newSumTree(n)
		w := make([]float64, n)
		for step := range 20000 {
			i := rng.IntN(n)
			// weights spanning 30 orders of magnitude, with many exact zeros
			w[i] = 0
			if rng.IntN(4) > 0 {
				w[i] = math.Ldexp(rng.Float64(), -rng.IntN(100))
			}
			tr.set(i, w[i])
			if want := leafSum(w); math.Abs(tr.total()-want) > 1e-12*want {
				t.Fatalf("n=%d step %d: total %v, Σ leaves %v", n, step, tr.total(), want)
			}
		}
		for i := range w {
			if tr.weight(i) != w[i] {
				t.Fatalf("n=%d: leaf %d is %v, want %v", n, i, tr.weight(i), w[i])
			}
		}
	}
}

func TestSumTreeDrawFrequencies(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 2))
	w := []float64{3, 0, 1, 0.5, 0, 0, 7, 2.25, 1e-3, 4, 0, 6, 0.75} // n = 13: padded to 16 leaves
	tr := newSumTree(len(w))
	tr.fill(w)
	if want := leafSum(w); math.Abs(tr.total()-want) > 1e-12*want {
		t.Fatalf("total after fill %v, want %v", tr.total(), want)
	}
	assertFrequencies(t, func() int { return tr.sample(rng.Float64()) }, normalized(w), 400000)
}

func TestSumTreeNeverDrawsZeroWeight(t *testing.T) {
	// Find weights (L, 0, R, 0) where a naive descent (left if u < left, else right) reaches leaf 3 for
	// the largest variate: rounding makes fl(u − L) = R although u < fl(L + R).
	rng := rand.New(rand.NewPCG(3, 3))
	last := math.Nextafter(1, 0)
	found := false
	for range 1000000 {
		l, r := math.Ldexp(rng.Float64(), -rng.IntN(60)), math.Ldexp(rng.Float64(), -rng.IntN(60))
		if u := last * (l + r); u >= l && u-l >= r {
			tr := newSumTree(4)
			tr.fill([]float64{l, 0, r, 0})
			if got := tr.sample(last); got != 2 {
				t.Fatalf("weights (%v, 0, %v, 0), r = 1-ulp: drew leaf %d, want 2", l, r, got)
			}
			found = true
			break
		}
	}
	if !found {
		t.Fatal("no rounding boundary case found; the search needs widening")
	}

	// Random sparse trees at the extreme and at random variates.
	for trial := range 2000 {
		n := 1 + rng.IntN(40)
		w := make([]float64, n)
		for i := range w {
			if rng.IntN(3) == 0 {
				w[i] = math.Ldexp(rng.Float64(), -rng.IntN(60))
			}
		}
		tr := newSumTree(n)
		tr.fill(w)
		for _, r := range []float64{0, last, rng.Float64(), rng.Float64()} {
			got := tr.sample(r)
			if tr.total() == 0 {
				if got != -1 {
					t.Fatalf("trial %d: empty tree drew %d, want -1", trial, got)
				}
				continue
			}
			if got < 0 || got >= n || w[got] == 0 {
				t.Fatalf("trial %d: weights %v, r=%v: drew %d", trial, w, r, got)
			}
		}
	}
}

func TestMaxTreeArgmax(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	for _, n := range []int{1, 2, 5, 17} {
		tr := newMaxTree(n)
		w := make([]float64, n)
		for step := range 5000 {
			i := rng.IntN(n)
			w[i] = float64(rng.IntN(4)) // few values: many ties
			tr.set(i, w[i])
			want := 0
			for j := range w {
				if w[j] > w[want] {
					want = j
				}
			}
			if got := tr.argmax(); got != want {
				t.Fatalf("n=%d step %d: weights %v: argmax %d, want %d", n, step, w, got, want)
			}
		}
	}
}

// newTestSampler is NewSampler failing the test on error.
func newTestSampler(t testing.TB, kind string, n int, opts SamplerOptions) Sampler {
	t.Helper()
	s, err := NewSampler(kind, n, opts)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestGapSamplerSingleNonzeroGap(t *testing.T) {
	s := newTestSampler(t, SamplerGap, 100, SamplerOptions{NonUniform: 1})
	g := make([]float64, 100)
	g[37] = 1e-12
	g[38] = -1e-17 // rounding below zero counts as zero
	s.Refresh(g)
	rng := rand.New(rand.NewPCG(5, 5))
	for k := range 10000 {
		if i := s.Next(rng); i != 37 {
			t.Fatalf("draw %d: %d, want 37", k, i)
		}
	}
}

func TestSamplerMixedFrequencies(t *testing.T) {
	const n, f = 12, 0.8
	gaps := []float64{0, 5, 1, 0, 0.25, 3, 0, 0, 8, 0.5, 0, 2}
	smooth := []float64{1, 2, 0.5, 4, 1, 1, 3, 0.25, 1, 2, 6, 1}
	prod := make([]float64, n)
	for i := range prod {
		prod[i] = gaps[i] * smooth[i]
	}
	for _, c := range []struct {
		kind   string
		weight []float64
	}{
		{SamplerGap, gaps},
		{SamplerImportance, smooth},
		{SamplerGapImportance, prod},
		{SamplerUniform, nil},
	} {
		t.Run(c.kind, func(t *testing.T) {
			s := newTestSampler(t, c.kind, n, SamplerOptions{NonUniform: f, Smoothness: smooth})
			s.Refresh(gaps)
			p := make([]float64, n)
			for i := range p {
				p[i] = 1.0 / n
				if c.weight != nil {
					p[i] = (1-f)/n + f*normalized(c.weight)[i]
				}
			}
			rng := rand.New(rand.NewPCG(6, 6))
			assertFrequencies(t, func() int { return s.Next(rng) }, p, 300000)
		})
	}
}

func TestGapSamplerAllZeroIsUniform(t *testing.T) {
	const n = 9
	s := newTestSampler(t, SamplerGap, n, SamplerOptions{NonUniform: 1})
	s.Refresh(make([]float64, n))
	p := make([]float64, n)
	for i := range p {
		p[i] = 1.0 / n
	}
	rng := rand.New(rand.NewPCG(7, 7))
	assertFrequencies(t, func() int { return s.Next(rng) }, p, 90000)
}

// visitSteps makes steps visits: draw, then report a gap that depends on the sentence and the step.
func visitSteps(s Sampler, rng *rand.Rand, steps int) []int {
	seq := make([]int, steps)
	for k := range seq {
		i := s.Next(rng)
		seq[k] = i
		s.Update(i, float64((7*i+k)%11)/(1+float64(k)))
	}
	return seq
}

func TestSamplerDeterministicAndRestorable(t *testing.T) {
	const n = 50
	smooth := make([]float64, n)
	for i := range smooth {
		smooth[i] = 1 + float64(i%5)
	}
	opts := SamplerOptions{Smoothness: smooth}
	for _, kind := range SamplerKinds() {
		t.Run(kind, func(t *testing.T) {
			a := newTestSampler(t, kind, n, opts)
			b := newTestSampler(t, kind, n, opts)
			seqA := visitSteps(a, rand.New(rand.NewPCG(8, 8)), 3*n)
			seqB := visitSteps(b, rand.New(rand.NewPCG(8, 8)), 3*n)
			if !slices.Equal(seqA, seqB) {
				t.Fatalf("same seed, different sequences:\n%v\n%v", seqA, seqB)
			}

			st := a.State()
			c := newTestSampler(t, kind, n, opts)
			if err := c.Restore(st); err != nil {
				t.Fatal(err)
			}
			st.Gaps[0] = -1 // State shares nothing with the sampler
			if c.Estimate() != a.Estimate() {
				t.Fatalf("restored estimate %v, want %v", c.Estimate(), a.Estimate())
			}
			futA := visitSteps(a, rand.New(rand.NewPCG(9, 9)), 3*n)
			futC := visitSteps(c, rand.New(rand.NewPCG(9, 9)), 3*n)
			if !slices.Equal(futA, futC) {
				t.Fatalf("restored sampler diverges:\n%v\n%v", futA, futC)
			}
		})
	}
}

func TestSamplerRestoreRejects(t *testing.T) {
	s := newTestSampler(t, SamplerGap, 4, SamplerOptions{})
	for name, st := range map[string]SamplerState{
		"kind":     {Kind: SamplerMax, Gaps: []float64{1, 1, 1, 1}},
		"length":   {Kind: SamplerGap, Gaps: []float64{1, 1, 1}},
		"negative": {Kind: SamplerGap, Gaps: []float64{1, -1, 1, 1}},
		"NaN":      {Kind: SamplerGap, Gaps: []float64{1, math.NaN(), 1, 1}},
	} {
		if err := s.Restore(st); !errors.Is(err, ErrBadSampler) {
			t.Errorf("%s: Restore error %v, want ErrBadSampler", name, err)
		}
	}
	if s.Estimate() != DefaultInitialGap {
		t.Errorf("a refused Restore changed the estimate to %v", s.Estimate())
	}
}

func TestMaxSampler(t *testing.T) {
	const n = 6
	s := newTestSampler(t, SamplerMax, n, SamplerOptions{})
	rng := rand.New(rand.NewPCG(10, 10))
	// equal initial estimates: the first pass visits 0, 1, …, n−1 in order
	for want := range n {
		i := s.Next(rng)
		if i != want {
			t.Fatalf("first pass: drew %d, want %d", i, want)
		}
		s.Update(i, 0.5)
	}
	s.Refresh([]float64{1, 3, 2, 3, 0, 3})
	for _, step := range []struct {
		want int
		gap  float64
	}{{1, 0}, {3, 2.5}, {5, 1}, {3, 0}, {2, 0}, {0, 0}, {5, 0}, {0, 0}} {
		i := s.Next(rng)
		if i != step.want {
			t.Fatalf("drew %d, want %d (state %v)", i, step.want, s.State().Gaps)
		}
		s.Update(i, step.gap)
	}
}

func TestSamplerEstimate(t *testing.T) {
	const n = 333
	rng := rand.New(rand.NewPCG(11, 11))
	for _, kind := range SamplerKinds() {
		s := newTestSampler(t, kind, n, SamplerOptions{InitialGap: 7, Smoothness: slices.Repeat([]float64{0.5}, n)})
		if s.Estimate() != 7 {
			t.Fatalf("%s: initial estimate %v, want 7", kind, s.Estimate())
		}
		g := slices.Repeat([]float64{7}, n)
		for range 5000 {
			i := rng.IntN(n)
			g[i] = math.Ldexp(rng.Float64(), -rng.IntN(40))
			s.Update(i, g[i])
		}
		if want := leafSum(g) / n; math.Abs(s.Estimate()-want) > 1e-12*want {
			t.Fatalf("%s: estimate %v, want %v", kind, s.Estimate(), want)
		}
		for i := range g {
			g[i] = float64(i) * 1e-10
		}
		s.Refresh(g)
		if want := leafSum(g) / n; math.Abs(s.Estimate()-want) > 1e-14*want {
			t.Fatalf("%s: estimate after Refresh %v, want %v", kind, s.Estimate(), want)
		}
	}
}

func TestNewSamplerErrors(t *testing.T) {
	_, err := NewSampler("gaps", 10, SamplerOptions{})
	if !errors.Is(err, ErrBadSampler) {
		t.Fatalf("unknown kind: error %v, want ErrBadSampler", err)
	}
	for _, k := range SamplerKinds() {
		if !strings.Contains(err.Error(), k) {
			t.Errorf("unknown-kind error %q does not list %q", err, k)
		}
	}
	for name, c := range map[string]struct {
		kind string
		n    int
		opts SamplerOptions
	}{
		"importance without smoothness":     {SamplerImportance, 3, SamplerOptions{}},
		"gap-importance without smoothness": {SamplerGapImportance, 3, SamplerOptions{}},
		"short smoothness":                  {SamplerImportance, 3, SamplerOptions{Smoothness: []float64{1, 1}}},
		"zero smoothness":                   {SamplerGapImportance, 3, SamplerOptions{Smoothness: []float64{1, 0, 1}}},
		"NaN smoothness":                    {SamplerImportance, 3, SamplerOptions{Smoothness: []float64{1, math.NaN(), 1}}},
		"no sentences":                      {SamplerUniform, 0, SamplerOptions{}},
		"f above 1":                         {SamplerGap, 3, SamplerOptions{NonUniform: 1.5}},
		"negative f":                        {SamplerGap, 3, SamplerOptions{NonUniform: -0.2}},
		"negative initial gap":              {SamplerGap, 3, SamplerOptions{InitialGap: -1}},
		"infinite initial gap":              {SamplerGap, 3, SamplerOptions{InitialGap: math.Inf(1)}},
	} {
		if _, err := NewSampler(c.kind, c.n, c.opts); !errors.Is(err, ErrBadSampler) {
			t.Errorf("%s: error %v, want ErrBadSampler", name, err)
		}
	}
}

func TestSamplerCleansGaps(t *testing.T) {
	s := newTestSampler(t, SamplerGap, 3, SamplerOptions{})
	s.Refresh([]float64{math.NaN(), -1e-18, math.Inf(1)})
	if got := s.State().Gaps; got[0] != 0 || got[1] != 0 || got[2] != maxGapEstimate {
		t.Fatalf("cleaned gaps %v, want [0 0 %v]", got, maxGapEstimate)
	}
	if e := s.Estimate(); math.IsInf(e, 0) || math.IsNaN(e) {
		t.Fatalf("estimate %v, want finite", e)
	}
}

// BenchmarkSampler measures one Next plus one Update at the size of the Penn Treebank (n = 38,219).
func BenchmarkSampler(b *testing.B) {
	const n = 38219
	smooth := make([]float64, n)
	for i := range smooth {
		smooth[i] = 1.0/n + float64(i%17)/n
	}
	for _, kind := range SamplerKinds() {
		b.Run(kind, func(b *testing.B) {
			s := newTestSampler(b, kind, n, SamplerOptions{Smoothness: smooth})
			rng := rand.New(rand.NewPCG(12, 12))
			for b.Loop() {
				i := s.Next(rng)
				s.Update(i, rng.Float64())
			}
		})
	}
}
