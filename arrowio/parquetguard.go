package arrowio

// arrow-go trusts the claims of a Parquet footer. A column chunk's
// total_compressed_size is allocated in one piece before a byte is read
// (2^40 is a fatal out-of-memory, not a recoverable panic), the schema
// list is turned into a tree recursively (a million nested groups overflow
// the stack, a hundred thousand take half a minute and most of a
// gigabyte), and thrift sizes its lists by their claimed length. So before
// arrow-go parses a footer, checkParquetFooter walks its thrift bytes
// with bounds-checked reads; after, checkParquetMetadata checks what the
// column chunks claim against the file's size.

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"io"

	"github.com/apache/arrow-go/v18/parquet/metadata"
)

const (
	// maxParquetFooter bounds the thrift footer of a Parquet file.
	maxParquetFooter = 64 << 20
	// maxParquetSchema bounds the elements (columns and groups) of a
	// Parquet schema.
	maxParquetSchema = 1 << 16
	// maxThriftDepth bounds the nesting of thrift structs and containers
	// in a footer (the format's own nest about six deep).
	maxThriftDepth = 32
)

// Thrift compact protocol types.
const (
	tcStop = iota
	tcTrue
	tcFalse
	tcByte
	tcI16
	tcI32
	tcI64
	tcDouble
	tcBinary
	tcList
	tcSet
	tcMap
	tcStruct
	tcUUID
)

// thriftScan reads thrift compact protocol bytes, never past its buffer.
type thriftScan struct {
	b   []byte
	pos int
}

func (s *thriftScan) errf(format string, args ...any) error {
	return fmt.Errorf("footer byte %d: %s", s.pos, fmt.Sprintf(format, args...))
}

func (s *thriftScan) byte() (byte, error) {
	if s.pos >= len(s.b) {
		return 0, s.errf("footer ends early")
	}
	s.pos++
	return s.b[s.pos-1], nil
}

func (s *thriftScan) uvarint() (uint64, error) {
	v, n := binary.Uvarint(s.b[s.pos:])
	if n <= 0 {
		return 0, s.errf("bad varint")
	}
	s.pos += n
	return v, nil
}

func (s *thriftScan) varint() (int64, error) {
	u, err := s.uvarint()
	return int64(u>>1) ^ -int64(u&1), err
}

func (s *thriftScan) skipBytes(n uint64) error {
	if n > uint64(len(s.b)-s.pos) {
		return s.errf("%d bytes claimed, %d left", n, len(s.b)-s.pos)
	}
	s.pos += int(n)
	return nil
}

// binary reads a binary (string) value.
func (s *thriftScan) binary() ([]byte, error) {
	n, err := s.uvarint()
	if err != nil {
		return nil, err
	}
	start := s.pos
	if err := s.skipBytes(n); err != nil {
		return nil, err
	}
	return s.b[start:s.pos], nil
}

// list reads a list or set header; its length is checked against the
// bytes left (every element takes one byte at least).
func (s *thriftScan) list() (elem byte, n int, err error) {
	h, err := s.byte()
	if err != nil {
		return 0, 0, err
	}
	size := uint64(h >> 4)
	if size == 15 {
		if size, err = s.uvarint(); err != nil {
			return 0, 0, err
		}
	}
	if size > uint64(len(s.b)-s.pos) {
		return 0, 0, s.errf("a list of %d elements in %d bytes", size, len(s.b)-s.pos)
	}
	return h & 0x0f, int(size), nil
}

// fields reads a struct's fields, calling fn for each; fn reads the value
// (and returns true) or leaves it to be skipped.
func (s *thriftScan) fields(depth int, fn func(id int, typ byte) (bool, error)) error {
	if depth > maxThriftDepth {
		return s.errf("structures nested deeper than %d", maxThriftDepth)
	}
	id := 0
	for {
		h, err := s.byte()
		if err != nil {
			return err
		}
		if h == tcStop {
			return nil
		}
		typ := h & 0x0f
		if d := int(h >> 4); d != 0 {
			id += d
		} else {
			v, err := s.varint()
			if err != nil {
				return err
			}
			id = int(v)
		}
		done := false
		if fn != nil {
			if done, err = fn(id, typ); err != nil {
				return err
			}
		}
		if !done {
			if err := s.skip(typ, depth); err != nil {
				return err
			}
		}
	}
}

// skip skips a value of type typ.
func (s *thriftScan) skip(typ byte, depth int) error {
	if depth > maxThriftDepth {
		return s.errf("structures nested deeper than %d", maxThriftDepth)
	}
	switch typ {
	case tcTrue, tcFalse:
		return nil
	case tcByte:
		return s.skipBytes(1)
	case tcI16, tcI32, tcI64:
		_, err := s.uvarint()
		return err
	case tcDouble:
		return s.skipBytes(8)
	case tcUUID:
		return s.skipBytes(16)
	case tcBinary:
		_, err := s.binary()
		return err
	case tcList, tcSet:
		elem, n, err := s.list()
		if err != nil {
			return err
		}
		for range n {
			if elem == tcTrue || elem == tcFalse { // a list's booleans take a byte each
				err = s.skipBytes(1)
			} else {
				err = s.skip(elem, depth+1)
			}
			if err != nil {
				return err
			}
		}
		return nil
	case tcMap:
		n, err := s.uvarint()
		if err != nil || n == 0 {
			return err
		}
		if n > uint64(len(s.b)-s.pos) {
			return s.errf("a map of %d entries in %d bytes", n, len(s.b)-s.pos)
		}
		kv, err := s.byte()
		if err != nil {
			return err
		}
		for range n {
			for _, t := range []byte{kv >> 4, kv & 0x0f} {
				if t == tcTrue || t == tcFalse {
					err = s.skipBytes(1)
				} else {
					err = s.skip(t, depth+1)
				}
				if err != nil {
					return err
				}
			}
		}
		return nil
	case tcStruct:
		return s.fields(depth+1, nil)
	}
	return s.errf("unknown thrift type %d", typ)
}

// checkParquetFooter checks the footer of the Parquet file of size bytes
// in r before arrow-go parses it: its length, the thrift encoding (every
// length within the footer, nesting bounded), the schema (at most
// maxParquetSchema elements, nested at most maxFieldDepth deep, every
// group's children present) and the Arrow schema stored in its metadata
// (the checks of an IPC schema message).
func checkParquetFooter(r io.ReaderAt, size int64) (footer int64, err error) {
	var tail [8]byte
	if _, err := r.ReadAt(tail[:], size-8); err != nil {
		return 0, fmt.Errorf("reading the footer: %w", err)
	}
	n := int64(binary.LittleEndian.Uint32(tail[:4]))
	if n > size-12 {
		return 0, fmt.Errorf("the footer claims %d bytes, the file has %d", n, size)
	}
	if n > maxParquetFooter {
		return 0, fmt.Errorf("a footer of %d bytes (the limit is %d)", n, maxParquetFooter)
	}
	foot := make([]byte, n)
	if _, err := r.ReadAt(foot, size-8-n); err != nil {
		return 0, fmt.Errorf("reading the footer: %w", err)
	}
	s := &thriftScan{b: foot}
	var arrowSchema []byte
	err = s.fields(0, func(id int, typ byte) (bool, error) {
		switch {
		case id == 2 && typ == tcList: // schema
			return true, s.schema()
		case id == 5 && typ == tcList: // key_value_metadata
			elem, n, err := s.list()
			if err != nil || elem != tcStruct {
				return true, err
			}
			for range n {
				var key, value []byte
				err := s.fields(2, func(id int, typ byte) (bool, error) {
					var err error
					switch {
					case id == 1 && typ == tcBinary:
						key, err = s.binary()
					case id == 2 && typ == tcBinary:
						value, err = s.binary()
					default:
						return false, nil
					}
					return true, err
				})
				if err != nil {
					return true, err
				}
				if string(key) == "ARROW:schema" {
					arrowSchema = value
				}
			}
			return true, nil
		}
		return false, nil
	})
	if err != nil {
		return 0, err
	}
	if arrowSchema != nil {
		if err := checkStoredArrowSchema(arrowSchema); err != nil {
			return 0, fmt.Errorf("the stored Arrow schema (ARROW:schema): %w", err)
		}
	}
	return n, nil
}

// schema reads the schema's list of elements (a tree in depth-first order,
// each group followed by its num_children children), checking its size
// and depth without building it.
func (s *thriftScan) schema() error {
	elem, n, err := s.list()
	if err != nil {
		return err
	}
	if elem != tcStruct {
		return s.errf("schema elements of thrift type %d", elem)
	}
	if n > maxParquetSchema {
		return fmt.Errorf("a schema of %d elements (the limit is %d)", n, maxParquetSchema)
	}
	var open []int64 // children still to come of each open group
	for i := range n {
		if i > 0 && len(open) == 0 {
			return fmt.Errorf("schema element %d lies outside the root's children", i)
		}
		var children int64
		err := s.fields(2, func(id int, typ byte) (bool, error) {
			if id != 5 || typ != tcI32 { // num_children
				return false, nil
			}
			v, err := s.varint()
			children = v
			return true, err
		})
		if err != nil {
			return err
		}
		if len(open) > 0 {
			open[len(open)-1]--
		}
		switch {
		case children < 0:
			return fmt.Errorf("schema element %d has %d children", i, children)
		case children > 0:
			if len(open) >= maxFieldDepth {
				return fmt.Errorf("schema nested deeper than %d levels", maxFieldDepth)
			}
			open = append(open, children)
		}
		for len(open) > 0 && open[len(open)-1] == 0 {
			open = open[:len(open)-1]
		}
	}
	if len(open) > 0 {
		return fmt.Errorf("the schema ends with %d children of a group missing", open[len(open)-1])
	}
	return nil
}

// checkStoredArrowSchema checks the base64 IPC schema message that
// pqarrow decodes from a Parquet file's metadata.
func checkStoredArrowSchema(b64 []byte) error {
	msg, err := base64.StdEncoding.DecodeString(string(b64))
	if err != nil {
		if msg, err = base64.RawStdEncoding.DecodeString(string(b64)); err != nil {
			return fmt.Errorf("not base64: %w", err)
		}
	}
	if bytes.HasPrefix(msg, streamStart) {
		msg = msg[4:]
	}
	if len(msg) < 4 {
		return corruptf("no message")
	}
	n := int64(binary.LittleEndian.Uint32(msg))
	if n > int64(len(msg)-4) {
		return corruptf("a message of %d bytes in %d", n, len(msg)-4)
	}
	_, err = checkMessage(msg[4:4+n], nil)
	return err
}

// checkParquetMetadata checks what the row groups of md claim against the
// file's size: the column chunks lie between the leading magic and the
// footer (which ends at byte end), sizes and counts are not negative, the
// row groups' rows add up to the file's.
func checkParquetMetadata(md *metadata.FileMetaData, end int64) error {
	var rows int64
	for i := range md.NumRowGroups() {
		rg := md.RowGroup(i)
		if rg.NumRows() < 0 {
			return fmt.Errorf("row group %d has %d rows", i, rg.NumRows())
		}
		rows += rg.NumRows()
		if rows < 0 {
			return fmt.Errorf("row group %d: the row count overflows", i)
		}
		for j := range rg.NumColumns() {
			cc, err := rg.ColumnChunk(j)
			if err != nil {
				return fmt.Errorf("row group %d, column %d: %w", i, j, err)
			}
			where := func() string { return fmt.Sprintf("row group %d, column %s", i, cc.PathInSchema()) }
			if cc.FilePath() != "" {
				return fmt.Errorf("%s: in another file (%q), not supported", where(), cc.FilePath())
			}
			data, start := cc.DataPageOffset(), cc.DataPageOffset()
			if cc.HasDictionaryPage() && cc.DictionaryPageOffset() > 0 {
				start = min(start, cc.DictionaryPageOffset())
			}
			n := cc.TotalCompressedSize()
			if cc.NumValues() == 0 && data == 0 {
				// An empty chunk (a row group of no rows): arrow-go writes
				// its dictionary page, if any, and leaves the data page
				// offset 0. Place the chunk by its dictionary page.
				if !cc.HasDictionaryPage() || cc.DictionaryPageOffset() <= 0 {
					if n < 0 || n > end {
						return fmt.Errorf("%s: %d bytes claimed, but the data ends at byte %d", where(), n, end)
					}
					continue
				}
				data, start = cc.DictionaryPageOffset(), cc.DictionaryPageOffset()
			}
			switch {
			case start < 4 || start >= end:
				return fmt.Errorf("%s: a page at byte %d, outside the data (bytes 4 to %d)", where(), start, end)
			case n < 0 || n > end-start:
				return fmt.Errorf("%s: %d bytes claimed at byte %d, but the data ends at byte %d", where(), n, start, end)
			case data >= start+n || cc.DictionaryPageOffset() >= start+n:
				return fmt.Errorf("%s: a page beyond the chunk's %d bytes at byte %d", where(), n, start)
			case cc.TotalUncompressedSize() < 0 || cc.NumValues() < 0:
				return fmt.Errorf("%s: negative size or value count", where())
			}
		}
	}
	if rows != md.NumRows {
		return fmt.Errorf("the row groups have %d rows, the file claims %d", rows, md.NumRows)
	}
	return nil
}
