package duals

// The streamed dual store (block minimization, Yu, Hsieh, Chang & Lin, KDD
// 2010): the sentences are grouped into blocks of consecutive sentences,
// each block's duals contiguous in one 4096-aligned slot of a file, and a
// pass visits blocks in a given order with one block in memory for the
// steps, the next one read ahead by a reader goroutine and the previous one
// written back by a writer goroutine — sequential I/O, O_DIRECT on Linux
// (aligned buffers; plain reads and writes elsewhere), three block buffers
// in all, whatever n is.
//
// The file: one page of header, then slots of slotBytes each:
//
//	off  size  field
//	  0     8  magic "DUALSTRM"
//	  8     4  format version (1)
//	 12     4  dtype code: the Precision (1 = float64, 2 = float32 Markov form, 3 = bfloat16 Markov form)
//	 16     8  K, labels
//	 24     8  n, sentences
//	 32     8  blocks
//	 40     8  bytes per slot (a multiple of 4096)
//	 48     8  slots
//	 56    32  dataset fingerprint (Fingerprint)
//	 88    32  SHA-256 of the block starts (int64 little-endian)
//	120     4  CRC-32C of bytes 0–119
//
// Crash consistency without copying the duals (checkpoints): the file has
// blocks + spare slots. Before the first commit a block is written back in
// place. After it, a written-back block goes to a free slot — one that
// neither the last committed state nor the current slot map references —
// and the slot it leaves is freed only by the next commit. A commit flushes
// the resident block, waits for the writes, fsyncs the file and hands the
// slot map and per-block CRC-32C to the caller, who writes them in its state
// file (write-temp, fsync, rename); only once that has succeeded are the
// slots left since the previous commit reused. A crash anywhere therefore
// leaves the blocks of the last committed state untouched. SDCA commits
// whenever fewer than two slots are free (NeedCommit), so spare slots bound
// the block writes between two commits.

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"slices"
	"sync"

	"github.com/dualcrf/dualcrf/crf"
	"github.com/dualcrf/dualcrf/internal/platform"
	"github.com/dualcrf/dualcrf/option"
)

const (
	streamMagic   = "DUALSTRM"
	streamVersion = 1
	streamAlign   = 4096
	streamCRCAt   = 120
	// DefaultSpare is StreamOptions.Spare's default for a store
	// whose runs checkpoint: spare slots, so at most DefaultSpare−1
	// block writes between two commits.
	DefaultSpare = 4
	// StreamBuffers is the number of block buffers a streamed store holds:
	// the block being stepped on, the next one being read and the previous
	// one being written.
	StreamBuffers = 3
	// StreamHeldSlots is the room, in slots, that a store of more than one
	// block gives its held sentences (SetHeld): SDCA's working set across
	// blocks (StreamOptions.HeldSlots' default). A memory plan counts
	// StreamBuffers + StreamHeldSlots slots.
	// Three, by measurement: on CoNLL-2000 in 400 MiB, one slot's worth
	// (18 blocks) left a certified gap of 1.6e-3 after 30 epochs, three
	// (27 smaller blocks) reached 1e-3 in 27 (23 with the gaps of a block
	// refreshed when read; 2, 6 or 9 slots did worse with the refresh).
	StreamHeldSlots = 3
)

// StreamOptions configure a Stream.
type StreamOptions struct {
	// BlockBytes is the most bytes of duals a block holds (a single
	// sentence larger than that is a block of its own); ≤ 0 means one block
	// of every sentence.
	BlockBytes int64
	// Spare is the number of slots beyond one per block, for crash-consistent
	// write-back (runs that checkpoint); 0 means none: blocks are always
	// written in place and Commit is refused.
	Spare int
	// HeldSlots is the room for held sentences (Hold), in slots, that a
	// store of more than one block has; 0 means StreamHeldSlots, < 0 none.
	HeldSlots int
	// Precision is how the blocks are encoded; 0 means DefaultPrecision.
	Precision Precision
}

// precision returns o.Precision with its default applied.
func (o StreamOptions) precision() Precision {
	if o.Precision == 0 {
		return DefaultPrecision
	}
	return o.Precision
}

// StreamState is what a committed state records of a streamed store: the
// slot of every block and the CRC-32C of its duals.
type StreamState struct {
	Path  string   `json:"path"`
	Slots []int32  `json:"slots"`
	CRC   []uint32 `json:"crc32c"`
}

// Stream keeps the duals in a file of block slots and holds at most
// StreamBuffers blocks in memory. Visit is the way to go through it; Raw
// (and Load, Put) outside a Visit loads the sentence's block alone (for
// tests and sequential readers). It is not safe for concurrent use but
// within Visit's callback, where Load and Put may be called from many
// goroutines for distinct sentences of the resident block.
type Stream struct {
	path      string
	prec      Precision
	K         int
	f         *os.File
	direct    bool
	off       []int64 // per sentence: byte offset of its encoded duals in the flat order
	start     []int   // block b holds sentences start[b] .. start[b+1]−1
	slotBytes int64
	nslots    int

	pool  chan []byte // free block buffers (4096-aligned)
	bufs  [][]byte
	frees []func()

	mu        sync.Mutex
	slotOf    []int32
	crc       []uint32
	known     []bool  // crc[b] describes the block on disk
	committed []int32 // the last committed slot map; nil before the first commit
	pending   []int32 // slots to free at the next commit
	free      []int32
	writing   map[int]chan struct{} // blocks being written
	werr      error
	wg        sync.WaitGroup

	cur    int    // the resident block, −1 for none
	curBuf []byte // its duals
	dirty  bool   // the resident block has changes not handed to the writer
	loose  bool   // resident through Block outside Visit

	// The held sentences (Hold): their duals live in arena, apart from
	// their blocks, and Block returns them there; a block written back
	// takes its held sentences' duals from there first.
	heldSlots int     // the room for held sentences, in slots
	heldAt    []int64 // per sentence: byte offset in arena, −1 when not held; nil without room
	arena     []byte
	arenaUsed int64
	arenaFree func()
}

// streamBlocks groups the sentences into blocks of at most blockBytes of
// duals each (off: the sentences' byte offsets).
func streamBlocks(off []int64, blockBytes int64) []int {
	n := len(off) - 1
	start := []int{0}
	for i := 0; i < n; i++ {
		lo := start[len(start)-1]
		if blockBytes > 0 && i > lo && off[i+1]-off[lo] > blockBytes {
			start = append(start, i)
		}
	}
	return append(start, n)
}

// StreamLayout returns the number of blocks and the bytes per slot a
// streamed store of d with these options has, and the file size.
func StreamLayout(d *crf.Dataset, o StreamOptions) (blocks int, slotBytes, fileBytes int64) {
	off := o.precision().Offsets(d)
	start := streamBlocks(off, o.BlockBytes)
	slotBytes = slotSize(off, start)
	blocks = len(start) - 1
	return blocks, slotBytes, streamAlign + int64(blocks+o.Spare)*slotBytes
}

func slotSize(off []int64, start []int) int64 {
	m := int64(0)
	for b := 0; b+1 < len(start); b++ {
		m = max(m, off[start[b+1]]-off[start[b]])
	}
	return max(streamAlign, (m+streamAlign-1)/streamAlign*streamAlign)
}

// CreateStream creates (or truncates and reuses) the streamed duals
// file at path for d, after checking that its file system has room for it.
// The file is locked while the store is open (as a File is): a file
// another store holds is refused, untouched.
// Its blocks are all zero until written (SDCA.Init writes them all).
func CreateStream(path string, d *crf.Dataset, o StreamOptions) (*Stream, error) {
	if o.Spare < 0 {
		return nil, fmt.Errorf("streamed duals %s: %d spare slots, want 0 or more", path, o.Spare)
	}
	s := newStreamStore(path, d, o)
	size := streamAlign + int64(s.nslots)*s.slotBytes
	if avail, err := platform.FreeBytes(filepath.Dir(path)); err == nil {
		have := int64(0)
		if st, err := os.Stat(path); err == nil {
			have = st.Size()
		}
		if need := size - have; need > avail {
			return nil, &FileError{Path: path, Err: ErrFormat, Msg: fmt.Sprintf(
				"the streamed duals need %d bytes (%d blocks + %d spare slots of %d bytes), the file system has %d free",
				size, len(s.start)-1, o.Spare, s.slotBytes, avail+have)}
		}
	}
	// Opened without O_TRUNC: the file is emptied only once its lock is
	// held, so a file in use by another run is refused intact.
	f, direct, err := platform.OpenDirect(path, os.O_RDWR|os.O_CREATE)
	if err != nil {
		return nil, fmt.Errorf("streamed duals: %w", err)
	}
	if err := lockStream(f, path); err != nil {
		f.Close()
		return nil, err
	}
	if err := f.Truncate(0); err != nil {
		f.Close()
		return nil, fmt.Errorf("streamed duals: %w", err)
	}
	s.f, s.direct = f, direct
	if err := platform.Allocate(f, size); err != nil {
		f.Close()
		os.Remove(path)
		return nil, &FileError{Path: path, Msg: "cannot reserve " + fmt.Sprint(size) + " bytes: " + err.Error(), Err: err}
	}
	if err := s.writeHeader(d); err != nil {
		f.Close()
		os.Remove(path)
		return nil, err
	}
	s.alloc()
	return s, nil
}

// OpenStream opens the existing streamed duals file at path for d,
// made with the same options, and locks it; Adopt then gives it the slot
// map of a committed state.
func OpenStream(path string, d *crf.Dataset, o StreamOptions) (*Stream, error) {
	s := newStreamStore(path, d, o)
	f, direct, err := platform.OpenDirect(path, os.O_RDWR)
	if err != nil {
		return nil, fmt.Errorf("streamed duals: %w", err)
	}
	if err := lockStream(f, path); err != nil {
		f.Close()
		return nil, err
	}
	s.f, s.direct = f, direct
	if err := s.checkHeader(d); err != nil {
		f.Close()
		return nil, err
	}
	s.alloc()
	return s, nil
}

// lockStream takes the streamed duals file's exclusive lock, so that two
// runs never write (or truncate) the same duals.
func lockStream(f *os.File, path string) error {
	if err := platform.TryLock(f); err != nil {
		if platform.IsLocked(err) {
			oe := &option.Error{Err: err,
				Msg: "streamed duals in use by another training run (locked); wait for it to end, or give this run another {Duals} stream:PATH"}
			return &FileError{Path: path, Msg: oe.Error(), Err: oe}
		}
		return fmt.Errorf("lock streamed duals %s: %w", path, err)
	}
	return nil
}

func newStreamStore(path string, d *crf.Dataset, o StreamOptions) *Stream {
	p := o.precision()
	off := p.Offsets(d)
	start := streamBlocks(off, o.BlockBytes)
	nb := len(start) - 1
	s := &Stream{path: path, prec: p, K: d.NumLabels, off: off, start: start, slotBytes: slotSize(off, start), nslots: nb + o.Spare,
		slotOf: make([]int32, nb), crc: make([]uint32, nb), known: make([]bool, nb),
		writing: map[int]chan struct{}{}, cur: -1, heldSlots: o.HeldSlots}
	if s.heldSlots == 0 {
		s.heldSlots = StreamHeldSlots
	}
	if nb == 1 || s.heldSlots < 0 {
		s.heldSlots = 0
	}
	for b := range s.slotOf {
		s.slotOf[b] = int32(b)
	}
	for k := nb; k < s.nslots; k++ {
		s.free = append(s.free, int32(k))
	}
	return s
}

// alloc makes the block buffers: page-aligned anonymous memory where the
// system allows (O_DIRECT needs aligned buffers).
func (s *Stream) alloc() {
	s.pool = make(chan []byte, StreamBuffers)
	for k := 0; k < StreamBuffers; k++ {
		floats, free := platform.AllocFloats(int(s.slotBytes / 8))
		buf := floatBytes(floats)
		s.bufs = append(s.bufs, buf)
		if free != nil {
			s.frees = append(s.frees, free)
		}
		s.pool <- buf
	}
	if s.heldSlots > 0 {
		s.SetHeld(int64(s.heldSlots) * s.slotBytes)
	}
}

func (s *Stream) header(d *crf.Dataset) []byte {
	h := make([]byte, streamAlign)
	copy(h, streamMagic)
	le := binary.LittleEndian
	le.PutUint32(h[8:], streamVersion)
	le.PutUint32(h[12:], uint32(s.prec))
	le.PutUint64(h[16:], uint64(d.NumLabels))
	le.PutUint64(h[24:], uint64(d.Len()))
	le.PutUint64(h[32:], uint64(len(s.start)-1))
	le.PutUint64(h[40:], uint64(s.slotBytes))
	le.PutUint64(h[48:], uint64(s.nslots))
	fp := Fingerprint(d)
	copy(h[56:], fp[:])
	hs := sha256.New()
	var b [8]byte
	for _, x := range s.start {
		le.PutUint64(b[:], uint64(x))
		hs.Write(b[:])
	}
	copy(h[88:], hs.Sum(nil))
	le.PutUint32(h[streamCRCAt:], crc32.Checksum(h[:streamCRCAt], castagnoli))
	return h
}

func (s *Stream) writeHeader(d *crf.Dataset) error {
	buf, free := platform.AllocFloats(streamAlign / 8)
	if free != nil {
		defer free()
	}
	b := floatBytes(buf)
	copy(b, s.header(d))
	if _, err := s.f.WriteAt(b, 0); err != nil {
		return &FileError{Path: s.path, Msg: "writing the header: " + err.Error(), Err: err}
	}
	return nil
}

func (s *Stream) checkHeader(d *crf.Dataset) error {
	buf, free := platform.AllocFloats(streamAlign / 8)
	if free != nil {
		defer free()
	}
	b := floatBytes(buf)
	bad := func(msg string) error { return &FileError{Path: s.path, Msg: msg, Err: ErrFormat} }
	if _, err := s.f.ReadAt(b, 0); err != nil {
		return bad("cannot read the header: " + err.Error())
	}
	if string(b[:8]) != streamMagic {
		return bad("not a streamed duals file (bad magic)")
	}
	le := binary.LittleEndian
	if crc32.Checksum(b[:streamCRCAt], castagnoli) != le.Uint32(b[streamCRCAt:]) {
		return bad("header checksum mismatch (corrupt)")
	}
	want := s.header(d)
	if le.Uint32(b[8:]) != streamVersion {
		return bad(fmt.Sprintf("format version %d, this build reads %d", le.Uint32(b[8:]), streamVersion))
	}
	if p := Precision(le.Uint32(b[12:])); p != s.prec {
		if !p.Valid() {
			return bad(fmt.Sprintf("dtype code %d, this build reads %d (float64), %d (float32) and %d (bfloat16)", p, Float64, Float32, BFloat16))
		}
		oe := &option.Error{Err: ErrFormat,
			Msg: fmt.Sprintf("holds %s duals, this run keeps %s ones: resume with {SDCA.DualPrecision} %s", p, s.prec, p)}
		return &FileError{Path: s.path, Msg: oe.Error(), Err: oe}
	}
	if string(b[56:88]) != string(want[56:88]) || le.Uint64(b[16:]) != le.Uint64(want[16:]) || le.Uint64(b[24:]) != le.Uint64(want[24:]) {
		return &FileError{Path: s.path, Msg: "made for another dataset", Err: ErrMismatch}
	}
	if string(b[32:streamCRCAt]) != string(want[32:streamCRCAt]) {
		oe := &option.Error{Err: ErrFormat,
			Msg: fmt.Sprintf("made with another block layout (%d blocks, %d slots of %d bytes; this run: %d blocks, %d slots of %d bytes): the layout follows the memory budget ({MemoryBudget}, or half of physical memory) and the rest of the run ({Checkpoint}'s spare slots); resume with the settings the run had",
				le.Uint64(b[32:]), le.Uint64(b[48:]), le.Uint64(b[40:]), len(s.start)-1, s.nslots, s.slotBytes)}
		return &FileError{Path: s.path, Msg: oe.Error(), Err: oe}
	}
	st, err := s.f.Stat()
	if err != nil {
		return bad(err.Error())
	}
	if size := streamAlign + int64(s.nslots)*s.slotBytes; st.Size() < size {
		return bad(fmt.Sprintf("truncated: %d bytes, want %d", st.Size(), size))
	}
	return nil
}

// Path returns the file's path.
func (s *Stream) Path() string { return s.path }

// Len returns the number of sentences.
func (s *Stream) Len() int { return len(s.off) - 1 }

// Blocks returns the number of blocks.
func (s *Stream) Blocks() int { return len(s.start) - 1 }

// BlockRange returns the sentences lo..hi−1 of block b.
func (s *Stream) BlockRange(b int) (lo, hi int) { return s.start[b], s.start[b+1] }

// SlotBytes returns the bytes of a slot: the most a block's duals take,
// rounded up to 4096.
func (s *Stream) SlotBytes() int64 { return s.slotBytes }

// Direct reports whether the file is read and written with O_DIRECT.
func (s *Stream) Direct() bool { return s.direct }

// Precision returns how the blocks are encoded.
func (s *Stream) Precision() Precision { return s.prec }

// Load sets mu to μ_i (Raw's rules on residence).
func (s *Stream) Load(i int, mu []float64) { s.prec.Decode(mu, s.Raw(i), s.K) }

// Put stores mu as μ_i in the resident block (Raw's rules) and sets mu
// to the block as stored.
func (s *Stream) Put(i int, mu []float64) { s.prec.Encode(s.Raw(i), mu, s.K) }

// LoadMarginals is Load that also sets node and sum (MarginalStore).
func (s *Stream) LoadMarginals(i int, mu, node, sum []float64) {
	s.prec.DecodeMarginals(mu, s.Raw(i), len(node)/s.K, s.K, node, sum)
}

// PutMarginals is Put that also sets node and sum (MarginalStore).
func (s *Stream) PutMarginals(i int, mu, node, sum []float64) {
	s.prec.EncodeMarginals(s.Raw(i), mu, len(node)/s.K, s.K, node, sum)
}

// Prefetch asks for μ_i's bytes in the processor's cache (MarginalStore)
// when they are in memory (held, or in the resident block); else it does
// nothing.
func (s *Stream) Prefetch(i int) {
	if s.Held(i) || s.cur >= 0 && i >= s.start[s.cur] && i < s.start[s.cur+1] {
		prefetch(s.Raw(i))
	}
}

// Raw returns μ_i's encoded bytes: from the resident block within Visit;
// outside one, the block holding i is loaded alone (the previous such
// block written back).
func (s *Stream) Raw(i int) []byte {
	if s.heldAt != nil && s.heldAt[i] >= 0 {
		at := s.heldAt[i]
		n := s.off[i+1] - s.off[i]
		return s.arena[at : at+n : at+n]
	}
	if s.cur < 0 || i < s.start[s.cur] || i >= s.start[s.cur+1] {
		if !s.loose && s.cur >= 0 {
			panic(fmt.Sprintf("duals: Stream.Raw(%d) outside the resident block %d", i, s.cur))
		}
		if err := s.loadLoose(i); err != nil {
			panic(err) // Raw has no error result; Visit is the checked way
		}
	}
	if s.loose {
		s.dirty = true // the caller may change it: written back when it leaves
	}
	base := s.off[s.start[s.cur]]
	return s.curBuf[s.off[i]-base : s.off[i+1]-base : s.off[i+1]-base]
}

// read returns μ_i's encoded bytes to be read only, outside Visit: the
// block holding i is loaded alone and not written back for it (a block
// loaded by read costs no write, and so no slot of a store that has
// committed); an error reading it is returned.
func (s *Stream) read(i int) ([]byte, error) {
	if s.heldAt != nil && s.heldAt[i] >= 0 {
		return s.Raw(i), nil
	}
	if s.cur < 0 || i < s.start[s.cur] || i >= s.start[s.cur+1] {
		if !s.loose && s.cur >= 0 {
			return nil, fmt.Errorf("duals: reading sentence %d outside the resident block %d", i, s.cur)
		}
		if err := s.loadLoose(i); err != nil {
			return nil, err
		}
	}
	base := s.off[s.start[s.cur]]
	return s.curBuf[s.off[i]-base : s.off[i+1]-base : s.off[i+1]-base], nil
}

// loadLoose makes the block holding sentence i resident outside Visit,
// not dirty (Block marks it so).
func (s *Stream) loadLoose(i int) error {
	if err := s.dropLoose(); err != nil {
		return err
	}
	b := blockOfSentence(s.start, i)
	buf := <-s.pool
	if err := s.readBlock(b, buf); err != nil {
		s.pool <- buf
		return err
	}
	s.cur, s.curBuf, s.dirty, s.loose = b, buf, false, true
	return nil
}

// dropLoose writes back a block made resident by Block, or returns the
// buffer of one only read.
func (s *Stream) dropLoose() error {
	if !s.loose {
		return nil
	}
	b, buf, dirty := s.cur, s.curBuf, s.dirty
	s.cur, s.curBuf, s.loose, s.dirty = -1, nil, false, false
	if !dirty {
		s.pool <- buf
		return nil
	}
	s.writeAsync(b, buf)
	return s.waitWrites()
}

func blockOfSentence(start []int, i int) int {
	b, _ := slices.BinarySearch(start, i+1)
	return b - 1
}

// bytesOf returns the bytes of block b's duals in buf.
func (s *Stream) bytesOf(b int, buf []byte) []byte {
	return buf[:s.off[s.start[b+1]]-s.off[s.start[b]]]
}

// ioLen is the bytes moved for block b: its duals rounded up to the alignment.
func (s *Stream) ioLen(b int) int {
	n := s.off[s.start[b+1]] - s.off[s.start[b]]
	return int((n + streamAlign - 1) / streamAlign * streamAlign)
}

// readBlock reads block b into buf, waiting for a write of it in flight,
// and checks its CRC when known.
func (s *Stream) readBlock(b int, buf []byte) error {
	s.mu.Lock()
	ch := s.writing[b]
	s.mu.Unlock()
	if ch != nil {
		<-ch
	}
	s.mu.Lock()
	slot, want, known := s.slotOf[b], s.crc[b], s.known[b]
	s.mu.Unlock()
	raw := buf[:s.ioLen(b)]
	if _, err := s.f.ReadAt(raw, streamAlign+int64(slot)*s.slotBytes); err != nil {
		return &FileError{Path: s.path, Msg: fmt.Sprintf("reading block %d (slot %d): %v", b, slot, err), Err: err}
	}
	if known {
		if got := crc32.Checksum(s.bytesOf(b, buf), castagnoli); got != want {
			return &FileError{Path: s.path, Err: ErrFormat,
				Msg: fmt.Sprintf("block %d (slot %d): CRC-32C %08x, the state says %08x (corrupt)", b, slot, got, want)}
		}
	}
	return nil
}

// writeAsync hands block b (in buf) to a writer goroutine, which returns
// buf to the pool when done. The slot is chosen now.
func (s *Stream) writeAsync(b int, buf []byte) {
	s.syncHeld(b, buf)
	s.mu.Lock()
	slot := s.slotOf[b]
	if s.committed != nil {
		if len(s.free) == 0 {
			s.mu.Unlock()
			s.setErr(&FileError{Path: s.path, Msg: "no free slot to write a block to: the run did not commit (checkpoint) in time", Err: ErrFormat})
			s.pool <- buf
			return
		}
		slot = s.free[0]
		s.free = s.free[1:]
		if old := s.slotOf[b]; old == s.committed[b] {
			s.pending = append(s.pending, old)
		} else {
			s.free = append(s.free, old)
		}
		s.slotOf[b] = slot
	}
	done := make(chan struct{})
	s.writing[b] = done
	s.known[b] = false
	s.mu.Unlock()
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		crc := crc32.Checksum(s.bytesOf(b, buf), castagnoli)
		raw := buf[:s.ioLen(b)]
		clear(raw[len(s.bytesOf(b, buf)):]) // the padding: zero, deterministic
		_, err := s.f.WriteAt(raw, streamAlign+int64(slot)*s.slotBytes)
		s.mu.Lock()
		if err == nil {
			s.crc[b], s.known[b] = crc, true
		}
		delete(s.writing, b)
		s.mu.Unlock()
		close(done)
		if err != nil {
			s.setErr(&FileError{Path: s.path, Msg: fmt.Sprintf("writing block %d (slot %d): %v", b, slot, err), Err: err})
		}
		s.pool <- buf
	}()
}

func (s *Stream) setErr(err error) {
	s.mu.Lock()
	if s.werr == nil {
		s.werr = err
	}
	s.mu.Unlock()
}

// waitWrites waits for the writes in flight and returns the first write
// error.
func (s *Stream) waitWrites() error {
	s.wg.Wait()
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.werr
}

// VisitOptions say what Visit does with the blocks.
type VisitOptions struct {
	Write bool // the callback changes the blocks: write them back
	Fresh bool // do not read the blocks: they start zero (the callback fills them)
}

// Visit runs f(k, b) for every block b = order[k] with b resident (Raw(i)
// for its sentences), reading the next block while f runs and writing the
// previous one back (with o.Write) while the next runs; a block that comes
// twice in a row stays resident. After each f but the last it calls
// between(k) (may be nil) at a block boundary, where Commit may be called.
// An error from f or between, or from the I/O, stops the visit; every block
// changed so far is written back before Visit returns, whatever the error.
func (s *Stream) Visit(order []int, o VisitOptions, f func(k, b int) error, between func(k int) error) (err error) {
	if err := s.dropLoose(); err != nil {
		return err
	}
	type fetched struct {
		buf []byte
		err error
	}
	prefetch := func(b int) chan fetched {
		ch := make(chan fetched, 1)
		go func() {
			buf := <-s.pool
			if o.Fresh {
				clear(buf)
				ch <- fetched{buf, nil}
				return
			}
			ch <- fetched{buf, s.readBlock(b, buf)}
		}()
		return ch
	}
	var next chan fetched
	defer func() {
		if s.cur >= 0 {
			if s.dirty {
				s.writeAsync(s.cur, s.curBuf)
			} else {
				s.pool <- s.curBuf
			}
		}
		s.cur, s.curBuf, s.dirty = -1, nil, false
		if next != nil {
			r := <-next
			s.pool <- r.buf
		}
		if werr := s.waitWrites(); err == nil {
			err = werr
		}
	}()
	for k, b := range order {
		if b < 0 || b >= s.Blocks() {
			return fmt.Errorf("duals: block %d of %d", b, s.Blocks())
		}
		if s.cur != b {
			if next == nil {
				next = prefetch(b)
			}
			r := <-next
			next = nil
			if r.err != nil {
				s.pool <- r.buf
				return r.err
			}
			s.cur, s.curBuf, s.dirty = b, r.buf, false
		}
		last := k+1 == len(order)
		if !last && order[k+1] != b {
			next = prefetch(order[k+1])
		}
		s.dirty = s.dirty || o.Write
		if err := f(k, b); err != nil {
			return err
		}
		if last {
			break
		}
		if order[k+1] != b {
			if s.dirty {
				s.writeAsync(b, s.curBuf)
			} else {
				s.pool <- s.curBuf
			}
			s.cur, s.curBuf, s.dirty = -1, nil, false
		}
		if between != nil {
			if err := between(k); err != nil {
				return err
			}
		}
		s.mu.Lock()
		werr := s.werr
		s.mu.Unlock()
		if werr != nil {
			return werr
		}
	}
	return nil
}

// Sequential returns the blocks in file order, 0..Blocks()−1.
func (s *Stream) Sequential() []int {
	order := make([]int, s.Blocks())
	for b := range order {
		order[b] = b
	}
	return order
}

// NeedCommit reports whether the store is short of free slots: the run
// must Commit before its next block write.
func (s *Stream) NeedCommit() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.nslots > s.Blocks() && s.committed != nil && len(s.free) < 2
}

// canCommit reports whether the store has spare slots for crash-consistent
// commits.
func (s *Stream) canCommit() bool { return s.nslots > s.Blocks() }

// Commit makes the file's current content a committed state: it writes
// back the resident block if changed, waits for the writes, fsyncs the
// file and calls save with the slot map and checksums, which must make
// them durable (the state file); only if save succeeds are the slots the
// previous committed state referenced reused. Called at a block boundary
// (Visit's between) or outside Visit.
func (s *Stream) Commit(save func(StreamState) error) error {
	if !s.canCommit() {
		return &FileError{Path: s.path, Msg: "no spare slots: this store cannot commit", Err: ErrFormat}
	}
	if s.cur >= 0 && s.dirty {
		// Keep the block resident: write a copy (a buffer from the pool).
		buf := <-s.pool
		copy(buf, s.curBuf)
		s.writeAsync(s.cur, buf)
		s.dirty = false
		if s.loose {
			s.dirty = true // Block's callers may still change it
		}
	}
	if err := s.waitWrites(); err != nil {
		return err
	}
	if err := s.f.Sync(); err != nil {
		return &FileError{Path: s.path, Msg: "fsync: " + err.Error(), Err: err}
	}
	s.mu.Lock()
	st := StreamState{Path: s.path, Slots: slices.Clone(s.slotOf), CRC: slices.Clone(s.crc)}
	s.mu.Unlock()
	if err := save(st); err != nil {
		return err
	}
	s.mu.Lock()
	s.committed = st.Slots
	s.free = append(s.free, s.pending...)
	slices.Sort(s.free)
	s.pending = nil
	s.mu.Unlock()
	return nil
}

// Adopt takes the slot map and checksums of a committed state (resume):
// its blocks are read from there, and the slots it does not reference are
// free.
func (s *Stream) Adopt(st StreamState) error {
	nb := s.Blocks()
	bad := func(msg string) error {
		return &FileError{Path: s.path, Msg: "committed state: " + msg, Err: ErrFormat}
	}
	if len(st.Slots) != nb || len(st.CRC) != nb {
		return bad(fmt.Sprintf("%d slots and %d checksums for %d blocks", len(st.Slots), len(st.CRC), nb))
	}
	used := make([]bool, s.nslots)
	for b, k := range st.Slots {
		if k < 0 || int(k) >= s.nslots || used[k] {
			return bad(fmt.Sprintf("block %d in slot %d: out of range or shared", b, k))
		}
		used[k] = true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.slotOf = slices.Clone(st.Slots)
	s.crc = slices.Clone(st.CRC)
	for b := range s.known {
		s.known[b] = true
	}
	s.committed = slices.Clone(st.Slots)
	s.free, s.pending = s.free[:0], nil
	for k, u := range used {
		if !u {
			s.free = append(s.free, int32(k))
		}
	}
	return nil
}

// Close writes back a block loaded by Block and, in a store that never
// committed, every held sentence into its block (WriteHeld), waits for the
// writes and closes the file (which stays on disk: the caller removes a
// temporary one). A store that committed keeps its last committed state:
// a committed state's held sentences are its owner's to keep (a snapshot's
// working set), and a block written now would take a slot of the
// committed state's or none.
func (s *Stream) Close() error {
	if s.f == nil {
		return nil
	}
	err := s.dropLoose()
	if err == nil && s.committed == nil {
		err = s.WriteHeld()
	}
	if werr := s.waitWrites(); err == nil {
		err = werr
	}
	if cerr := s.f.Close(); err == nil {
		err = cerr
	}
	s.f = nil
	for _, free := range s.frees {
		free()
	}
	s.frees, s.bufs, s.pool = nil, nil, nil
	if s.arenaFree != nil {
		s.arenaFree()
	}
	s.arena, s.arenaFree, s.heldAt = nil, nil, nil
	return err
}

var _ MarginalStore = (*Stream)(nil)

// SetHeld gives the store room for held sentences (Hold): size bytes of
// encoded duals, in memory besides the StreamBuffers block buffers, in
// place of the room StreamOptions.HeldSlots gave (which is released). It
// is called before any Hold.
func (s *Stream) SetHeld(size int64) {
	if s.arenaFree != nil {
		s.arenaFree()
	}
	s.arenaUsed = 0
	s.heldAt = make([]int64, s.Len())
	for i := range s.heldAt {
		s.heldAt[i] = -1
	}
	floats, free := platform.AllocFloats(int((size + 7) / 8))
	s.arena, s.arenaFree = floatBytes(floats)[:size:size], free
}

// HeldRoom returns the room for held sentences, in bytes (0 before
// SetHeld).
func (s *Stream) HeldRoom() int64 { return int64(len(s.arena)) }

// HeldUsed returns the bytes the held sentences take, with the room of
// released ones not yet reclaimed (Compact).
func (s *Stream) HeldUsed() int64 { return s.arenaUsed }

// Held reports whether sentence i is held.
func (s *Stream) Held(i int) bool { return s.heldAt != nil && s.heldAt[i] >= 0 }

// Hold keeps sentence i's duals in memory apart from its block, which must
// be resident (within Visit, or through Raw): Raw(i) returns them
// there from now on, whichever block is resident, and when i's block is
// written back it takes them from there. It returns false, holding
// nothing, when the room left (SetHeld, Compact) is too small.
func (s *Stream) Hold(i int) bool {
	n := s.off[i+1] - s.off[i]
	if s.Held(i) {
		return true
	}
	if s.heldAt == nil || s.arenaUsed+n > int64(len(s.arena)) {
		return false
	}
	src := s.Raw(i)
	at := s.arenaUsed
	copy(s.arena[at:at+n], src)
	s.heldAt[i] = at
	s.arenaUsed += n
	return true
}

// HoldData holds sentence i with the encoded duals mu (a resumed run's
// held sentences: their blocks need not be resident), as Hold does.
func (s *Stream) HoldData(i int, mu []byte) bool {
	n := s.off[i+1] - s.off[i]
	if int64(len(mu)) != n || s.Held(i) || s.heldAt == nil || s.arenaUsed+n > int64(len(s.arena)) {
		return false
	}
	at := s.arenaUsed
	copy(s.arena[at:at+n], mu)
	s.heldAt[i] = at
	s.arenaUsed += n
	return true
}

// Release ends the holding of sentence i, whose block must be resident:
// its duals go back into the block (which will be written back). Its room
// is reclaimed by Compact.
func (s *Stream) Release(i int) {
	if !s.Held(i) {
		return
	}
	if s.cur < 0 || i < s.start[s.cur] || i >= s.start[s.cur+1] {
		panic(fmt.Sprintf("duals: Stream.Release(%d) outside the resident block %d", i, s.cur))
	}
	mu := s.Raw(i)
	s.heldAt[i] = -1
	copy(s.Raw(i), mu)
	s.dirty = true
}

// Compact moves the held sentences together in their room, in the order
// of held, which must list every held sentence: the room of released ones
// is free again. Slices Raw returned for held sentences before are
// invalid after.
func (s *Stream) Compact(held []int) {
	type ent struct {
		i  int
		at int64
	}
	es := make([]ent, 0, len(held))
	for _, i := range held {
		es = append(es, ent{i, s.heldAt[i]})
	}
	// Move in increasing offset order: each moves to a place at or before
	// its own, over room already moved from.
	slices.SortFunc(es, func(a, b ent) int { return int(a.at - b.at) })
	at := int64(0)
	for _, e := range es {
		n := s.off[e.i+1] - s.off[e.i]
		copy(s.arena[at:at+n], s.arena[e.at:e.at+n])
		s.heldAt[e.i] = at
		at += n
	}
	s.arenaUsed = at
}

// WriteHeld writes every held sentence back into its block, which is read
// and written back (in file order), and ends their holding: the file then
// holds every sentence's duals, as Load returns them. Called outside
// Visit; Close calls it in a store that never committed.
func (s *Stream) WriteHeld() error {
	if s.heldAt == nil || s.arenaUsed == 0 {
		return nil
	}
	var order []int
	for b := 0; b < s.Blocks(); b++ {
		for i := s.start[b]; i < s.start[b+1]; i++ {
			if s.heldAt[i] >= 0 {
				order = append(order, b)
				break
			}
		}
	}
	if len(order) > 0 {
		// Visit writes each block back with its held sentences (syncHeld).
		if err := s.Visit(order, VisitOptions{Write: true}, func(int, int) error { return nil }, nil); err != nil {
			return err
		}
	}
	for i := range s.heldAt {
		s.heldAt[i] = -1
	}
	s.arenaUsed = 0
	return nil
}

// syncHeld copies the held sentences of block b into buf, its duals about
// to be written back.
func (s *Stream) syncHeld(b int, buf []byte) {
	if s.heldAt == nil {
		return
	}
	base := s.off[s.start[b]]
	for i := s.start[b]; i < s.start[b+1]; i++ {
		if at := s.heldAt[i]; at >= 0 {
			n := s.off[i+1] - s.off[i]
			copy(buf[s.off[i]-base:s.off[i+1]-base], s.arena[at:at+n])
		}
	}
}
