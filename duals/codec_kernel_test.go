package duals

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/dualcrf/dualcrf/internal/cpu"
)

// TestFloat32Kernels checks the codec's vector kernels against their Go
// twins, bit for bit, on chains, on raw conditionals of every kind (zeros,
// whole rows of zeros, subnormals, values far above one) and on blocks of
// rows below the encoder's threshold, for every K up to 9 and the task
// sizes. Where the kernels are the twins (a purego build, another
// architecture, a CPU without AVX2) it checks the functions in use all the
// same: they are what a run on this machine calls.
func TestFloat32Kernels(t *testing.T) {
	if !cpu.AVX2FMA() {
		t.Log("the codec's functions in use are their Go twins here (purego, not amd64, or no AVX2)")
	}
	rng := rand.New(rand.NewPCG(8, 1))
	shapes := append([][2]int(nil), codecShapes...)
	for K := 1; K <= 9; K++ {
		shapes = append(shapes, [2]int{1, K}, [2]int{2, K}, [2]int{5, K})
	}
	for _, sh := range shapes {
		T, K := sh[0], sh[1]
		t.Run(fmt.Sprintf("T%d-K%d", T, K), func(t *testing.T) {
			for trial := range 12 {
				mu := randomChain(rng, T, K)
				switch trial % 4 {
				case 1: // rows of zero mass and below 2^-1000
					for j := range mu {
						if rng.IntN(5) == 0 {
							mu[j] = 0
						}
						if rng.IntN(7) == 0 {
							mu[j] *= 0x1p-1040
						}
					}
				case 2: // whole rows zero
					for r := 0; r+K <= len(mu); r += K {
						if rng.IntN(3) == 0 {
							clear(mu[r : r+K])
						}
					}
				}
				qa, qb := make([]float32, len(mu)), make([]float32, len(mu))
				encode32Kernel(qa, mu, K)
				encode32Go(qb, mu, K)
				for j := range qa {
					if math.Float32bits(qa[j]) != math.Float32bits(qb[j]) {
						t.Fatalf("trial %d: encoded entry %d: kernel %v, twin %v", trial, j, qa[j], qb[j])
					}
				}
				if trial%4 == 3 { // raw numbers of any size, zeros and rows of zeros, not an encoding
					for j := range qa {
						switch rng.IntN(6) {
						case 0:
							qa[j] = 0
						case 1:
							qa[j] = float32(rng.Float64() * 1e30)
						case 2:
							qa[j] = math.Float32frombits(uint32(rng.IntN(1 << 23))) // subnormal
						default: // magnitudes 2^±40 apart, whose sums round
							qa[j] = float32(math.Exp2(80*rng.Float64() - 40))
						}
					}
					for r := 0; r+K <= len(qa); r += K {
						if rng.IntN(3) == 0 {
							clear(qa[r : r+K])
						}
					}
				}
				da, db := make([]float64, len(mu)), make([]float64, len(mu))
				for j := range da {
					da[j], db[j] = math.NaN(), math.NaN() // decode writes every entry
				}
				decode32Kernel(da, qa, K)
				decode32Go(db, qa, K)
				for j := range da {
					if math.Float64bits(da[j]) != math.Float64bits(db[j]) {
						t.Fatalf("trial %d: decoded entry %d: kernel %v, twin %v", trial, j, da[j], db[j])
					}
				}
				na, nb := make([]float64, T*K), make([]float64, T*K)
				sa, sb := make([]float64, K*K), make([]float64, K*K)
				decode32MarginalsKernel(da, qa, T, K, na, sa)
				decode32MarginalsGo(db, qa, T, K, nb, sb)
				if !bitsEqual(da, db) || !bitsEqual(na, nb) || !bitsEqual(sa, sb) {
					t.Fatalf("trial %d: decoded with marginals: kernel %v %v %v, twin %v %v %v", trial, da, na, sa, db, nb, sb)
				}
				// BFloat16: the same, from the same numbers rounded to bfloat16.
				ha, hb := make([]uint16, len(mu)), make([]uint16, len(mu))
				encode16Kernel(ha, mu, K)
				encode16Go(hb, mu, K)
				for j := range ha {
					if ha[j] != hb[j] {
						t.Fatalf("trial %d: bfloat16 encoded entry %d: kernel %#04x, twin %#04x", trial, j, ha[j], hb[j])
					}
				}
				if trial%4 == 3 {
					for j, x := range qa {
						ha[j] = uint16(math.Float32bits(x) >> 16)
					}
				}
				decode16Kernel(da, ha, K)
				decode16Go(db, ha, K)
				if !bitsEqual(da, db) {
					t.Fatalf("trial %d: bfloat16 decoded: kernel %v, twin %v", trial, da, db)
				}
				decode16MarginalsKernel(da, ha, T, K, na, sa)
				decode16MarginalsGo(db, ha, T, K, nb, sb)
				if !bitsEqual(da, db) || !bitsEqual(na, nb) || !bitsEqual(sa, sb) {
					t.Fatalf("trial %d: bfloat16 decoded with marginals: kernel %v %v %v, twin %v %v %v", trial, da, na, sa, db, nb, sb)
				}
			}
		})
	}
}

// BenchmarkCodecPairs times the float32 and bfloat16 codecs' kernels
// against their Go twins, one after the other in one process, on blocks of CoNLL-2000's
// mean sentence (T = 24, K = 22: 11,132 entries) and of EWT XPOS's
// (T = 17, K = 49: 38,416 entries); ns/entry is per dual entry. Encode and
// decode read and write a block that stays in the cache: the loops' own
// cost, without the memory traffic they halve.
//
//	go test ./duals -run '^$' -bench CodecPairs -benchtime 0.2s -count 4
func BenchmarkCodecPairs(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	for _, sh := range [][2]int{{24, 22}, {17, 49}} {
		T, K := sh[0], sh[1]
		mu := randomChain(rng, T, K)
		q := make([]float32, len(mu))
		out := make([]float64, len(mu))
		node, sum := make([]float64, T*K), make([]float64, K*K)
		h := make([]uint16, len(mu))
		encode16Go(h, mu, K)
		encode32Go(q, mu, K)
		for _, c := range []struct {
			name string
			f    func()
		}{
			{"encode/twin", func() { encode32Go(q, mu, K) }},
			{"encode/kernel", func() { encode32Kernel(q, mu, K) }},
			{"decode/twin", func() { decode32Go(out, q, K) }},
			{"decode/kernel", func() { decode32Kernel(out, q, K) }},
			{"decode-marginals/twin", func() { decode32MarginalsGo(out, q, T, K, node, sum) }},
			{"decode-marginals/kernel", func() { decode32MarginalsKernel(out, q, T, K, node, sum) }},
			{"bf16-encode/twin", func() { encode16Go(h, mu, K) }},
			{"bf16-encode/kernel", func() { encode16Kernel(h, mu, K) }},
			{"bf16-decode/twin", func() { decode16Go(out, h, K) }},
			{"bf16-decode/kernel", func() { decode16Kernel(out, h, K) }},
			{"bf16-decode-marginals/twin", func() { decode16MarginalsGo(out, h, T, K, node, sum) }},
			{"bf16-decode-marginals/kernel", func() { decode16MarginalsKernel(out, h, T, K, node, sum) }},
		} {
			b.Run(fmt.Sprintf("K%d/%s", K, c.name), func(b *testing.B) {
				for b.Loop() {
					c.f()
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(mu)), "ns/entry")
			})
		}
	}
}
