package decode

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/dualcrf/dualcrf/crf"
	"github.com/dualcrf/dualcrf/crf/crftest"
	"github.com/dualcrf/dualcrf/tables"
)

// wellFormed is an independent statement of each constraint set: whether
// a tag sequence is one it allows.
func wellFormed(c Constraints, labels []string) bool {
	prev := "O"
	for i, l := range labels {
		p, typ := l[:1], ""
		if l != "O" {
			typ = l[2:]
		}
		pp, ptyp := prev[:1], ""
		if prev != "O" {
			ptyp = prev[2:]
		}
		inPrev := (pp == "B" || pp == "I") && i > 0
		switch c {
		case ConstraintsBIO:
			if p == "I" && !(inPrev && ptyp == typ) {
				return false
			}
		case ConstraintsIOB1:
			if p == "B" && !(inPrev && ptyp == typ) {
				return false
			}
		case ConstraintsIOBES:
			cont := p == "I" || p == "E"
			if inPrev != cont || inPrev && ptyp != typ {
				return false
			}
		}
		prev = l
	}
	if c == ConstraintsIOBES && len(labels) > 0 {
		last := labels[len(labels)-1][:1]
		return last == "O" || last == "E" || last == "S"
	}
	return true
}

// enumerate calls fn with every label path of length T over K labels.
func enumerate(T, K int, fn func([]int32)) {
	path := make([]int32, T)
	var rec func(int)
	rec = func(t int) {
		if t == T {
			fn(path)
			return
		}
		for y := 0; y < K; y++ {
			path[t] = int32(y)
			rec(t + 1)
		}
	}
	rec(0)
}

func names(labels []string, path []int32) []string {
	out := make([]string, len(path))
	for i, y := range path {
		out[i] = labels[y]
	}
	return out
}

var (
	bioLabels   = []string{"O", "B-A", "I-A", "B-B", "I-B"}
	iobesLabels = []string{"O", "B-A", "I-A", "E-A", "S-A", "B-B", "E-B", "S-B"}
)

// TestConstraintMasks checks that the masks allow exactly the sequences
// wellFormed allows.
func TestConstraintMasks(t *testing.T) {
	for _, tc := range []struct {
		c      Constraints
		labels []string
	}{{ConstraintsBIO, bioLabels}, {ConstraintsIOB1, bioLabels}, {ConstraintsIOBES, iobesLabels}} {
		m, err := tc.c.masks(tc.labels)
		if err != nil {
			t.Fatal(err)
		}
		K := len(tc.labels)
		for T := 1; T <= 3; T++ {
			allowed := 0
			enumerate(T, K, func(path []int32) {
				ok := m.start[path[0]] && m.end[path[T-1]]
				for i := 1; i < T; i++ {
					ok = ok && m.trans[int(path[i-1])*K+int(path[i])]
				}
				l := names(tc.labels, path)
				if ok != wellFormed(tc.c, l) {
					t.Fatalf("%s: %v allowed by the masks: %v, well-formed: %v", tc.c, l, ok, !ok)
				}
				if ok {
					allowed++
				}
			})
			if allowed == 0 {
				t.Fatalf("%s: nothing allowed at T=%d", tc.c, T)
			}
		}
	}
	if _, err := ConstraintsBIO.masks([]string{"O", "B-A", "E-A"}); !errors.Is(err, ErrConstraintLabel) {
		t.Fatalf("an E- label under bio: %v, want ErrConstraintLabel", err)
	}
	if _, err := ConstraintsIOBES.masks([]string{"O", "NN"}); !errors.Is(err, ErrConstraintLabel) {
		t.Fatalf("a POS label under iobes: %v, want ErrConstraintLabel", err)
	}
	for _, n := range []string{"", "none", "BIO", "iob2", "iob1", "iobes"} {
		if _, err := ParseConstraints(n); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := ParseConstraints("bilou"); err == nil {
		t.Fatal("bilou parsed")
	}
}

// TestSpansMatchEvaluator checks that spans reads chunks as the evaluator
// counts them: as many predicted chunks as it finds, and as many shared
// with the gold chunks as it credits correct.
func TestSpansMatchEvaluator(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, tc := range []struct {
		s      Scheme
		labels []string
	}{{SchemeConlleval, bioLabels}, {SchemeIOBES, iobesLabels}, {SchemeConlleval, iobesLabels}} {
		for trial := 0; trial < 3000; trial++ {
			T := 1 + rng.IntN(7)
			gold, pred := make([]string, T), make([]string, T)
			for i := range gold {
				gold[i] = tc.labels[rng.IntN(len(tc.labels))]
				pred[i] = tc.labels[rng.IntN(len(tc.labels))]
			}
			ev := NewEvaluator(EvalOptions{Scheme: tc.s})
			if err := ev.Add(gold, pred); err != nil {
				t.Fatal(err)
			}
			r := ev.Result()
			g, p := spans(gold, tc.s), spans(pred, tc.s)
			shared := 0
			for _, c := range p {
				if slices.Contains(g, c) {
					shared++
				}
			}
			if len(g) != r.Chunks.Gold || len(p) != r.Chunks.Predicted || shared != r.Chunks.Correct {
				t.Fatalf("%s gold %v pred %v: spans %d/%d/%d shared, evaluator %d/%d/%d", tc.s, gold, pred,
					len(g), len(p), shared, r.Chunks.Gold, r.Chunks.Predicted, r.Chunks.Correct)
			}
		}
	}
}

// TestChunkProbAgainstEnumeration checks the probability of every chunk of
// every path against the sum of the probabilities of the paths having that
// chunk, with and without constraints, and the prober's own chunk reading
// against spans.
func TestChunkProbAgainstEnumeration(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 9))
	for _, tc := range []struct {
		s      Scheme
		c      Constraints
		labels []string
	}{
		{SchemeConlleval, NoConstraints, bioLabels},
		{SchemeConlleval, ConstraintsBIO, bioLabels},
		{SchemeIOBES, ConstraintsIOBES, iobesLabels},
		{SchemeIOBES, NoConstraints, iobesLabels[:5]},
	} {
		K := len(tc.labels)
		masks, err := tc.c.masks(tc.labels)
		if err != nil {
			t.Fatal(err)
		}
		cp := newChunkProber(tc.labels, tc.s)
		for T := 1; T <= 4; T++ {
			t.Run(fmt.Sprintf("%s/%s/T%d", tc.s, tc.c, T), func(t *testing.T) {
				node, trans := make([]float64, T*K), make([]float64, K*K)
				for i := range node {
					node[i] = rng.NormFloat64()
				}
				for i := range trans {
					trans[i] = rng.NormFloat64()
				}
				lat := crf.NewLattice(K)
				lat.SetPotentials(T, node, trans)
				masked := tc.c != NoConstraints
				var logZ float64
				if masked {
					lat.Mask(masks.trans, masks.start, masks.end, nil)
					logZ = lat.ForwardBackwardLog()
				} else {
					logZ = lat.ForwardBackward()
				}
				want := map[span]float64{}
				var paths [][]int32
				enumerate(T, K, func(path []int32) {
					sc := lat.Score(path)
					if math.IsInf(sc, -1) {
						return
					}
					paths = append(paths, slices.Clone(path))
					for _, c := range spans(names(tc.labels, path), tc.s) {
						want[c] += math.Exp(sc - logZ)
					}
				})
				for _, path := range paths {
					var got []span
					cp.chunks(path, func(s, e int) {
						c := span{s, e, cp.tags[path[s]].typ}
						got = append(got, c)
						p := math.Exp(cp.logProb(lat, s, e, path[s], logZ))
						if math.Abs(p-want[c]) > 1e-9 {
							t.Fatalf("path %v chunk %v: p = %.12g, want %.12g", names(tc.labels, path), c, p, want[c])
						}
					})
					if w := spans(names(tc.labels, path), tc.s); !slices.Equal(got, w) {
						t.Fatalf("path %v: prober chunks %v, spans %v", names(tc.labels, path), got, w)
					}
				}
			})
		}
	}
}

// bioModel is a random model whose labels are bioLabels, and a dataset.
func bioModel(seed uint64, n, maxT int) (*crf.Model, *crf.Dataset) {
	rng := rand.New(rand.NewPCG(seed, 2))
	const A = 9
	K := len(bioLabels)
	d := crftest.RandomDataset(rng, n, maxT, A, K, false)
	d.LabelNames = bioLabels
	lay := crf.Layout{NumAttrs: A, NumLabels: K}
	w := crftest.RandomWeights(rng, lay, 2)
	return &crf.Model{Layout: lay, Weights: w, AttrNames: d.AttrNames, LabelNames: bioLabels}, d
}

// TestDecodeConstrainedForcedNBest checks Decode's constrained, forced and
// n-best output against enumerating each sentence's allowed paths.
func TestDecodeConstrainedForcedNBest(t *testing.T) {
	m, d := bioModel(11, 120, 5)
	K := len(bioLabels)
	rng := rand.New(rand.NewPCG(12, 13))
	text := make([]string, d.NumTokens())
	forced := make([]int32, d.NumTokens())
	for tok := range text {
		forced[tok] = -1
		text[tok] = []string{"", "_"}[rng.IntN(2)]
		if rng.IntN(5) == 0 {
			y := rng.IntN(K)
			// Keep the sentence feasible under bio: force I-X only after B-X.
			if bioLabels[y][0] == 'I' {
				y = 0
			}
			forced[tok], text[tok] = int32(y), bioLabels[y]
		}
	}
	tab := &tables.FeatureTable{Data: d, Columns: []string{"force"}, Text: [][]string{text}}
	for _, workers := range []int{1, 2} {
		opts := Options{Constraints: ConstraintsBIO, ForceColumn: "force", NBest: 4, Marginals: true, ChunkConfidence: true, Workers: workers}
		p, err := decodeFeatureTable(context.Background(), m, tab, opts)
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < d.Len(); i++ {
			s := d.Sentence(i)
			off, T := d.SentStart[i], s.Len()
			lat := crf.NewLattice(K)
			lat.SetScores(m.Layout, m.Weights, s)
			var all []float64
			var paths [][]int32
			enumerate(T, K, func(path []int32) {
				l := names(bioLabels, path)
				for tt, y := range path {
					if f := forced[off+tt]; f >= 0 && f != y {
						return
					}
				}
				if !wellFormed(ConstraintsBIO, l) {
					return
				}
				all = append(all, lat.Score(path))
				paths = append(paths, slices.Clone(path))
			})
			logZ := crf.LogSumExp(all)
			order := make([]int, len(all))
			for k := range order {
				order[k] = k
			}
			slices.SortStableFunc(order, func(a, b int) int {
				if all[a] > all[b] {
					return -1
				} else if all[a] < all[b] {
					return 1
				}
				return 0
			})
			got := append([][]int32{p.Labels[off : off+T]}, nil)[:1]
			lps := []float64{p.LogProb[i]}
			for _, a := range p.Alternatives[i] {
				got = append(got, a.Labels)
				lps = append(lps, a.LogProb)
			}
			if len(got) != min(4, len(all)) {
				t.Fatalf("sentence %d: %d labellings, want %d", i, len(got), min(4, len(all)))
			}
			for r := range got {
				if want := all[order[r]] - logZ; math.Abs(lps[r]-want) > 1e-9 {
					t.Fatalf("sentence %d rank %d: log p %g, want %g", i, r+1, lps[r], want)
				}
				if !wellFormed(ConstraintsBIO, names(bioLabels, got[r])) {
					t.Fatalf("sentence %d rank %d: %v is not BIO", i, r+1, names(bioLabels, got[r]))
				}
			}
			if math.Abs(all[order[0]]-lat.Score(got[0])) > 1e-9 {
				t.Fatalf("sentence %d: best path scores %g, want %g", i, lat.Score(got[0]), all[order[0]])
			}
			// Token marginals of the allowed paths.
			for tt, y := range got[0] {
				want := 0.0
				for k, path := range paths {
					if path[tt] == y {
						want += math.Exp(all[k] - logZ)
					}
				}
				if math.Abs(p.Confidence[off+tt]-want) > 1e-9 {
					t.Fatalf("sentence %d token %d: confidence %g, want %g", i, tt, p.Confidence[off+tt], want)
				}
			}
			// Chunk confidence of the allowed paths.
			for _, c := range spans(names(bioLabels, got[0]), SchemeConlleval) {
				want := 0.0
				for k, path := range paths {
					if slices.Contains(spans(names(bioLabels, path), SchemeConlleval), c) {
						want += math.Exp(all[k] - logZ)
					}
				}
				for tt := c.s; tt <= c.e; tt++ {
					if math.Abs(p.ChunkConfidence[off+tt]-want) > 1e-9 {
						t.Fatalf("sentence %d chunk %v: confidence %g, want %g", i, c, p.ChunkConfidence[off+tt], want)
					}
				}
			}
		}
	}
}

// TestForcedErrors checks the errors of forced labels: a label the model
// lacks, a missing column, and forced labels the constraints forbid.
func TestForcedErrors(t *testing.T) {
	m, d := bioModel(14, 3, 3)
	text := make([]string, d.NumTokens())
	last := d.NumTokens() - 1
	text[last] = "B-NOPE"
	tab := &tables.FeatureTable{Data: d, Columns: []string{"force"}, Text: [][]string{text}, FirstSentence: 10}
	_, err := decodeFeatureTable(context.Background(), m, tab, Options{ForceColumn: "force"})
	var fe *ForcedLabelError
	if !errors.As(err, &fe) || fe.Sentence != 13 || fe.Label != "B-NOPE" || !strings.Contains(err.Error(), "B-NOPE") {
		t.Fatalf("unknown forced label: %v", err)
	}
	if _, err := decodeFeatureTable(context.Background(), m, tab, Options{ForceColumn: "other"}); !errors.As(err, &fe) || !strings.Contains(err.Error(), "force") {
		t.Fatalf("missing column: %v", err)
	}
	text[last] = ""
	text[d.SentStart[1]] = "I-A" // the first token of sentence 2
	_, err = decodeFeatureTable(context.Background(), m, tab, Options{ForceColumn: "force", Constraints: ConstraintsBIO})
	var ie *InfeasibleError
	if !errors.As(err, &ie) || ie.Sentence != 12 {
		t.Fatalf("I-A forced first under bio: %v", err)
	}
	// Without constraints the same forcing decodes, honoured.
	p, err := decodeFeatureTable(context.Background(), m, tab, Options{ForceColumn: "force"})
	if err != nil || p.Labels[d.SentStart[1]] != 2 {
		t.Fatalf("forced I-A without constraints: %v, label %v", err, p.Labels[d.SentStart[1]])
	}
	if _, err := Decode(context.Background(), m, d, Options{ForceColumn: "force"}); err == nil {
		t.Fatal("Decode took a force column without text")
	}
	if _, err := Decode(context.Background(), m, d, Options{NBest: -1}); err == nil {
		t.Fatal("NBest -1 accepted")
	}
}

// TestCalibrationTable checks a reliability table worked by hand: gold
// chunks NP(0), VP(1), NP(3..4); predicted NP(0) 0.95 right, VP(1) 0.55
// right, NP(3) 0.52 wrong (the gold chunk is 3..4), O at 2 and 4.
func TestCalibrationTable(t *testing.T) {
	ev := NewEvaluator(EvalOptions{Calibration: true})
	gold := []string{"B-NP", "B-VP", "O", "B-NP", "I-NP"}
	pred := []string{"B-NP", "B-VP", "O", "B-NP", "O"}
	nan := math.NaN()
	if err := ev.AddConfidence(gold, pred, []float64{0.95, 0.55, nan, 0.52, nan}); err != nil {
		t.Fatal(err)
	}
	c := ev.Result().Calibration
	if c.Chunks != 3 || c.Correct != 2 || c.Bins[9].Chunks != 1 || c.Bins[9].Correct != 1 || c.Bins[5].Chunks != 2 || c.Bins[5].Correct != 1 {
		t.Fatalf("calibration %+v", c)
	}
	// ECE = 1/3·|1 − 0.95| + 2/3·|0.5 − 0.535|.
	if want := (0.05 + 2*0.035) / 3; math.Abs(c.ECE-want) > 1e-12 {
		t.Fatalf("ECE %g, want %g", c.ECE, want)
	}
	if math.Abs(c.MeanConf-(0.95+0.55+0.52)/3) > 1e-12 {
		t.Fatalf("mean confidence %g", c.MeanConf)
	}
	if err := ev.AddConfidence([]string{"B-NP"}, []string{"B-NP"}, []float64{nan}); err == nil {
		t.Fatal("a predicted chunk without confidence was counted")
	}
	if r := ev.Result(); r.Sentences != 1 || r.Calibration.Chunks != 3 {
		t.Fatalf("the refused sentence was counted: %d sentences, %d chunks", r.Sentences, r.Calibration.Chunks)
	}
	if err := NewEvaluator(EvalOptions{}).AddConfidence(gold, pred, make([]float64, 5)); err == nil {
		t.Fatal("AddConfidence without Calibration accepted")
	}
}

// TestConstraintsRefuseLabelsOfAnotherScheme: constraints whose scheme the
// model's labels are not of are refused, naming the labels no allowed
// labelling can hold (formerly iobes on a B/I/O model forbade every chunk
// and tagged everything O without a word). Which labels are unusable is
// checked against enumerating the allowed labellings up to length 4.
func TestConstraintsRefuseLabelsOfAnotherScheme(t *testing.T) {
	for _, tc := range []struct {
		c      Constraints
		labels []string
		bad    []string // the labels the error names; nil: accepted
		hint   string
	}{
		{ConstraintsIOBES, bioLabels, []string{"B-A", "I-A", "B-B", "I-B"}, "look like bio or iob1"},
		{ConstraintsIOBES, []string{"O", "B-A", "I-A", "E-A", "B-B", "I-B"}, []string{"B-B", "I-B"}, ""},
		{ConstraintsBIO, []string{"O", "I-A", "I-B"}, []string{"I-A", "I-B"}, "look like iob1"},
		{ConstraintsBIO, []string{"O", "B-A", "I-A", "I-B"}, []string{"I-B"}, ""},
		{ConstraintsIOB1, []string{"O", "B-A", "I-B", "B-B"}, []string{"B-A"}, ""},
		{ConstraintsIOBES, iobesLabels, nil, ""},
		{ConstraintsIOBES, []string{"B-A", "E-A"}, nil, ""}, // usable, though no labelling of one token is allowed
		{ConstraintsBIO, bioLabels, nil, ""},
		{ConstraintsIOB1, bioLabels, nil, ""},
	} {
		// The oracle: the labels some allowed labelling of 1..4 tokens holds.
		used := map[string]bool{}
		for T := 1; T <= 4; T++ {
			enumerate(T, len(tc.labels), func(path []int32) {
				if l := names(tc.labels, path); wellFormed(tc.c, l) {
					for _, x := range l {
						used[x] = true
					}
				}
			})
		}
		var unused []string
		for _, l := range tc.labels {
			if !used[l] {
				unused = append(unused, l)
			}
		}
		if !slices.Equal(unused, tc.bad) {
			t.Fatalf("%s on %v: the case says %v cannot be used, enumeration %v", tc.c, tc.labels, tc.bad, unused)
		}
		_, err := tc.c.masks(tc.labels)
		if tc.bad == nil {
			if err != nil {
				t.Fatalf("%s on %v: %v", tc.c, tc.labels, err)
			}
			continue
		}
		want := fmt.Sprintf("DecodeOptions.Constraints %s: the model's labels are not of that scheme: no labelling the %s constraints allow can hold %s", tc.c, tc.c, labelsNamed(tc.bad))
		if !errors.Is(err, ErrConstraintLabel) || !strings.HasPrefix(err.Error(), want) || !strings.Contains(err.Error(), tc.hint) {
			t.Fatalf("%s on %v: %v\nwant %s … %s", tc.c, tc.labels, err, want, tc.hint)
		}
	}
	// Decoding refuses them before decoding anything.
	m, d := bioModel(31, 3, 4)
	if _, err := Decode(context.Background(), m, d, Options{Constraints: ConstraintsIOBES}); !errors.Is(err, ErrConstraintLabel) {
		t.Fatalf("iobes on a bio model decoded: %v", err)
	}
}

// TestInfeasibleWithoutForcedLabels: constraints that leave a sentence no
// labelling at all, nothing being forced (iobes with labels B-A and E-A
// only, on a sentence of one token), are named as such, with the sentence's
// line when the chunk was read from text (formerly: "the labels forced by
// column " with no name).
func TestInfeasibleWithoutForcedLabels(t *testing.T) {
	labels := []string{"B-A", "E-A"}
	rng := rand.New(rand.NewPCG(41, 42))
	lay := crf.Layout{NumAttrs: 4, NumLabels: 2}
	attrs := []string{"a", "b", "c", "d"}
	m := &crf.Model{Layout: lay, Weights: crftest.RandomWeights(rng, lay, 1), AttrNames: attrs, LabelNames: labels}
	// Sentences of 2, 1 and 3 tokens.
	one := &crf.Dataset{NumAttrs: 4, NumLabels: 2, AttrNames: attrs, LabelNames: labels}
	for _, T := range []int{2, 1, 3} {
		one.SentStart = append(one.SentStart, len(one.Labels))
		for tok := range T {
			one.AttrStart = append(one.AttrStart, len(one.Attrs))
			one.Attrs = append(one.Attrs, int32(tok%4))
			one.Labels = append(one.Labels, int32(tok%2))
		}
	}
	one.SentStart = append(one.SentStart, len(one.Labels))
	one.AttrStart = append(one.AttrStart, len(one.Attrs))
	tab := &tables.FeatureTable{Data: one, FirstSentence: 7, Lines: []int{20, 23, 25}}
	_, err := decodeFeatureTable(context.Background(), m, tab, Options{Constraints: ConstraintsIOBES})
	var ie *InfeasibleError
	want := "sentence 9 (line 23): the iobes constraints leave no valid labelling of its 1 token with the model's labels (B-A E-A)"
	if !errors.As(err, &ie) || err.Error() != want {
		t.Fatalf("got %v\nwant %s", err, want)
	}
	tab.Lines = nil
	if _, err := decodeFeatureTable(context.Background(), m, tab, Options{Constraints: ConstraintsIOBES}); err == nil || strings.Contains(err.Error(), "line") ||
		!strings.HasPrefix(err.Error(), "sentence 9: the iobes constraints") {
		t.Fatalf("without lines: %v", err)
	}
}
