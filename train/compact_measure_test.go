package train

import (
	"context"
	"math"
	"testing"
	"unsafe"

	"github.com/dualcrf/dualcrf/crf"
	"github.com/dualcrf/dualcrf/duals"
)

// The measurement of the duals' precisions (docs/long-runs.md, "Compact
// duals"): SDCA-GAP runs with float64 duals, with the float32 Markov form,
// and with three 16-bit forms of the conditionals, kept by store16 below:
//
//   - bf16: each conditional rounded to bfloat16 (float32's exponent, 8
//     significant bits);
//   - f16: rounded to IEEE half precision (11 significant bits, nothing
//     below 2^-24);
//   - u16: a 16-bit fixed point, round(65535·q) (nothing below 2^-17);
//
// the first clique kept in float32 as in the float32 form (bf16all: in
// bfloat16 too), every row renormalised when read, so that every block read is a chain: the
// certificate is honest by construction, and what is measured is the
// epochs the rounding costs.

// store16 keeps blocks with 16-bit conditionals (kind "bf16", "f16" or
// "u16"): the first clique's F entries in float32 (in 16 bits too with
// all16: kind "bf16all"), then the later edges' conditionals in 16 bits,
// each block's bytes rounded up to 4.
type store16 struct {
	kind  string
	all16 bool
	K     int
	off   []int64
	data  []byte
}

func newStore16(d *crf.Dataset, kind string) *store16 {
	s := &store16{kind: kind, K: d.NumLabels, off: []int64{0}}
	if kind == "bf16all" {
		s.kind, s.all16 = "bf16", true
	}
	for i := 0; i < d.Len(); i++ {
		n := crf.BlockLen(d.SentStart[i+1]-d.SentStart[i], d.NumLabels)
		F := n
		if n != d.NumLabels {
			F = d.NumLabels * d.NumLabels
		}
		if s.all16 {
			F = 0
		}
		b := int64(4*F+2*(n-F)+3) / 4 * 4
		s.off = append(s.off, s.off[i]+b)
	}
	s.data = make([]byte, s.off[len(s.off)-1])
	return s
}

func (s *store16) Len() int                   { return len(s.off) - 1 }
func (s *store16) Precision() duals.Precision { return duals.Float32 } // rounds: not exact
func (s *store16) Raw(i int) []byte           { return s.data[s.off[i]:s.off[i+1]] }
func (s *store16) Close() error               { return nil }
func (s *store16) first(n int) int {
	if n == s.K {
		return n
	}
	return s.K * s.K
}

// parts views block i's bytes as its float32 first clique and 16-bit rest
// (with all16, no float32 part: the first clique is the rest's first F).
func (s *store16) parts(i, n int) ([]float32, []uint16) {
	b := s.Raw(i)
	F := s.first(n)
	if s.all16 {
		return nil, unsafe.Slice((*uint16)(unsafe.Pointer(&b[0])), n)
	}
	q := unsafe.Slice((*float32)(unsafe.Pointer(&b[0])), F)
	var c []uint16
	if n > F {
		c = unsafe.Slice((*uint16)(unsafe.Pointer(&b[4*F])), n-F)
	}
	return q, c
}

func (s *store16) to16(q float64) uint16 {
	switch s.kind {
	case "bf16":
		b := math.Float32bits(float32(q))
		b += 0x7fff + (b>>16)&1
		return uint16(b >> 16)
	case "f16":
		return halfBits(float32(q))
	default:
		return uint16(math.Round(min(max(q, 0), 1) * 65535))
	}
}

func (s *store16) from16(c uint16) float64 {
	switch s.kind {
	case "bf16":
		return float64(math.Float32frombits(uint32(c) << 16))
	case "f16":
		return halfValue(c)
	default:
		return float64(c) / 65535
	}
}

// halfBits rounds x in [0, 1] to IEEE half precision, to nearest even,
// subnormals included.
func halfBits(x float32) uint16 {
	b := math.Float32bits(x)
	e := int(b>>23) - 127
	switch {
	case b == 0:
		return 0
	case e < -14: // subnormal: units of 2^-24
		return uint16(math.RoundToEven(float64(x) * 0x1p24))
	}
	m, rest := b&0x7fffff>>13, b&0x1fff
	if rest > 0x1000 || rest == 0x1000 && m&1 == 1 {
		m++ // a carry into the exponent is the right rounding
	}
	return uint16(uint32(e+15)<<10 + m)
}

// halfValues holds every half's value (halfValue).
var halfValues = func() []float64 {
	v := make([]float64, 1<<16)
	for c := range v {
		e, m := c>>10&31, float64(c&1023)
		if e == 0 {
			v[c] = m * 0x1p-24
		} else {
			v[c] = math.Ldexp(1+m/1024, e-15)
		}
	}
	return v
}()

func halfValue(c uint16) float64 { return halfValues[c] }

// Put encodes mu (the first clique in float32, rows of conditionals in 16
// bits) and sets mu to the block as stored (Load).
func (s *store16) Put(i int, mu []float64) {
	K := s.K
	q, c := s.parts(i, len(mu))
	F := len(q)
	for j := range q {
		q[j] = float32(mu[j])
	}
	r0 := 0
	if s.all16 { // the first clique's marginals, in 16 bits
		r0 = s.first(len(mu))
		for j := range r0 {
			c[j] = s.to16(mu[j])
		}
	}
	for r := r0; r < len(c); r += K {
		row := mu[F+r : F+r+K]
		sum := 0.0
		for _, v := range row {
			sum += v
		}
		for j, v := range row {
			if sum > 0x1p-1000 {
				c[r+j] = s.to16(v / sum)
			} else {
				c[r+j] = s.to16(1 / float64(K))
			}
		}
	}
	s.Load(i, mu)
}

// Load decodes block i into mu as a chain.
func (s *store16) Load(i int, mu []float64) {
	K := s.K
	q, c := s.parts(i, len(mu))
	F := len(q)
	if s.all16 { // the first clique from its 16 bits
		F = s.first(len(mu))
		z := 0.0
		for _, v := range c[:F] {
			z += s.from16(v)
		}
		for j, v := range c[:F] {
			mu[j] = s.from16(v) / z
		}
		c = c[F:]
	} else {
		z := 0.0
		for _, v := range q {
			z += float64(v)
		}
		for j, v := range q {
			mu[j] = float64(v) / z
		}
	}
	if len(mu) == F {
		return
	}
	a := make([]float64, K)
	for j := 0; j < F; j++ {
		a[j%K] += mu[j]
	}
	next := make([]float64, K)
	for at := 0; at < len(c); at += K * K {
		clear(next)
		for y := 0; y < K; y++ {
			r := at + y*K
			rs := 0.0
			for _, v := range c[r : r+K] {
				rs += s.from16(v)
			}
			for j, v := range c[r : r+K] {
				x := a[y] / float64(K)
				if rs > 0 {
					x = s.from16(v) * (a[y] / rs)
				}
				mu[F+r+j] = x
				next[j] += x
			}
		}
		a, next = next, a
	}
}

// TestHalfBits checks the half-precision rounding against exact cases.
func TestHalfBits(t *testing.T) {
	for _, c := range []struct {
		x    float32
		bits uint16
	}{{1, 0x3c00}, {0.5, 0x3800}, {0x1p-14, 0x0400}, {0x1p-24, 0x0001}, {0x1p-26, 0}, {0.1, 0x2e66}, {1 - 0x1p-12, 0x3c00}} {
		if got := halfBits(c.x); got != c.bits {
			t.Errorf("halfBits(%v) = %#04x, want %#04x", c.x, got, c.bits)
		}
		if c.bits != 0 && c.x != 1-0x1p-12 && c.x != 0.1 && halfValue(c.bits) != float64(c.x) {
			t.Errorf("halfValue(%#04x) = %v, want %v", c.bits, halfValue(c.bits), c.x)
		}
	}
}

// TestStore16Chains: the 16-bit stores' blocks read back are chains, and
// SDCA on them keeps w = ŵ(μ) and an exact gap identity — what makes their
// measurement meaningful.
func TestStore16Chains(t *testing.T) {
	for _, kind := range []string{"bf16", "bf16all", "f16", "u16"} {
		p := randomProblem(t, 17, 10, 4, 6, 3, true, 0)
		s := newStore16(p.Data, kind)
		m := &SDCA{Sampler: kindSampler(t, SamplerUniform, p), Seed: 3, Duals: s}
		if err := m.Init(p); err != nil {
			t.Fatal(err)
		}
		for range 5 {
			if err := m.Epoch(context.Background()); err != nil {
				t.Fatal(err)
			}
		}
		bp, bd, bkl := bruteCertificate(t, p, s)
		if math.Abs(bp-bd-bkl) > 1e-12 {
			t.Fatalf("%s: P − D = %.17g, mean KL %.17g", kind, bp-bd, bkl)
		}
		what := mustWhat(t, p, s)
		for j, v := range what {
			if math.Abs(v-m.st.w[j]) > 1e-11*max(1, math.Abs(v)) {
				t.Fatalf("%s: w[%d] = %.17g, ŵ(μ) %.17g", kind, j, m.st.w[j], v)
			}
		}
	}
}
