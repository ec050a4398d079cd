package decode

import (
	"context"
	"fmt"

	"github.com/dualcrf/dualcrf/crf"
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

// Predictions holds the decoder's output for a dataset, in its order.
type Predictions struct {
	Labels     []int32   // per token: predicted label id (into the model's labels)
	Confidence []float64 // per token: p(y_t = pred | x), with Options.Marginals
	LogProb    []float64 // per sentence: log p(pred | x), with Options.Marginals
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
func Decode(ctx context.Context, m *crf.Model, d *crf.Dataset, opts Options) (*Predictions, error) {
	if d.NumAttrs > m.Layout.NumAttrs {
		return nil, fmt.Errorf("decode: dataset has %d attributes, model %d: remap it first", d.NumAttrs, m.Layout.NumAttrs)
	}
	n := d.Len()
	p := &Predictions{Labels: make([]int32, d.NumTokens())}
	if opts.Marginals {
		p.Confidence = make([]float64, d.NumTokens())
		p.LogProb = make([]float64, n)
	}
	K := m.Layout.NumLabels
	err := crf.Parallel(ctx, n, opts.Workers, func() func(int) {
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
