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
//     columns (a_t(y)/K for each entry if r_y is not positive): the rows'
//     factors first, then the rows (decodeEdgeGo).
//
// Every sum is taken in one order, the vector loop's: a row's entries
// j = 0, 1, … go to lane j mod 4 in turn, and the row's sum is
// (lane 0 + lane 2) + (lane 1 + lane 3); the first edge's z adds its row
// sums in row order; a node marginal adds its column's entries in row
// order. To decode without scratch space the node marginals a_t of edge t
// are accumulated in the first K entries of edge t's place in mu, and the
// rows' factors kept in its last K (decodeEdgeGo).

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
			decodeRowAcc(mu[r:r+K], nil, u, next, nil)
		}
	} else {
		inv := 1 / z
		for r := 0; r < F; r += K {
			decodeRowAcc(mu[r:r+K], q[r:r+K], inv, next, nil)
		}
	}
	// Edge t ≥ 1: a_t in mu[t·K² : t·K²+K].
	for at := KK; at < n; at += KK {
		next = nil
		if at+KK < n {
			next = mu[at+KK : at+KK+K]
			clear(next)
		}
		decodeEdgeGo(mu[at:at+KK], q[at:at+KK], K, mu[at:at+K], next, nil)
	}
}

// decodeEdgeGo decodes an edge of K×K conditionals q with node marginals a
// into mu (K×K), adding each row into next and into sum's row when they
// are not nil. First the rows' factors: f_y = a_y/r_y, r_y the sum of row
// y's conditionals, or −(a_y/K) when r_y is not positive (the row is then
// uniform: the sign bit says so), kept in the place of mu's last row; then
// the rows in order, each reading its factor before it is written — so a
// may be mu's first row, and the last row overwrites the factors when
// they are no longer needed.
func decodeEdgeGo(mu []float64, q []float32, K int, a, next, sum []float64) {
	f := mu[(K-1)*K : K*K]
	for y := 0; y < K; y++ {
		if s := rowSum32(q[y*K : y*K+K]); s > 0 {
			f[y] = a[y] / s
		} else {
			f[y] = -(a[y] / float64(K))
		}
	}
	for y := 0; y < K; y++ {
		fy := f[y]
		var sr []float64
		if sum != nil {
			sr = sum[y*K : y*K+K]
		}
		if math.Signbit(fy) {
			decodeRowAcc(mu[y*K:y*K+K], nil, -fy, next, sr)
		} else {
			decodeRowAcc(mu[y*K:y*K+K], q[y*K:y*K+K], fy, next, sr)
		}
	}
}

// decodeRowAcc sets out[j] = float64(q[j])·f (f when q is nil) and adds
// out into next and sum when they are not nil.
func decodeRowAcc(out []float64, q []float32, f float64, next, sum []float64) {
	for j := range out {
		x := f
		if q != nil {
			x = float64(q[j]) * f
		}
		out[j] = x
		if next != nil {
			next[j] += x
		}
		if sum != nil {
			sum[j] += x
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
			decodeRowAcc(mu[y*K:y*K+K], nil, u, next, sum[y*K:y*K+K])
		}
	} else {
		inv := 1 / z
		for y := 0; y < K; y++ {
			node[y] *= inv
			decodeRowAcc(mu[y*K:y*K+K], q[y*K:y*K+K], inv, next, sum[y*K:y*K+K])
		}
	}
	for t, at := 1, KK; at < n; t, at = t+1, at+KK {
		next = node[(t+1)*K : (t+2)*K]
		clear(next)
		decodeEdgeGo(mu[at:at+KK], q[at:at+KK], K, node[t*K:t*K+K], next, sum)
	}
}
