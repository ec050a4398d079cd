package duals

// The duals file: one page of header, then μ as one flat, page-aligned
// array of its encoded blocks (Precision: little-endian float64, or the
// float32 Markov form), indexed by BlockOffsets. The offset table is
// derived from the dataset, so the file keeps only its checksum.
//
//	off  size  field
//	  0     8  magic "DUALCRF\x00"
//	  8     4  format version (2; version 1 also held log μ)
//	 12     4  dtype code: the Precision (1 = float64, 2 = float32 Markov form, 3 = bfloat16 Markov form; little-endian)
//	 16     8  K, labels
//	 24     8  n, sentences (blocks)
//	 32     8  entries, Σ_i BlockLen(T_i, K)
//	 40     8  byte offset of μ (4096)
//	 48     8  0 (version 1: byte offset of log μ)
//	 56     8  file size
//	 64    32  dataset fingerprint (Fingerprint)
//	 96    32  SHA-256 of the offset table (int64 little-endian)
//	128     4  CRC-32C of bytes 0–127
//
// The header is written and fsynced only after the file has its full size,
// so a crash during creation leaves a file without the magic, which
// OpenFile refuses. The whole file is mapped shared (MAP_SHARED; a
// read-write file mapping on Windows): the kernel pages it, and writes
// through Put reach the file (platform.MapShared).

import (
	"bufio"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"math"
	"os"
	"path/filepath"
	"unsafe"

	"github.com/dualcrf/dualcrf/crf"
	"github.com/dualcrf/dualcrf/internal/platform"
)

const (
	fileMagic   = "DUALCRF\x00"
	fileVersion = 2
	headerSize  = 4096 // also the alignment of both arrays, whatever the host's page size
	headerCRCAt = 128
	headerUsed  = headerCRCAt + 4
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// ErrFormat marks a duals file that is not one, is of another format
// version, is truncated or has a corrupted header.
var ErrFormat = errors.New("duals: unusable duals file")

// ErrMismatch marks a duals file made for another dataset.
var ErrMismatch = errors.New("duals: file belongs to another dataset")

// FileError reports why a duals file was refused. Err is
// ErrFormat, ErrMismatch or a system error, or an *option.Error wrapping
// one when Msg advises an option (named as stage.TrainOptions names it).
type FileError struct {
	Path string
	Msg  string
	Err  error
}

// Error returns "path: message".
func (e *FileError) Error() string { return e.Path + ": " + e.Msg }

// Unwrap returns the error's kind.
func (e *FileError) Unwrap() error { return e.Err }

// File keeps the duals in a memory-mapped file (MAP_SHARED), so that
// they may exceed RAM and survive the process. The file is locked (flock;
// LockFileEx on Windows) while open. Slices returned by Raw must not be
// used after Close.
type File struct {
	path string
	prec Precision
	K    int
	f    *os.File
	m    *platform.Mapping // the whole file
	mem  []byte            // m's bytes
	off  []int64           // byte offsets of the blocks in data
	data []byte            // μ's encoded blocks
}

// fileHeader is the decoded header.
type fileHeader struct {
	version, dtype     uint32
	K, n, entries      uint64
	muAt, logAt, size  uint64 // logAt: 0 since version 2 (no log μ array)
	fingerprint, table [32]byte
	crc                uint32
}

// CreateFile creates a new duals file for d at path, of precision p,
// every byte of μ zero, and maps it. It refuses to overwrite an existing
// file (use OpenFile to reuse one). On error no file is left behind.
func CreateFile(path string, d *crf.Dataset, p Precision) (*File, error) {
	if err := checkHost(path); err != nil {
		return nil, err
	}
	h := headerFor(d, p)
	if h.size > math.MaxInt {
		return nil, &FileError{Path: path, Msg: fmt.Sprintf("%d bytes cannot be mapped on this host", h.size), Err: ErrFormat}
	}
	f, err := platform.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o666)
	if err != nil {
		if errors.Is(err, os.ErrExist) {
			return nil, fmt.Errorf("create duals file: %w (reuse it with duals.OpenFile, or remove it)", err)
		}
		return nil, fmt.Errorf("create duals file: %w", err)
	}
	s, err := initFile(f, path, h, d)
	if err != nil {
		f.Close()
		os.Remove(path)
		return nil, err
	}
	return s, nil
}

// initFile locks and sizes a new file, writes its header and maps it.
func initFile(f *os.File, path string, h fileHeader, d *crf.Dataset) (*File, error) {
	if err := lock(f, path); err != nil {
		return nil, err
	}
	if err := platform.Allocate(f, int64(h.size)); err != nil {
		return nil, fmt.Errorf("size duals file %s to %d bytes: %w", path, h.size, err)
	}
	// Size first, header second: the header must never describe space the
	// file does not have.
	if err := f.Sync(); err != nil {
		return nil, fmt.Errorf("sync duals file %s: %w", path, err)
	}
	if _, err := f.WriteAt(h.encode(), 0); err != nil {
		return nil, fmt.Errorf("write duals file header %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		return nil, fmt.Errorf("sync duals file %s: %w", path, err)
	}
	if err := platform.SyncDir(filepath.Dir(path)); err != nil {
		return nil, err
	}
	return mapFile(f, path, h, d)
}

// OpenFile maps an existing duals file after checking that it is one,
// complete, uncorrupted, and made for d. Its precision is the file's
// (Precision).
func OpenFile(path string, d *crf.Dataset) (*File, error) {
	if err := checkHost(path); err != nil {
		return nil, err
	}
	f, err := platform.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return nil, fmt.Errorf("open duals file: %w", err)
	}
	s, err := openFile(f, path, d)
	if err != nil {
		f.Close()
		return nil, err
	}
	return s, nil
}

// openFile locks f, checks its header against its size and d, and maps it.
func openFile(f *os.File, path string, d *crf.Dataset) (*File, error) {
	if err := lock(f, path); err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("stat duals file: %w", err)
	}
	h, err := readHeader(f, path, st.Size())
	if err != nil {
		return nil, err
	}
	if err := h.matches(path, headerFor(d, Precision(h.dtype))); err != nil {
		return nil, err
	}
	return mapFile(f, path, h, d)
}

// readHeader reads and validates the header of a file of the given size,
// without reference to any dataset.
func readHeader(f *os.File, path string, size int64) (fileHeader, error) {
	if size < headerSize {
		return parseHeader(nil, path, size)
	}
	buf := make([]byte, headerSize)
	if _, err := f.ReadAt(buf, 0); err != nil {
		return fileHeader{}, fmt.Errorf("read duals file header %s: %w", path, err)
	}
	return parseHeader(buf, path, size)
}

// parseHeader validates the header page buf of a file of the given size:
// magic, version, checksum, dtype, layout, size, and that the rest of the
// page is zero.
func parseHeader(buf []byte, path string, size int64) (fileHeader, error) {
	bad := func(format string, a ...any) (fileHeader, error) {
		return fileHeader{}, &FileError{Path: path, Msg: fmt.Sprintf(format, a...), Err: ErrFormat}
	}
	if size < headerSize || len(buf) < headerSize {
		return bad("%d bytes, too short for a duals file (the header alone is %d)", size, headerSize)
	}
	if string(buf[:8]) == "\x00\x00\x00\x00\x00\x00\x00\x00" {
		return bad("no header: an unfinished duals file (was its creation interrupted?)")
	}
	if string(buf[:8]) != fileMagic {
		return bad("not a duals file (starts with %q, want %q)", buf[:8], fileMagic)
	}
	h := decodeHeader(buf)
	if h.version != fileVersion {
		return bad("duals file format version %d, this program reads version %d", h.version, fileVersion)
	}
	if c := crc32.Checksum(buf[:headerCRCAt], castagnoli); c != h.crc {
		return bad("header checksum %08x, computed %08x: the header is corrupted", h.crc, c)
	}
	for i := headerUsed; i < headerSize; i++ {
		if buf[i] != 0 {
			return bad("byte %d of the header page is not zero: the header is corrupted", i)
		}
	}
	if !Precision(h.dtype).Valid() {
		return bad("dtype code %d, this program reads %d (float64), %d (float32) and %d (bfloat16)", h.dtype, Float64, Float32, BFloat16)
	}
	if h.entries > math.MaxInt64/16 {
		return bad("%d entries: impossible", h.entries)
	}
	if want := layoutFor(h.entries, Precision(h.dtype)); h.muAt != want.muAt || h.logAt != want.logAt || h.size != want.size {
		return bad("inconsistent header: %d entries need arrays at %d and %d and %d bytes, the header says %d, %d and %d",
			h.entries, want.muAt, want.logAt, want.size, h.muAt, h.logAt, h.size)
	}
	if uint64(size) < h.size {
		return bad("%d bytes, the header says %d: the file is truncated", size, h.size)
	}
	if uint64(size) > h.size {
		return bad("%d bytes, the header says %d: the file has trailing data", size, h.size)
	}
	return h, nil
}

// Padding returns the bytes after μ up to the end of the file (zero in a
// sound file), for checking a file's integrity.
func (s *File) Padding() []byte {
	return s.mem[headerSize+len(s.data):]
}

// matches checks a file's header against the one d would have.
func (h fileHeader) matches(path string, want fileHeader) error {
	mismatch := func(format string, a ...any) error {
		return &FileError{Path: path, Msg: fmt.Sprintf(format, a...), Err: ErrMismatch}
	}
	switch {
	case h.K != want.K:
		return mismatch("made for a dataset with K = %d, this one has K = %d", h.K, want.K)
	case h.n != want.n:
		return mismatch("made for a dataset of %d sentences, this one has %d", h.n, want.n)
	case h.entries != want.entries:
		return mismatch("holds %d dual entries, this dataset needs %d", h.entries, want.entries)
	case h.fingerprint != want.fingerprint:
		return mismatch("fingerprint differs: the duals file belongs to another dataset (file %x…, dataset %x…)",
			h.fingerprint[:6], want.fingerprint[:6])
	case h.table != want.table:
		return mismatch("block offset table differs: the file was written with another block layout")
	}
	return nil
}

// mapFile maps the whole file read-write, shared, and views its array.
func mapFile(f *os.File, path string, h fileHeader, d *crf.Dataset) (*File, error) {
	p := Precision(h.dtype)
	off := p.Offsets(d)
	m, err := platform.MapShared(f, int(h.size))
	if err != nil {
		return nil, fmt.Errorf("map duals file %s (%d bytes): %w", path, h.size, err)
	}
	mem := m.Bytes()
	s := &File{path: path, prec: p, K: d.NumLabels, f: f, m: m, mem: mem, off: off}
	if err := s.advise(defaultAdvice); err != nil {
		m.Unmap()
		return nil, err
	}
	n := off[len(off)-1]
	s.data = mem[h.muAt : int64(h.muAt)+n : int64(h.muAt)+n]
	return s, nil
}

// defaultAdvice is the access pattern the mapping is declared with (see
// BenchmarkStoreSweep).
const defaultAdvice = platform.AccessNormal

// advise tells the kernel how the mapping will be accessed.
func (s *File) advise(a platform.Advice) error {
	if err := s.m.Advise(a); err != nil {
		return fmt.Errorf("duals file %s: %w", s.path, err)
	}
	return nil
}

// float64View views b, 8-byte aligned, as float64s.
func float64View(b []byte) []float64 {
	if len(b) < 8 {
		return nil
	}
	return unsafe.Slice((*float64)(unsafe.Pointer(unsafe.SliceData(b))), len(b)/8)
}

// lock takes an exclusive advisory lock, so that two processes (or two
// stores) never write the same duals.
func lock(f *os.File, path string) error {
	if err := platform.TryLock(f); err != nil {
		if platform.IsLocked(err) {
			return &FileError{Path: path, Msg: "in use by another duals store (locked)", Err: err}
		}
		return fmt.Errorf("lock duals file %s: %w", path, err)
	}
	return nil
}

// checkHost refuses big-endian hosts: the arrays are native floats and the
// format says little-endian.
func checkHost(path string) error {
	if binary.NativeEndian.Uint16([]byte{1, 0}) != 1 {
		return &FileError{Path: path, Msg: "duals files are little-endian; this host is not", Err: ErrFormat}
	}
	return nil
}

// Load sets mu to μ_i.
func (s *File) Load(i int, mu []float64) { s.prec.Decode(mu, s.Raw(i), s.K) }

// Put stores mu as μ_i (in the mapping: the kernel writes it to the file)
// and sets mu to the block as stored.
func (s *File) Put(i int, mu []float64) { s.prec.Encode(s.Raw(i), mu, s.K) }

// LoadMarginals is Load that also sets node and sum (MarginalStore).
func (s *File) LoadMarginals(i int, mu, node, sum []float64) {
	s.prec.DecodeMarginals(mu, s.Raw(i), len(node)/s.K, s.K, node, sum)
}

// PutMarginals is Put that also sets node and sum (MarginalStore).
func (s *File) PutMarginals(i int, mu, node, sum []float64) {
	s.prec.EncodeMarginals(s.Raw(i), mu, len(node)/s.K, s.K, node, sum)
}

// Prefetch asks for μ_i's bytes in the processor's cache (MarginalStore).
func (s *File) Prefetch(i int) { prefetch(s.Raw(i)) }

// Raw returns the encoded bytes of μ_i; writes to them are writes to the
// file.
func (s *File) Raw(i int) []byte { return s.data[s.off[i]:s.off[i+1]:s.off[i+1]] }

// Precision returns the file's precision.
func (s *File) Precision() Precision { return s.prec }

// Len returns the number of blocks.
func (s *File) Len() int { return len(s.off) - 1 }

// Path returns the file's path.
func (s *File) Path() string { return s.path }

// Bytes returns the size of the file: header and both arrays.
func (s *File) Bytes() int64 { return int64(len(s.mem)) }

// Sync writes the dirty pages to the file and waits for the disk (msync
// MS_SYNC; on Windows FlushViewOfFile, then FlushFileBuffers).
func (s *File) Sync() error {
	if s.mem == nil {
		return fmt.Errorf("sync duals file %s: store is closed", s.path)
	}
	if err := s.m.Flush(); err != nil {
		return fmt.Errorf("sync duals file %s: %w", s.path, err)
	}
	return nil
}

// Close syncs, unmaps and closes the file (releasing its lock). Closing a
// closed (or nil) store does nothing.
func (s *File) Close() error {
	if s == nil || s.f == nil {
		return nil
	}
	var errs []error
	if s.mem != nil {
		errs = append(errs, s.Sync())
		if err := s.m.Unmap(); err != nil {
			errs = append(errs, fmt.Errorf("unmap duals file %s: %w", s.path, err))
		}
	}
	if err := s.f.Close(); err != nil {
		errs = append(errs, fmt.Errorf("close duals file: %w", err))
	}
	s.f, s.m, s.mem, s.data = nil, nil, nil, nil
	return errors.Join(errs...)
}

// headerFor returns the header of d's duals file at precision p.
func headerFor(d *crf.Dataset, p Precision) fileHeader {
	off := BlockOffsets(d)
	h := layoutFor(uint64(off[len(off)-1]), p)
	h.version, h.dtype = fileVersion, uint32(p)
	h.K, h.n = uint64(d.NumLabels), uint64(d.Len())
	h.fingerprint = Fingerprint(d)
	h.table = offsetsChecksum(off)
	return h
}

// layoutFor places the array of a file of the given entry count and
// precision.
func layoutFor(entries uint64, p Precision) fileHeader {
	arr := alignUp(uint64(p.EntryBytes())*entries, headerSize)
	return fileHeader{entries: entries, dtype: uint32(p), muAt: headerSize, size: headerSize + arr}
}

func alignUp(x, a uint64) uint64 { return (x + a - 1) / a * a }

// encode returns the header page with its checksum.
func (h fileHeader) encode() []byte {
	b := make([]byte, headerSize)
	le := binary.LittleEndian
	copy(b, fileMagic)
	le.PutUint32(b[8:], h.version)
	le.PutUint32(b[12:], h.dtype)
	for j, v := range []uint64{h.K, h.n, h.entries, h.muAt, h.logAt, h.size} {
		le.PutUint64(b[16+8*j:], v)
	}
	copy(b[64:96], h.fingerprint[:])
	copy(b[96:128], h.table[:])
	le.PutUint32(b[headerCRCAt:], crc32.Checksum(b[:headerCRCAt], castagnoli))
	return b
}

// decodeHeader reads the fields of a header (at least headerUsed bytes).
func decodeHeader(b []byte) fileHeader {
	le := binary.LittleEndian
	h := fileHeader{version: le.Uint32(b[8:]), dtype: le.Uint32(b[12:]), crc: le.Uint32(b[headerCRCAt:])}
	f := []*uint64{&h.K, &h.n, &h.entries, &h.muAt, &h.logAt, &h.size}
	for j, p := range f {
		*p = le.Uint64(b[16+8*j:])
	}
	copy(h.fingerprint[:], b[64:96])
	copy(h.table[:], b[96:128])
	return h
}

// offsetsChecksum is the SHA-256 of the offset table, int64 little-endian.
func offsetsChecksum(off []int64) [32]byte {
	w := newHashWriter()
	for _, o := range off {
		w.u64(uint64(o))
	}
	return w.sum()
}

// Fingerprint identifies a dataset for its duals and checkpoints: SHA-256
// over n, K, the number of attributes, the sentence offsets, the gold labels,
// and the attributes of every token with their values. Two datasets with the
// same fingerprint have the same dual blocks, gold paths and features.
func Fingerprint(d *crf.Dataset) [32]byte {
	w := newHashWriter()
	w.buf.WriteString("dualcrf dataset v1\x00")
	w.u64(uint64(d.Len()))
	w.u64(uint64(d.NumLabels))
	w.u64(uint64(d.NumAttrs))
	w.ints(d.SentStart)
	w.u64(uint64(len(d.Labels)))
	for _, y := range d.Labels {
		w.u32(uint32(y))
	}
	w.ints(d.AttrStart)
	w.u64(uint64(len(d.Attrs)))
	for _, a := range d.Attrs {
		w.u32(uint32(a))
	}
	if d.Values == nil {
		w.u64(math.MaxUint64) // all ones, distinct from an empty value list
	} else {
		w.u64(uint64(len(d.Values)))
		for _, v := range d.Values {
			w.u64(math.Float64bits(v))
		}
	}
	return w.sum()
}

// hashWriter feeds little-endian numbers to SHA-256 through a buffer.
type hashWriter struct {
	h   hash.Hash
	buf *bufio.Writer
	b   [8]byte
}

func newHashWriter() *hashWriter {
	h := sha256.New()
	return &hashWriter{h: h, buf: bufio.NewWriterSize(h, 1<<16)}
}

func (w *hashWriter) u64(x uint64) {
	binary.LittleEndian.PutUint64(w.b[:], x)
	w.buf.Write(w.b[:8])
}

func (w *hashWriter) u32(x uint32) {
	binary.LittleEndian.PutUint32(w.b[:], x)
	w.buf.Write(w.b[:4])
}

func (w *hashWriter) ints(xs []int) {
	w.u64(uint64(len(xs)))
	for _, x := range xs {
		w.u64(uint64(x))
	}
}

func (w *hashWriter) sum() [32]byte {
	w.buf.Flush() // writes to a hash never fail
	var s [32]byte
	copy(s[:], w.h.Sum(nil))
	return s
}

var _ MarginalStore = (*File)(nil)
