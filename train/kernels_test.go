package train

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/dualcrf/dualcrf/internal/cpu"
	"github.com/dualcrf/dualcrf/internal/num"
)

// Each test here checks a kernel of kernels_amd64.go against its Go loop
// in kernels.go. Where the kernel in use is that Go loop itself (a purego
// build, another architecture, a CPU without AVX2 and FMA) there is
// nothing to compare, and the test says so by skipping rather than pass
// by comparing a function with itself.

// needVectorKernels skips the test unless the assembly kernels run here.
func needVectorKernels(t *testing.T) {
	t.Helper()
	if !cpu.AVX2FMA() {
		t.Skip("the kernel in use is its Go loop (purego build, or no AVX2 and FMA): nothing to compare")
	}
}

// TestAxpyRows checks axpyRows (the vector kernel where the CPU has one)
// against axpyRowsGo for every K mod 4, with and without source rows and
// scales, rows named more than once, and that no entry outside the named
// rows changes.
func TestAxpyRows(t *testing.T) {
	needVectorKernels(t)
	rng := rand.New(rand.NewPCG(11, 12))
	for K := 1; K <= 9; K++ {
		for _, withSrc := range []bool{false, true} {
			for _, withScale := range []bool{false, true} {
				nDst, nJobs := 7, 12
				dst := make([]float64, nDst*K+3)
				for j := range dst {
					dst[j] = rng.NormFloat64()
				}
				src := make([]float64, nJobs*K)
				for j := range src {
					src[j] = rng.NormFloat64()
				}
				dstRow := make([]int32, nJobs)
				for k := range dstRow {
					dstRow[k] = int32(rng.IntN(nDst))
				}
				var srcRow []int32
				if withSrc {
					srcRow = make([]int32, nJobs)
					for k := range srcRow {
						srcRow[k] = int32(rng.IntN(nJobs))
					}
				}
				var scale []float64
				if withScale {
					scale = make([]float64, nJobs)
					for k := range scale {
						scale[k] = rng.NormFloat64()
					}
				}
				want := append([]float64(nil), dst...)
				axpyRowsGo(want, dstRow, src, srcRow, scale, -0.37, K)
				axpyRows(dst, dstRow, src, srcRow, scale, -0.37, K)
				for j := range dst {
					if math.Abs(dst[j]-want[j]) > 1e-14*max(1, math.Abs(want[j])) {
						t.Fatalf("K=%d src %v scale %v entry %d: %.17g, Go %.17g", K, withSrc, withScale, j, dst[j], want[j])
					}
				}
			}
		}
	}
}

// TestDotKernel checks dotKernel against dot for lengths around multiples of 8.
func TestDotKernel(t *testing.T) {
	needVectorKernels(t)
	rng := rand.New(rand.NewPCG(13, 14))
	for n := 0; n < 40; n++ {
		a, b := make([]float64, n), make([]float64, n+2)
		scale := 0.0
		for j := range a {
			a[j], b[j] = rng.NormFloat64(), rng.NormFloat64()
			scale += math.Abs(a[j] * b[j])
		}
		if got, want := dotKernel(a, b), dot(a, b[:n]); math.Abs(got-want) > 1e-15*scale {
			t.Fatalf("n=%d: %.17g, want %.17g", n, got, want)
		}
	}
}

// TestMixKernel checks the update kernel in use (four entries at a time on
// amd64 with AVX2 and FMA) against the Go loop for every remainder of the
// length modulo 4.
func TestMixKernel(t *testing.T) {
	needVectorKernels(t)
	rng := rand.New(rand.NewPCG(3, 4))
	for n := 0; n < 40; n++ {
		mu, nu := make([]float64, n), make([]float64, n)
		for j := range mu {
			mu[j], nu[j] = rng.Float64()*math.Exp(-rng.Float64()*50), rng.Float64()
		}
		g := rng.Float64()
		mu2 := append([]float64(nil), mu...)
		mixGo(g, mu, nu)
		mixKernel(g, mu2, nu)
		for j := range mu {
			if math.Abs(mu2[j]-mu[j]) > 4e-16*mu[j] {
				t.Fatalf("n=%d entry %d: kernel μ %.17g, Go %.17g", n, j, mu2[j], mu[j])
			}
		}
	}
}

// randomRatios returns n entries μ, ν and log μ spanning many orders of
// magnitude, with zeros, subnormals, ratios beyond the binned range and
// runs of entries in one bin.
func randomRatios(rng *rand.Rand, n int) (mu, nu, logMu []float64) {
	mu, nu, logMu = make([]float64, n), make([]float64, n), make([]float64, n)
	for j := range mu {
		mu[j] = math.Exp(-rng.Float64() * 80)
		nu[j] = math.Exp(-rng.Float64() * 80)
		switch rng.IntN(8) {
		case 0:
			mu[j] = 0
		case 1:
			nu[j] = 0
		case 2:
			nu[j] = mu[j] * math.Exp(-50-rng.Float64()*50) // ρ below 2^-60
		case 3:
			nu[j] = 4e-320 // subnormal
		case 4:
			nu[j] = mu[j] * (1 + 1e-3*rng.Float64()) // runs of entries in one bin
		case 5:
			mu[j] = 2e-310 // subnormal μ: left to the exact list
		}
		logMu[j] = math.Log(mu[j])
	}
	return mu, nu, logMu
}

// TestRatiosKeyRange checks the Go loop ratiosMomentsGo on its own (in
// every build): every key lies in [0, binKeys], and the key range it
// reports is the least and greatest key below binKeys.
func TestRatiosKeyRange(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	size := binCopies * binStride * (binKeys + 1)
	for n := 0; n < 200; n++ {
		mu, nu, logMu := randomRatios(rng, n)
		hs, key, mom := make([]float64, n), make([]int32, n), make([]float64, size)
		_, _, lo, hi := ratiosMomentsGo(mu, logMu, nu, hs, key, mom, n%2 == 1)
		wantLo, wantHi := int32(binKeys), int32(-1)
		for j, k := range key {
			if k < 0 || k > binKeys {
				t.Fatalf("n=%d entry %d: key %d out of [0, %d]", n, j, k, binKeys)
			}
			if k < binKeys {
				wantLo, wantHi = min(wantLo, k), max(wantHi, k)
			}
		}
		if lo != wantLo || hi != wantHi {
			t.Fatalf("n=%d: key range [%d, %d], want [%d, %d]", n, lo, hi, wantLo, wantHi)
		}
	}
}

// TestRatiosMomentsKernels checks the fused ratio and moments kernel in use
// against ratiosMomentsGo (ratiosGo followed by momentsGo), on the entries
// of randomRatios, for both signs: keys, h and the key range bit for bit,
// the sums to rounding, and every copy of every slot (moments and counts)
// bit for bit.
func TestRatiosMomentsKernels(t *testing.T) {
	needVectorKernels(t)
	rng := rand.New(rand.NewPCG(7, 8))
	size := binCopies * binStride * (binKeys + 1)
	for n := 0; n < 200; n++ {
		mu, nu, logMu := randomRatios(rng, n)
		neg := n%2 == 1
		hs, key, mom := make([]float64, n), make([]int32, n), make([]float64, size)
		hs2, key2, mom2 := make([]float64, n), make([]int32, n), make([]float64, size)
		x, s, lo, hi := ratiosMomentsGo(mu, logMu, nu, hs, key, mom, neg)
		x2, s2, lo2, hi2 := ratiosMomentsKernel(mu, logMu, nu, hs2, key2, mom2, neg)
		for j := range mu {
			if key[j] != key2[j] || math.Float64bits(hs[j]) != math.Float64bits(hs2[j]) {
				t.Fatalf("n=%d entry %d (μ %g ν %g): kernel key %d h %g, Go %d %g", n, j, mu[j], nu[j], key2[j], hs2[j], key[j], hs[j])
			}
		}
		if lo2 != lo || hi2 != hi {
			t.Fatalf("n=%d: key range Go [%d, %d], kernel [%d, %d]", n, lo, hi, lo2, hi2)
		}
		scale := 0.0
		for j := range mu {
			if mu[j] >= minNormal {
				scale += (mu[j] + nu[j]) * math.Abs(logMu[j])
			}
		}
		if math.Abs(x-x2) > 1e-14*scale || math.Abs(s-s2) > 1e-14*scale {
			t.Fatalf("n=%d: kernel sums %g %g, Go %g %g", n, x2, s2, x, s)
		}
		// Both add the same products into the same copies in the same order.
		for i := range mom {
			if mom[i] != mom2[i] {
				t.Fatalf("n=%d neg %v: slot word %d (key %d copy %d number %d): kernel %.17g, Go %.17g",
					n, neg, i, i/(binCopies*binStride), i/binStride%binCopies, i%binStride, mom2[i], mom[i])
			}
		}
	}
}

// TestBlockRowsKernels checks the row kernel in use against the Go loop
// for every K mod 4: row sums, the accumulated block and Σ blk·B, and that
// nothing past the block's K rows is written.
func TestBlockRowsKernels(t *testing.T) {
	needVectorKernels(t)
	rng := rand.New(rand.NewPCG(9, 10))
	for K := 1; K <= 9; K++ {
		blk, B := make([]float64, K*K), make([]float64, K*K)
		for j := range blk {
			blk[j] = rng.Float64() * math.Exp(-rng.Float64()*20)
			B[j] = rng.NormFloat64()
		}
		node, node2 := make([]float64, K+1), make([]float64, K+1)
		node[K], node2[K] = 7, 7
		sum, sum2 := make([]float64, K*K+1), make([]float64, K*K+1)
		for j := range sum {
			sum[j] = rng.Float64()
			sum2[j] = sum[j]
		}
		want := blockRowsGo(blk, K, B, node[:K], sum[:K*K])
		got := blockRowsKernel(blk, K, B, node2[:K], sum2[:K*K])
		scale := 0.0
		for j, v := range blk {
			scale += math.Abs(v * B[j])
		}
		if math.Abs(got-want) > 1e-15*scale {
			t.Fatalf("K=%d: kernel Σ blk·B = %.17g, Go %.17g", K, got, want)
		}
		for y := 0; y <= K; y++ {
			if !relClose(node2[y], node[y], 1e-15) {
				t.Fatalf("K=%d row %d: kernel sum %.17g, Go %.17g", K, y, node2[y], node[y])
			}
		}
		for j := range sum {
			if sum2[j] != sum[j] {
				t.Fatalf("K=%d entry %d: kernel accumulated %.17g, Go %.17g", K, j, sum2[j], sum[j])
			}
		}
	}
}

// randomBins returns nb bins (nb a multiple of 4) for evalBins: centres ρ
// spanning 2^-60 … 2^60, with some at or right next to 1 (1 ± 2^-40,
// 1 ± 2^-52) and at the ends of the range, and moments of mixed signs and
// magnitudes — some as a bin's entries give them (|H_k| ≲ |H_0|/64^k),
// some independent of each other, some zero — in pm's structure of arrays.
func randomBins(rng *rand.Rand, nb int) (rho, pm []float64) {
	rho, pm = make([]float64, nb), make([]float64, binMoments*nb)
	for b := range rho {
		switch rng.IntN(10) {
		case 0:
			rho[b] = []float64{1, 1 + 0x1p-40, 1 - 0x1p-40, 1 + 0x1p-52, 1 - 0x1p-53}[rng.IntN(5)]
		case 1:
			rho[b] = []float64{0x1p-60, 0x1p60, 0x1.fffffffffffffp60, 1 + 1.0/64, 1 - 1.0/64}[rng.IntN(5)]
		default:
			rho[b] = math.Exp2(120*rng.Float64() - 60)
		}
		mag := math.Pow(10, -12+14*rng.Float64())
		realistic := rng.IntN(2) == 0
		for k := 0; k < binMoments; k++ {
			v := mag * rng.NormFloat64()
			if realistic {
				v *= math.Pow(1.0/64, float64(k)) * rng.Float64()
			} else {
				v *= math.Pow(10, 4*rng.Float64()-2)
			}
			if rng.IntN(8) == 0 {
				v = 0
			}
			pm[k*nb+b] = v
		}
	}
	return rho, pm
}

// binScales returns, for one bin, the scales that bound the rounding of
// its terms in evalBins: for S, σ = |H_0|·max(1, |log D|) + Σ_{k≥1} c^k |H_k|/k,
// and for S', σ' = (|ρ − 1|·Σ_{k≤5} c^k |H_k| + ρ·Σ_{k≤5} c^k |H_{k+1}|)/D.
func binScales(g, r float64, H []float64) (sig, sig2 float64) {
	D := 1 - g + g*r
	c := g * r / D
	sig = math.Abs(H[0]) * max(1, math.Abs(math.Log(D)))
	var a0, a1 float64
	ck := 1.0
	for k := 0; k < binMoments; k++ {
		if k >= 1 {
			sig += ck * math.Abs(H[k]) / float64(k)
		}
		if k <= 5 {
			a0 += ck * math.Abs(H[k])
			a1 += ck * math.Abs(H[k+1])
		}
		ck *= c
	}
	return sig, (math.Abs(r-1)*a0 + r*a1) / D
}

// TestEvalBinsKernels checks the evalBins kernel in use (four bins at a
// time on amd64 with AVX2 and FMA) against
// evalBinsGo, first bin by bin (each bin alone in a vector of padding
// bins), then on whole sets of 4 … 256 bins.
//
// The bound, with u = 2^-53 and σ_b, σ'_b the scales of binScales: both
// compute D_b and c_b alike (bit for bit) and read the same log D_b
// (binLogs); the bound below still leaves the 3u·max(1, |log D_b|) it
// allowed when each took its own logarithm.
// Each Horner chain of six steps has an error below 14u times the sum of
// the absolute values of its terms in either version (two roundings per
// step, and H_k/k against H_k·(1/k)), and the products, the sum and the
// division of a bin's terms add a few u more: so a bin's terms differ by
// less than 40u·σ_b (S) and 40u·σ'_b (S'). Summing n terms recursively
// errs by at most (n−1)u times the sum of their absolute values (evalBinsGo),
// in four lanes then across them by at most (n/4 + 2)u (the kernel), so
//
//	|Δs| ≤ (40 + 2n)·u·Σ_b σ_b,   |Δs2| ≤ (40 + 2n)·u·Σ_b σ'_b.
//
// A bin alone (n = 1 after padding bins, whose terms are exactly zero) must
// meet 42u·σ_b.
func TestEvalBinsKernels(t *testing.T) {
	needVectorKernels(t)
	const u = 0x1p-53
	rng := rand.New(rand.NewPCG(11, 12))
	gammas := []float64{0, 1e-9, 1e-3, 0.3, 0.999, 1}
	worst, worst1 := 0.0, 0.0 // greatest |Δ|/(u·σ), over whole sets and single bins
	check := func(what string, g float64, rho, pm []float64, n int) {
		t.Helper()
		nb := len(rho)
		var sig, sig2 float64
		H := make([]float64, binMoments)
		for b, r := range rho {
			for k := range H {
				H[k] = pm[k*nb+b]
			}
			a, a2 := binScales(g, r, H)
			sig, sig2 = sig+a, sig2+a2
		}
		logD := binLogs(g, rho, nil)
		ws, ws2 := evalBinsGo(g, rho, pm, logD)
		s, s2 := evalBinsKernel(g, rho, pm, logD)
		bound := float64(40+2*n) * u
		if !(math.Abs(s-ws) <= bound*sig) || !(math.Abs(s2-ws2) <= bound*sig2) {
			t.Fatalf("%s γ=%g: kernel s = %.17g s2 = %.17g, Go %.17g %.17g; |Δs|/σ = %.3g u, |Δs2|/σ' = %.3g u, bound %g u",
				what, g, s, s2, ws, ws2, math.Abs(s-ws)/sig/u, math.Abs(s2-ws2)/sig2/u, bound/u)
		}
		r := 0.0
		if sig > 0 {
			r = math.Abs(s-ws) / sig / u
		}
		if sig2 > 0 {
			r = max(r, math.Abs(s2-ws2)/sig2/u)
		}
		if n == 1 {
			worst1 = max(worst1, r)
		} else {
			worst = max(worst, r)
		}
	}
	for trial := 0; trial < 2000; trial++ {
		one, onePm := randomBins(rng, 1)
		rho := []float64{1, 1, 1, 1}
		pm := make([]float64, 4*binMoments)
		lane := rng.IntN(4)
		rho[lane] = one[0]
		for k := 0; k < binMoments; k++ {
			pm[4*k+lane] = onePm[k]
		}
		for _, g := range gammas {
			check(fmt.Sprintf("bin ρ=%g H=%g", one[0], onePm), g, rho, pm, 1)
		}
	}
	for trial := 0; trial < 200; trial++ {
		nb := 4 * (1 + rng.IntN(64))
		rho, pm := randomBins(rng, nb)
		for _, g := range gammas {
			check(fmt.Sprintf("trial %d (%d bins)", trial, nb), g, rho, pm, nb)
		}
	}
	t.Logf("greatest |Δ|/(u·σ): %.3g for a single bin (bound 42), %.3g for sets of bins", worst1, worst)
}

// BenchmarkKernelPairs times each kernel of kernels.go's table against its Go
// twin (the "avx2" side is the kernel in use: for the ratio sweep, its
// AVX-512 loop where the CPU has one), side by side in one process, on the sizes of a CoNLL-2000 step
// (K = 22 labels, T = 24 tokens, 19 attributes per token from 75,000, so
// about 450 distinct attribute rows and 23·22² = 11,132 edge entries): ns/op
// is one step's call. docs/kernels.md records the figures:
//
//	go test ./train -run '^$' -bench KernelPairs -count 5
func BenchmarkKernelPairs(b *testing.B) {
	if !cpu.AVX2FMA() {
		b.Skip("no AVX2 and FMA: the kernels are their Go twins")
	}
	const A, K, T, perToken = 75000, 22, 24, 19
	rng := rand.New(rand.NewPCG(23, 24))
	// The direction's rows: slot of each occurrence, its token, δ per token.
	seen := map[int32]int32{}
	var rows, slot, tokOf []int32
	for t := range T {
		for range perToken {
			a := int32(rng.IntN(A))
			r, ok := seen[a]
			if !ok {
				r = int32(len(rows))
				seen[a] = r
				rows = append(rows, a)
			}
			slot, tokOf = append(slot, r), append(tokOf, int32(t))
		}
	}
	normals := func(n int) []float64 {
		v := make([]float64, n)
		for i := range v {
			v[i] = rng.NormFloat64()
		}
		return v
	}
	w, vr, dN := normals(A*K), make([]float64, len(rows)*K), normals(T*K)
	n := (T - 1) * K * K
	mu, nu := make([]float64, n), make([]float64, n)
	for j := range mu {
		mu[j] = math.Exp(-30 * rng.Float64())
		nu[j] = mu[j] * math.Exp(0.5*rng.NormFloat64())
	}
	logMu := make([]float64, n)
	num.LogVec(logMu, mu)
	hs, key := make([]float64, n), make([]int32, n)
	slots := make([]float64, binCopies*binStride*(binKeys+1))
	B, node, sum := normals(K*K), make([]float64, T*K), make([]float64, K*K)
	rho, pm := benchBins()
	logD := binLogs(0.3, rho, nil)
	mixed := make([]float64, n)
	var sink float64
	for _, k := range []struct {
		name      string
		goF, vecF func()
	}{
		{"dot", func() { sink += dot(vr, vr) }, func() { sink += dotKernel(vr, vr) }},
		{"axpyRows/direction", func() { axpyRowsGo(vr, slot, dN, tokOf, nil, -1e-3, K) },
			func() { axpyRows(vr, slot, dN, tokOf, nil, -1e-3, K) }},
		{"axpyRows/update", func() { axpyRowsGo(w, rows, vr, nil, nil, 1e-3, K) },
			func() { axpyRows(w, rows, vr, nil, nil, 1e-3, K) }},
		{"blockRows", func() {
			for t := 0; t < T-1; t++ {
				sink += blockRowsGo(mu[t*K*K:(t+1)*K*K], K, B, node[t*K:(t+1)*K], sum)
			}
		}, func() {
			for t := 0; t < T-1; t++ {
				sink += blockRowsKernel(mu[t*K*K:(t+1)*K*K], K, B, node[t*K:(t+1)*K], sum)
			}
		}},
		{"ratiosMoments", func() {
			x, _, _, _ := ratiosMomentsGo(mu, logMu, nu, hs, key, slots, false)
			sink += x
		}, func() {
			x, _, _, _ := ratiosMomentsKernel(mu, logMu, nu, hs, key, slots, false)
			sink += x
		}},
		{"evalBins", func() { s, _ := evalBinsGo(0.3, rho, pm, logD); sink += s },
			func() { s, _ := evalBinsKernel(0.3, rho, pm, logD); sink += s }},
		{"mix", func() { copy(mixed, mu); mixGo(0.3, mixed, nu) },
			func() { copy(mixed, mu); mixKernel(0.3, mixed, nu) }},
	} {
		b.Run(k.name+"/go", func(b *testing.B) {
			for b.Loop() {
				k.goF()
			}
		})
		b.Run(k.name+"/avx2", func(b *testing.B) {
			for b.Loop() {
				k.vecF()
			}
		})
	}
	_ = sink
}
