package stage

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/dualcrf/dualcrf/arrowio"
	"github.com/dualcrf/dualcrf/crf"
	"github.com/dualcrf/dualcrf/crf/crftest"
	"github.com/dualcrf/dualcrf/schemas"
	"github.com/dualcrf/dualcrf/tables"
)

// explainModel is a random model whose attributes come from two recorded
// templates, plus input attributes no template names; a third of its
// weights are zero.
func explainModel(seed uint64, noBias bool) *crf.Model {
	rng := rand.New(rand.NewPCG(seed, 7))
	A, K := 40, 4
	lay := crf.Layout{NumAttrs: A, NumLabels: K, NoBias: noBias}
	w := crftest.RandomWeights(rng, lay, 1)
	for i := range w {
		if rng.IntN(3) == 0 {
			w[i] = 0
		}
	}
	m := &crf.Model{Layout: lay, Weights: w, Meta: map[string]string{
		schemas.KeyTemplates: "@boundary side\nlower(w[0])\npos[-1]|pos[0]\n"}}
	for a := range A {
		switch a % 3 {
		case 0:
			m.AttrNames = append(m.AttrNames, fmt.Sprintf("lower(w[0])=w%d", a))
		case 1:
			m.AttrNames = append(m.AttrNames, fmt.Sprintf("pos[-1]|pos[0]=P%d|Q", a))
		default:
			m.AttrNames = append(m.AttrNames, fmt.Sprintf("input%d", a))
		}
	}
	for y := range K {
		m.LabelNames = append(m.LabelNames, fmt.Sprintf("L%d", y))
	}
	return m
}

// TestWeightRowsRebuildTheModel rebuilds the weight vector from the rows
// by name: every weight must come back, zero attribute weights must be
// absent, and each attribute must carry the template its name starts with.
func TestWeightRowsRebuildTheModel(t *testing.T) {
	for _, noBias := range []bool{false, true} {
		m := explainModel(1, noBias)
		lay, K := m.Layout, m.Layout.NumLabels
		label := map[string]int{}
		for y, n := range m.LabelNames {
			label[n] = y
		}
		attr := map[string]int{}
		for a, n := range m.AttrNames {
			attr[n] = a
		}
		got := make([]float64, lay.Dim())
		seen := make([]bool, lay.Dim())
		for _, r := range WeightRows(m) {
			var off int
			switch r.Kind {
			case schemas.KindAttr:
				a := attr[r.Attribute]
				off = a*K + label[r.Label]
				want := ""
				if a%3 == 0 {
					want = "lower(w[0])"
				} else if a%3 == 1 {
					want = "pos[-1]|pos[0]"
				}
				if r.Template != want || r.Weight == 0 {
					t.Fatalf("row %+v: want template %q and a non-zero weight", r, want)
				}
			case schemas.KindTrans:
				off = lay.Trans() + label[r.FromLabel]*K + label[r.Label]
			case schemas.KindBias:
				off = lay.Bias() + label[r.Label]
			case schemas.KindStart:
				off = lay.Start() + label[r.Label]
			case schemas.KindEnd:
				off = lay.End() + label[r.Label]
			default:
				t.Fatalf("row kind %q", r.Kind)
			}
			if seen[off] {
				t.Fatalf("row %+v: weight %d twice", r, off)
			}
			seen[off], got[off] = true, r.Weight
		}
		for i, w := range m.Weights {
			if got[i] != w || (!seen[i] && (w != 0 || i >= lay.Trans())) {
				t.Fatalf("noBias %v: weight %d (%s): rows give %g (present %v), model %g", noBias, i, m.RowName(i/K), got[i], seen[i], w)
			}
		}
	}
}

// TestExplainTopAttributes reads the text's per-label lists back and
// checks them against the model: --top N positive weights, largest first,
// with no attribute left out that weighs more than the last one listed,
// and likewise for the negative side.
func TestExplainTopAttributes(t *testing.T) {
	m := explainModel(2, false)
	K := m.Layout.NumLabels
	const top = 3
	var b bytes.Buffer
	if err := Explain(&b, m, "m.arrow", ExplainOptions{Top: top}); err != nil {
		t.Fatal(err)
	}
	text := b.String()
	for _, want := range []string{"transitions (row: previous label", "bias", "lower(w[0])", "(no template: input attributes)"} {
		if !strings.Contains(text, want) {
			t.Errorf("the text lacks %q:\n%s", want, text)
		}
	}
	weight := map[string]int{}
	for a, n := range m.AttrNames {
		weight[n] = a
	}
	sections := strings.Split(text, "\n\n")
	for y, label := range m.LabelNames {
		var lines []string
		for _, s := range sections {
			if strings.HasPrefix(s, label+"\n") {
				lines = strings.Split(strings.TrimSpace(s), "\n")[1:]
			}
		}
		var pos, neg []float64
		var posNames, negNames []string
		for _, l := range lines {
			left, right, _ := strings.Cut(l, "|  ")
			for side, cell := range []string{left, right} {
				f := strings.Fields(cell)
				if len(f) != 2 {
					continue
				}
				v, err := strconv.ParseFloat(f[0], 64)
				if err != nil {
					t.Fatalf("label %s: line %q", label, l)
				}
				if w := m.Weights[weight[f[1]]*K+y]; strconv.FormatFloat(w, 'f', 4, 64) != strconv.FormatFloat(v, 'f', 4, 64) {
					t.Fatalf("label %s: %s shown as %v, weighs %v", label, f[1], v, w)
				}
				if side == 0 {
					pos, posNames = append(pos, v), append(posNames, f[1])
				} else {
					neg, negNames = append(neg, v), append(negNames, f[1])
				}
			}
		}
		// The brute-force answer: every attribute's weight for y, sorted.
		var allPos, allNeg []float64
		for a := range m.Layout.NumAttrs {
			switch w := m.Weights[a*K+y]; {
			case w > 0:
				allPos = append(allPos, w)
			case w < 0:
				allNeg = append(allNeg, w)
			}
		}
		check := func(shown []float64, names []string, all []float64, better func(a, b float64) bool) {
			if len(shown) != min(top, len(all)) {
				t.Fatalf("label %s: %d shown (%v), want %d of %d", label, len(shown), names, min(top, len(all)), len(all))
			}
			for i := 1; i < len(shown); i++ {
				if better(shown[i], shown[i-1]) {
					t.Fatalf("label %s: %v not in order", label, shown)
				}
			}
			beaten := 0
			for _, w := range all {
				if len(shown) > 0 && better(w, shown[len(shown)-1]) {
					beaten++
				}
			}
			if beaten >= len(shown) && len(shown) > 0 {
				t.Fatalf("label %s: %d attributes weigh more than the last of %v", label, beaten, names)
			}
		}
		check(pos, posNames, allPos, func(a, b float64) bool { return a > b+5e-5 })
		check(neg, negNames, allNeg, func(a, b float64) bool { return a < b-5e-5 })
	}
	if err := (ExplainOptions{Top: -1}).Check(); err == nil {
		t.Error("Top -1 accepted")
	}
}

// chunkWriter records the writes made to it.
type chunkWriter struct {
	writes, largest, total int
	onWrite                func()
}

func (c *chunkWriter) Write(p []byte) (int, error) {
	c.writes++
	c.largest = max(c.largest, len(p))
	c.total += len(p)
	if c.onWrite != nil {
		c.onWrite()
	}
	return len(p), nil
}

// bigModel is a model of K labels and A attributes, every weight non-zero.
func bigModel(A, K int) *crf.Model {
	rng := rand.New(rand.NewPCG(9, 9))
	lay := crf.Layout{NumAttrs: A, NumLabels: K}
	m := &crf.Model{Layout: lay, Weights: crftest.RandomWeights(rng, lay, 1)}
	for a := range A {
		m.AttrNames = append(m.AttrNames, "w="+strconv.Itoa(a))
	}
	for y := range K {
		m.LabelNames = append(m.LabelNames, "L"+strconv.Itoa(y))
	}
	return m
}

// TestExplainTextStreams: the text is written as it is made, in writes of
// at most a buffer, so the K×K transition matrix of a model of many labels
// (and the rest) is never held whole; it held the whole text, the matrix
// in a tabwriter's cells besides (about 40 bytes a weight, five times the
// model's K² weights).
func TestExplainTextStreams(t *testing.T) {
	m := bigModel(10, 300)
	var w chunkWriter
	if err := Explain(&w, m, "m", ExplainOptions{Top: 1}); err != nil {
		t.Fatal(err)
	}
	if w.largest > explainBuffer || w.total < 300*300*5 {
		t.Fatalf("%d bytes in %d writes, the largest %d bytes: want writes of at most %d", w.total, w.writes, w.largest, explainBuffer)
	}
}

// TestWeightRowsStream: the weights table is written as its rows come,
// a batch at a time: the first batch reaches the writer before the rows
// after it are made (explain -o held every row, about twelve times the
// model's weights: 2.4 GB for CoNLL-2000's model of 7 million weights).
func TestWeightRowsStream(t *testing.T) {
	m := bigModel(30000, 5)
	total := 30000*5 + 5*5 + 3*5
	pulled, pulledAtFirst := 0, -1
	rows := func(yield func(tables.WeightRow) bool) {
		for r := range WeightRowSeq(m) {
			pulled++
			if !yield(r) {
				return
			}
		}
	}
	var w chunkWriter
	w.onWrite = func() {
		if pulledAtFirst < 0 && w.total > 1<<20 {
			pulledAtFirst = pulled
		}
	}
	if err := tables.WriteWeightRows(&w, rows, nil, arrowio.WriterOptions{}); err != nil {
		t.Fatal(err)
	}
	if pulled != total || pulledAtFirst < 0 || pulledAtFirst > tables.DefaultBatchTokens+1 {
		t.Fatalf("%d rows made, %d of them before the first MiB was written; want at most a batch (%d) of %d", pulled, pulledAtFirst, tables.DefaultBatchTokens, total)
	}
	if got := len(WeightRows(m)); got != total {
		t.Fatalf("WeightRows: %d rows, want %d", got, total)
	}
}
