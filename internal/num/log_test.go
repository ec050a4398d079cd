package num_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/dualcrf/dualcrf/internal/num"
)

func TestLogAccuracy(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	check := func(x float64) {
		got, want := num.Log(x), math.Log(x)
		if got == want {
			return
		}
		if math.Abs(got-want) > 2.5e-16*max(1, math.Abs(want)) {
			t.Fatalf("Log(%.17g) = %.17g, math.Log %.17g (rel %.3g)", x, got, want, math.Abs(got-want)/math.Abs(want))
		}
	}
	for i := 0; i < 2_000_000; i++ {
		check(math.Exp(rng.Float64()*1400 - 700))
	}
	for i := 0; i < 200_000; i++ {
		check(1 + (rng.Float64()-0.5)*1e-3)
		check(1 + (rng.Float64()-0.5)*1e-9)
		check(math.Sqrt2 * (1 + (rng.Float64()-0.5)*1e-6))
	}
	for _, x := range []float64{1, 2, 0.5, math.E, math.MaxFloat64, math.SmallestNonzeroFloat64, 2.2250738585072014e-308, 1e-310} {
		check(x)
	}
	if !math.IsInf(num.Log(0), -1) || !math.IsNaN(num.Log(-1)) || !math.IsInf(num.Log(math.Inf(1)), 1) {
		t.Fatalf("special values: Log(0)=%g Log(-1)=%g Log(+Inf)=%g", num.Log(0), num.Log(-1), num.Log(math.Inf(1)))
	}
}

func BenchmarkFastLog(b *testing.B) {
	x := make([]float64, 1024)
	for i := range x {
		x[i] = float64(i+1) / 1e3
	}
	s := 0.0
	for b.Loop() {
		for _, v := range x {
			s += num.Log(v)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1024, "ns/log")
	_ = s
}

func BenchmarkLineTerms(b *testing.B) {
	mu := make([]float64, 11000)
	nu := make([]float64, 11000)
	for i := range mu {
		mu[i] = float64(i%97+1) / 1e4
		nu[i] = float64(i%89+1) / 1e4
	}
	for b.Loop() {
		num.LineTerms(mu, nu, 0.3)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/11000, "ns/entry")
}

// TestLogVecAndLogInto checks LogVec (the vector logarithm where the CPU
// has one, else Log) on positive normal numbers across the range and next
// to 1, to 2 ulps or Log's 2.5e-16·max(1, |log x|) of math.Log, and
// LogInto on everything else too: zero, subnormal,
// negative, infinite and NaN entries give what math.Log gives.
func TestLogVecAndLogInto(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 32))
	var xs []float64
	for range 100000 {
		xs = append(xs, math.Float64frombits(uint64(1+rng.Int64N(0x7fe))<<52|rng.Uint64()&(1<<52-1)))
	}
	for k := 1; k < 53; k++ {
		xs = append(xs, 1+math.Ldexp(1, -k), 1-math.Ldexp(1, -k))
	}
	xs = append(xs, 1, 2, 0.5, 0x1p-1022, math.MaxFloat64)
	for _, n := range []int{len(xs), len(xs) - 1, len(xs) - 2, len(xs) - 3} {
		got := make([]float64, n)
		num.LogVec(got, xs[:n])
		for i, x := range xs[:n] {
			want := math.Log(x)
			if math.Abs(got[i]-want) > max(2*ulp(want), 2.5e-16*max(1, math.Abs(want))) {
				t.Fatalf("n=%d: LogVec(%v) = %.17g, math.Log %.17g", n, x, got[i], want)
			}
		}
	}
	special := []float64{0, math.Copysign(0, -1), 4.9e-324, 3e-310, -1, math.Inf(1), math.Inf(-1), math.NaN(), 0.25, 7}
	got := make([]float64, len(special))
	num.LogInto(got, special)
	for i, x := range special {
		want := math.Log(x)
		if !(got[i] == want || math.IsNaN(got[i]) && math.IsNaN(want) || math.Abs(got[i]-want) <= max(2*ulp(want), 2.5e-16*max(1, math.Abs(want)))) {
			t.Fatalf("LogInto(%v) = %v, math.Log %v", x, got[i], want)
		}
	}
}

// ulp returns the spacing of float64 numbers at x.
func ulp(x float64) float64 {
	x = math.Abs(x)
	return math.Nextafter(x, math.Inf(1)) - x
}

// BenchmarkLogVec times, per entry of an 11,616-entry block (a CoNLL-2000
// sentence's edge entries), LogVec, the scalar table logarithm LogInto
// used before it, and a division per entry for scale:
//
//	go test ./internal/num -run '^$' -bench LogVec
func BenchmarkLogVec(b *testing.B) {
	src := make([]float64, 11616)
	for i := range src {
		src[i] = math.Exp(-float64(i%977) / 7)
	}
	dst := make([]float64, len(src))
	for _, c := range []struct {
		name string
		f    func()
	}{
		{"LogVec", func() { num.LogVec(dst, src) }},
		{"Log", func() {
			for i, x := range src {
				dst[i] = num.Log(x)
			}
		}},
		{"divide", func() {
			for i, x := range src {
				dst[i] = 1 / x
			}
		}},
	} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				c.f()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(src)), "ns/entry")
		})
	}
}
