package train

import (
	"runtime"
	"sync"

	"github.com/dualcrf/dualcrf/crf"
	"github.com/dualcrf/dualcrf/duals"
)

// What computes ŵ(μ) = (1/(λn)) Σ_i (F(x_i,y_i) − E_μ_i[F]) from scratch,
// on all cores. Its only error is a duals.Stream's failure to read a block.
func (p *Problem) What(store duals.Store) ([]float64, error) {
	workers := runtime.GOMAXPROCS(0)
	if _, ok := store.(sweeping); ok {
		// Its Block drops the pages of the blocks behind the one asked
		// for: it wants the blocks in order, from one goroutine.
		workers = 1
	}
	return p.what(store, workers)
}

// what computes ŵ(μ) on the given number of goroutines; on one, it asks
// store for the blocks in order, from one goroutine. Every entry of w
// is the sum of the same terms in the same order as crf.AddExpected adds
// them sentence after sentence — the gold features, then sentence 0's
// terms in token order, then sentence 1's, … — so the result is the same
// bits whatever the number of goroutines. Sentences are taken in spans (all
// of them, or a streamed store's block), each in two phases:
//
//  1. by labels: the labels are split into contiguous ranges, and the
//     goroutine of a range visits every sentence in order, reading only its
//     rows of each edge block: it makes its labels' node marginals (a row
//     sum of an edge block; the last node's a column sum of the last one)
//     and adds into the transitions out of its labels, the bias, start and
//     end — private copies of them, taken from w and put back;
//  2. by attributes: the attributes are split into contiguous ranges of
//     about equal occurrences, and the goroutine of a range visits every
//     token in order, adding into its attributes' rows of w.
//
// The duals are read once in all, and no two goroutines write to the same
// entries (nor, but at a range's ends, to the same cache lines). Memory:
// the node marginals of a span (tokens × labels).
func (p *Problem) what(store duals.Store, workers int) ([]float64, error) {
	d := p.Data
	K := p.Layout.NumLabels
	w := p.GoldFeatures()
	if workers < 1 {
		workers = 1
	}
	lws := make([]*labelWhat, min(workers, K))
	for k := range lws {
		lws[k] = newLabelWhat(p, k*K/len(lws), (k+1)*K/len(lws))
		lws[k].move(w, true)
	}
	bounds := attrRanges(d, workers)
	span := func(lo, hi int) {
		tokLo, tokHi := d.SentStart[lo], d.SentStart[hi]
		var wg sync.WaitGroup
		for _, lw := range lws {
			wg.Add(1)
			go func() {
				defer wg.Done()
				lw.node = grow(lw.node, (tokHi-tokLo)*(lw.y1-lw.y0))
				for i := lo; i < hi; i++ {
					tok := d.SentStart[i] - tokLo
					lw.sentence(d.Sentence(i), store.Block(i), tok)
				}
			}()
		}
		wg.Wait()
		for k := 0; k+1 < len(bounds); k++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				addAttrRows(w, p.Layout, d, lws, int32(bounds[k]), int32(bounds[k+1]), tokLo, tokHi)
			}()
		}
		wg.Wait()
		p.meterAdd(hi - lo)
	}
	if ss, ok := store.(*duals.Stream); ok {
		// Block by block in file order: the same sum in the same order.
		if err := ss.Visit(ss.Sequential(), duals.VisitOptions{}, func(_, b int) error {
			span(ss.BlockRange(b))
			return nil
		}, nil); err != nil {
			return nil, err
		}
	} else {
		span(0, d.Len())
	}
	for _, lw := range lws {
		lw.move(w, false)
	}
	p.applyMask(w)
	c := 1 / (p.Lambda * float64(d.Len()))
	for j := range w {
		w[j] *= c
	}
	return w, nil
}

// attrRanges splits the attribute ids into at most parts contiguous ranges
// of about equal occurrences in d: range k is bounds[k]..bounds[k+1]−1.
func attrRanges(d *crf.Dataset, parts int) []int {
	count := make([]int, d.NumAttrs)
	for _, a := range d.Attrs {
		count[a]++
	}
	bounds := []int{0}
	seen, total := 0, len(d.Attrs)
	for a, c := range count {
		seen += c
		if len(bounds) < parts && seen*parts >= len(bounds)*total && a+1 < d.NumAttrs {
			bounds = append(bounds, a+1)
		}
	}
	return append(bounds, d.NumAttrs)
}

// addAttrRows subtracts the attribute rows' share of E_μ[F] of tokens
// tokLo..tokHi−1 from w, for the attributes a0..a1−1 only, in token order,
// as crf.AddExpectedNodes does (scale −1); the node marginals are the
// label goroutines' (lws, in label order).
func addAttrRows(w []float64, lay crf.Layout, d *crf.Dataset, lws []*labelWhat, a0, a1 int32, tokLo, tokHi int) {
	const scale = -1.0
	for tok := tokLo; tok < tokHi; tok++ {
		for j := d.AttrStart[tok]; j < d.AttrStart[tok+1]; j++ {
			a := d.Attrs[j]
			if a < a0 || a >= a1 {
				continue
			}
			c := scale
			if d.Values != nil {
				c *= d.Values[j]
			}
			r := lay.Row(a)
			for _, lw := range lws {
				L := lw.y1 - lw.y0
				pt := lw.node[(tok-tokLo)*L : (tok-tokLo+1)*L]
				u := w[r+lw.y0 : r+lw.y1]
				for y, pv := range pt {
					u[y] += c * pv
				}
			}
		}
	}
}

// labelWhat is a goroutine of what's first phase: for the labels y0..y1−1
// it makes the node marginals and subtracts E_μ[F] from its copy of their
// transitions, bias, start and end, with the same arithmetic as
// crf.NodeFromBlock and crf.AddExpected (scale −1).
type labelWhat struct {
	lay    crf.Layout
	y0, y1 int
	// The entries owned: rows y0..y1−1 of the transitions (L × K, with
	// L = y1−y0), and L of the bias, start and end each.
	trans, bias, start, end []float64
	node                    []float64 // tokens of the span × L: the node marginals of the labels owned
}

func newLabelWhat(p *Problem, y0, y1 int) *labelWhat {
	lay := p.Layout
	L := y1 - y0
	lw := &labelWhat{lay: lay, y0: y0, y1: y1, trans: make([]float64, L*lay.NumLabels)}
	if !lay.NoBias {
		lw.bias, lw.start, lw.end = make([]float64, L), make([]float64, L), make([]float64, L)
	}
	return lw
}

// move copies the entries owned from w into the private copy (in) or back.
func (lw *labelWhat) move(w []float64, in bool) {
	lay := lw.lay
	K := lay.NumLabels
	y0, y1 := lw.y0, lw.y1
	cp := func(own, shared []float64) {
		if in {
			copy(own, shared)
		} else {
			copy(shared, own)
		}
	}
	cp(lw.trans, w[lay.Trans()+y0*K:lay.Trans()+y1*K])
	if !lay.NoBias {
		cp(lw.bias, w[lay.Bias()+y0:lay.Bias()+y1])
		cp(lw.start, w[lay.Start()+y0:lay.Start()+y1])
		cp(lw.end, w[lay.End()+y0:lay.End()+y1])
	}
}

// sentence makes the node marginals of sentence s (μ its block), whose
// first token is token tok of the span, and subtracts its transitions',
// bias', start's and end's share of E_μ[F] from the owned entries (each
// entry's terms in token order, as crf.AddExpected adds them).
func (lw *labelWhat) sentence(s crf.Sentence, mu []float64, tok int) {
	const scale = -1.0
	K := lw.lay.NumLabels
	T := s.Len()
	y0, y1 := lw.y0, lw.y1
	L := y1 - y0
	node := lw.node[tok*L : (tok+T)*L]
	if T == 1 {
		copy(node, mu[y0:y1])
	} else {
		// One sweep over the rows owned of each edge block makes the row
		// sums and subtracts the edge marginals from the transitions.
		for t := 0; t < T-1; t++ {
			blk := mu[t*K*K : (t+1)*K*K]
			for y := y0; y < y1; y++ {
				tr := lw.trans[(y-y0)*K : (y-y0+1)*K]
				s := 0.0
				for b, v := range blk[y*K : (y+1)*K] {
					s += v
					tr[b] += scale * v
				}
				node[t*L+y-y0] = s
			}
		}
		blk := mu[(T-2)*K*K : (T-1)*K*K]
		last := node[(T-1)*L : T*L]
		clear(last)
		for y := 0; y < K; y++ {
			for y2, v := range blk[y*K+y0 : y*K+y1] {
				last[y2] += v
			}
		}
	}
	if !lw.lay.NoBias {
		for t := 0; t < T; t++ {
			for y, pv := range node[t*L : (t+1)*L] {
				lw.bias[y] += scale * pv
			}
		}
		for y, pv := range node[:L] {
			lw.start[y] += scale * pv
		}
		for y, pv := range node[(T-1)*L : T*L] {
			lw.end[y] += scale * pv
		}
	}
}
