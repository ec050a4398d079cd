package train

// Streaming checkpoint reads: a snapshot's duals are read back block by
// block through duals.Sweep, so that resuming does not hold a second copy
// of μ in the process's memory.

import (
	"hash/crc32"

	"github.com/dualcrf/dualcrf/duals"
)

// castagnoli is the CRC-32C table of the duals' checksums.
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// CopyDuals copies the checkpoint's duals into dst block by block, keeping
// little of the snapshot's file in memory at a time.
func (c *Checkpoint) CopyDuals(dst duals.Store) {
	block := duals.Sweep(c.Duals)
	for i := 0; i < dst.Len(); i++ {
		copy(dst.Block(i), block(i))
	}
}

// sweeping is a dual store read in increasing block order through a sweep.
type sweeping struct {
	duals.Store
	block func(i int) []float64
}

// Block returns μ_i.
func (s sweeping) Block(i int) []float64 { return s.block(i) }
