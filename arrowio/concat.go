package arrowio

// Concatenated Arrow IPC input. `cat a.arrow b.arrow | dualcrf decode …` is
// how a shell user joins tables, so an input is read as a sequence of parts,
// back to back: each part is an IPC stream (schema, dictionaries and record
// batches up to its end-of-stream marker) or an IPC file ("ARROW1", the same
// stream, its footer, the footer length and "ARROW1" again). Every part must
// have the first part's schema (see sameSchema); anything after a part that
// does not start another part is an error, so no byte of the input is
// silently ignored.

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// Streamer is implemented by the reader OpenRecordReader returns: Stream
// is the 0-based index of the concatenated stream (or file) the current
// batch came from. Sentence ids restart in each stream, so a reader of
// dualcrf tables treats a change of stream as a sentence boundary.
type Streamer interface {
	Stream() int
}

// StreamOf returns rr's current stream index, 0 when rr does not tell.
func StreamOf(rr array.RecordReader) int {
	if s, ok := rr.(Streamer); ok {
		return s.Stream()
	}
	return 0
}

// countReader counts the bytes read through it.
type countReader struct {
	r io.Reader
	n int64
}

func (c *countReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// partSource cuts an input into its parts. Streams are read as they
// arrive; a file needs random access, so an input that is not a regular
// file is read into memory from the first file part on (as a lone file
// from a pipe always was).
type partSource struct {
	name string
	mem  memory.Allocator

	br   *bufio.Reader // the input from the current position on
	cnt  countReader   // what parts consume of br
	base int64         // input offset where br starts

	ra       io.ReaderAt // random access to the input; nil until known
	size     int64       // bytes in ra
	raOrigin int64       // input offset of ra's first byte
}

func newPartSource(r io.Reader, name string, mem memory.Allocator) *partSource {
	s := &partSource{name: name, mem: mem}
	if f, ok := r.(regularFile); ok {
		if st, err := f.Stat(); err == nil && st.Mode().IsRegular() {
			if off, err := f.Seek(0, io.SeekCurrent); err == nil {
				s.ra, s.size = io.NewSectionReader(f, off, st.Size()-off), st.Size()-off
				s.seek(0)
				return s
			}
		}
	}
	s.reset(r, 0)
	return s
}

// reset makes r, which starts at input offset off, the rest of the input.
func (s *partSource) reset(r io.Reader, off int64) {
	s.br = bufio.NewReaderSize(r, 1<<16)
	s.cnt = countReader{r: s.br}
	s.base = off
}

// seek continues the input at offset off of ra.
func (s *partSource) seek(off int64) {
	s.reset(io.NewSectionReader(s.ra, off, s.size-off), s.raOrigin+off)
}

// offset is the input offset of the next unread byte.
func (s *partSource) offset() int64 { return s.base + s.cnt.n }

// partName names part k, found at input offset at, in messages: the
// input's name for the first part, "NAME: stream K at byte N" after.
func (s *partSource) partName(k int, kind string, at int64) string {
	if k == 0 {
		return s.name
	}
	return fmt.Sprintf("%s: %s %d at byte %d", s.name, kind, k+1, at)
}

// next opens part k (0-based). At the end of the input it returns nil and
// no error, except for the first part: an empty input is an error.
func (s *partSource) next(k int, after string) (array.RecordReader, error) {
	at := s.offset()
	head, err := s.br.Peek(len(ipc.Magic))
	switch {
	case len(head) == 0 && errors.Is(err, io.EOF) && k > 0:
		return nil, nil
	case err != nil && !errors.Is(err, io.EOF):
		return nil, fmt.Errorf("%s: %w", s.name, err)
	}
	switch sniff(head) {
	case FormatStream:
		return openStream(&s.cnt, s.partName(k, "stream", at), s.mem)
	case FormatFile:
		return s.openFilePart(k, at)
	}
	if k == 0 {
		return nil, notArrow(head, s.name)
	}
	return nil, fmt.Errorf("%s: the bytes at offset %d, after the end of %s, are not another Arrow IPC stream or file (corrupt input, or something appended to it)",
		s.name, at, after)
}

// openFilePart opens the IPC file starting at input offset at.
func (s *partSource) openFilePart(k int, at int64) (array.RecordReader, error) {
	name := s.partName(k, "file", at)
	if s.ra == nil {
		data, err := io.ReadAll(s.br)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		s.ra, s.size, s.raOrigin = bytes.NewReader(data), int64(len(data)), at
	}
	start := at - s.raOrigin
	end, err := fileEnd(s.ra, start, s.size)
	if err != nil {
		return nil, fmt.Errorf("%s: truncated or corrupt Arrow IPC file: %w", name, err)
	}
	rr, err := openFile(io.NewSectionReader(s.ra, start, end-start), name, s.mem)
	s.seek(end)
	return rr, err
}

// fileEnd returns the offset just past the IPC file that starts at start in
// r (of size bytes): it walks the file's messages to the end-of-stream
// marker, which the footer follows, and finds the footer length and magic
// that close it.
func fileEnd(r io.ReaderAt, start, size int64) (int64, error) {
	pos := start + 8 // "ARROW1" and two bytes of padding
	var nmsg, schemaLen int64
	for {
		metaLen, hdr, err := fileMessageHeader(r, pos, size)
		if err != nil {
			return 0, err
		}
		if metaLen == 0 {
			pos += hdr
			break
		}
		meta := make([]byte, metaLen)
		if _, err := r.ReadAt(meta, pos+hdr); err != nil {
			return 0, fmt.Errorf("message at byte %d: %w", pos-start, err)
		}
		bodyLen, err := checkMessage(meta, nil)
		if err != nil {
			return 0, fmt.Errorf("message at byte %d: %w", pos-start, err)
		}
		next := pos + hdr + metaLen
		if bodyLen > size-next {
			return 0, corruptf("message at byte %d has a %d-byte body; the input ends %d bytes later", pos-start, bodyLen, size-next)
		}
		if nmsg == 0 {
			schemaLen = metaLen
		}
		nmsg++
		pos = next + bodyLen
	}
	// The footer holds the schema again and a 24-byte block per message;
	// bound the search for its end by that.
	maxFoot := 2*schemaLen + 32*nmsg + 4096
	return fileTrailer(r, pos, min(size, pos+maxFoot+10))
}

// fileMessageHeader reads the header of the file message at pos: the
// metadata length (0 for the end-of-stream marker) and the header's size,
// 8 bytes with the continuation marker, 4 in the pre-1.0 layout.
func fileMessageHeader(r io.ReaderAt, pos, size int64) (metaLen, hdr int64, err error) {
	var b [8]byte
	n, err := r.ReadAt(b[:min(8, max(0, size-pos))], pos)
	if n < 4 {
		if err == nil || errors.Is(err, io.EOF) {
			err = corruptf("file ends inside its messages, before the end-of-stream marker and footer")
		}
		return 0, 0, err
	}
	hdr, v := 4, int32(binary.LittleEndian.Uint32(b[:4]))
	if v == -1 {
		if n < 8 {
			return 0, 0, corruptf("file ends inside a message header")
		}
		hdr, v = 8, int32(binary.LittleEndian.Uint32(b[4:]))
	}
	if v < 0 || int64(v) > size-pos-hdr {
		return 0, 0, corruptf("message metadata of %d bytes at byte %d runs past the end of the input", v, pos)
	}
	return int64(v), hdr, nil
}

// fileTrailer finds the end of a footer that starts at foot: the first
// "ARROW1" before limit preceded by the footer's length.
func fileTrailer(r io.ReaderAt, foot, limit int64) (int64, error) {
	if limit <= foot {
		return 0, corruptf("no footer after the end-of-stream marker (truncated?)")
	}
	buf := make([]byte, limit-foot)
	n, err := r.ReadAt(buf, foot)
	if err != nil && !errors.Is(err, io.EOF) {
		return 0, err
	}
	buf = buf[:n]
	for i := 5; i+len(ipc.Magic) <= len(buf); i++ {
		j := bytes.Index(buf[i:], ipc.Magic)
		if j < 0 {
			break
		}
		i += j
		if i >= 5 && int64(int32(binary.LittleEndian.Uint32(buf[i-4:]))) == int64(i-4) {
			return foot + int64(i+len(ipc.Magic)), nil
		}
	}
	return 0, corruptf("no footer length and ARROW1 magic after the end-of-stream marker (truncated?)")
}

// sameSchema checks that a later part's schema s matches the first part's:
// the same fields in the same order, each with the same name, type (nested
// and dictionary types included), nullability and field metadata, and the
// same schema metadata except the keys in perPart. A reader validates the
// first part's schema only, then reads every batch by column position and
// type, and takes the table's meaning from the first part's metadata: a
// part that differs in any of these would be misread. perPart names what
// rightly differs from part to part (who wrote it, from what).
func sameSchema(first, s *arrow.Schema, perPart []string) error {
	if first.Endianness() != s.Endianness() {
		return fmt.Errorf("byte order %v, stream 1's is %v", s.Endianness(), first.Endianness())
	}
	if first.NumFields() != s.NumFields() {
		return fmt.Errorf("%d columns, stream 1 has %d", s.NumFields(), first.NumFields())
	}
	for i := 0; i < first.NumFields(); i++ {
		f, g := first.Field(i), s.Field(i)
		if !f.Equal(g) {
			return fmt.Errorf("column %d is %s, stream 1's is %s", i+1, describeField(g), describeField(f))
		}
	}
	a, b := metadataMap(first), metadataMap(s)
	keys := make([]string, 0, len(a)+len(b))
	for k := range a {
		keys = append(keys, k)
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		if slices.Contains(perPart, k) {
			continue
		}
		va, oka := a[k]
		vb, okb := b[k]
		switch {
		case !okb:
			return fmt.Errorf("schema metadata lacks %s, which stream 1 has", k)
		case !oka:
			return fmt.Errorf("schema metadata has %s, which stream 1 lacks", k)
		case va != vb:
			return fmt.Errorf("schema metadata %s is %s, stream 1's is %s", k, clip(vb), clip(va))
		}
	}
	return nil
}

// metadataMap returns s's schema metadata as a map.
func metadataMap(s *arrow.Schema) map[string]string {
	md := s.Metadata()
	m := make(map[string]string, md.Len())
	for i, k := range md.Keys() {
		m[k] = md.Values()[i]
	}
	return m
}

func describeField(f arrow.Field) string {
	s := fmt.Sprintf("%q %s", f.Name, f.Type)
	if f.Nullable {
		s += " nullable"
	}
	if f.HasMetadata() {
		s += " with metadata " + f.Metadata.String()
	}
	return s
}

// clip quotes v, shortened to 60 bytes.
func clip(v string) string {
	if len(v) > 60 {
		return fmt.Sprintf("%q…", v[:60])
	}
	return fmt.Sprintf("%q", v)
}

// concatReader reads the parts of an input one after the other.
type concatReader struct {
	refs    atomic.Int64
	src     *partSource
	schema  *arrow.Schema // the first part's
	perPart []string      // metadata keys that may differ between parts
	cur     array.RecordReader
	kind    string // "stream" or "file": the current part's format
	part    int
	rec     arrow.RecordBatch
	err     error
}

var _ Streamer = (*concatReader)(nil)

func (c *concatReader) Retain()               { c.refs.Add(1) }
func (c *concatReader) Schema() *arrow.Schema { return c.schema }

// Stream returns the 0-based index of the part the current batch came from.
func (c *concatReader) Stream() int { return c.part }

// RecordBatch returns the current batch, valid until the next call to Next.
func (c *concatReader) RecordBatch() arrow.RecordBatch { return c.rec }

// Record returns the current batch.
//
// Deprecated: use RecordBatch.
func (c *concatReader) Record() arrow.RecordBatch { return c.rec }

func (c *concatReader) Err() error { return c.err }

func (c *concatReader) Next() bool {
	c.rec = nil
	for c.err == nil && c.cur != nil {
		if c.cur.Next() {
			c.rec = c.cur.RecordBatch()
			return true
		}
		if c.err = c.cur.Err(); c.err != nil {
			return false
		}
		c.advance()
	}
	return false
}

// advance moves to the next part.
func (c *concatReader) advance() {
	after := fmt.Sprintf("%s %d", c.kind, c.part+1)
	if c.part == 0 {
		after = "the Arrow IPC " + c.kind
	}
	c.cur.Release()
	c.cur = nil
	at := c.src.offset()
	rr, err := c.src.next(c.part+1, after)
	if err != nil || rr == nil {
		c.err = err
		return
	}
	c.part++
	c.kind = partKind(rr)
	if err := sameSchema(c.schema, rr.Schema(), c.perPart); err != nil {
		rr.Release()
		c.err = fmt.Errorf("%s: %s %d at byte %d does not match the first: %w", c.src.name, c.kind, c.part+1, at, err)
		return
	}
	c.cur = rr
}

func (c *concatReader) Release() {
	if c.refs.Add(-1) == 0 {
		c.rec = nil
		if c.cur != nil {
			c.cur.Release()
			c.cur = nil
		}
	}
}

// partKind names the format of a part's reader.
func partKind(rr array.RecordReader) string {
	if _, ok := rr.(*fileReader); ok {
		return "file"
	}
	return "stream"
}
