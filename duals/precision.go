package duals

import (
	"fmt"
	"unsafe"

	"github.com/dualcrf/dualcrf/crf"
)

// Precision is how a store encodes each sentence's block of duals. Its
// value is the dtype code the duals files record.
//
// Float64 keeps the clique marginals μ_t(y,y') as they are. Float32 keeps
// them as a Markov chain in float32: the first clique's marginals (the
// edge μ_1(y,y'), or the node of a one-token sentence) and, for every
// later edge, the conditionals μ_t(y,y')/μ_t(y) — as many numbers as
// Float64, in half the bytes. A block is read back (Decode) in float64 as
// the marginals of that chain: the first clique renormalised to sum to
// one, each row of conditionals renormalised and scaled by the node
// marginal the previous edge gives. Every block read back is therefore
// consistent (adjacent edges agree on their node) and sums to one: a
// point of the marginal polytope, whose dual D(μ) is a true lower bound,
// so certificates stay honest. (Rounding the marginals themselves to
// float32 leaves the polytope: D then exceeds the optimum by about 1e-6
// and certificates go negative.)
//
// BFloat16 keeps the same chain with every number a bfloat16 (float32's
// exponent, 8 significant bits): a quarter of float64's bytes. Its blocks
// are chains too, its certificates as honest; it reaches a gap of 1e-4 in
// the epochs float64 takes, but its rounding stops SDCA's progress near a
// gap of 3e-5: for tighter gaps use Float32.
type Precision uint32

const (
	// Float64 keeps each dual entry as a float64: exact, 8 bytes an entry.
	Float64 Precision = 1
	// Float32 keeps each block as a Markov chain in float32: 4 bytes an
	// entry (see Precision).
	Float32 Precision = 2
	// BFloat16 keeps each block as a Markov chain in bfloat16: 2 bytes an
	// entry (see Precision).
	BFloat16 Precision = 3
	// DefaultPrecision is the precision of SDCA's duals when none is
	// given.
	DefaultPrecision = Float32
)

// Precisions lists the precisions, in the order the flag's help names them.
var Precisions = []Precision{Float32, Float64, BFloat16}

// String returns the precision's name: "float64" or "float32".
func (p Precision) String() string {
	switch p {
	case Float64:
		return "float64"
	case Float32:
		return "float32"
	case BFloat16:
		return "bfloat16"
	}
	return fmt.Sprintf("precision(%d)", uint32(p))
}

// ParsePrecision returns the precision named s ("float32", "float64" or
// "bfloat16").
func ParsePrecision(s string) (Precision, error) {
	for _, p := range Precisions {
		if s == p.String() {
			return p, nil
		}
	}
	return 0, fmt.Errorf("dual precision %q: want float32, float64 or bfloat16", s)
}

// Valid reports whether p is a precision this build knows.
func (p Precision) Valid() bool { return p == Float64 || p == Float32 || p == BFloat16 }

// EntryBytes returns the bytes of one dual entry: 8, 4 or 2.
func (p Precision) EntryBytes() int64 {
	switch p {
	case Float32:
		return 4
	case BFloat16:
		return 2
	}
	return 8
}

// BlockBytes returns the bytes of the block of a sentence of T tokens over
// K labels.
func (p Precision) BlockBytes(T, K int) int64 {
	return p.EntryBytes() * int64(crf.BlockLen(T, K))
}

// Offsets returns the byte offset of each sentence's block in a flat
// array of d's duals at precision p (len n+1; the last entry is the total).
func (p Precision) Offsets(d *crf.Dataset) []int64 {
	off := BlockOffsets(d)
	b := p.EntryBytes()
	for i := range off {
		off[i] *= b
	}
	return off
}

// Bytes returns the bytes the duals of d take at precision p: what a
// memory estimate counts for them.
func (p Precision) Bytes(d *crf.Dataset) int64 {
	return p.EntryBytes() * Entries(d)
}

// Entries returns the number of dual entries of d, Σ_i BlockLen(T_i, K).
func Entries(d *crf.Dataset) int64 {
	n := int64(0)
	for i := 0; i < d.Len(); i++ {
		n += int64(crf.BlockLen(d.SentStart[i+1]-d.SentStart[i], d.NumLabels))
	}
	return n
}

// Decode sets mu, a block of len(mu) = crf.BlockLen(T, K) entries, to the
// block that raw (p.BlockBytes(T, K) bytes) encodes. It allocates nothing
// and may run on many goroutines at once.
func (p Precision) Decode(mu []float64, raw []byte, K int) {
	switch p {
	case Float32:
		decode32Kernel(mu, float32View(raw)[:len(mu)], K)
	case BFloat16:
		decode16Kernel(mu, uint16View(raw)[:len(mu)], K)
	default:
		copy(mu, float64View(raw)[:len(mu)])
	}
}

// Encode writes the encoding of the block mu into raw and sets mu to what
// Decode returns from it: the block as stored. Float64 leaves mu as it
// is; Float32 rounds it to the nearest consistent chain of float32
// conditionals.
func (p Precision) Encode(raw []byte, mu []float64, K int) {
	switch p {
	case Float32:
		q := float32View(raw)[:len(mu)]
		encode32Kernel(q, mu, K)
		decode32Kernel(mu, q, K)
	case BFloat16:
		q := uint16View(raw)[:len(mu)]
		encode16Kernel(q, mu, K)
		decode16Kernel(mu, q, K)
	default:
		copy(float64View(raw)[:len(mu)], mu)
	}
}

// DecodeMarginals is Decode on the block of a sentence of T tokens that
// also sets node (T×K) to its node marginals and sum (K×K) to its edges
// summed over the positions (sum is left alone when T = 1), from the
// decoding's own sums (for Float32: the chain's node marginals as it forms
// them) — one pass over the block where Decode and a second pass would
// take two.
func (p Precision) DecodeMarginals(mu []float64, raw []byte, T, K int, node, sum []float64) {
	switch p {
	case Float32:
		decode32MarginalsKernel(mu, float32View(raw)[:len(mu)], T, K, node, sum)
	case BFloat16:
		decode16MarginalsKernel(mu, uint16View(raw)[:len(mu)], T, K, node, sum)
	default:
		copy(mu, float64View(raw)[:len(mu)])
		marginals64(mu, T, K, node, sum)
	}
}

// EncodeMarginals is Encode that also sets node and sum as
// DecodeMarginals does from the block as stored.
func (p Precision) EncodeMarginals(raw []byte, mu []float64, T, K int, node, sum []float64) {
	switch p {
	case Float32:
		q := float32View(raw)[:len(mu)]
		encode32Kernel(q, mu, K)
		decode32MarginalsKernel(mu, q, T, K, node, sum)
	case BFloat16:
		q := uint16View(raw)[:len(mu)]
		encode16Kernel(q, mu, K)
		decode16MarginalsKernel(mu, q, T, K, node, sum)
	default:
		copy(float64View(raw)[:len(mu)], mu)
		marginals64(mu, T, K, node, sum)
	}
}

// marginals64 sets node to the node marginals of the float64 block mu —
// the row sums of each edge, the last node the columns of the last edge —
// and sum to its edges summed over the positions.
func marginals64(mu []float64, T, K int, node, sum []float64) {
	if T == 1 {
		copy(node[:K], mu[:K])
		return
	}
	sum = sum[:K*K]
	clear(sum)
	last := node[(T-1)*K : T*K]
	clear(last)
	for t := 0; t < T-1; t++ {
		for y := 0; y < K; y++ {
			row := mu[(t*K+y)*K : (t*K+y+1)*K]
			node[t*K+y] = rowSum64(row)
			for j, x := range row {
				sum[y*K+j] += x
				if t == T-2 {
					last[j] += x
				}
			}
		}
	}
}

// uint16View views b, 2-byte aligned, as uint16s (bfloat16s).
func uint16View(b []byte) []uint16 {
	if len(b) < 2 {
		return nil
	}
	return unsafe.Slice((*uint16)(unsafe.Pointer(unsafe.SliceData(b))), len(b)/2)
}

// float32View views b, 4-byte aligned, as float32s.
func float32View(b []byte) []float32 {
	if len(b) < 4 {
		return nil
	}
	return unsafe.Slice((*float32)(unsafe.Pointer(unsafe.SliceData(b))), len(b)/4)
}

// Bytes returns the bytes the duals of d take at precision p (p.Bytes(d)):
// what a memory estimate counts for duals in memory.
func Bytes(d *crf.Dataset, p Precision) int64 { return p.Bytes(d) }
