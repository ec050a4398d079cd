package decode

import (
	"context"
	"fmt"
	"sync"

	"github.com/dualcrf/dualcrf/crf"
	"github.com/dualcrf/dualcrf/internal/num"
	"github.com/dualcrf/dualcrf/tables"
)

// Options configure Decode.
type Options struct {
	// Marginals asks for the marginal probability of each predicted label
	// and the log-probability of each predicted sentence (one forward–backward
	// per sentence on top of Viterbi).
	Marginals bool
	// Workers is the number of goroutines; 0 means GOMAXPROCS.
	Workers int
}

// Remap returns, for each attribute id of d, the model's id for the same
// attribute name, or -1 when the model does not know it. When d uses the
// model's own vocabulary the map is the identity and Remap returns nil.
func Remap(m *crf.Model, d *crf.Dataset) []int32 {
	same := len(d.AttrNames) <= len(m.AttrNames)
	for a, n := range d.AttrNames {
		if !same || m.AttrNames[a] != n {
			same = false
			break
		}
	}
	if same {
		return nil
	}
	index := make(map[string]int32, len(m.AttrNames))
	for a, n := range m.AttrNames {
		index[n] = int32(a)
	}
	out := make([]int32, len(d.AttrNames))
	for a, n := range d.AttrNames {
		if id, ok := index[n]; ok {
			out[a] = id
		} else {
			out[a] = -1
		}
	}
	return out
}

// Apply returns a copy of d's sentences whose attribute ids are the model's
// (unknown attributes dropped), sharing labels; with a nil map it returns d.
func Apply(d *crf.Dataset, remap []int32, numAttrs int, names []string) *crf.Dataset {
	if remap == nil {
		return d
	}
	out := &crf.Dataset{NumAttrs: numAttrs, NumLabels: d.NumLabels, AttrNames: names, LabelNames: d.LabelNames,
		SentStart: d.SentStart, Labels: d.Labels, AttrStart: make([]int, 1, len(d.AttrStart))}
	out.Attrs = make([]int32, 0, len(d.Attrs))
	if d.Values != nil {
		out.Values = make([]float64, 0, len(d.Values))
	}
	for tok := 0; tok+1 < len(d.AttrStart); tok++ {
		for j := d.AttrStart[tok]; j < d.AttrStart[tok+1]; j++ {
			if id := remap[d.Attrs[j]]; id >= 0 {
				out.Attrs = append(out.Attrs, id)
				if d.Values != nil {
					out.Values = append(out.Values, d.Values[j])
				}
			}
		}
		out.AttrStart = append(out.AttrStart, len(out.Attrs))
	}
	return out
}

// Decode runs Viterbi on every sentence of d (whose attribute ids must be the
// model's: see Remap and Apply), in parallel, keeping d's order.
func Decode(ctx context.Context, m *crf.Model, d *crf.Dataset, opts Options) (*tables.Predictions, error) {
	if d.NumAttrs > m.Layout.NumAttrs {
		return nil, fmt.Errorf("decode: dataset has %d attributes, model %d: remap it first", d.NumAttrs, m.Layout.NumAttrs)
	}
	n := d.Len()
	p := &tables.Predictions{Labels: make([]int32, d.NumTokens())}
	if opts.Marginals {
		p.Confidence = make([]float64, d.NumTokens())
		p.LogProb = make([]float64, n)
	}
	K := m.Layout.NumLabels
	err := num.Parallel(ctx, n, opts.Workers, func() func(int) {
		lat := crf.NewLattice(K)
		var node []float64
		return func(i int) {
			s := d.Sentence(i)
			off := d.SentStart[i]
			T := s.Len()
			if T == 0 {
				return
			}
			path := p.Labels[off : off+T]
			lat.SetScores(m.Layout, m.Weights, s)
			score := lat.Viterbi(path)
			if !opts.Marginals {
				return
			}
			logZ := lat.ForwardBackward()
			p.LogProb[i] = score - logZ
			node = grow(node, T*K)
			lat.NodeMarginals(node)
			for t, y := range path {
				p.Confidence[off+t] = node[t*K+int(y)]
			}
		}
	})
	if err != nil {
		return nil, err
	}
	return p, nil
}

func grow(s []float64, n int) []float64 {
	if cap(s) < n {
		return make([]float64, n)
	}
	return s[:n]
}

// Source yields a feature table in chunks of whole sentences, in input
// order; *tables.FeatureReader and *featurize.TextReader are Sources.
type Source interface {
	Next() bool
	Chunk() *tables.FeatureTable
	Err() error
}

// Stream decodes every chunk of src with m and calls write, on the
// caller's goroutine, with each chunk and its predictions in input order.
// Reading, decoding (on opts.Workers goroutines) and writing overlap, one
// chunk each, so at most three chunks are in memory at a time: the one
// being read, the one being decoded and the one being written. write may
// keep nothing of a chunk after it returns.
//
// The chunks given to write have the model's attribute ids (matched by
// name, unknown attributes dropped) and keep their own gold labels and
// label names. Stream returns what the model covered of the input (see
// tables.Coverage); deciding what a mismatch means is the caller's.
func Stream(ctx context.Context, m *crf.Model, src Source, opts Options, write func(*tables.FeatureTable, *tables.Predictions) error) (tables.Coverage, error) {
	parent := ctx
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	type decoded struct {
		t *tables.FeatureTable
		p *tables.Predictions
	}
	read := make(chan *tables.FeatureTable)
	out := make(chan decoded)
	rm := newRemapper(m)
	var readErr, decodeErr error
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		defer close(read)
		for src.Next() {
			t := src.Chunk()
			rm.apply(t)
			select {
			case read <- t:
			case <-ctx.Done():
				return
			}
		}
		readErr = src.Err()
	}()
	go func() {
		defer wg.Done()
		defer close(out)
		for t := range read {
			p, err := Decode(ctx, m, t.Data, opts)
			if err != nil {
				decodeErr = err
				cancel()
				return
			}
			select {
			case out <- decoded{t, p}:
			case <-ctx.Done():
				return
			}
		}
	}()
	var writeErr error
	for c := range out {
		if writeErr = write(c.t, c.p); writeErr != nil {
			cancel()
			break
		}
	}
	wg.Wait()
	for _, err := range []error{writeErr, readErr, parent.Err(), decodeErr} {
		if err != nil {
			return rm.cov, err
		}
	}
	return rm.cov, nil
}

// remapper turns the attribute ids of a Source's chunks into the model's,
// and counts what the model covers. A Source's ids are stable across
// chunks and its name lists only grow, so the map is extended, never
// rebuilt.
type remapper struct {
	m          *crf.Model
	index      map[string]int32 // model attribute name → id, built when first needed
	ids        []int32          // table attribute id → model id, -1 when unknown
	identity   bool             // so far every table attribute id is the model's own
	labelKnown []bool           // table label id → whether the model has it
	modelLabel map[string]bool
	cov        tables.Coverage
}

func newRemapper(m *crf.Model) *remapper {
	r := &remapper{m: m, identity: true, modelLabel: make(map[string]bool, len(m.LabelNames))}
	for _, l := range m.LabelNames {
		r.modelLabel[l] = true
	}
	return r
}

// apply rewrites chunk t in the model's attribute ids, dropping those the
// model does not know, and counts attributes and gold labels.
func (r *remapper) apply(t *tables.FeatureTable) {
	d := t.Data
	r.extend(d.AttrNames, d.LabelNames)
	r.cov.Tokens += d.NumTokens()
	r.cov.Attrs += len(d.Attrs) + t.Dropped
	r.cov.UnknownAttrs += t.Dropped
	if !r.identity {
		r.cov.UnknownAttrs += r.compact(d)
	}
	d.NumAttrs, d.AttrNames = r.m.Layout.NumAttrs, r.m.AttrNames
	for _, y := range d.Labels {
		if y >= 0 {
			r.cov.AddLabel(d.LabelNames[y], r.labelKnown[y])
		}
	}
}

// extend maps the attribute and label names not seen in earlier chunks.
func (r *remapper) extend(attrs, labels []string) {
	for a := len(r.ids); a < len(attrs); a++ {
		if r.identity && a < len(r.m.AttrNames) && attrs[a] == r.m.AttrNames[a] {
			r.ids = append(r.ids, int32(a))
			continue
		}
		r.identity = false
		if r.index == nil {
			r.index = make(map[string]int32, len(r.m.AttrNames))
			for id, n := range r.m.AttrNames {
				r.index[n] = int32(id)
			}
		}
		id, ok := r.index[attrs[a]]
		if !ok {
			id = -1
		}
		r.ids = append(r.ids, id)
	}
	for y := len(r.labelKnown); y < len(labels); y++ {
		r.labelKnown = append(r.labelKnown, r.modelLabel[labels[y]])
	}
}

// compact rewrites d's attributes in place in the model's ids, leaving out
// unknown ones, and returns how many it left out.
func (r *remapper) compact(d *crf.Dataset) int {
	n := 0
	lo := d.AttrStart[0]
	for tok := 0; tok+1 < len(d.AttrStart); tok++ {
		hi := d.AttrStart[tok+1]
		for j := lo; j < hi; j++ {
			if id := r.ids[d.Attrs[j]]; id >= 0 {
				d.Attrs[n] = id
				if d.Values != nil {
					d.Values[n] = d.Values[j]
				}
				n++
			}
		}
		lo = hi
		d.AttrStart[tok+1] = n
	}
	dropped := len(d.Attrs) - n
	d.Attrs = d.Attrs[:n]
	if d.Values != nil {
		d.Values = d.Values[:n]
	}
	return dropped
}
