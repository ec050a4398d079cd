// Package crftest builds random tiny chain CRF problems and solves them by
// brute-force enumeration of every label path, the reference the crf and
// train packages are tested against; CompareDatasets says where two
// datasets differ, for the tests of every reader that builds one.
package crftest

import (
	"math"
	"math/rand/v2"

	"github.com/dualcrf/dualcrf/crf"
)

// RandomDataset returns n random sentences of lengths 1..maxT over A
// attributes and K labels, with 1..3 attributes per token, real values when
// real is set, and random gold labels.
func RandomDataset(rng *rand.Rand, n, maxT, A, K int, real bool) *crf.Dataset {
	d := &crf.Dataset{NumAttrs: A, NumLabels: K, SentStart: []int{0}, AttrStart: []int{0}}
	for i := 0; i < n; i++ {
		T := 1 + rng.IntN(maxT)
		for t := 0; t < T; t++ {
			na := 1 + rng.IntN(3)
			for j := 0; j < na; j++ {
				d.Attrs = append(d.Attrs, int32(rng.IntN(A)))
				if real {
					d.Values = append(d.Values, rng.NormFloat64())
				}
			}
			d.AttrStart = append(d.AttrStart, len(d.Attrs))
			d.Labels = append(d.Labels, int32(rng.IntN(K)))
		}
		d.SentStart = append(d.SentStart, len(d.Labels))
	}
	for a := 0; a < A; a++ {
		d.AttrNames = append(d.AttrNames, "a"+string(rune('A'+a%26)))
	}
	for y := 0; y < K; y++ {
		d.LabelNames = append(d.LabelNames, string(rune('a'+y)))
	}
	return d
}

// RandomWeights returns a weight vector of layout lay with entries of
// standard deviation sd.
func RandomWeights(rng *rand.Rand, lay crf.Layout, sd float64) []float64 {
	w := make([]float64, lay.Dim())
	for i := range w {
		w[i] = sd * rng.NormFloat64()
	}
	return w
}

// RandomFree returns a sparse U over A attributes and K labels in which
// each attribute–label pair is free with probability p (some attributes
// then have no free label, some all K).
func RandomFree(rng *rand.Rand, A, K int, p float64) *crf.FreeRows {
	f := &crf.FreeRows{Start: make([]int, 1, A+1)}
	for a := 0; a < A; a++ {
		for y := 0; y < K; y++ {
			if rng.Float64() < p {
				f.Labels = append(f.Labels, int32(y))
			}
		}
		f.Start = append(f.Start, len(f.Labels))
	}
	return f
}

// Joint is the explicit distribution of a sentence's label paths.
type Joint struct {
	T, K  int
	Paths [][]int32 // every path, in lexicographic order
	Score []float64 // unnormalised log-score of each path
	LogZ  float64   // log Σ exp(Score)
	Prob  []float64 // p(path)
}

// Enumerate lists every label path of sentence s under weights w.
func Enumerate(lay crf.Layout, w []float64, s crf.Sentence) *Joint {
	T, K := s.Len(), lay.NumLabels
	j := &Joint{T: T, K: K}
	path := make([]int32, T)
	for {
		j.Paths = append(j.Paths, append([]int32(nil), path...))
		j.Score = append(j.Score, crf.Dot(w, lay, s, path))
		t := T - 1
		for t >= 0 {
			path[t]++
			if int(path[t]) < K {
				break
			}
			path[t] = 0
			t--
		}
		if t < 0 {
			break
		}
	}
	m := math.Inf(-1)
	for _, v := range j.Score {
		m = max(m, v)
	}
	z := 0.0
	for _, v := range j.Score {
		z += math.Exp(v - m)
	}
	j.LogZ = m + math.Log(z)
	for _, v := range j.Score {
		j.Prob = append(j.Prob, math.Exp(v-j.LogZ))
	}
	return j
}

// Marginals returns the clique marginals (crf.BlockLen layout) and the node
// marginals (T×K) of the joint.
func (j *Joint) Marginals() (block, node []float64) {
	T, K := j.T, j.K
	block = make([]float64, crf.BlockLen(T, K))
	node = make([]float64, T*K)
	for i, p := range j.Paths {
		for t, y := range p {
			node[t*K+int(y)] += j.Prob[i]
			if t+1 < T {
				block[(t*K+int(y))*K+int(p[t+1])] += j.Prob[i]
			}
		}
	}
	if T == 1 {
		copy(block, node)
	}
	return block, node
}

// Best returns the most probable path (first in lexicographic order on ties)
// and its score.
func (j *Joint) Best() ([]int32, float64) {
	b := 0
	for i, v := range j.Score {
		if v > j.Score[b] {
			b = i
		}
	}
	return j.Paths[b], j.Score[b]
}

// Entropy returns −Σ p log p over paths.
func (j *Joint) Entropy() float64 {
	h := 0.0
	for _, p := range j.Prob {
		if p > 0 {
			h -= p * math.Log(p)
		}
	}
	return h
}

// KL returns Σ p log(p/q) over paths of two joints of the same sentence.
func KL(p, q *Joint) float64 {
	d := 0.0
	for i, pv := range p.Prob {
		if pv > 0 {
			d += pv * (math.Log(pv) - math.Log(q.Prob[i]))
		}
	}
	return d
}
