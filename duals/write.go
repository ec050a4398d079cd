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
// File format, at src's precision — header page, μ's encoded blocks, zero
// padding — streaming through a small buffer, syncs it, and returns the
// CRC-32C of μ's bytes. On error the file is removed.
func WriteFile(path string, d *crf.Dataset, src Store) (crc uint32, err error) {
	if err := checkHost(path); err != nil {
		return 0, err
	}
	if src.Len() != d.Len() {
		return 0, fmt.Errorf("write duals file %s: %d blocks for %d sentences", path, src.Len(), d.Len())
	}
	p := src.Precision()
	h := headerFor(d, p)
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
	read := rawReader(src)
	for i := 0; i < src.Len(); i++ {
		b, err := read(i)
		if err != nil {
			return 0, fmt.Errorf("write duals file %s: %w", path, err)
		}
		crc = crc32.Update(crc, castagnoli, b)
		if _, err := bw.Write(b); err != nil {
			return 0, fmt.Errorf("write duals file %s: %w", path, err)
		}
	}
	var zero [4096]byte
	for pad := int64(h.size) - headerSize - p.Bytes(d); pad > 0; pad -= int64(len(zero)) {
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

// Sweep returns Raw for a pass over s in increasing block order: the
// pages of the blocks already passed are dropped from the process's memory
// every 32 MiB (their data stays in the file and the page cache).
func (s *File) Sweep() func(i int) []byte {
	dropped := int64(0) // bytes of μ before this have been dropped
	return func(i int) []byte {
		// At the last block, what is left behind it goes too.
		if at := s.off[i]; at-dropped >= sweepDrop || i == s.Len()-1 {
			s.m.DropPages(headerSize+dropped, headerSize+at)
			dropped = at
		}
		return s.Raw(i)
	}
}

// SweepReader returns a Reader of s for one pass in increasing block
// order, from one goroutine, that drops the pages behind it (Sweep).
func (s *File) SweepReader() Reader {
	return &sweepReader{n: s.Len(), p: s.prec, K: s.K, raw: s.Sweep()}
}

type sweepReader struct {
	n   int
	p   Precision
	K   int
	raw func(i int) []byte
}

func (r *sweepReader) Len() int                 { return r.n }
func (r *sweepReader) Load(i int, mu []float64) { r.p.Decode(mu, r.raw(i), r.K) }
func (r *sweepReader) InOrder()                 {}

// InOrder reports whether r's blocks must be loaded in increasing order,
// from one goroutine (a File's SweepReader).
func InOrder(r Reader) bool {
	_, ok := r.(interface{ InOrder() })
	return ok
}

// rawReader returns a function that reads src's encoded blocks in
// increasing order, changing nothing: a File's Sweep, a Stream's blocks
// loaded without being written back (an error reading one returned, where
// Raw would panic), and other stores' Raw.
func rawReader(src Store) func(i int) ([]byte, error) {
	switch s := src.(type) {
	case *Stream:
		return s.read
	case *File:
		raw := s.Sweep()
		return func(i int) ([]byte, error) { return raw(i), nil }
	}
	return func(i int) ([]byte, error) { return src.Raw(i), nil }
}

// floatBytes views v as its bytes (little-endian hosts only: checkHost).
func floatBytes(v []float64) []byte {
	if len(v) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(v))), 8*len(v))
}
