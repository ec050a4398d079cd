package arrowio

// Parquet tables. Every table the tool writes can be Parquet (FormatParquet
// in WriterOptions): zstd column chunks, a row group per record batch, the
// Arrow schema stored under "ARROW:schema" so that dictionary columns come
// back as dictionaries and the dualcrf.* schema metadata comes back whole.
// OpenRecordReader reads Parquet when the input starts with the "PAR1"
// magic, whatever its name. Parquet keeps its index in a footer, so it
// needs random access: a regular file is read in place; any other input
// (a pipe) is first copied to an unnamed temporary file (a Spool).

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/dualcrf/dualcrf/internal/platform"
)

// FormatParquet asks NewRecordWriter for a Parquet file instead of Arrow
// IPC. It is not an IPC format: ParseFormat does not accept it.
const FormatParquet Format = "parquet"

// parquetMagic opens (and closes) every Parquet file.
var parquetMagic = []byte("PAR1")

// IsParquet reports whether head, an input's first bytes, starts a Parquet
// file.
func IsParquet(head []byte) bool { return bytes.HasPrefix(head, parquetMagic) }

// parquetBatchRows is the number of rows per record batch read from Parquet.
const parquetBatchRows = 1 << 16

// newParquetWriter returns a RecordWriter of a Parquet file to out.
func newParquetWriter(out io.Writer, schema *arrow.Schema, mem memory.Allocator) (RecordWriter, error) {
	props := parquet.NewWriterProperties(
		parquet.WithCompression(compress.Codecs.Zstd),
		parquet.WithAllocator(mem),
		// A column's whole Arrow dictionary goes into its dictionary page,
		// so attribute ids survive the round trip; the default 1 MiB limit
		// would fall back to plain strings for a large vocabulary.
		parquet.WithDictionaryPageSizeLimit(1<<30),
		parquet.WithCreatedBy("dualcrf"),
	)
	arrowProps := pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema(), pqarrow.WithAllocator(mem))
	g := &gate{w: out}
	pw, err := pqarrow.NewFileWriter(schema, g, props, arrowProps)
	if err != nil {
		return nil, fmt.Errorf("parquet writer: %w", err)
	}
	return &recordWriter{gate: g, w: parquetCloser{pw}}, nil
}

// parquetCloser makes a pqarrow.FileWriter's Write a record batch write
// (one row group per batch).
type parquetCloser struct{ w *pqarrow.FileWriter }

func (p parquetCloser) Write(rec arrow.RecordBatch) error { return p.w.Write(rec) }
func (p parquetCloser) Close() error                      { return p.w.Close() }

// openParquetInput opens the Parquet file that r holds from its start: in
// place when r is a regular file (or a reader at offsets), else copied to a
// spool first.
func openParquetInput(r io.Reader, name string, mem memory.Allocator) (array.RecordReader, error) {
	if ra, size, ok := readerAt(r); ok {
		return openParquet(ra, size, name, mem, nil)
	}
	spool, err := platform.NewSpool("", name)
	if err != nil {
		return nil, err
	}
	n, err := io.Copy(spool, r)
	if err != nil {
		spool.Close()
		return nil, fmt.Errorf("%s: spooling Parquet input (it needs random access): %w", name, err)
	}
	rr, err := openParquet(spool.File, n, name, mem, spool.File)
	if err != nil {
		spool.Close()
	}
	return rr, err
}

// readerAt returns r as random access from its current offset, when it can
// be.
func readerAt(r io.Reader) (io.ReaderAt, int64, bool) {
	if f, ok := r.(regularFile); ok {
		if st, err := f.Stat(); err == nil && st.Mode().IsRegular() {
			if off, err := f.Seek(0, io.SeekCurrent); err == nil {
				return io.NewSectionReader(f, off, st.Size()-off), st.Size() - off, true
			}
		}
	}
	if ra, ok := r.(interface {
		io.ReaderAt
		Size() int64
	}); ok {
		var off int64
		if sk, ok := r.(io.Seeker); ok {
			off, _ = sk.Seek(0, io.SeekCurrent)
		}
		return io.NewSectionReader(ra, off, ra.Size()-off), ra.Size() - off, true
	}
	return nil, 0, false
}

// openParquet reads the Parquet file of size bytes in ra as record batches
// of about 64 Ki rows, streamed row group by row group. Its schema is the
// stored Arrow schema with the file's key-value metadata. A corrupt file is
// an error naming name, never a panic. closer (nil: none) is closed with
// the reader.
func openParquet(ra io.ReaderAt, size int64, name string, mem memory.Allocator, closer io.Closer) (rr array.RecordReader, err error) {
	defer func() {
		if p := recover(); p != nil {
			rr, err = nil, fmt.Errorf("%s: corrupt Parquet file: %v", name, p)
		}
	}()
	if size < 12 {
		return nil, fmt.Errorf("%s: truncated Parquet file (%d bytes)", name, size)
	}
	var tail [4]byte
	if _, err := ra.ReadAt(tail[:], size-4); err != nil || !IsParquet(tail[:]) {
		return nil, fmt.Errorf("%s: truncated or corrupt Parquet file: no PAR1 magic at its end", name)
	}
	footer, err := checkParquetFooter(ra, size)
	if err != nil {
		return nil, fmt.Errorf("%s: corrupt Parquet file: %w", name, err)
	}
	props := parquet.NewReaderProperties(mem)
	// A page is no larger than the file (arrow-go allocates the size a page
	// header claims before reading it).
	props.MaxCompressedPageSize = min(props.GetMaxCompressedPageSize(), size)
	pf, err := file.NewParquetReader(io.NewSectionReader(ra, 0, size), file.WithReadProps(props))
	if err != nil {
		return nil, fmt.Errorf("%s: corrupt Parquet file: %w", name, err)
	}
	if at := concatenatedAt(ra, size, pf.MetaData()); at > 0 {
		pf.Close()
		return nil, &ConcatenatedParquetError{Name: name, At: at}
	}
	if err := checkParquetMetadata(pf.MetaData(), size-8-footer); err != nil {
		pf.Close()
		return nil, fmt.Errorf("%s: corrupt Parquet file: %w", name, err)
	}
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{BatchSize: parquetBatchRows}, mem)
	if err != nil {
		pf.Close()
		return nil, fmt.Errorf("%s: corrupt Parquet file: %w", name, err)
	}
	schema, err := fr.Schema()
	if err != nil {
		pf.Close()
		return nil, fmt.Errorf("%s: Parquet schema: %w", name, err)
	}
	inner, err := fr.GetRecordReader(context.Background(), nil, nil)
	if err != nil {
		pf.Close()
		return nil, fmt.Errorf("%s: corrupt Parquet file: %w", name, err)
	}
	r := &parquetReader{name: name, schema: schema, inner: inner, pf: pf, closer: closer}
	r.refs.Store(1)
	return r, nil
}

// parquetReader yields a Parquet file's record batches with the file's
// schema (its metadata included, which pqarrow's batches lack).
type parquetReader struct {
	refs   atomic.Int64
	name   string
	schema *arrow.Schema
	inner  pqarrow.RecordReader
	pf     *file.Reader
	closer io.Closer
	rec    arrow.RecordBatch
	err    error
}

func (r *parquetReader) Retain() { r.refs.Add(1) }

// NumRows returns the rows of the file, as its footer says (and
// checkParquetMetadata checked).
func (r *parquetReader) NumRows() int64        { return r.pf.NumRows() }
func (r *parquetReader) Schema() *arrow.Schema { return r.schema }

// RecordBatch returns the current batch, valid until the next call to Next.
func (r *parquetReader) RecordBatch() arrow.RecordBatch { return r.rec }

// Record returns the current batch.
//
// Deprecated: use RecordBatch.
func (r *parquetReader) Record() arrow.RecordBatch { return r.rec }

func (r *parquetReader) Err() error { return r.err }

func (r *parquetReader) Next() (ok bool) {
	r.drop()
	if r.err != nil {
		return false
	}
	defer func() {
		if p := recover(); p != nil {
			r.err, ok = fmt.Errorf("%s: corrupt Parquet file: %v", r.name, p), false
		}
	}()
	if !r.inner.Next() {
		if err := r.inner.Err(); err != nil && !errors.Is(err, io.EOF) {
			r.err = fmt.Errorf("%s: read Parquet: %w", r.name, err)
		}
		return false
	}
	rec := r.inner.RecordBatch()
	if rec.Schema().NumFields() != r.schema.NumFields() {
		r.err = fmt.Errorf("%s: Parquet batch has %d columns, its schema %d", r.name, rec.Schema().NumFields(), r.schema.NumFields())
		return false
	}
	r.rec = array.NewRecordBatch(r.schema, rec.Columns(), rec.NumRows())
	return true
}

func (r *parquetReader) drop() {
	if r.rec != nil {
		r.rec.Release()
		r.rec = nil
	}
}

func (r *parquetReader) Release() {
	if r.refs.Add(-1) == 0 {
		r.drop()
		r.inner.Release()
		_ = r.pf.Close()
		if r.closer != nil {
			_ = r.closer.Close()
		}
	}
}

// NumRows returns the number of rows rr will yield when it is known before
// reading them (a Parquet file's footer says it); ok is false otherwise.
func NumRows(rr array.RecordReader) (n int64, ok bool) {
	if c, ok := rr.(rowCounter); ok {
		return c.NumRows(), true
	}
	return 0, false
}

// rowCounter is a record reader that knows its row count before reading
// (parquet.go's reader).
type rowCounter interface {
	NumRows() int64
}

// peekParquet reports whether r starts with the Parquet magic, returning a
// reader that still yields every byte of r (r itself when it is read in
// place).
func peekParquet(r io.Reader) (io.Reader, bool) {
	if ra, _, ok := readerAt(r); ok {
		var head [4]byte
		n, _ := ra.ReadAt(head[:], 0)
		return r, IsParquet(head[:n])
	}
	br := bufio.NewReaderSize(r, 1<<16)
	head, _ := br.Peek(len(parquetMagic))
	return br, IsParquet(head)
}

// ConcatenatedParquetError is an input that holds Parquet files one after
// the other (`cat a.parquet b.parquet`). A Parquet file is read from its
// footer, which indexes only the last file's row groups, at offsets
// counted from that file's start: read as one file, it would give the rows
// of the wrong bytes, or page-header errors.
type ConcatenatedParquetError struct {
	Name string // the input, as named in messages
	At   int64  // the offset where the last file begins
}

func (e *ConcatenatedParquetError) Error() string {
	return fmt.Sprintf("%s: concatenated Parquet files (one begins at byte %d, after another's end) are not supported: a Parquet file is read from its footer, which indexes only the last one; pass them as separate files (featurize reads a directory of them), or concatenate Arrow IPC streams instead", e.Name, e.At)
}

// concatenatedAt returns where the last of several concatenated Parquet
// files begins in the size bytes of ra, or 0 when ra holds one file. The
// footer's row groups give the bytes its file covers, counted from that
// file's start: its column chunks (from offset 4, past the magic), page
// indexes and bloom filters, then the footer. When they account for fewer
// bytes than ra holds, the gap is where the file would begin, and the
// "PAR1" that ends a file followed by the "PAR1" that starts one there
// confirms it (a writer that leaves bytes the metadata does not name is
// then not mistaken for a concatenation).
func concatenatedAt(ra io.ReaderAt, size int64, md *metadata.FileMetaData) int64 {
	var tail [8]byte
	if _, err := ra.ReadAt(tail[:], size-8); err != nil {
		return 0
	}
	footer := size - 8 - int64(binary.LittleEndian.Uint32(tail[:4]))
	end := int64(len(parquetMagic))
	cover := func(off, n int64) {
		if off >= 0 && n > 0 {
			end = max(end, off+n)
		}
	}
	for i := 0; i < md.NumRowGroups(); i++ {
		rg := md.RowGroup(i)
		for j := 0; j < rg.NumColumns(); j++ {
			cc, err := rg.ColumnChunk(j)
			if err != nil {
				return 0
			}
			start := cc.DataPageOffset()
			if cc.HasDictionaryPage() && cc.DictionaryPageOffset() > 0 {
				start = min(start, cc.DictionaryPageOffset())
			}
			cover(start, cc.TotalCompressedSize())
			if l := cc.GetColumnIndexLocation(); l != nil {
				cover(l.Offset, int64(l.Length))
			}
			if l := cc.GetOffsetIndexLocation(); l != nil {
				cover(l.Offset, int64(l.Length))
			}
			cover(cc.BloomFilterOffset(), int64(cc.BloomFilterLength()))
		}
	}
	at := footer - end // where the last file would begin
	if at < 12 {
		return 0
	}
	var seam [8]byte
	if _, err := ra.ReadAt(seam[:], at-4); err != nil || string(seam[:]) != "PAR1PAR1" {
		return 0
	}
	return at
}
