package train

import (
	"github.com/dualcrf/dualcrf/crf"
)

// DualStore holds the dual variables μ_i: for each sentence its clique
// marginals (crf.BlockLen(T_i, K) numbers), one flat array with an offset
// per sentence. Their logarithms are not kept: SDCA takes them when it
// visits a block, four at a time, which costs less than moving a second
// array of the same size to and from memory (and halves the store).
type DualStore interface {
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

// MemoryStore keeps the duals in one in-memory float64 slice.
type MemoryStore struct {
	off  []int64
	data []float64
}

// NewMemoryStore allocates duals for d, all zero.
func NewMemoryStore(d *crf.Dataset) *MemoryStore {
	off := BlockOffsets(d)
	n := off[len(off)-1]
	return &MemoryStore{off: off, data: make([]float64, n)}
}

// Block returns μ_i.
func (m *MemoryStore) Block(i int) []float64 { return m.data[m.off[i]:m.off[i+1]:m.off[i+1]] }

// Len returns the number of blocks.
func (m *MemoryStore) Len() int { return len(m.off) - 1 }

// Close drops the data.
func (m *MemoryStore) Close() error { m.data = nil; return nil }

var _ DualStore = (*MemoryStore)(nil)
