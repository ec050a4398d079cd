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
			decodeRowUniform(mu[r:r+K], u, nextS)
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
