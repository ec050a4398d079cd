package train

// Streaming checkpoint reads: a snapshot's duals are read back block by
// block through a File's Sweep, so that resuming does not hold a second
// copy of μ in the process's memory.

import (
	"hash/crc32"

	"github.com/dualcrf/dualcrf/duals"
)

// castagnoli is the CRC-32C table of the duals' checksums.
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// CopyDuals copies the checkpoint's duals into dst block by block, keeping
// little of the snapshot's file in memory at a time: their encoded bytes
// when dst keeps the snapshot's precision, else each block decoded and put.
func (c *Checkpoint) CopyDuals(dst duals.Store) {
	if dst.Precision() == c.Duals.Precision() {
		raw := c.Duals.Sweep()
		for i := 0; i < dst.Len(); i++ {
			copy(dst.Raw(i), raw(i))
		}
		return
	}
	r := c.Duals.SweepReader()
	var mu []float64
	for i := 0; i < dst.Len(); i++ {
		mu = grow(mu, len(dst.Raw(i))/int(dst.Precision().EntryBytes()))
		r.Load(i, mu)
		dst.Put(i, mu)
	}
}
