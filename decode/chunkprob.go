package decode

import (
	"math"

	"github.com/dualcrf/dualcrf/crf"
)

// chunkProber computes the marginal probability of a predicted chunk: the
// probability, under the lattice's distribution, that the chunk (its span
// and type) is one of the chunks of the label sequence, chunks being read
// by the rules of a Scheme (as eval reads them). That sums over every
// labelling with the chunk — the tokens before and after it included,
// since they decide where it starts and ends — so it is neither the
// product of its tokens' marginals nor the probability of its labels
// alone.
type chunkProber struct {
	K    int
	tags []tag
	// startAt[y'·K+y]: a chunk starts at y after y'; startFirst[y]: at
	// the first token. endAt[y·K+y']: a chunk ends between y and y'.
	startAt, endAt        []bool
	startFirst            []bool
	v, v2, alpha, beta, w []float64
}

func newChunkProber(labels []string, s Scheme) *chunkProber {
	K := len(labels)
	c := &chunkProber{K: K, tags: make([]tag, K)}
	start, end := startOfChunk, endOfChunk
	if s != SchemeConlleval {
		start, end = startOfChunkIOBES, endOfChunkIOBES
	}
	for y, l := range labels {
		c.tags[y] = splitTag(l)
	}
	c.startAt, c.endAt = make([]bool, K*K), make([]bool, K*K)
	c.startFirst = make([]bool, K)
	for y, t := range c.tags {
		c.startFirst[y] = start(outside, t)
		for y2, t2 := range c.tags {
			c.startAt[y*K+y2] = start(t, t2)
			c.endAt[y*K+y2] = end(t, t2)
		}
	}
	c.v, c.v2, c.alpha, c.beta = make([]float64, K), make([]float64, K), make([]float64, K), make([]float64, K)
	c.w = make([]float64, K*K)
	return c
}

// chunks calls fn with the first and last token of each chunk of path, as
// eval's chunker reads them: a chunk starts where the scheme's start rule
// holds and goes on while the labels keep its type and neither a chunk
// ends nor a new one starts; the sentence's end ends it.
func (c *chunkProber) chunks(path []int32, fn func(s, e int)) {
	K := c.K
	for s := 0; s < len(path); s++ {
		y := int(path[s])
		if s == 0 && !c.startFirst[y] || s > 0 && !c.startAt[int(path[s-1])*K+y] {
			continue
		}
		typ := c.tags[y].typ
		e := s
		for e+1 < len(path) && c.inside(int(path[e]), int(path[e+1]), typ) {
			e++
		}
		fn(s, e)
	}
}

// inside reports whether label y continues a chunk of type typ after
// label prev.
func (c *chunkProber) inside(prev, y int, typ string) bool {
	i := prev*c.K + y
	return c.tags[y].typ == typ && !c.endAt[i] && !c.startAt[i]
}

// logProb returns the log-probability that tokens s..e form a chunk of
// the type of label first (the chunk's first label) under the lattice's
// last forward–backward (whose log Z is logZ): the log-sum over the
// labellings where a chunk of that type starts at s, continues to e and
// ends there.
func (c *chunkProber) logProb(lat *crf.Lattice, s, e int, first int32, logZ float64) float64 {
	K, T := c.K, lat.T
	node, trans := lat.Node(), lat.Trans()
	typ := c.tags[first].typ
	inf := math.Inf(-1)
	v := c.v
	// v(y) = log-sum of the paths of tokens 0..s ending in y where a chunk
	// of type typ starts at s.
	if s == 0 {
		lat.LogMessages(0, c.alpha, c.beta)
		for y := 0; y < K; y++ {
			v[y] = inf
			if c.startFirst[y] && c.tags[y].typ == typ {
				v[y] = c.alpha[y]
			}
		}
	} else {
		lat.LogMessages(s-1, c.alpha, c.beta)
		for y := 0; y < K; y++ {
			v[y] = inf
			if c.tags[y].typ != typ {
				continue
			}
			w := c.w[:0]
			for y0 := 0; y0 < K; y0++ {
				if c.startAt[y0*K+y] {
					w = append(w, c.alpha[y0]+trans[y0*K+y])
				}
			}
			v[y] = crf.LogSumExp(w) + node[s*K+y]
		}
	}
	// Extend through s+1..e, every token continuing the chunk.
	v2 := c.v2
	for t := s + 1; t <= e; t++ {
		for y := 0; y < K; y++ {
			w := c.w[:0]
			for y0 := 0; y0 < K; y0++ {
				if c.inside(y0, y, typ) {
					w = append(w, v[y0]+trans[y0*K+y])
				}
			}
			v2[y] = crf.LogSumExp(w) + node[t*K+y]
		}
		v, v2 = v2, v
	}
	// The chunk ends after e: at the end of the sentence, or where the
	// next label does not continue it.
	w := c.w[:0]
	if e == T-1 {
		w = append(w, v...)
	} else {
		lat.LogMessages(e+1, c.alpha, c.beta)
		for y := 0; y < K; y++ {
			if math.IsInf(v[y], -1) {
				continue
			}
			for y2 := 0; y2 < K; y2++ {
				if !c.inside(y, y2, typ) {
					w = append(w, v[y]+trans[y*K+y2]+node[(e+1)*K+y2]+c.beta[y2])
				}
			}
		}
	}
	return crf.LogSumExp(w) - logZ
}
