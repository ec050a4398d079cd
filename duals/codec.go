package duals

import "math"

// The Float32 codec's Go loops (the twins of the vector kernels in
// codec_amd64.s, which compute exactly the same bits).
//
// A block of n entries over K labels is a first clique of F entries
// (F = K for a one-token sentence's node, n = K; else the first edge,
// F = K²) followed by (n−F)/K² edges. Encoded, the first clique is its
// marginals rounded to float32, and every later edge's row y holds the
// conditionals μ_t(y,·)/μ_t(y) rounded to float32 (a row whose mass is
// below 2^-1000, or not a number, is written as all ones: uniform).
//
// Decoded, in float64:
//
//   - the first clique is its float32 entries times 1/z, z their sum
//     (uniform 1/F if z is not positive);
//   - edge t's row y is its float32 conditionals times a_t(y)/r_y, r_y
//     their sum and a_t(y) the node marginal of the previous edge's
//     columns (a_t(y)/K for each entry if r_y is not positive).
//
// Every sum is taken in one order, the vector loop's: a row's entries
// j = 0, 1, … go to lane j mod 4 in turn, and the row's sum is
// (lane 0 + lane 2) + (lane 1 + lane 3); the first edge's z adds its row
// sums in row order; a node marginal adds its column's entries in the
// order the rows are decoded. To decode without scratch space the node
// marginals a_t of edge t are accumulated in the first K entries of edge
// t's place in mu, and edge t's rows are decoded last to first, so that
// row 0, which overwrites them, comes when only a_t(0) is still needed.

// tinyRow is the least row mass whose conditionals Encode divides out; a
// row below it is written uniform (its mass is negligible: the decoded
// block gives it a_t(y)/K per entry, as a chain must).
const tinyRow = 0x1p-1000

// firstLen returns the entries of a block's first clique: K for a block of
// K entries (a one-token sentence's node marginals), K² otherwise.
func firstLen(n, K int) int {
	if n == K {
		return K
	}
	return K * K
}

// rowSum64 returns the sum of x in the vector loops' order.
func rowSum64(x []float64) float64 {
	var l [4]float64
	for j, v := range x {
		l[j&3] += v
	}
	return (l[0] + l[2]) + (l[1] + l[3])
}

// rowSum32 returns the sum of x, each entry in float64, in the vector
// loops' order.
func rowSum32(x []float32) float64 {
	var l [4]float64
	for j, v := range x {
		l[j&3] += float64(v)
	}
	return (l[0] + l[2]) + (l[1] + l[3])
}

// encode32Go writes the Float32 encoding of the block mu (K labels) into q.
func encode32Go(q []float32, mu []float64, K int) {
	n := len(mu)
	q = q[:n]
	F := firstLen(n, K)
	for j, v := range mu[:F] {
		q[j] = float32(v)
	}
	for r := F; r < n; r += K {
		row, out := mu[r:r+K], q[r:r+K]
		s := rowSum64(row)
		if !(s >= tinyRow) || math.IsInf(s, 0) {
			for j := range out {
				out[j] = 1
			}
			continue
		}
		inv := 1 / s
		for j, v := range row {
			out[j] = float32(v * inv)
		}
	}
}

// decode32Go sets mu to the block q encodes (K labels).
func decode32Go(mu []float64, q []float32, K int) {
	n := len(mu)
	q = q[:n]
	F := firstLen(n, K)
	KK := K * K
	// The first clique, its rows in order; its columns summed into the
	// next edge's first K entries when there is one.
	z := 0.0
	for r := 0; r < F; r += K {
		z += rowSum32(q[r : r+K])
	}
	more := n > F
	var next []float64
	if more {
		next = mu[KK : KK+K]
		clear(next)
	}
	if !(z > 0) {
		u := 1 / float64(F)
		for r := 0; r < F; r += K {
			decodeRowUniform(mu[r:r+K], u, next)
		}
	} else {
		inv := 1 / z
		for r := 0; r < F; r += K {
			decodeRow(mu[r:r+K], q[r:r+K], inv, next)
		}
	}
	// Edge t ≥ 1: a_t in mu[t·K² : t·K²+K]; rows last to first.
	for at := KK; at < n; at += KK {
		next = nil
		if at+KK < n {
			next = mu[at+KK : at+KK+K]
			clear(next)
		}
		for y := K - 1; y >= 0; y-- {
			r := at + y*K
			a := mu[at+y]
			s := rowSum32(q[r : r+K])
			if !(s > 0) {
				decodeRowUniform(mu[r:r+K], a/float64(K), next)
				continue
			}
			decodeRow(mu[r:r+K], q[r:r+K], a/s, next)
		}
	}
}

// decodeRow sets out[j] = float64(q[j])·f and, when next is not nil, adds
// out into next.
func decodeRow(out []float64, q []float32, f float64, next []float64) {
	for j, v := range q {
		x := float64(v) * f
		out[j] = x
		if next != nil {
			next[j] += x
		}
	}
}

// decodeRowUniform sets every entry of out to u and, when next is not
// nil, adds out into next.
func decodeRowUniform(out []float64, u float64, next []float64) {
	for j := range out {
		out[j] = u
		if next != nil {
			next[j] += u
		}
	}
}

// decode32MarginalsGo is decode32Go on a block of T tokens that also sets
// node (T×K) to the
// chain's node marginals — the first node the rows of the first edge
// (their sums of conditionals times 1/z), every later one the columns of
// the edge before it, as the decoding forms them — and sum (K×K) to the
// decoded edges summed over the positions, each entry's terms in edge
// order (sum is left alone for a one-token sentence, whose node is mu).
// The rows of edge t ≥ 1 are decoded last to first, as decode32Go does.
func decode32MarginalsGo(mu []float64, q []float32, T, K int, node, sum []float64) {
	n := len(mu)
	q = q[:n]
	if T == 1 {
		// One token: the node is the block.
		decode32Go(mu, q, K)
		copy(node[:K], mu)
		return
	}
	F := K * K
	KK := K * K
	sum = sum[:KK]
	clear(sum)
	z := 0.0
	for y := 0; y < K; y++ {
		node[y] = rowSum32(q[y*K : y*K+K])
		z += node[y]
	}
	next := node[K : 2*K]
	clear(next)
	if !(z > 0) {
		u := 1 / float64(F)
		for y := 0; y < K; y++ {
			node[y] = u * float64(K)
			decodeRowSum(mu[y*K:y*K+K], nil, u, next, sum[y*K:y*K+K])
		}
	} else {
		inv := 1 / z
		for y := 0; y < K; y++ {
			node[y] *= inv
			decodeRowSum(mu[y*K:y*K+K], q[y*K:y*K+K], inv, next, sum[y*K:y*K+K])
		}
	}
	for t, at := 1, KK; at < n; t, at = t+1, at+KK {
		a := node[t*K : t*K+K]
		next = node[(t+1)*K : (t+2)*K]
		clear(next)
		for y := K - 1; y >= 0; y-- {
			r := at + y*K
			s := rowSum32(q[r : r+K])
			if !(s > 0) {
				decodeRowSum(mu[r:r+K], nil, a[y]/float64(K), next, sum[y*K:y*K+K])
				continue
			}
			decodeRowSum(mu[r:r+K], q[r:r+K], a[y]/s, next, sum[y*K:y*K+K])
		}
	}
}

// decodeRowSum sets out[j] = float64(q[j])·f (f when q is nil) and adds
// out into next and into sum.
func decodeRowSum(out []float64, q []float32, f float64, next, sum []float64) {
	for j := range out {
		x := f
		if q != nil {
			x = float64(q[j]) * f
		}
		out[j] = x
		next[j] += x
		sum[j] += x
	}
}
