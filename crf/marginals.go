package crf

import "math"

// NodeFromBlock derives the node marginals (T×K, into dst) of a block of
// clique marginals (see BlockLen): node t is the row sum of edge t, the last
// node the column sum of the last edge.
func NodeFromBlock(mu []float64, T, K int, dst []float64) {
	if T == 1 {
		copy(dst[:K], mu[:K])
		return
	}
	for t := 0; t < T-1; t++ {
		blk := mu[t*K*K : (t+1)*K*K]
		row := dst[t*K : (t+1)*K]
		for y := 0; y < K; y++ {
			s := 0.0
			for _, v := range blk[y*K : (y+1)*K] {
				s += v
			}
			row[y] = s
		}
	}
	blk := mu[(T-2)*K*K : (T-1)*K*K]
	last := dst[(T-1)*K : T*K]
	clear(last)
	for y := 0; y < K; y++ {
		for y2, v := range blk[y*K : (y+1)*K] {
			last[y2] += v
		}
	}
}

// xlogx returns x·log x with 0·log 0 = 0.
func xlogx(x float64) float64 {
	if x <= 0 {
		return 0
	}
	return x * math.Log(x)
}

// Entropy returns the junction-tree entropy H̃(μ) = Σ_edges H(μ_e) −
// Σ_separators H(μ_s) of a block of chain marginals; node is T×K scratch
// holding (or receiving, if fill) the node marginals.
func Entropy(mu []float64, T, K int, node []float64, fill bool) float64 {
	if fill {
		NodeFromBlock(mu, T, K, node)
	}
	h := 0.0
	for _, v := range mu[:BlockLen(T, K)] {
		h -= xlogx(v)
	}
	for _, v := range node[K : max(T-1, 1)*K] { // separators: nodes 1..T-2
		h += xlogx(v)
	}
	return h
}

// AddExpectedNodes adds the part of scale·E_μ[F(x,·)] that the node
// marginals (T×K) give: the rows of s's attributes, bias, start and end —
// all of AddExpected but the transitions.
func AddExpectedNodes(g []float64, lay Layout, s Sentence, node []float64, scale float64) {
	K := lay.NumLabels
	T := s.Len()
	for t := 0; t < T; t++ {
		p := node[t*K : (t+1)*K]
		for j := s.AttrStart[t]; j < s.AttrStart[t+1]; j++ {
			a := s.Attrs[j]
			lo, hi := lay.Span(a)
			u := g[lo:hi]
			c := scale
			if s.Values != nil {
				c *= s.Values[j]
			}
			if lay.Free != nil {
				for k, y := range lay.RowLabels(a) {
					u[k] += c * p[y]
				}
				continue
			}
			for y, pv := range p {
				u[y] += c * pv
			}
		}
	}
	if !lay.NoBias {
		b := g[lay.Bias() : lay.Bias()+K]
		for t := 0; t < T; t++ {
			for y, pv := range node[t*K : (t+1)*K] {
				b[y] += scale * pv
			}
		}
		st := g[lay.Start() : lay.Start()+K]
		for y, pv := range node[:K] {
			st[y] += scale * pv
		}
		en := g[lay.End() : lay.End()+K]
		for y, pv := range node[(T-1)*K : T*K] {
			en[y] += scale * pv
		}
	}
}

// AddExpected adds scale·E_μ[F(x,·)] to the weight-shaped vector g, given the
// node marginals (T×K) and the block of clique marginals of sentence s (the
// edges are ignored for T = 1). Only the rows of s's attributes, B, bias,
// start and end are touched.
func AddExpected(g []float64, lay Layout, s Sentence, node, block []float64, scale float64) {
	AddExpectedNodes(g, lay, s, node, scale)
	K := lay.NumLabels
	T := s.Len()
	if T < 2 {
		return
	}
	tr := g[lay.Trans() : lay.Trans()+K*K]
	for t := 0; t < T-1; t++ {
		for i, v := range block[t*K*K : (t+1)*K*K] {
			tr[i] += scale * v
		}
	}
}

// AddFeatures adds scale·F(x,y) for the label path y to g; a feature whose
// pair is not free in a sparse layout is left out.
func AddFeatures(g []float64, lay Layout, s Sentence, path []int32, scale float64) {
	K := lay.NumLabels
	T := s.Len()
	for t := 0; t < T; t++ {
		y := int(path[t])
		for j := s.AttrStart[t]; j < s.AttrStart[t+1]; j++ {
			c := scale
			if s.Values != nil {
				c *= s.Values[j]
			}
			if k := lay.Index(s.Attrs[j], y); k >= 0 {
				g[k] += c
			}
		}
		if !lay.NoBias {
			g[lay.Bias()+y] += scale
		}
		if t > 0 {
			g[lay.Trans()+int(path[t-1])*K+y] += scale
		}
	}
	if !lay.NoBias && T > 0 {
		g[lay.Start()+int(path[0])] += scale
		g[lay.End()+int(path[T-1])] += scale
	}
}

// Dot returns w·F(x,y) for the label path y.
func Dot(w []float64, lay Layout, s Sentence, path []int32) float64 {
	K := lay.NumLabels
	T := s.Len()
	d := 0.0
	for t := 0; t < T; t++ {
		y := int(path[t])
		for j := s.AttrStart[t]; j < s.AttrStart[t+1]; j++ {
			c := 1.0
			if s.Values != nil {
				c = s.Values[j]
			}
			if k := lay.Index(s.Attrs[j], y); k >= 0 {
				d += c * w[k]
			}
		}
		if !lay.NoBias {
			d += w[lay.Bias()+y]
		}
		if t > 0 {
			d += w[lay.Trans()+int(path[t-1])*K+y]
		}
	}
	if !lay.NoBias && T > 0 {
		d += w[lay.Start()+int(path[0])] + w[lay.End()+int(path[T-1])]
	}
	return d
}
