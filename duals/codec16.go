package duals

import "math"

// The BFloat16 codec's Go loops: those of Float32 (codec.go) with every
// stored number a bfloat16 — float32's sign, 8 exponent bits and top 7
// significand bits — rounded from the float32 nearest the number, to the
// nearest with ties to even. Each function is its float32 namesake's with
// the numbers' type and rounding changed, every sum in the same order.

// bf16One is 1 as a bfloat16.
const bf16One = 0x3f80

// bf16Bits returns the bfloat16 nearest float32(x), ties to even; x is
// finite and not negative (a probability or a conditional).
func bf16Bits(x float64) uint16 {
	b := math.Float32bits(float32(x))
	b += 0x7fff + (b>>16)&1
	return uint16(b >> 16)
}

// bf16Value returns the value of the bfloat16 c.
func bf16Value(c uint16) float64 { return float64(math.Float32frombits(uint32(c) << 16)) }

// rowSum16 returns the sum of x, each entry's value in float64, in the
// vector loops' order.
func rowSum16(x []uint16) float64 {
	var l [4]float64
	for j, v := range x {
		l[j&3] += bf16Value(v)
	}
	return (l[0] + l[2]) + (l[1] + l[3])
}

// encode16Go writes the BFloat16 encoding of the block mu (K labels) into q.
func encode16Go(q []uint16, mu []float64, K int) {
	n := len(mu)
	q = q[:n]
	F := firstLen(n, K)
	for j, v := range mu[:F] {
		q[j] = bf16Bits(v)
	}
	for r := F; r < n; r += K {
		row, out := mu[r:r+K], q[r:r+K]
		s := rowSum64(row)
		if !(s >= tinyRow) || math.IsInf(s, 0) {
			for j := range out {
				out[j] = bf16One
			}
			continue
		}
		inv := 1 / s
		for j, v := range row {
			out[j] = bf16Bits(v * inv)
		}
	}
}

// decode16Go sets mu to the block q encodes (K labels).
func decode16Go(mu []float64, q []uint16, K int) {
	n := len(mu)
	q = q[:n]
	F := firstLen(n, K)
	KK := K * K
	// The first clique, its rows in order; its columns summed into the
	// next edge's first K entries when there is one.
	z := 0.0
	for r := 0; r < F; r += K {
		z += rowSum16(q[r : r+K])
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
			decodeRow16Acc(mu[r:r+K], nil, u, next, nil)
		}
	} else {
		inv := 1 / z
		for r := 0; r < F; r += K {
			decodeRow16Acc(mu[r:r+K], q[r:r+K], inv, next, nil)
		}
	}
	// Edge t ≥ 1: a_t in mu[t·K² : t·K²+K].
	for at := KK; at < n; at += KK {
		next = nil
		if at+KK < n {
			next = mu[at+KK : at+KK+K]
			clear(next)
		}
		decodeEdge16Go(mu[at:at+KK], q[at:at+KK], K, mu[at:at+K], next, nil)
	}
}

// decodeEdge16Go decodes an edge of K×K conditionals q with node marginals a
// into mu (K×K), adding each row into next and into sum's row when they
// are not nil. First the rows' factors: f_y = a_y/r_y, r_y the sum of row
// y's conditionals, or −(a_y/K) when r_y is not positive (the row is then
// uniform: the sign bit says so), kept in the place of mu's last row; then
// the rows in order, each reading its factor before it is written — so a
// may be mu's first row, and the last row overwrites the factors when
// they are no longer needed.
func decodeEdge16Go(mu []float64, q []uint16, K int, a, next, sum []float64) {
	f := mu[(K-1)*K : K*K]
	for y := 0; y < K; y++ {
		if s := rowSum16(q[y*K : y*K+K]); s > 0 {
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
			decodeRow16Acc(mu[y*K:y*K+K], nil, -fy, next, sr)
		} else {
			decodeRow16Acc(mu[y*K:y*K+K], q[y*K:y*K+K], fy, next, sr)
		}
	}
}

// decodeRow16Acc sets out[j] = float64(q[j])·f (f when q is nil) and adds
// out into next and sum when they are not nil.
func decodeRow16Acc(out []float64, q []uint16, f float64, next, sum []float64) {
	for j := range out {
		x := f
		if q != nil {
			x = bf16Value(q[j]) * f
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

// decode16MarginalsGo is decode16Go on a block of T tokens that also sets
// node (T×K) to the
// chain's node marginals — the first node the rows of the first edge
// (their sums of conditionals times 1/z), every later one the columns of
// the edge before it, as the decoding forms them — and sum (K×K) to the
// decoded edges summed over the positions, each entry's terms in edge
// order (sum is left alone for a one-token sentence, whose node is mu).
func decode16MarginalsGo(mu []float64, q []uint16, T, K int, node, sum []float64) {
	n := len(mu)
	q = q[:n]
	if T == 1 {
		// One token: the node is the block.
		decode16Go(mu, q, K)
		copy(node[:K], mu)
		return
	}
	F := K * K
	KK := K * K
	sum = sum[:KK]
	clear(sum)
	z := 0.0
	for y := 0; y < K; y++ {
		node[y] = rowSum16(q[y*K : y*K+K])
		z += node[y]
	}
	next := node[K : 2*K]
	clear(next)
	if !(z > 0) {
		u := 1 / float64(F)
		for y := 0; y < K; y++ {
			node[y] = u * float64(K)
			decodeRow16Acc(mu[y*K:y*K+K], nil, u, next, sum[y*K:y*K+K])
		}
	} else {
		inv := 1 / z
		for y := 0; y < K; y++ {
			node[y] *= inv
			decodeRow16Acc(mu[y*K:y*K+K], q[y*K:y*K+K], inv, next, sum[y*K:y*K+K])
		}
	}
	for t, at := 1, KK; at < n; t, at = t+1, at+KK {
		next = node[(t+1)*K : (t+2)*K]
		clear(next)
		decodeEdge16Go(mu[at:at+KK], q[at:at+KK], K, node[t*K:t*K+K], next, sum)
	}
}
