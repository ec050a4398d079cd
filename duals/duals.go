// Package duals holds the dual variables μ of SDCA training, one block of
// clique marginals per sentence, in one of three stores behind the Store
// interface:
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
)

// Store holds the dual variables μ_i: for each sentence its clique
// marginals (crf.BlockLen(T_i, K) numbers), one flat array with an offset
// per sentence. Their logarithms are not kept: SDCA takes them when it
// visits a block, four at a time, which costs less than moving a second
// array of the same size to and from memory (and halves the store).
type Store interface {
	// Block returns μ_i; writes to it are writes to the store.
	Block(i int) []float64
	// Len returns the number of blocks.
	Len() int
	// Close releases the store.
	Close() error
}

// BlockOffsets returns the offset of each sentence's block in a flat dual
// array (len n+1; the last entry is the total size).
func BlockOffsets(d *crf.Dataset) []int64 {
	off := make([]int64, d.Len()+1)
	for i := 0; i < d.Len(); i++ {
		T := d.SentStart[i+1] - d.SentStart[i]
		off[i+1] = off[i] + int64(crf.BlockLen(T, d.NumLabels))
	}
	return off
}

// Memory keeps the duals in one in-memory float64 array. Where the
// system allows (Linux, macOS) the array is anonymous memory outside the Go
// heap: the duals are most of a run's memory, and on the heap they would
// double the garbage collector's target (GOGC=100 lets the heap grow to
// twice what is live before collecting), so every temporary of a pass
// would be let pile up to their size again. Close returns the memory at
// once; a store never closed returns it when it becomes unreachable.
// Slices returned by Block must not be used after either.
type Memory struct {
	off     []int64
	data    []float64
	free    func() // returns data's memory; nil when data is on the heap
	cleanup runtime.Cleanup
}

// NewMemory allocates duals for d, all zero.
func NewMemory(d *crf.Dataset) *Memory {
	off := BlockOffsets(d)
	n := off[len(off)-1]
	m := &Memory{off: off}
	m.data, m.free = allocFloats(int(n))
	if m.free != nil {
		m.cleanup = runtime.AddCleanup(m, func(free func()) { free() }, m.free)
	}
	return m
}

// Block returns μ_i.
func (m *Memory) Block(i int) []float64 { return m.data[m.off[i]:m.off[i+1]:m.off[i+1]] }

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

var _ Store = (*Memory)(nil)
