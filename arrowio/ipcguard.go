package arrowio

// arrow-go trusts the lengths written in IPC metadata: a corrupt vector
// length in a schema makes it allocate that many fields (hundreds of GiB, a
// fatal out-of-memory rather than a recoverable panic), a corrupt
// uncompressed-size prefix makes it allocate that much before decompressing,
// and a child offset that points back at its parent recurses forever. So
// before arrow-go sees a message, the checks below walk its flatbuffer
// metadata with bounds-checked reads and verify every length it will act on.
// Streams are read by our own message reader, which also reads bodies only
// as far as the input goes and tells a missing end-of-stream marker from
// the marker itself; files are checked block by block before opening.

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

const (
	// maxFieldDepth bounds the nesting of schema fields.
	maxFieldDepth = 64
	// maxBufferSize bounds the size of one buffer arrow-go allocates while
	// decoding (an uncompressed buffer, say).
	maxBufferSize = 1 << 30
	// maxRatio bounds the compression ratio a buffer may claim: zstd's
	// run-length blocks top out near 32768:1, lz4 near 255:1.
	maxRatio = 1 << 15
	// readChunk is the most memory a message read commits ahead of its data.
	readChunk = 1 << 20
)

// Flatbuffer message header types (Arrow Message.fbs).
const (
	fbHeaderSchema     = 1
	fbHeaderDictionary = 2
	fbHeaderRecord     = 3
)

// errCorrupt marks metadata that fails the checks.
var errCorrupt = errors.New("corrupt Arrow IPC metadata")

func corruptf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", errCorrupt, fmt.Sprintf(format, args...))
}

// fbTable is a flatbuffer table in buf with bounds-checked accessors.
type fbTable struct {
	buf   []byte
	pos   int // table start
	vt    int // vtable start
	vtLen int // vtable length in bytes
}

func fbU32(buf []byte, pos int) (uint32, error) {
	if pos < 0 || pos+4 > len(buf) {
		return 0, corruptf("offset %d out of bounds (%d bytes)", pos, len(buf))
	}
	return binary.LittleEndian.Uint32(buf[pos:]), nil
}

func fbU16(buf []byte, pos int) (int, error) {
	if pos < 0 || pos+2 > len(buf) {
		return 0, corruptf("offset %d out of bounds (%d bytes)", pos, len(buf))
	}
	return int(binary.LittleEndian.Uint16(buf[pos:])), nil
}

// fbRoot returns the root table of buf.
func fbRoot(buf []byte) (fbTable, error) {
	off, err := fbU32(buf, 0)
	if err != nil {
		return fbTable{}, err
	}
	return fbTableAt(buf, int(off))
}

func fbTableAt(buf []byte, pos int) (fbTable, error) {
	soff, err := fbU32(buf, pos)
	if err != nil {
		return fbTable{}, err
	}
	vt := pos - int(int32(soff))
	vtLen, err := fbU16(buf, vt)
	if err != nil {
		return fbTable{}, err
	}
	if vtLen < 4 || vt+vtLen > len(buf) {
		return fbTable{}, corruptf("vtable of %d bytes at %d out of bounds", vtLen, vt)
	}
	return fbTable{buf: buf, pos: pos, vt: vt, vtLen: vtLen}, nil
}

// field returns the position of field id, or -1 when absent. A slot is
// present exactly when flatbuffers reads it (its offset below the vtable
// length, even when the length is odd and the slot's second byte lies past
// it), so that no field arrow-go reads escapes the checks.
func (t fbTable) field(id int) (int, error) {
	slot := 4 + 2*id
	if slot >= t.vtLen {
		return -1, nil
	}
	off, err := fbU16(t.buf, t.vt+slot)
	if err != nil || off == 0 {
		return -1, err
	}
	return t.pos + off, nil
}

// scalar returns the little-endian scalar of size bytes in field id, 0 when
// absent.
func (t fbTable) scalar(id, size int) (int64, error) {
	p, err := t.field(id)
	if err != nil || p < 0 {
		return 0, err
	}
	if p+size > len(t.buf) {
		return 0, corruptf("field %d out of bounds", id)
	}
	switch size {
	case 1:
		return int64(int8(t.buf[p])), nil
	case 4:
		return int64(int32(binary.LittleEndian.Uint32(t.buf[p:]))), nil
	}
	return int64(binary.LittleEndian.Uint64(t.buf[p:])), nil
}

// ref follows the offset in field id; -1 when absent.
func (t fbTable) ref(id int) (int, error) {
	p, err := t.field(id)
	if err != nil || p < 0 {
		return -1, err
	}
	off, err := fbU32(t.buf, p)
	if err != nil {
		return -1, err
	}
	return p + int(off), nil
}

// table returns the sub-table in field id; ok is false when absent.
func (t fbTable) table(id int) (fbTable, bool, error) {
	p, err := t.ref(id)
	if err != nil || p < 0 {
		return fbTable{}, false, err
	}
	sub, err := fbTableAt(t.buf, p)
	return sub, err == nil, err
}

// vector returns the start and length of the vector in field id, checking
// that n elements of elemSize bytes fit in the buffer.
func (t fbTable) vector(id, elemSize int) (start, n int, err error) {
	p, err := t.ref(id)
	if err != nil || p < 0 {
		return 0, 0, err
	}
	n32, err := fbU32(t.buf, p)
	if err != nil {
		return 0, 0, err
	}
	start, n = p+4, int(n32)
	if int64(start)+int64(n)*int64(elemSize) > int64(len(t.buf)) {
		return 0, 0, corruptf("vector of %d elements at %d exceeds the %d-byte metadata", n, p, len(t.buf))
	}
	return start, n, nil
}

// tables calls fn on each table of the vector of tables in field id.
func (t fbTable) tables(id int, fn func(fbTable) error) error {
	start, n, err := t.vector(id, 4)
	if err != nil {
		return err
	}
	for i := 0; i < n; i++ {
		p := start + 4*i
		off, _ := fbU32(t.buf, p) // in bounds: checked by vector
		sub, err := fbTableAt(t.buf, p+int(off))
		if err != nil {
			return err
		}
		if err := fn(sub); err != nil {
			return err
		}
	}
	return nil
}

// checkKeyValues checks a custom_metadata vector of KeyValue tables.
func checkKeyValues(t fbTable, id int) error {
	return t.tables(id, func(kv fbTable) error {
		for _, f := range []int{0, 1} {
			if _, _, err := kv.vector(f, 1); err != nil {
				return err
			}
		}
		return nil
	})
}

// checkSchema checks a Schema table: fields, their children and metadata.
func checkSchema(s fbTable) error {
	if err := s.tables(1, func(f fbTable) error { return checkField(f, 0) }); err != nil {
		return err
	}
	if _, _, err := s.vector(3, 8); err != nil { // features
		return err
	}
	return checkKeyValues(s, 2)
}

// checkField checks a Field table and, recursively, its children.
func checkField(f fbTable, depth int) error {
	if depth > maxFieldDepth {
		return corruptf("fields nested deeper than %d", maxFieldDepth)
	}
	if _, _, err := f.vector(0, 1); err != nil { // name
		return err
	}
	typeType, err := f.scalar(2, 1)
	if err != nil {
		return err
	}
	if typ, ok, err := f.table(3); err != nil {
		return err
	} else if ok && typeType == 14 { // Union: typeIds
		if _, _, err := typ.vector(1, 4); err != nil {
			return err
		}
	}
	if dict, ok, err := f.table(4); err != nil {
		return err
	} else if ok {
		if _, _, err := dict.table(1); err != nil { // indexType
			return err
		}
	}
	if err := f.tables(5, func(c fbTable) error { return checkField(c, depth+1) }); err != nil {
		return err
	}
	return checkKeyValues(f, 6)
}

// prefixFunc returns the 8-byte little-endian value at offset off of a
// message body.
type prefixFunc func(off int64) (int64, error)

// checkMessage checks the metadata of one IPC message (the flatbuffer,
// without the continuation marker and length) and returns its body length.
// When prefix is not nil, the uncompressed sizes of compressed buffers are
// checked too.
func checkMessage(meta []byte, prefix prefixFunc) (int64, error) {
	m, err := fbRoot(meta)
	if err != nil {
		return 0, err
	}
	bodyLen, err := m.scalar(3, 8)
	if err != nil {
		return 0, err
	}
	if bodyLen < 0 {
		return 0, corruptf("negative body length %d", bodyLen)
	}
	if err := checkKeyValues(m, 4); err != nil {
		return 0, err
	}
	kind, err := m.scalar(1, 1)
	if err != nil {
		return 0, err
	}
	header, ok, err := m.table(2)
	switch {
	case err != nil:
		return 0, err
	case !ok:
		return 0, corruptf("message without header")
	}
	switch kind {
	case fbHeaderSchema:
		return bodyLen, checkSchema(header)
	case fbHeaderDictionary:
		data, ok, err := header.table(1)
		if err != nil || !ok {
			return 0, errors.Join(err, corruptf("dictionary batch without data"))
		}
		return bodyLen, checkRecordBatch(data, bodyLen, prefix)
	case fbHeaderRecord:
		return bodyLen, checkRecordBatch(header, bodyLen, prefix)
	}
	return 0, corruptf("unsupported message type %d", kind)
}

// checkRecordBatch checks a RecordBatch table: its buffers lie within the
// body and, when compressed, announce sane uncompressed sizes.
func checkRecordBatch(rb fbTable, bodyLen int64, prefix prefixFunc) error {
	if n, err := rb.scalar(0, 8); err != nil || n < 0 {
		return errors.Join(err, corruptf("negative row count %d", n))
	}
	if _, _, err := rb.vector(1, 16); err != nil { // nodes
		return err
	}
	if _, _, err := rb.vector(4, 8); err != nil { // variadic buffer counts
		return err
	}
	start, n, err := rb.vector(2, 16)
	if err != nil {
		return err
	}
	_, compressed, err := rb.table(3)
	if err != nil {
		return err
	}
	for i := 0; i < n; i++ {
		p := start + 16*i
		off := int64(binary.LittleEndian.Uint64(rb.buf[p:]))
		size := int64(binary.LittleEndian.Uint64(rb.buf[p+8:]))
		if off < 0 || size < 0 || off > bodyLen || size > bodyLen-off {
			return corruptf("buffer %d (offset %d, %d bytes) outside the %d-byte body", i, off, size, bodyLen)
		}
		if !compressed || size == 0 || prefix == nil {
			continue
		}
		if size < 8 {
			return corruptf("compressed buffer %d of %d bytes has no size prefix", i, size)
		}
		raw, err := prefix(off)
		if err != nil {
			return err
		}
		if raw != -1 && (raw < 0 || raw > maxBufferSize || raw > max(readChunk, size*maxRatio)) {
			return corruptf("compressed buffer %d claims %d bytes uncompressed", i, raw)
		}
	}
	return nil
}

// cappedAllocator panics, rather than try, when asked for more than max
// bytes at once. arrow-go reads buffer descriptors past the end of their
// vector without a bounds check, so some corrupt sizes escape checkMessage;
// its readers recover the panic into an error (ours wrap the rest).
type cappedAllocator struct {
	memory.Allocator
	max int
}

func (a cappedAllocator) Allocate(n int) []byte {
	a.check(n)
	return a.Allocator.Allocate(n)
}

func (a cappedAllocator) Reallocate(n int, b []byte) []byte {
	a.check(n)
	return a.Allocator.Reallocate(n, b)
}

func (a cappedAllocator) check(n int) {
	if n > a.max {
		panic(fmt.Sprintf("buffer of %d bytes exceeds the %d-byte limit (corrupt size?)", n, a.max))
	}
}

// readBytes reads exactly n bytes, committing memory only as data arrives,
// so a corrupt length cannot allocate more than the input holds.
func readBytes(r io.Reader, n int64) ([]byte, error) {
	buf := make([]byte, 0, min(n, readChunk))
	for int64(len(buf)) < n {
		if len(buf) == cap(buf) {
			grown := make([]byte, len(buf), min(n, 2*int64(cap(buf))))
			copy(grown, buf)
			buf = grown
		}
		k, err := io.ReadFull(r, buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+k]
		if err != nil {
			return nil, err
		}
	}
	return buf, nil
}

// errNoEOS reports a stream cut between two messages.
var errNoEOS = errors.New("stream ends without its end-of-stream marker (truncated: did the writing stage fail?)")

// messageReader reads IPC stream messages, checking each before arrow-go
// decodes it. It returns io.EOF only at the end-of-stream marker.
type messageReader struct {
	r        io.Reader
	refs     atomic.Int64
	cur      *ipc.Message
	lastMeta []byte // flatbuffer metadata of cur
}

func newMessageReader(r io.Reader) *messageReader {
	m := &messageReader{r: r}
	m.refs.Store(1)
	return m
}

func (m *messageReader) Retain() { m.refs.Add(1) }

func (m *messageReader) Release() {
	if m.refs.Add(-1) == 0 && m.cur != nil {
		m.cur.Release()
		m.cur = nil
	}
}

// Message returns the next message, valid until the next call.
func (m *messageReader) Message() (*ipc.Message, error) {
	if m.cur != nil {
		m.cur.Release()
		m.cur = nil
	}
	metaLen, err := m.header()
	if err != nil || metaLen == 0 {
		return nil, err
	}
	meta, err := readBytes(m.r, metaLen)
	if err != nil {
		return nil, truncated("message metadata", err)
	}
	bodyLen, err := checkMessage(meta, nil)
	if err != nil {
		return nil, err
	}
	body, err := readBytes(m.r, bodyLen)
	if err != nil {
		return nil, truncated("message body", err)
	}
	if _, err := checkMessage(meta, bodyPrefix(body)); err != nil {
		return nil, err
	}
	metaBuf, bodyBuf := memory.NewBufferBytes(meta), memory.NewBufferBytes(body)
	m.cur, m.lastMeta = ipc.NewMessage(metaBuf, bodyBuf), meta
	metaBuf.Release()
	bodyBuf.Release()
	return m.cur, nil
}

// header reads the continuation marker and metadata length; a length of 0
// is the end-of-stream marker, reported as io.EOF.
func (m *messageReader) header() (int64, error) {
	var hdr [8]byte
	n, err := io.ReadFull(m.r, hdr[:4])
	switch {
	case n == 0 && errors.Is(err, io.EOF):
		return 0, errNoEOS
	case err != nil:
		return 0, truncated("message header", err)
	case !bytes.Equal(hdr[:4], streamStart):
		return 0, corruptf("message does not start with the continuation marker")
	}
	if _, err := io.ReadFull(m.r, hdr[4:]); err != nil {
		return 0, truncated("message header", err)
	}
	metaLen := int32(binary.LittleEndian.Uint32(hdr[4:]))
	switch {
	case metaLen == 0:
		return 0, io.EOF
	case metaLen < 0:
		return 0, corruptf("negative metadata length %d", metaLen)
	}
	return int64(metaLen), nil
}

func truncated(what string, err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("truncated stream: input ends inside a %s", what)
	}
	return err
}

// bodyPrefix reads size prefixes from an in-memory body.
func bodyPrefix(body []byte) prefixFunc {
	return func(off int64) (int64, error) {
		if off < 0 || off+8 > int64(len(body)) {
			return 0, corruptf("buffer offset %d out of the body", off)
		}
		return int64(binary.LittleEndian.Uint64(body[off:])), nil
	}
}

// checkFile checks the footer and every block of an IPC file of size bytes.
func checkFile(r io.ReaderAt, size int64) error {
	const tail = 10 // int32 footer length + "ARROW1"
	if size < int64(len(ipc.Magic))+tail {
		return corruptf("file of %d bytes is too short", size)
	}
	end := make([]byte, tail)
	if _, err := r.ReadAt(end, size-tail); err != nil {
		return err
	}
	if !bytes.Equal(end[4:], ipc.Magic) {
		return corruptf("file does not end with the ARROW1 magic (truncated?)")
	}
	footLen := int64(int32(binary.LittleEndian.Uint32(end)))
	if footLen <= 0 || footLen > size-tail-int64(len(ipc.Magic)) {
		return corruptf("footer length %d out of the file", footLen)
	}
	foot := make([]byte, footLen)
	if _, err := r.ReadAt(foot, size-tail-footLen); err != nil {
		return err
	}
	footer, err := fbRoot(foot)
	if err != nil {
		return err
	}
	schema, ok, err := footer.table(1)
	if err != nil || !ok {
		return errors.Join(err, corruptf("footer without schema"))
	}
	if err := checkSchema(schema); err != nil {
		return err
	}
	for _, id := range []int{2, 3} { // dictionaries, record batches
		start, n, err := footer.vector(id, 24)
		if err != nil {
			return err
		}
		for i := 0; i < n; i++ {
			if err := checkBlock(r, size, foot[start+24*i:]); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkBlock checks one file block (offset int64, metadata length int32,
// padding, body length int64) and the message it points to.
func checkBlock(r io.ReaderAt, size int64, blk []byte) error {
	off := int64(binary.LittleEndian.Uint64(blk))
	metaLen := int64(int32(binary.LittleEndian.Uint32(blk[8:])))
	bodyLen := int64(binary.LittleEndian.Uint64(blk[16:]))
	if off < 0 || metaLen < 8 || bodyLen < 0 || off > size || metaLen > size-off || bodyLen > size-off-metaLen {
		return corruptf("block (offset %d, metadata %d, body %d bytes) outside the %d-byte file", off, metaLen, bodyLen, size)
	}
	meta := make([]byte, metaLen)
	if _, err := r.ReadAt(meta, off); err != nil {
		return err
	}
	fb := meta[4:]
	if bytes.HasPrefix(meta, streamStart) {
		fb = meta[8:]
	}
	got, err := checkMessage(fb, func(at int64) (int64, error) {
		var p [8]byte
		if _, err := r.ReadAt(p[:], off+metaLen+at); err != nil {
			return 0, err
		}
		return int64(binary.LittleEndian.Uint64(p[:])), nil
	})
	if err != nil {
		return err
	}
	if got > bodyLen {
		return corruptf("block body of %d bytes, message says %d", bodyLen, got)
	}
	return nil
}
