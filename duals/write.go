package duals

// Streaming I/O of a store's duals for checkpoints: a store's duals are
// written to a new File-format file through a small buffer, and a File is
// read back block by block with the pages behind the reader dropped, so
// that neither saving nor resuming holds a second copy of μ in the
// process's memory (a mapped file's pages count in its resident set for as
// long as they stay mapped).

import (
	"bufio"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"unsafe"

	"github.com/dualcrf/dualcrf/crf"
	"github.com/dualcrf/dualcrf/internal/platform"
)

// sweepDrop is how many bytes of a mapped duals file a sweep reads between
// two drops of the pages behind it.
const sweepDrop = 32 << 20

// WriteFile writes the duals in src (d's) to a new file at path in the
// File format — header page, μ, zero padding — streaming through a small
// buffer, syncs it, and returns the CRC-32C of μ's bytes. On error the file
// is removed.
func WriteFile(path string, d *crf.Dataset, src Store) (crc uint32, err error) {
	if err := checkHost(path); err != nil {
		return 0, err
	}
	off := BlockOffsets(d)
	if src.Len() != d.Len() {
		return 0, fmt.Errorf("write duals file %s: %d blocks for %d sentences", path, src.Len(), d.Len())
	}
	h := headerFor(d, off)
	f, err := platform.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o666)
	if err != nil {
		return 0, fmt.Errorf("create duals file: %w", err)
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(path)
		}
	}()
	bw := bufio.NewWriterSize(f, 1<<20)
	if _, err := bw.Write(h.encode()); err != nil {
		return 0, fmt.Errorf("write duals file %s: %w", path, err)
	}
	for i := 0; i < src.Len(); i++ {
		b := floatBytes(src.Block(i))
		crc = crc32.Update(crc, castagnoli, b)
		if _, err := bw.Write(b); err != nil {
			return 0, fmt.Errorf("write duals file %s: %w", path, err)
		}
	}
	var zero [4096]byte
	for pad := int64(h.size) - headerSize - 8*off[len(off)-1]; pad > 0; pad -= int64(len(zero)) {
		if _, err := bw.Write(zero[:min(pad, int64(len(zero)))]); err != nil {
			return 0, fmt.Errorf("write duals file %s: %w", path, err)
		}
	}
	if err := bw.Flush(); err != nil {
		return 0, fmt.Errorf("write duals file %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		return 0, fmt.Errorf("sync duals file %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return 0, fmt.Errorf("close duals file %s: %w", filepath.Base(path), err)
	}
	return crc, nil
}

// Sweep returns Block for a pass over s in increasing block order: when s
// is a File, the pages of the blocks already passed are dropped from the
// process's memory every 32 MiB (their data stays in the file and the page
// cache). Other stores are returned as they are.
func Sweep(s Store) func(i int) []float64 {
	fs, ok := s.(*File)
	if !ok {
		return s.Block
	}
	dropped := int64(0) // entries before this have been dropped
	return func(i int) []float64 {
		// At the last block, what is left behind it goes too.
		if at := fs.off[i]; 8*(at-dropped) >= sweepDrop || i == fs.Len()-1 {
			fs.m.DropPages(headerSize+8*dropped, headerSize+8*at)
			dropped = at
		}
		return fs.Block(i)
	}
}

// reader returns a function that reads src's blocks in increasing order,
// changing nothing: Sweep's Block, and for a Stream one that writes no
// block back and returns the errors of its reads (Block would panic).
func reader(src Store) func(i int) ([]float64, error) {
	if s, ok := src.(*Stream); ok {
		return s.read
	}
	block := Sweep(src)
	return func(i int) ([]float64, error) { return block(i), nil }
}

// floatBytes views v as its bytes (little-endian hosts only: checkHost).
func floatBytes(v []float64) []byte {
	if len(v) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(v))), 8*len(v))
}
