//go:build !purego

package duals

import "github.com/dualcrf/dualcrf/internal/cpu"

// The Float32 codec's vector kernels, their loops in codec_amd64.s: each
// computes exactly what its Go twin in codec.go computes, bit for bit
// (the same sums in the same order), where the CPU has AVX2 (cpu.AVX2FMA);
// elsewhere the twin runs.

// encode32Kernel is encode32Go four entries at a time.
func encode32Kernel(q []float32, mu []float64, K int) {
	if !cpu.AVX2FMA() {
		encode32Go(q, mu, K)
		return
	}
	n := len(mu)
	q = q[:n]
	F := firstLen(n, K)
	m := F &^ 3
	if m > 0 {
		cvt64to32Asm(&q[0], &mu[0], m)
	}
	for j := m; j < F; j++ {
		q[j] = float32(mu[j])
	}
	if n > F {
		encodeRows32Asm(&q[F], &mu[F], K, (n-F)/K)
	}
}

// decode32Kernel is decode32Go four entries at a time.
func decode32Kernel(mu []float64, q []float32, K int) {
	if !cpu.AVX2FMA() {
		decode32Go(mu, q, K)
		return
	}
	n := len(mu)
	q = q[:n]
	F := firstLen(n, K)
	KK := K * K
	z := sumRows32Asm(&q[0], K, F/K)
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
			decodeRowAcc(mu[r:r+K], nil, u, nextS, nil)
		}
	} else {
		scaleRows32Asm(&mu[0], &q[0], K, F/K, 1/z, next)
	}
	for at := KK; at < n; at += KK {
		next = nil
		if at+KK < n {
			clear(mu[at+KK : at+KK+K])
			next = &mu[at+KK]
		}
		decodeEdge32Asm(&mu[at], &q[at], K, &mu[at], next)
	}
}

// decode32MarginalsKernel is decode32MarginalsGo four entries at a time.
func decode32MarginalsKernel(mu []float64, q []float32, T, K int, node, sum []float64) {
	if !cpu.AVX2FMA() {
		decode32MarginalsGo(mu, q, T, K, node, sum)
		return
	}
	if T == 1 {
		decode32Kernel(mu, q, K)
		copy(node[:K], mu)
		return
	}
	n := len(mu)
	q = q[:n]
	KK := K * K
	sum = sum[:KK]
	node = node[:T*K]
	clear(sum)
	rowSums32Asm(&q[0], K, K, &node[0])
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
			decodeRowAcc(mu[y*K:y*K+K], nil, u, next, sum[y*K:y*K+K])
		}
	} else {
		inv := 1 / z
		for y := 0; y < K; y++ {
			node[y] *= inv
		}
		scaleRowsSum32Asm(&mu[0], &q[0], K, inv, &next[0], &sum[0])
	}
	for t, at := 1, KK; at < n; t, at = t+1, at+KK {
		clear(node[(t+1)*K : (t+2)*K])
		decodeEdgeSum32Asm(&mu[at], &q[at], K, &node[t*K], &node[(t+1)*K], &sum[0])
	}
}

// rowSums32Asm sets out[r] to row r's sum (rowSum32) for r < rows.
//
//go:noescape
func rowSums32Asm(q *float32, K, rows int, out *float64)

// scaleRowsSum32Asm decodes the K rows of a first edge with factor f,
// adding them into next and sum (decodeRowAcc, rows in order).
//
//go:noescape
func scaleRowsSum32Asm(mu *float64, q *float32, K int, f float64, next, sum *float64)

// decodeEdgeSum32Asm is decodeEdge32Asm adding the rows into next and sum
// too (decode32MarginalsGo's loop over rows y = K−1 … 0).
//
//go:noescape
func decodeEdgeSum32Asm(mu *float64, q *float32, K int, a, next, sum *float64)

// sumRows32Asm returns Σ over rows of the rows' sums (rowSum32), in row
// order.
//
//go:noescape
func sumRows32Asm(q *float32, K, rows int) float64

// scaleRows32Asm sets rows of mu to float64(q)·f and adds each into next
// when next is not nil (decodeRow, row by row in order).
//
//go:noescape
func scaleRows32Asm(mu *float64, q *float32, K, rows int, f float64, next *float64)

// decodeEdge32Asm decodes an edge of conditionals with node marginals a
// (decode32Go's loop over rows y = K−1 … 0).
//
//go:noescape
func decodeEdge32Asm(mu *float64, q *float32, K int, a *float64, next *float64)

// encodeRows32Asm writes the conditionals of rows of mu (encode32Go's loop
// over rows).
//
//go:noescape
func encodeRows32Asm(q *float32, mu *float64, K, rows int)

// cvt64to32Asm sets q[j] = float32(mu[j]) for j < n, a multiple of 4.
//
//go:noescape
func cvt64to32Asm(q *float32, mu *float64, n int)
