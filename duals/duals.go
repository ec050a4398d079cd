// Package duals holds the dual variables μ of SDCA training, one block of
// clique marginals per sentence, encoded at a Precision (float64, or a
// Markov chain in float32: half the bytes), in one of three stores behind
// the Store interface, which loads a block into a step's scratch space and
// puts it back:
//
//   - Memory: one in-memory array (outside the Go heap where the system
//     allows);
//   - File: a memory-mapped file, which the kernel pages, so that the duals
//     may exceed RAM and outlive the process (also the format of a
//     checkpoint's duals, written by WriteFile);
//   - Stream: a file of block slots read and written a block at a time, three
//     blocks in memory whatever the dataset's size, with crash-consistent
//     commits for checkpoints.
//
// Fingerprint identifies the dataset a file of duals belongs to.
package duals

import (
	"runtime"

	"github.com/dualcrf/dualcrf/crf"
	"github.com/dualcrf/dualcrf/internal/platform"
)

// Reader reads the dual variables μ_i block by block: for each sentence
// its clique marginals, crf.BlockLen(T_i, K) numbers.
type Reader interface {
	// Len returns the number of blocks.
	Len() int
	// Load sets mu, of crf.BlockLen(T_i, K) entries, to μ_i. Loads of any
	// blocks may run on many goroutines at once (not with a Put of the
	// same block).
	Load(i int, mu []float64)
}

// Store holds the dual variables μ_i in one flat array of their encoded
// blocks (Precision), with a byte offset per sentence; a step loads a
// block into its scratch space, works there, and puts it back. Their
// logarithms are not kept: SDCA takes them when it visits a block, four at
// a time, which costs less than moving a second array of the same size to
// and from memory.
type Store interface {
	Reader
	// Put stores mu as μ_i and sets mu to what Load(i) returns from now
	// on: the block as stored, rounded to the store's precision. Puts of
	// distinct blocks may run on many goroutines at once.
	Put(i int, mu []float64)
	// Precision returns how the blocks are encoded.
	Precision() Precision
	// Raw returns the encoded bytes of μ_i (Precision().BlockBytes of
	// them); writes to them are writes to the store. For copying blocks
	// between stores of one precision, and files.
	Raw(i int) []byte
	// Close releases the store.
	Close() error
}

// MarginalStore is a Store whose loads and puts also give a block's node
// marginals and its edges summed over the positions, from the decoding's
// own sums (Precision.DecodeMarginals): one pass over the block where a
// Load and a second pass would take two. Memory, File and Stream are.
type MarginalStore interface {
	Store
	// LoadMarginals is Load that also sets node (len(node) = T_i·K) and
	// sum (K×K) as Precision.DecodeMarginals does.
	LoadMarginals(i int, mu, node, sum []float64)
	// PutMarginals is Put that also sets node and sum, from the block as
	// stored.
	PutMarginals(i int, mu, node, sum []float64)
	// Prefetch asks the processor to bring μ_i's bytes into its cache,
	// for a load soon after (a hint: it changes nothing else).
	Prefetch(i int)
}

// BlockOffsets returns the offset of each sentence's block in a flat dual
// array, in entries (len n+1; the last entry is the total size).
func BlockOffsets(d *crf.Dataset) []int64 {
	off := make([]int64, d.Len()+1)
	for i := 0; i < d.Len(); i++ {
		T := d.SentStart[i+1] - d.SentStart[i]
		off[i+1] = off[i] + int64(crf.BlockLen(T, d.NumLabels))
	}
	return off
}

// Memory keeps the duals in one in-memory array of their encoded blocks.
// Where the system allows (Linux, macOS) the array is anonymous memory
// outside the Go heap: the duals are most of a run's memory, and on the
// heap they would double the garbage collector's target (GOGC=100 lets the
// heap grow to twice what is live before collecting), so every temporary
// of a pass would be let pile up to their size again. Close returns the
// memory at once; a store never closed returns it when it becomes
// unreachable. Slices returned by Raw and Floats must not be used after
// either.
type Memory struct {
	prec    Precision
	K       int
	off     []int64 // byte offsets
	data    []byte
	free    func() // returns data's memory; nil when data is on the heap
	cleanup runtime.Cleanup
}

// NewMemory allocates duals for d at precision p, every byte zero.
func NewMemory(d *crf.Dataset, p Precision) *Memory {
	off := p.Offsets(d)
	n := off[len(off)-1]
	m := &Memory{prec: p, K: d.NumLabels, off: off}
	floats, free := platform.AllocFloats(int((n + 7) / 8))
	m.data, m.free = floatBytes(floats)[:n:n], free
	if m.free != nil {
		m.cleanup = runtime.AddCleanup(m, func(free func()) { free() }, m.free)
	}
	return m
}

// Load sets mu to μ_i.
func (m *Memory) Load(i int, mu []float64) { m.prec.Decode(mu, m.Raw(i), m.K) }

// Put stores mu as μ_i and sets mu to the block as stored.
func (m *Memory) Put(i int, mu []float64) { m.prec.Encode(m.Raw(i), mu, m.K) }

// LoadMarginals is Load that also sets node and sum (MarginalStore).
func (m *Memory) LoadMarginals(i int, mu, node, sum []float64) {
	m.prec.DecodeMarginals(mu, m.Raw(i), len(node)/m.K, m.K, node, sum)
}

// PutMarginals is Put that also sets node and sum (MarginalStore).
func (m *Memory) PutMarginals(i int, mu, node, sum []float64) {
	m.prec.EncodeMarginals(m.Raw(i), mu, len(node)/m.K, m.K, node, sum)
}

// Prefetch asks for μ_i's bytes in the processor's cache (MarginalStore).
func (m *Memory) Prefetch(i int) { prefetch(m.Raw(i)) }

// Raw returns the encoded bytes of μ_i.
func (m *Memory) Raw(i int) []byte { return m.data[m.off[i]:m.off[i+1]:m.off[i+1]] }

// Floats returns block i of a Float64 store as float64s in place: writes
// to them are writes to the store. It panics for another precision. (For
// float64 arrays laid out as the duals, such as OEG's potentials.)
func (m *Memory) Floats(i int) []float64 {
	if m.prec != Float64 {
		panic("duals: Memory.Floats on a store of precision " + m.prec.String())
	}
	v := float64View(m.Raw(i))
	return v[:len(v):len(v)]
}

// Precision returns the store's precision.
func (m *Memory) Precision() Precision { return m.prec }

// Len returns the number of blocks.
func (m *Memory) Len() int { return len(m.off) - 1 }

// Close releases the data.
func (m *Memory) Close() error {
	if m.free != nil {
		m.cleanup.Stop()
		m.free()
		m.free = nil
	}
	m.data = nil
	return nil
}

// OffHeap reports whether Memory keeps the duals outside the Go heap on
// this system.
const OffHeap = platform.AllocOffHeap

var _ MarginalStore = (*Memory)(nil)
