//go:build !purego

package crf

import (
	"math/rand/v2"
	"testing"

	"github.com/dualcrf/dualcrf/internal/cpu"
)

// BenchmarkKernelPairs times each kernel of the lattice against its Go twin,
// side by side in one process, on a CoNLL-2000-like sentence (K = 22
// labels, T = 24 tokens, 19 attributes per token from 75,000): ns/op is one
// sentence's call. docs/kernels.md records the figures:
//
//	go test ./crf -run '^$' -bench KernelPairs -count 5
func BenchmarkKernelPairs(b *testing.B) {
	if !cpu.AVX2FMA() {
		b.Skip("no AVX2 and FMA: the kernels are their Go twins")
	}
	const A, K, T, perToken = 75000, 22, 24, 19
	Kp := padK(K)
	rng := rand.New(rand.NewPCG(5, 6))
	w := make([]float64, A*K+Kp)
	for i := range w {
		w[i] = rng.NormFloat64()
	}
	attrs, attrStart := make([]int32, 0, T*perToken), []int{0}
	for range T {
		for range perToken {
			attrs = append(attrs, int32(rng.IntN(A)))
		}
		attrStart = append(attrStart, len(attrs))
	}
	bias := make([]float64, Kp)
	theta := make([]float64, T*K+Kp)
	src := make([]float64, T*K+Kp)
	for i := range src {
		src[i] = 3 * rng.NormFloat64()
	}
	m := make([]float64, T)
	etr, psi := padded(rng, K, K, Kp), padded(rng, T, K, Kp)
	alpha, beta := padded(rng, T, K, Kp), padded(rng, T, K, Kp)
	scale := make([]float64, T)
	for i := range scale {
		scale[i] = 0.5 + rng.Float64()
	}
	tmp, sum := make([]float64, Kp), make([]float64, K*Kp)
	dst := make([]float64, (T-1)*K*K)
	fa, fc := padded(rng, T-1, K, Kp), padded(rng, T-1, K, Kp)
	for _, k := range []struct {
		name string
		f    func(ks kernels)
	}{
		{"scoreRows", func(ks kernels) { ks.scoreRows(theta, w, attrs, attrStart, bias, K, Kp) }},
		{"expRows", func(ks kernels) { ks.expRows(psi, src, m, T, K, Kp) }},
		{"forward", func(ks kernels) { ks.forward(alpha, psi, etr, scale, K, Kp) }},
		{"backward", func(ks kernels) { ks.backward(beta, psi, etr, scale, tmp, K, Kp) }},
		{"marginals", func(ks kernels) { ks.marginals(dst, sum, alpha, beta, psi, etr, scale, tmp, K, Kp) }},
		{"logMarginals", func(ks kernels) { ks.logMarginals(dst, fa, fc, etr, K, Kp) }},
	} {
		for _, side := range []struct {
			name string
			ks   kernels
		}{{"go", goKernels}, {"avx2", avx2Kernels}} {
			b.Run(k.name+"/"+side.name, func(b *testing.B) {
				for b.Loop() {
					k.f(side.ks)
				}
			})
		}
	}
}
