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
	return p.what(store, runtime.GOMAXPROCS(0))
}

// what computes ŵ(μ) on the given number of goroutines (at most one per
// label). Every entry of w is the sum of the same terms in the same order
// as crf.AddExpected adds them sentence after sentence — the gold features,
// then sentence 0's terms in token order, then sentence 1's, … — so the
// result is the same bits whatever the number of goroutines: the labels
// are split into contiguous ranges, and the goroutine of a range [y0, y1)
// owns every entry of w for those labels (in each attribute row, the bias,
// start and end) and the transitions out of them (rows y0..y1−1 of B). It
// visits every sentence in order, reading only its rows of each edge block
// (a node marginal is the row sum of its edge block, the last node's the
// column sum of the last edge block), so the duals are read once in all.
// It adds into a private copy of its entries (taken from w, the gold
// features, and put back at the end), so that no two goroutines write to
// the same cache line: one d-vector more in all.
func (p *Problem) what(store duals.Store, workers int) ([]float64, error) {
	d := p.Data
	K := p.Layout.NumLabels
	w := p.GoldFeatures()
	P := max(1, min(workers, K))
	lws := make([]*labelWhat, P)
	for k := range lws {
		lws[k] = newLabelWhat(p, k*K/P, (k+1)*K/P)
	}
	span := func(lo, hi int) {
		var wg sync.WaitGroup
		for _, lw := range lws {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := lo; i < hi; i++ {
					lw.sentence(d.Sentence(i), store.Block(i))
				}
			}()
		}
		wg.Wait()
		p.meterAdd(hi - lo)
	}
	for _, lw := range lws {
		lw.move(w, true)
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

// labelWhat is one goroutine of what: it subtracts E_μ[F] from its copy of
// the entries of w for the labels y0..y1−1, with the same arithmetic as
// crf.AddExpected (scale −1) and crf.NodeFromBlock.
type labelWhat struct {
	lay    crf.Layout
	y0, y1 int
	// The entries owned: L = y1−y0 of each attribute row (NumAttrs × L),
	// rows y0..y1−1 of the transitions (L × K), and L of the bias, start
	// and end each.
	attrs, trans, bias, start, end []float64
	node                           []float64 // T × L: the node marginals of the labels owned
}

func newLabelWhat(p *Problem, y0, y1 int) *labelWhat {
	lay := p.Layout
	L := y1 - y0
	lw := &labelWhat{lay: lay, y0: y0, y1: y1, attrs: make([]float64, lay.NumAttrs*L), trans: make([]float64, L*lay.NumLabels)}
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
	L := y1 - y0
	cp := func(own, shared []float64) {
		if in {
			copy(own, shared)
		} else {
			copy(shared, own)
		}
	}
	for a := range lay.NumAttrs {
		r := lay.Row(int32(a))
		cp(lw.attrs[a*L:(a+1)*L], w[r+y0:r+y1])
	}
	cp(lw.trans, w[lay.Trans()+y0*K:lay.Trans()+y1*K])
	if !lay.NoBias {
		cp(lw.bias, w[lay.Bias()+y0:lay.Bias()+y1])
		cp(lw.start, w[lay.Start()+y0:lay.Start()+y1])
		cp(lw.end, w[lay.End()+y0:lay.End()+y1])
	}
}

// sentence subtracts sentence s's E_μ[F] (μ its block) from the owned
// entries.
func (lw *labelWhat) sentence(s crf.Sentence, mu []float64) {
	const scale = -1.0
	K := lw.lay.NumLabels
	T := s.Len()
	y0, y1 := lw.y0, lw.y1
	L := y1 - y0
	lw.node = grow(lw.node, T*L)
	node := lw.node
	if T == 1 {
		copy(node, mu[y0:y1])
	} else {
		for t := 0; t < T-1; t++ {
			blk := mu[t*K*K : (t+1)*K*K]
			for y := y0; y < y1; y++ {
				s := 0.0
				for _, v := range blk[y*K : (y+1)*K] {
					s += v
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
	for t := 0; t < T; t++ {
		pt := node[t*L : (t+1)*L]
		for j := s.AttrStart[t]; j < s.AttrStart[t+1]; j++ {
			off := int(s.Attrs[j]) * L
			u := lw.attrs[off : off+L]
			c := scale
			if s.Values != nil {
				c *= s.Values[j]
			}
			for y, pv := range pt {
				u[y] += c * pv
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
	if T < 2 {
		return
	}
	for t := 0; t < T-1; t++ {
		for i, v := range mu[t*K*K+y0*K : t*K*K+y1*K] {
			lw.trans[i] += scale * v
		}
	}
}
