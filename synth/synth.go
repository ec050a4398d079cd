// Package synth writes synthetic feature tables for scale tests (dualcrf
// synth): sentences drawn from a random "true" chain CRF, written through
// tables.FeatureWriter, with the options and the true weights' accuracy in
// the table's metadata (MetadataKey) so a table can be reproduced and
// judged alone.
package synth

// How the tables are drawn.
//
// A random "true" chain CRF is drawn from the seed:
//
//   - emissions: each attribute a favours one or two labels y with weight
//     U[a,y] ~ N(2, 0.5²); every other U[a,y] is 0;
//   - transitions: each label y favours three or fewer next labels (y+1 mod K
//     and two random ones) with weight B[y,y'] ~ |N(1.5, 0.5²)|; every other
//     B[y,y'] is 0, so every entry of B is ≥ 0;
//   - bias ~ N(0, 1), start and end ~ N(0, 0.5²);
//
// all divided by the temperature Noise. Attributes come in PerToken groups
// (attribute a is in group a mod PerToken, with rank a / PerToken), like the
// attributes of PerToken feature templates: every token draws one attribute
// from each group, by a Zipf law p(rank r) ∝ 1/(r+1), so a token's
// attributes are distinct and low ids are frequent. Given the attributes,
// the labels are drawn exactly from p(y|x; w) by forward filtering–backward
// sampling (FFBS):
//
//	α_0(y) = ψ_0(y),  α_t(y') = ψ_t(y') Σ_y α_{t-1}(y) E[y,y'],   ψ_t = exp θ_t, E = exp B,
//	y_{T-1} ~ α_{T-1},  y_t | y_{t+1} ~ α_t(y) E[y, y_{t+1}],
//
// with every α_t row normalised. Since B is sparse, E = 1 + D with D sparse
// and non-negative, so Σ_y α_{t-1}(y) E[y,y'] = Σα_{t-1} + Σ_{y: D[y,y']>0}
// α_{t-1}(y) D[y,y'] costs O(K + nnz) per token instead of O(K²), and
// Viterbi's max_y δ(y) + B[y,y'] = max(max δ, max_{B[y,y']>0} δ(y) + B[y,y'])
// likewise. For binary attributes ψ_t(y) is a product of precomputed
// exp(bias[y]) and exp(U[a,y]), so most tokens need no exponential at all.
//
// Sentence i's random numbers come from its own stream (Seed, i), so
// generation streams in constant memory, runs on several cores and still
// writes the same bytes for the same options.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"runtime"
	"strconv"
	"sync"

	"github.com/dualcrf/dualcrf/arrowio"
	"github.com/dualcrf/dualcrf/crf"
	"github.com/dualcrf/dualcrf/option"
	"github.com/dualcrf/dualcrf/schemas"
	"github.com/dualcrf/dualcrf/tables"
)

// MetadataKey is the feature-table metadata key of a synthetic table: a JSON
// object with the Options ("options"), the generator version and the
// true weights' Viterbi accuracy on HeldOut held-out sentences
// ("ceiling_estimate"), so the table can be reproduced and judged alone.
const MetadataKey = "dualcrf.synth"

// HeldOut is the number of held-out sentences (a stream of their own,
// disjoint from every table's) on which the ceiling estimate recorded in a
// synthetic table's metadata is measured.
const HeldOut = 1000

// generatorVersion numbers the generator: a change to what a seed produces
// must bump it.
const generatorVersion = 1

// Limits that keep a mistyped option from exhausting memory.
const (
	maxLabels  = 1 << 12
	maxAttrs   = 1 << 26
	maxCells   = 1 << 24 // MaxLen·Labels: a worker's lattice takes 28 bytes a cell
	maxWorkers = 256
	maxWeight  = 300 // largest |weight|: exponentials and the forward sums stay finite
)

// Options describe a synthetic feature table. Zero Noise and Workers
// take their defaults; the other fields must be set.
type Options struct {
	Sentences int     `json:"sentences"` // number of sentences written (≥ 0)
	MinLen    int     `json:"min_len"`   // shortest sentence (≥ 1)
	MaxLen    int     `json:"max_len"`   // longest sentence; lengths are uniform in [MinLen, MaxLen]
	Labels    int     `json:"labels"`    // K ≥ 2, named L0…L(K-1)
	Attrs     int     `json:"attrs"`     // A, the attribute vocabulary, named a0…a(A-1)
	PerToken  int     `json:"per_token"` // attributes per token, 1…A
	Seed      uint64  `json:"seed"`      // seeds the true CRF and every sentence
	Noise     float64 `json:"noise"`     // temperature: the true weights are divided by it; 0 means 1
	Real      bool    `json:"real"`      // real attribute values, uniform in [0.25, 1.75), instead of 1
	// First is the index of the table's first sentence in the seed's
	// sequence: tables with the same seed and disjoint ranges
	// [First, First+Sentences) are independent samples of the same CRF
	// (a training and a test set).
	First int `json:"first"`
	// Workers is the number of generating goroutines; 0 means GOMAXPROCS.
	// It does not change the output.
	Workers int `json:"-"`
	// BatchTokens is the record-batch size (0: tables.DefaultBatchTokens).
	BatchTokens int `json:"-"`
}

// Summary describes a synthetic table as written.
type Summary struct {
	tables.FeatureSummary
	// TrueAccuracy is the token accuracy of Viterbi decoding with the true
	// weights on the table's sentences: a ceiling for learners.
	TrueAccuracy float64
	// CeilingEstimate is the same on HeldOut held-out sentences, the
	// figure recorded in the table's metadata (written before the data).
	CeilingEstimate float64
	// DualBytes is the size of the dual variables for training on the
	// table: Σ_i BlockLen(T_i, K) float64 numbers.
	DualBytes int64
}

// meta is the JSON value of MetadataKey.
type meta struct {
	Generator        int     `json:"generator"`
	Options          Options `json:"options"`
	CeilingEstimate  float64 `json:"ceiling_estimate"`
	CeilingSentences int     `json:"ceiling_sentences"`
}

// check validates the options and fills in the defaults.
func (o *Options) check() error {
	if o.Noise == 0 {
		o.Noise = 1
	}
	if o.Workers <= 0 {
		o.Workers = runtime.GOMAXPROCS(0)
	}
	bad := func(field string, value any, format string, args ...any) error {
		return fmt.Errorf("synth: %w", &option.Error{Field: "Options." + field, Value: fmt.Sprint(value), Msg: fmt.Sprintf(format, args...)})
	}
	switch {
	case o.Sentences < 0:
		return bad("Sentences", o.Sentences, "want ≥ 0")
	case o.First < 0:
		return bad("First", o.First, "want ≥ 0")
	case o.First > math.MaxInt64-o.Sentences:
		return bad("First", o.First, "too large")
	case o.Workers > maxWorkers:
		return bad("Workers", o.Workers, "want at most %d", maxWorkers)
	case o.Labels < 2 || o.Labels > maxLabels:
		return bad("Labels", o.Labels, "want 2…%d", maxLabels)
	case o.MinLen < 1 || o.MaxLen < o.MinLen || o.MaxLen > maxCells/o.Labels:
		return fmt.Errorf("synth: lengths [%d, %d]: want 1 ≤ min ≤ max ≤ %d (for %d labels)", o.MinLen, o.MaxLen, maxCells/o.Labels, o.Labels)
	case o.Attrs < 1 || o.Attrs > maxAttrs:
		return bad("Attrs", o.Attrs, "want 1…%d", maxAttrs)
	case o.PerToken < 1 || o.PerToken > o.Attrs:
		return bad("PerToken", o.PerToken, "want 1…%d (the number of attributes)", o.Attrs)
	case !(o.Noise > 0) || math.IsInf(o.Noise, 0):
		return bad("Noise", strconv.FormatFloat(o.Noise, 'g', -1, 64), "want a positive finite number")
	}
	return nil
}

// Random-number streams: each is a PCG seeded from (Seed, stream, index).
const (
	streamWeights uint64 = iota + 1
	streamData
	streamHeldOut
)

// splitmix64 is a bijective mixer (Steele et al.), used to turn
// (seed, stream, index) into well-spread PCG seeds.
func splitmix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// seedPCG seeds p for sentence (or block) index of a stream.
func seedPCG(p *rand.PCG, seed, stream, index uint64) {
	p.Seed(splitmix64(seed^splitmix64(stream)), splitmix64(index^0x5851f42d4c957f2d))
}

// weightEntry is one non-zero weight of a sparse row or column.
type weightEntry struct {
	idx int32   // label (emission) or previous label (transition)
	w   float64 // the weight
	e   float64 // exp(w)
	d   float64 // exp(w) − 1, for transitions
}

// newWeightEntry returns the entry of weight w for idx.
func newWeightEntry(idx int, w float64) weightEntry {
	return weightEntry{idx: int32(idx), w: w, e: math.Exp(w), d: math.Expm1(w)}
}

// model is the true CRF in sparse form.
type model struct {
	K, A, P   int
	real      bool
	bias      []float64     // K
	start     []float64     // K
	end       []float64     // K
	ebias     []float64     // exp(bias)
	emitStart []int32       // A+1 offsets into emit
	emit      []weightEntry // non-zero U[a,·], attribute by attribute
	colStart  []int32       // K+1 offsets into col
	col       []weightEntry // non-zero B[·,y'], by next label y'
	ranks     aliasTable    // Zipf law of ranks within a group
	// productSafe is set when no binary token's max θ_t can exceed
	// maxProduct, so forward needs no check per token.
	productSafe bool
}

// newModel draws the true CRF of the options (checked).
func newModel(o Options) (*model, error) {
	K, A, P := o.Labels, o.Attrs, o.PerToken
	var pcg rand.PCG
	seedPCG(&pcg, o.Seed, streamWeights, 0)
	rng := rand.New(&pcg)
	inv := 1 / o.Noise
	m := &model{K: K, A: A, P: P, real: o.Real,
		bias: make([]float64, K), start: make([]float64, K), end: make([]float64, K), ebias: make([]float64, K)}
	for y := 0; y < K; y++ {
		m.bias[y] = rng.NormFloat64() * inv
		m.start[y] = 0.5 * rng.NormFloat64() * inv
		m.end[y] = 0.5 * rng.NormFloat64() * inv
		m.ebias[y] = math.Exp(m.bias[y])
	}
	m.emitStart = make([]int32, A+1)
	m.emit = make([]weightEntry, 0, A+A/2)
	for a := 0; a < A; a++ {
		y1 := rng.IntN(K)
		m.emit = append(m.emit, newWeightEntry(y1, (2+0.5*rng.NormFloat64())*inv))
		if rng.IntN(2) == 1 {
			y2 := (y1 + 1 + rng.IntN(K-1)) % K
			m.emit = append(m.emit, newWeightEntry(y2, (2+0.5*rng.NormFloat64())*inv))
		}
		m.emitStart[a+1] = int32(len(m.emit))
	}
	m.drawTransitions(rng, inv)
	if err := m.checkRange(o.Noise); err != nil {
		return nil, err
	}
	maxEmit := 0.0
	for _, e := range m.emit {
		maxEmit = max(maxEmit, e.w)
	}
	m.productSafe = maxOf(m.bias)+float64(P)*maxEmit <= maxProduct
	m.ranks = newAliasTable((A + P - 1) / P)
	return m, nil
}

// drawTransitions draws the sparse, non-negative transition weights and
// stores them by column.
func (m *model) drawTransitions(rng *rand.Rand, inv float64) {
	K := m.K
	dense := make([]float64, K*K)
	for y := 0; y < K; y++ {
		for _, y2 := range [...]int{(y + 1) % K, rng.IntN(K), rng.IntN(K)} {
			dense[y*K+y2] = math.Abs(1.5+0.5*rng.NormFloat64()) * inv
		}
	}
	m.colStart = make([]int32, K+1)
	for y2 := 0; y2 < K; y2++ {
		for y := 0; y < K; y++ {
			b := dense[y*K+y2]
			if b == 0 {
				continue
			}
			m.col = append(m.col, newWeightEntry(y, b))
		}
		m.colStart[y2+1] = int32(len(m.col))
	}
}

// checkRange rejects weights too large for the forward recursions, which
// only a tiny temperature makes.
func (m *model) checkRange(noise float64) error {
	big := 0.0
	for _, v := range [][]float64{m.bias, m.start, m.end} {
		for _, x := range v {
			big = max(big, math.Abs(x))
		}
	}
	for _, e := range m.emit {
		big = max(big, e.w)
	}
	for _, e := range m.col {
		big = max(big, e.w)
	}
	if big > maxWeight {
		return fmt.Errorf("synth: %w", &option.Error{
			Msg: fmt.Sprintf("{Options.Noise} %g is too small: it makes a weight of %.3g (at most %d)", noise, big, maxWeight)})
	}
	return nil
}

// weights returns the true weights as a dense vector of layout lay.
func (m *model) weights() (crf.Layout, []float64) {
	lay := crf.Layout{NumAttrs: m.A, NumLabels: m.K}
	w := make([]float64, lay.Dim())
	for a := 0; a < m.A; a++ {
		for _, e := range m.emit[m.emitStart[a]:m.emitStart[a+1]] {
			w[lay.Row(int32(a))+int(e.idx)] = e.w
		}
	}
	tr := w[lay.Trans():]
	for y2 := 0; y2 < m.K; y2++ {
		for _, e := range m.col[m.colStart[y2]:m.colStart[y2+1]] {
			tr[int(e.idx)*m.K+y2] = e.w
		}
	}
	copy(w[lay.Bias():], m.bias)
	copy(w[lay.Start():], m.start)
	copy(w[lay.End():], m.end)
	return lay, w
}

// Weights returns the true CRF that Generate samples from for these
// options, as a dense weight vector (layout with bias, start and end) whose
// attribute and label ids are those of the table.
func Weights(opts Options) (crf.Layout, []float64, error) {
	if err := opts.check(); err != nil {
		return crf.Layout{}, nil, err
	}
	m, err := newModel(opts)
	if err != nil {
		return crf.Layout{}, nil, err
	}
	lay, w := m.weights()
	return lay, w, nil
}

// aliasTable draws from a discrete law in O(1) by Walker's alias method,
// with one 64-bit random number per draw.
type aliasTable struct {
	n      uint64
	thresh []uint32 // keep i when the low 32 bits are below thresh[i]…
	alias  []int32  // …else return alias[i]
}

// newAliasTable builds the alias table of the Zipf law p(r) ∝ 1/(r+1) on
// 0…n-1 (Vose's construction).
func newAliasTable(n int) aliasTable {
	p := make([]float64, n)
	s := 0.0
	for r := range p {
		p[r] = 1 / float64(r+1)
		s += p[r]
	}
	t := aliasTable{n: uint64(n), thresh: make([]uint32, n), alias: make([]int32, n)}
	var small, large []int32
	for r := range p {
		p[r] *= float64(n) / s
		t.alias[r] = int32(r)
		if p[r] < 1 {
			small = append(small, int32(r))
		} else {
			large = append(large, int32(r))
		}
	}
	for len(small) > 0 && len(large) > 0 {
		l, g := small[len(small)-1], large[len(large)-1]
		small = small[:len(small)-1]
		t.thresh[l] = uint32(p[l] * (1 << 32))
		t.alias[l] = g
		p[g] -= 1 - p[l]
		if p[g] < 1 {
			large = large[:len(large)-1]
			small = append(small, g)
		}
	}
	for _, r := range append(small, large...) { // probability 1 up to rounding
		t.thresh[r] = math.MaxUint32
	}
	return t
}

// draw returns a random index.
func (t *aliasTable) draw(src *rand.PCG) int {
	u := src.Uint64()
	i := (u >> 32) * t.n >> 32
	if uint32(u) < t.thresh[i] {
		return int(i)
	}
	return int(t.alias[i])
}

// genSentence is one generated sentence.
type genSentence struct {
	attrs   []int32   // T×P attribute ids, token by token
	values  []float64 // T×P values, nil unless real-valued
	labels  []int32   // T labels drawn from p(y|x)
	correct int       // tokens the true weights' Viterbi path gets right
}

// generator generates sentences; one per goroutine.
type generator struct {
	m     *model
	pcg   rand.PCG
	rng   *rand.Rand
	theta []float64 // T×K node scores θ_t
	alpha []float64 // T×K normalised forward messages
	vit   []float64 // T×K Viterbi scores
	tops  []float64 // T: max of each Viterbi row…
	args  []int32   // …and its first label
	path  []int32   // T Viterbi path
	tmp   []float64 // K scratch
}

func newGenerator(m *model) *generator {
	g := &generator{m: m, tmp: make([]float64, m.K)}
	g.rng = rand.New(&g.pcg)
	return g
}

// generate draws sentence index of stream (for the options' seed) into s.
func (g *generator) generate(o *Options, stream uint64, index int, s *genSentence) {
	seedPCG(&g.pcg, o.Seed, stream, uint64(index))
	T := o.MinLen + g.rng.IntN(o.MaxLen-o.MinLen+1)
	g.drawAttrs(T, s)
	g.scores(T, s)
	g.forward(T, s)
	g.sample(T, s)
	g.viterbi(T)
	s.correct = 0
	for t, y := range s.labels {
		if g.path[t] == y {
			s.correct++
		}
	}
}

// drawAttrs draws the attributes (and values) of T tokens.
func (g *generator) drawAttrs(T int, s *genSentence) {
	m := g.m
	n := T * m.P
	s.attrs = resize(s.attrs, n)
	s.values = s.values[:0]
	for t := 0; t < T; t++ {
		row := s.attrs[t*m.P : (t+1)*m.P]
		for grp := range row {
			a := grp + m.P*m.ranks.draw(&g.pcg)
			for a >= m.A { // the last rank of a short group: redraw
				a = grp + m.P*m.ranks.draw(&g.pcg)
			}
			row[grp] = int32(a)
		}
	}
	if m.real {
		s.values = resize(s.values, n)
		for j := range s.values {
			s.values[j] = 0.25 + 1.5*g.rng.Float64()
		}
	}
}

// resize returns s with length n, reusing its storage.
func resize[E any](s []E, n int) []E {
	if cap(s) >= n {
		return s[:n]
	}
	return make([]E, n, n+n/4)
}

// scores computes θ_t(y) = bias[y] + Σ_a v·U[a,y] (+ start, end) in the
// order crf.Lattice.SetScores uses, so the two agree bit for bit. For binary
// attributes it also writes ψ_t(y) = exp(bias[y]) Π_a exp(U[a,y]) into the
// forward rows, which spares forward K exponentials per token.
func (g *generator) scores(T int, s *genSentence) {
	m := g.m
	K, P := m.K, m.P
	g.theta = resize(g.theta, T*K)
	g.alpha = resize(g.alpha, T*K)
	for t := 0; t < T; t++ {
		row := g.theta[t*K : (t+1)*K]
		copy(row, m.bias)
		attrs := s.attrs[t*P : (t+1)*P]
		if s.values != nil {
			for j, a := range attrs {
				v := s.values[t*P+j]
				for _, e := range m.emit[m.emitStart[a]:m.emitStart[a+1]] {
					row[e.idx] += v * e.w
				}
			}
			continue
		}
		psi := g.alpha[t*K : (t+1)*K]
		copy(psi, m.ebias)
		for _, a := range attrs {
			for _, e := range m.emit[m.emitStart[a]:m.emitStart[a+1]] {
				row[e.idx] += e.w
				psi[e.idx] *= e.e
			}
		}
	}
	addTo(g.theta[:K], m.start)
	addTo(g.theta[(T-1)*K:T*K], m.end)
}

func addTo(dst, src []float64) {
	for i := range dst {
		dst[i] += src[i]
	}
}

// maxProduct bounds max θ_t for the product form of ψ_t written by
// scores: with every weight at most maxWeight in size, its entries then
// lie in [exp(−maxWeight), exp(maxProduct)], far from underflow
// and overflow.
const maxProduct = 600

// forward computes the normalised forward messages α_t ∝ ψ_t ⊙ (E^T α_{t-1}).
// ψ_t is exp(θ_t − max θ_t) (entries in (0, 1], one equal to 1), or for
// binary attributes the product form scores wrote (unless start or end
// weights apply, or max θ_t is large). As E ≥ 1 and α_{t-1} sums to 1,
// (E^T α_{t-1})(y') ≥ 1: the rows neither underflow nor overflow.
func (g *generator) forward(T int, s *genSentence) {
	m := g.m
	K := m.K
	for t := 0; t < T; t++ {
		th := g.theta[t*K : (t+1)*K]
		cur := g.alpha[t*K : (t+1)*K]
		if s.values != nil || t == 0 || t == T-1 || (!m.productSafe && maxOf(th) > maxProduct) {
			mx := maxOf(th)
			for y, v := range th {
				cur[y] = math.Exp(v - mx)
			}
		}
		if t > 0 {
			prev := g.alpha[(t-1)*K : t*K] // sums to 1
			for y2 := range cur {
				acc := 1.0
				for _, e := range m.col[m.colStart[y2]:m.colStart[y2+1]] {
					acc += prev[e.idx] * e.d
				}
				cur[y2] *= acc
			}
		}
		sum := 0.0
		for _, v := range cur {
			sum += v
		}
		inv := 1 / sum
		for y := range cur {
			cur[y] *= inv
		}
	}
}

// sample draws the labels backwards from the forward messages.
func (g *generator) sample(T int, s *genSentence) {
	m := g.m
	K := m.K
	s.labels = resize(s.labels, T)
	y := g.categorical(g.alpha[(T-1)*K : T*K])
	s.labels[T-1] = int32(y)
	for t := T - 2; t >= 0; t-- {
		w := g.tmp
		copy(w, g.alpha[t*K:(t+1)*K])
		for _, e := range m.col[m.colStart[y]:m.colStart[y+1]] {
			w[e.idx] *= e.e
		}
		y = g.categorical(w)
		s.labels[t] = int32(y)
	}
}

// categorical draws an index with probability proportional to w (≥ 0, not
// all zero).
func (g *generator) categorical(w []float64) int {
	sum := 0.0
	for _, v := range w {
		sum += v
	}
	u := g.rng.Float64() * sum
	last := 0
	for i, v := range w {
		if v <= 0 {
			continue
		}
		if u < v {
			return i
		}
		u -= v
		last = i
	}
	return last // u ran past the end by rounding
}

// viterbi writes the best path under the true weights into g.path, with
// ties to the smallest label as crf.Lattice.Viterbi. The forward pass keeps
// only the scores; the back-pointers are recomputed along the path alone.
func (g *generator) viterbi(T int) {
	m := g.m
	K := m.K
	g.vit = resize(g.vit, T*K)
	g.path = resize(g.path, T)
	copy(g.vit[:K], g.theta[:K])
	top, arg := argmaxOf(g.vit[:K])
	g.tops = resize(g.tops, T)
	g.args = resize(g.args, T)
	g.tops[0], g.args[0] = top, arg
	for t := 1; t < T; t++ {
		prev := g.vit[(t-1)*K : t*K]
		cur := g.vit[t*K : (t+1)*K]
		th := g.theta[t*K : (t+1)*K]
		for y2 := range cur {
			best := top
			for _, e := range m.col[m.colStart[y2]:m.colStart[y2+1]] {
				best = max(best, prev[e.idx]+e.w)
			}
			cur[y2] = best + th[y2]
		}
		top, arg = argmaxOf(cur)
		g.tops[t], g.args[t] = top, arg
	}
	y := arg
	g.path[T-1] = y
	for t := T - 1; t > 0; t-- {
		y = g.from(t-1, y)
		g.path[t-1] = y
	}
}

// from returns the best label at t followed by y2 at t+1: the argmax of
// vit_t(y) + B[y,y2], the smallest such label on ties.
func (g *generator) from(t int, y2 int32) int32 {
	m := g.m
	prev := g.vit[t*m.K : (t+1)*m.K]
	best, from := g.tops[t], g.args[t]
	for _, e := range m.col[m.colStart[y2]:m.colStart[y2+1]] {
		if v := prev[e.idx] + e.w; v > best || (v == best && e.idx < from) {
			best, from = v, e.idx
		}
	}
	return from
}

// maxOf returns the largest entry of v.
func maxOf(v []float64) float64 {
	mx := v[0]
	for _, x := range v[1:] {
		mx = max(mx, x)
	}
	return mx
}

// argmaxOf returns the largest entry and its first index.
func argmaxOf(v []float64) (float64, int32) {
	best, arg := v[0], int32(0)
	for i, x := range v[1:] {
		if x > best {
			best, arg = x, int32(i+1)
		}
	}
	return best, arg
}

// genChunk is a run of consecutive sentences generated by one worker.
type genChunk struct {
	first int // position in the table of the first sentence
	sents []genSentence
	done  chan struct{}
}

// A unit of work is chunkSize sentences, fewer when that could exceed
// chunkTokens tokens.
const (
	chunkSize   = 64
	chunkTokens = 1 << 14
)

// Generate writes a synthetic feature table (see Options) to w. Sentences
// are generated by opts.Workers goroutines and written in order as they
// come, so memory does not grow with the number of sentences (except in the
// IPC file format, where tables.FeatureWriter keeps the batches until the end).
func Generate(ctx context.Context, w io.Writer, opts Options, writer arrowio.WriterOptions) (Summary, error) {
	if err := opts.check(); err != nil {
		return Summary{}, err
	}
	m, err := newModel(opts)
	if err != nil {
		return Summary{}, err
	}
	est := estimateCeiling(m, &opts)
	md, err := json.Marshal(meta{Generator: generatorVersion, Options: opts,
		CeilingEstimate: est, CeilingSentences: HeldOut})
	if err != nil {
		return Summary{}, err
	}
	names := nameLists{attrs: nameList("a", opts.Attrs), labels: nameList("L", opts.Labels)}
	tw, err := tables.NewFeatureWriter(w, tables.FeatureOptions{
		Columns:     []string{"word"},
		AttrNames:   names.attrs,
		LabelNames:  names.labels,
		Metadata:    map[string]string{MetadataKey: string(md), schemas.KeySource: "dualcrf synth"},
		BatchTokens: opts.BatchTokens,
		Writer:      writer,
	})
	if err != nil {
		return Summary{}, err
	}
	tally, err := writeAll(ctx, tw, m, &opts, names)
	if err != nil {
		tw.Abort()
		return Summary{}, err
	}
	if err := tw.Close(); err != nil {
		return Summary{}, err
	}
	sum := Summary{FeatureSummary: tw.Summary(), CeilingEstimate: est, DualBytes: tally.dualBytes}
	if sum.Tokens > 0 {
		sum.TrueAccuracy = float64(tally.correct) / float64(sum.Tokens)
	}
	return sum, nil
}

// nameLists are the attribute and label names, by id.
type nameLists struct{ attrs, labels []string }

// nameList returns prefix0 … prefix(n-1).
func nameList(prefix string, n int) []string {
	names := make([]string, n)
	for i := range names {
		names[i] = prefix + strconv.Itoa(i)
	}
	return names
}

// estimateCeiling returns the true weights' Viterbi accuracy on the held-out
// sentences, shared out among the workers.
func estimateCeiling(m *model, o *Options) float64 {
	correct := make([]int, o.Workers)
	tokens := make([]int, o.Workers)
	var wg sync.WaitGroup
	for w := range o.Workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			g := newGenerator(m)
			var s genSentence
			for i := w; i < HeldOut; i += o.Workers {
				g.generate(o, streamHeldOut, i, &s)
				correct[w] += s.correct
				tokens[w] += len(s.labels)
			}
		}()
	}
	wg.Wait()
	c, n := 0, 0
	for w := range correct {
		c += correct[w]
		n += tokens[w]
	}
	return float64(c) / float64(n)
}

// genTally counts what the true weights get right and the dual size.
type genTally struct {
	correct   int   // tokens the true weights' Viterbi path gets right
	dualBytes int64 // Σ 8·BlockLen(T, K)
}

// writeAll generates the sentences on worker goroutines and writes them in
// order.
func writeAll(ctx context.Context, tw *tables.FeatureWriter, m *model, o *Options, names nameLists) (genTally, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	depth := 2 * o.Workers
	chunk := max(1, min(chunkSize, chunkTokens/o.MaxLen))
	free := make(chan *genChunk, depth)
	for range depth {
		free <- &genChunk{sents: make([]genSentence, chunk)}
	}
	jobs := make(chan *genChunk, depth)
	order := make(chan *genChunk, depth)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // hand out chunks, in order
		defer wg.Done()
		defer close(order)
		defer close(jobs)
		for first := 0; first < o.Sentences; first += chunk {
			var c *genChunk
			select {
			case c = <-free:
			case <-ctx.Done():
				return
			}
			c.first = first
			c.sents = c.sents[:min(chunk, o.Sentences-first)]
			c.done = make(chan struct{})
			order <- c
			jobs <- c
		}
	}()
	for range o.Workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			g := newGenerator(m)
			for c := range jobs {
				for j := range c.sents {
					g.generate(o, streamData, o.First+c.first+j, &c.sents[j])
				}
				close(c.done)
			}
		}()
	}
	tally, err := consume(ctx, tw, m, names, order, free)
	cancel()
	wg.Wait()
	return tally, err
}

// consume writes the chunks of order as they complete and returns them
// to free.
func consume(ctx context.Context, tw *tables.FeatureWriter, m *model, names nameLists,
	order <-chan *genChunk, free chan<- *genChunk) (genTally, error) {
	var sum genTally
	var tokens []string
	var rows [][]string
	var attrs [][]int32
	var values [][]float64
	sent := &tables.FeatureSentence{}
	for c := range order {
		select {
		case <-c.done:
		case <-ctx.Done():
			return sum, ctx.Err()
		}
		for j := range c.sents {
			s := &c.sents[j]
			T := len(s.labels)
			tokens, rows = resize(tokens, T), resize(rows, T)
			attrs = resize(attrs, T)
			sent.Labels = resize(sent.Labels, T)
			values = values[:0]
			if s.values != nil {
				values = resize(values, T)
			}
			for t := 0; t < T; t++ {
				attrs[t] = s.attrs[t*m.P : (t+1)*m.P]
				if s.values != nil {
					values[t] = s.values[t*m.P : (t+1)*m.P]
				}
				tokens[t] = names.attrs[attrs[t][0]]
				rows[t] = tokens[t : t+1]
				sent.Labels[t] = names.labels[s.labels[t]]
			}
			sent.Tokens, sent.Attrs, sent.Values = rows, attrs, nil
			if s.values != nil {
				sent.Values = values
			}
			if err := tw.Write(sent); err != nil {
				return sum, err
			}
			sum.correct += s.correct
			sum.dualBytes += 8 * int64(crf.BlockLen(T, m.K))
		}
		free <- c
		if err := ctx.Err(); err != nil {
			return sum, err
		}
	}
	if err := ctx.Err(); err != nil {
		return sum, err
	}
	return sum, nil
}
