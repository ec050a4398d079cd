package train

import (
	"runtime"
	"slices"
	"sync"

	"github.com/dualcrf/dualcrf/crf"
	"github.com/dualcrf/dualcrf/duals"
)

// What computes ŵ(μ) = (1/(λn)) Σ_i (F(x_i,y_i) − E_μ_i[F]) from scratch,
// on all cores when there are whatMinWorkers or more, the same bits on any
// number. Its only error is a duals.Stream's failure to read a block.
func (p *Problem) What(store duals.Reader) ([]float64, error) { return p.whatInto(nil, store) }

// whatInto is What into dst when it has the capacity (a new vector
// otherwise); it returns the vector written.
func (p *Problem) whatInto(dst []float64, store duals.Reader) ([]float64, error) {
	workers := runtime.GOMAXPROCS(0)
	if workers < whatMinWorkers {
		workers = 1
	}
	if duals.InOrder(store) {
		// A File's SweepReader drops the pages of the blocks behind the
		// one asked for: it wants the blocks in order, from one goroutine.
		workers = 1
	}
	return p.what(dst, store, workers, whatChunkTokens)
}

// whatMinWorkers is the fewest cores on which What splits its sum: split,
// the sum costs about 1.7 times the CPU time of the serial one (0.26
// against 0.155 CPU-seconds on CoNLL-2000 with two goroutines: the duals
// are read from memory by one phase and from the cache by the other), so
// two cores would gain 15% at best, and lose as soon as another process
// takes part of one; three or more should gain (measured on two cores
// only).
const whatMinWorkers = 3

// what computes ŵ(μ) into dst (or a new vector, if it is too short) on the
// given number of goroutines; on one, it is
// whatSerial (which asks store for the blocks in order). Every entry of w is
// the sum of the same terms in the same order as crf.AddExpected adds them
// sentence after sentence — the gold features, then sentence 0's terms in
// token order, then sentence 1's, … — so the result is the same bits
// whatever the number of goroutines. The sentences are taken in chunks of
// at most chunkTokens tokens (or one sentence; a streamed store's blocks
// one after the other), each in two phases:
//
//  1. by sentences: the goroutines split the chunk's sentences and make
//     their node marginals (crf.NodeFromBlock), reading each dual once;
//  2. by entries: goroutine k owns a range of attributes, of about equal
//     occurrences, and a range of labels; it visits every token of the
//     chunk in order, adding into its attributes' rows of w and into the
//     transitions out of its labels, their bias, start and end (private
//     copies of these, taken from w and put back at the end, so that no
//     two goroutines write to the same cache line).
//
// A chunk's duals are read from memory once, by phase 1, and again from
// the cache by phase 2; its node marginals (tokens × labels) are the only
// memory what adds besides w. From a store that rounds (a
// duals.MarginalStore not of float64), phase 1 takes each block's node
// marginals and its edges summed over the positions from the decoding
// (LoadMarginals), and phase 2 adds the summed edges once per sentence
// instead of every edge: one pass over the duals instead of three.
func (p *Problem) what(dst []float64, store duals.Reader, workers, chunkTokens int) ([]float64, error) {
	if workers <= 1 {
		return p.whatSerial(dst, store)
	}
	d := p.Data
	lay := p.Layout
	K := lay.NumLabels
	w := p.goldInto(dst)
	P := workers
	lws := make([]*labelWhat, min(P, K))
	for k := range lws {
		lws[k] = newLabelWhat(p, k*K/len(lws), (k+1)*K/len(lws))
		lws[k].move(w, true)
	}
	bounds := attrRanges(d, P)
	ms := marginalStore(store)
	var node, arena []float64
	var mus [][]float64
	// chunk runs both phases on sentences lo..hi−1.
	chunk := func(lo, hi int) {
		tokLo, tokHi := d.SentStart[lo], d.SentStart[hi]
		node = grow(node, (tokHi-tokLo)*K)
		mus = slices.Grow(mus[:0], hi-lo)[:hi-lo]
		// The chunk's blocks, loaded into one arena (from a store that
		// rounds: their summed edges, K×K each).
		bl := func(i int) int {
			if ms != nil {
				return K * K
			}
			return crf.BlockLen(d.SentStart[i+1]-d.SentStart[i], K)
		}
		size := 0
		for i := lo; i < hi; i++ {
			size += bl(i)
		}
		arena = grow(arena, size)
		at := 0
		for i := lo; i < hi; i++ {
			mus[i-lo] = arena[at : at+bl(i) : at+bl(i)]
			at += bl(i)
		}
		var wg sync.WaitGroup
		for k := range P {
			wg.Add(1)
			go func() {
				defer wg.Done()
				var mu []float64
				for i := lo + k*(hi-lo)/P; i < lo+(k+1)*(hi-lo)/P; i++ {
					T := d.SentStart[i+1] - d.SentStart[i]
					at := (d.SentStart[i] - tokLo) * K
					if ms != nil {
						mu = grow(mu, crf.BlockLen(T, K))
						ms.LoadMarginals(i, mu, node[at:at+T*K], mus[i-lo])
						continue
					}
					store.Load(i, mus[i-lo])
					crf.NodeFromBlock(mus[i-lo], T, K, node[at:at+T*K])
				}
			}()
		}
		wg.Wait()
		for k := range P {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if k+1 < len(bounds) {
					addAttrRows(w, lay, d, node, int32(bounds[k]), int32(bounds[k+1]), tokLo, tokHi)
				}
				if k < len(lws) {
					for i := lo; i < hi; i++ {
						at := (d.SentStart[i] - tokLo) * K
						T := d.SentStart[i+1] - d.SentStart[i]
						lws[k].sentence(mus[i-lo], node[at:at+T*K], T, ms != nil)
					}
				}
			}()
		}
		wg.Wait()
		p.meterAdd(hi - lo)
	}
	span := func(lo, hi int) {
		for lo < hi {
			end := lo + 1
			for end < hi && d.SentStart[end+1]-d.SentStart[lo] <= chunkTokens {
				end++
			}
			chunk(lo, end)
			lo = end
		}
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

// whatSerial computes ŵ(μ) on one goroutine: crf.AddExpected sentence
// after sentence, store's blocks asked for in order — what's reference.
func (p *Problem) whatSerial(dst []float64, store duals.Reader) ([]float64, error) {
	d := p.Data
	K := p.Layout.NumLabels
	w := p.goldInto(dst)
	ms := marginalStore(store)
	var node, mu, sum []float64
	add := func(i int) {
		s := d.Sentence(i)
		T := s.Len()
		node = grow(node, T*K)
		mu = grow(mu, crf.BlockLen(T, K))
		if ms != nil {
			sum = grow(sum, K*K)
			ms.LoadMarginals(i, mu, node, sum)
			addExpectedSum(w, p.Layout, s, node, sum, -1)
		} else {
			store.Load(i, mu)
			crf.NodeFromBlock(mu, T, K, node)
			crf.AddExpected(w, p.Layout, s, node, mu, -1)
		}
		p.meterAdd(1)
	}
	if ss, ok := store.(*duals.Stream); ok {
		// Block by block in file order: the same sum in the same order.
		if err := ss.Visit(ss.Sequential(), duals.VisitOptions{}, func(_, b int) error {
			lo, hi := ss.BlockRange(b)
			for i := lo; i < hi; i++ {
				add(i)
			}
			return nil
		}, nil); err != nil {
			return nil, err
		}
	} else {
		for i := 0; i < d.Len(); i++ {
			add(i)
		}
	}
	p.applyMask(w)
	c := 1 / (p.Lambda * float64(d.Len()))
	for j := range w {
		w[j] *= c
	}
	return w, nil
}

// marginalStore returns store as a duals.MarginalStore when it is one that
// rounds (not float64), whose decoding gives the node marginals and summed
// edges ŵ(μ) needs; nil otherwise (an exact store keeps what's sums as
// they have always been taken, the same bits).
func marginalStore(store duals.Reader) duals.MarginalStore {
	ms, ok := store.(duals.MarginalStore)
	if !ok || ms.Precision() == duals.Float64 {
		return nil
	}
	return ms
}

// whatChunkTokens is the number of tokens in a chunk of What: the duals of
// 512 tokens of 22 labels take 2 MiB, their node marginals 88 KiB.
const whatChunkTokens = 512

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
// tokLo..tokHi−1 (node marginals node, K per token) from w, for the
// attributes a0..a1−1 only, in token order, as crf.AddExpectedNodes does
// (scale −1).
func addAttrRows(w []float64, lay crf.Layout, d *crf.Dataset, node []float64, a0, a1 int32, tokLo, tokHi int) {
	const scale = -1.0
	K := lay.NumLabels
	for tok := tokLo; tok < tokHi; tok++ {
		pt := node[(tok-tokLo)*K : (tok-tokLo+1)*K]
		for j := d.AttrStart[tok]; j < d.AttrStart[tok+1]; j++ {
			a := d.Attrs[j]
			if a < a0 || a >= a1 {
				continue
			}
			c := scale
			if d.Values != nil {
				c *= d.Values[j]
			}
			lo, hi := lay.Span(a)
			u := w[lo:hi]
			if lay.Free != nil {
				for k, y := range lay.RowLabels(a) {
					u[k] += c * pt[y]
				}
				continue
			}
			for y, pv := range pt {
				u[y] += c * pv
			}
		}
	}
}

// labelWhat holds what a goroutine of what's second phase adds into for
// the labels y0..y1−1: private copies of their transitions, bias, start and
// end, into which it adds as crf.AddExpected does (scale −1).
type labelWhat struct {
	lay    crf.Layout
	y0, y1 int
	// The entries owned: rows y0..y1−1 of the transitions (L × K, with
	// L = y1−y0), and L of the bias, start and end each.
	trans, bias, start, end []float64
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

// sentence subtracts the transitions', bias', start's and end's share of
// E_μ[F] of a sentence of T tokens (μ its block, or with summed its edges
// summed over the positions; node its node marginals) from the owned
// entries, each entry's terms in token order.
func (lw *labelWhat) sentence(mu, node []float64, T int, summed bool) {
	const scale = -1.0
	K := lw.lay.NumLabels
	y0, y1 := lw.y0, lw.y1
	if !lw.lay.NoBias {
		for t := 0; t < T; t++ {
			for y, pv := range node[t*K+y0 : t*K+y1] {
				lw.bias[y] += scale * pv
			}
		}
		for y, pv := range node[y0:y1] {
			lw.start[y] += scale * pv
		}
		for y, pv := range node[(T-1)*K+y0 : (T-1)*K+y1] {
			lw.end[y] += scale * pv
		}
	}
	if summed {
		if T > 1 {
			for i, v := range mu[y0*K : y1*K] {
				lw.trans[i] += scale * v
			}
		}
		return
	}
	for t := 0; t < T-1; t++ {
		for i, v := range mu[t*K*K+y0*K : t*K*K+y1*K] {
			lw.trans[i] += scale * v
		}
	}
}
