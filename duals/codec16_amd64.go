//go:build !purego

package duals

import "github.com/dualcrf/dualcrf/internal/cpu"

// The BFloat16 codec's vector kernels, their loops in codec16_amd64.s:
// each computes exactly what its Go twin in codec16.go computes, bit for
// bit (the same sums in the same order), where the CPU has AVX2
// (cpu.AVX2FMA); elsewhere the twin runs.

// encode16Kernel is encode16Go four entries at a time.
func encode16Kernel(q []uint16, mu []float64, K int) {
	if !cpu.AVX2FMA() {
		encode16Go(q, mu, K)
		return
	}
	n := len(mu)
	q = q[:n]
	F := firstLen(n, K)
	m := F &^ 3
	if m > 0 {
		cvt64to16Asm(&q[0], &mu[0], m)
	}
	for j := m; j < F; j++ {
		q[j] = bf16Bits(mu[j])
	}
	if n > F {
		encodeRows16Asm(&q[F], &mu[F], K, (n-F)/K)
	}
}

// decode16Kernel is decode16Go four entries at a time.
func decode16Kernel(mu []float64, q []uint16, K int) {
	if !cpu.AVX2FMA() {
		decode16Go(mu, q, K)
		return
	}
	n := len(mu)
	q = q[:n]
	F := firstLen(n, K)
	KK := K * K
	z := sumRows16Asm(&q[0], K, F/K)
	var next *float64
	var nextS []float64
	if n > F {
		nextS = mu[KK : KK+K]
		clear(nextS)
		next = &nextS[0]
	}
	if !(z > 0) {
		u := 1 / float64(F)
		for r := 0; r < F; r += K {
			decodeRow16Acc(mu[r:r+K], nil, u, nextS, nil)
		}
	} else {
		scaleRows16Asm(&mu[0], &q[0], K, F/K, 1/z, next)
	}
	for at := KK; at < n; at += KK {
		next = nil
		if at+KK < n {
			clear(mu[at+KK : at+KK+K])
			next = &mu[at+KK]
		}
		decodeEdge16Asm(&mu[at], &q[at], K, &mu[at], next)
	}
}

// decode16MarginalsKernel is decode16MarginalsGo four entries at a time.
func decode16MarginalsKernel(mu []float64, q []uint16, T, K int, node, sum []float64) {
	if !cpu.AVX2FMA() {
		decode16MarginalsGo(mu, q, T, K, node, sum)
		return
	}
	if T == 1 {
		decode16Kernel(mu, q, K)
		copy(node[:K], mu)
		return
	}
	n := len(mu)
	q = q[:n]
	KK := K * K
	sum = sum[:KK]
	node = node[:T*K]
	clear(sum)
	rowSums16Asm(&q[0], K, K, &node[0])
	z := 0.0
	for y := 0; y < K; y++ {
		z += node[y]
	}
	next := node[K : 2*K]
	clear(next)
	if !(z > 0) {
		u := 1 / float64(KK)
		for y := 0; y < K; y++ {
			node[y] = u * float64(K)
			decodeRow16Acc(mu[y*K:y*K+K], nil, u, next, sum[y*K:y*K+K])
		}
	} else {
		inv := 1 / z
		for y := 0; y < K; y++ {
			node[y] *= inv
		}
		scaleRowsSum16Asm(&mu[0], &q[0], K, inv, &next[0], &sum[0])
	}
	for t, at := 1, KK; at < n; t, at = t+1, at+KK {
		clear(node[(t+1)*K : (t+2)*K])
		decodeEdgeSum16Asm(&mu[at], &q[at], K, &node[t*K], &node[(t+1)*K], &sum[0])
	}
}

// rowSums16Asm sets out[r] to row r's sum (rowSum16) for r < rows.
//
//go:noescape
func rowSums16Asm(q *uint16, K, rows int, out *float64)

// scaleRowsSum16Asm decodes the K rows of a first edge with factor f,
// adding them into next and sum (decodeRow16Acc, rows in order).
//
//go:noescape
func scaleRowsSum16Asm(mu *float64, q *uint16, K int, f float64, next, sum *float64)

// decodeEdgeSum16Asm is decodeEdge16Asm adding the rows into next and sum
// too (decode16MarginalsGo's loop over rows y = K−1 … 0).
//
//go:noescape
func decodeEdgeSum16Asm(mu *float64, q *uint16, K int, a, next, sum *float64)

// sumRows16Asm returns Σ over rows of the rows' sums (rowSum16), in row
// order.
//
//go:noescape
func sumRows16Asm(q *uint16, K, rows int) float64

// scaleRows16Asm sets rows of mu to float64(q)·f and adds each into next
// when next is not nil (decodeRow, row by row in order).
//
//go:noescape
func scaleRows16Asm(mu *float64, q *uint16, K, rows int, f float64, next *float64)

// decodeEdge16Asm decodes an edge of conditionals with node marginals a
// (decode16Go's loop over rows y = K−1 … 0).
//
//go:noescape
func decodeEdge16Asm(mu *float64, q *uint16, K int, a *float64, next *float64)

// encodeRows16Asm writes the conditionals of rows of mu (encode16Go's loop
// over rows).
//
//go:noescape
func encodeRows16Asm(q *uint16, mu *float64, K, rows int)

// cvt64to16Asm sets q[j] = bf16Bits(mu[j]) for j < n, a multiple of 4.
//
//go:noescape
func cvt64to16Asm(q *uint16, mu *float64, n int)
