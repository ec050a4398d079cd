package arrowio

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// Format is an Arrow IPC format.
type Format string

// The Arrow IPC formats. The stream format can be written to a pipe and
// read as it arrives, and lets dictionaries grow by delta batches; the file
// format has a footer for random access and needs every dictionary complete
// before its first record batch.
const (
	FormatStream Format = "stream"
	FormatFile   Format = "file"
)

// ParseFormat parses a format name: "stream" (or "") and "file".
func ParseFormat(s string) (Format, error) {
	switch Format(s) {
	case "", FormatStream:
		return FormatStream, nil
	case FormatFile:
		return FormatFile, nil
	}
	return "", fmt.Errorf("unknown Arrow IPC format %q (want stream or file)", s)
}

// Compression is an Arrow IPC body compression codec.
type Compression string

// The body compressions; the empty value means none.
const (
	CompressNone Compression = "none"
	CompressZstd Compression = "zstd"
	CompressLZ4  Compression = "lz4"
)

// ParseCompression parses a compression name: "none" (or ""), "zstd", "lz4".
func ParseCompression(s string) (Compression, error) {
	switch Compression(s) {
	case "", CompressNone:
		return CompressNone, nil
	case CompressZstd, CompressLZ4:
		return Compression(s), nil
	}
	return "", fmt.Errorf("unknown compression %q (want none, zstd or lz4)", s)
}

// WriterOptions choose how record batches are written. The zero value writes
// an uncompressed IPC stream with the default allocator.
type WriterOptions struct {
	Format      Format           // FormatStream when empty
	Compression Compression      // none when empty
	Mem         memory.Allocator // memory.DefaultAllocator when nil
}

// RecordWriter writes record batches of one schema.
type RecordWriter interface {
	// Write writes one record batch; the caller keeps its reference.
	Write(rec arrow.RecordBatch) error
	// Close writes the end of the stream (or the file footer) and releases
	// the writer's resources; it does not close the underlying io.Writer.
	// After a failed Write, Close releases resources, writes nothing more
	// and returns the Write error, so a failed output never looks complete.
	Close() error
	// Abort releases the writer's resources without writing the end marker,
	// so a reader of the output sees it as truncated. Abort after Close does
	// nothing.
	Abort()
}

// NewRecordWriter returns a writer of schema to out: Arrow IPC, or Parquet
// when opts.Format is FormatParquet (Compression is then ignored: Parquet
// column chunks are zstd-compressed). The stream format emits
// dictionary deltas when a dictionary grows by appending; the file format
// rejects any dictionary change after the first batch.
func NewRecordWriter(out io.Writer, schema *arrow.Schema, opts WriterOptions) (RecordWriter, error) {
	if opts.Format == FormatParquet {
		mem := opts.Mem
		if mem == nil {
			mem = memory.DefaultAllocator
		}
		return newParquetWriter(out, schema, mem)
	}
	format, err := ParseFormat(string(opts.Format))
	if err != nil {
		return nil, err
	}
	comp, err := ParseCompression(string(opts.Compression))
	if err != nil {
		return nil, err
	}
	mem := opts.Mem
	if mem == nil {
		mem = memory.DefaultAllocator
	}
	ipcOpts := []ipc.Option{ipc.WithSchema(schema), ipc.WithAllocator(mem)}
	switch comp {
	case CompressZstd:
		ipcOpts = append(ipcOpts, ipc.WithZstd())
	case CompressLZ4:
		ipcOpts = append(ipcOpts, ipc.WithLZ4())
	}
	g := &gate{w: out}
	rw := &recordWriter{gate: g}
	if format == FormatFile {
		fw, err := ipc.NewFileWriter(g, ipcOpts...)
		if err != nil {
			return nil, err
		}
		rw.w = fw
	} else {
		rw.w = ipc.NewWriter(g, append(ipcOpts, ipc.WithDictionaryDeltas(true))...)
	}
	return rw, nil
}

// errGateShut is what a shut gate returns to writes.
var errGateShut = errors.New("arrowio: output aborted")

// gate passes writes through until shut, then refuses them.
type gate struct {
	w    io.Writer
	shut bool
}

func (g *gate) Write(p []byte) (int, error) {
	if g.shut {
		return 0, errGateShut
	}
	return g.w.Write(p)
}

// recordWriter wraps an ipc.Writer or ipc.FileWriter so that nothing is
// written after a failure: both would otherwise write their end marker on
// Close and make a partial output look whole.
type recordWriter struct {
	gate *gate
	w    interface {
		Write(arrow.RecordBatch) error
		Close() error
	}
	err    error
	closed bool
}

func (r *recordWriter) Write(rec arrow.RecordBatch) error {
	switch {
	case r.err != nil:
		return r.err
	case r.closed:
		return errors.New("arrowio: write after close")
	}
	if err := r.w.Write(rec); err != nil {
		r.err = err
		r.gate.shut = true
		return err
	}
	return nil
}

func (r *recordWriter) Close() error {
	if r.closed {
		return r.err
	}
	r.closed = true
	if r.err != nil {
		r.gate.shut = true
		_ = r.w.Close()
		return r.err
	}
	if err := r.w.Close(); err != nil {
		r.err = err
	}
	return r.err
}

func (r *recordWriter) Abort() {
	if r.closed {
		return
	}
	r.closed = true
	r.gate.shut = true
	_ = r.w.Close()
}

// ReaderOptions configure OpenRecordReader.
type ReaderOptions struct {
	Mem memory.Allocator // memory.DefaultAllocator when nil
	// PerPartMetadata names the schema metadata keys whose values may
	// differ from one part of a concatenated input to the next (who wrote
	// a part, from what); every other key must be the same in every part.
	PerPartMetadata []string
}

// OpenRecordReader reads Arrow IPC data from r, in the file format (detected
// by its leading "ARROW1" magic) or the stream format, or a Parquet file
// (detected by its leading "PAR1" magic; see parquet.go: a Parquet input
// that is not a regular file is spooled to an unnamed temporary file). The file format needs
// random access: a regular file (an *os.File, or what OpenInput returns for
// one) is read in place, any other reader is first read into memory. name is
// used in error messages. Input that is neither format, a stream that ends
// without its end-of-stream marker and a file without its footer are
// errors, not panics or silent short reads.
//
// Concatenated input (`cat a.arrow b.arrow`: streams or files back to back)
// is read whole, part after part; each part must have the first one's
// schema (same columns, types and schema metadata but for the keys of
// opts.PerPartMetadata), or Next fails with an error naming the part and
// the difference. Bytes after a part that do not start another part are an
// error. The reader returned implements Streamer: Stream() is the 0-based
// index of the part the current batch came from.
//
// Metadata lengths and buffer sizes are checked before arrow-go acts on
// them, so corrupt input gives an error rather than a huge allocation; a
// single decoded buffer may not exceed 1 GiB.
//
// The returned reader yields batches with Next and RecordBatch (each valid
// until the next call to Next); check Err after the loop and Release it.
// Schema returns the first part's schema. OpenRecordReader does not close r.
func OpenRecordReader(r io.Reader, name string, opts ReaderOptions) (array.RecordReader, error) {
	mem := opts.Mem
	if mem == nil {
		mem = memory.DefaultAllocator
	}
	mem = cappedAllocator{Allocator: mem, max: maxBufferSize}
	r, isPQ := peekParquet(r)
	if isPQ {
		return openParquetInput(r, name, mem)
	}
	src := newPartSource(r, name, mem)
	first, err := src.next(0, "")
	if err != nil {
		return nil, err
	}
	c := &concatReader{src: src, schema: first.Schema(), perPart: opts.PerPartMetadata, cur: first, kind: partKind(first)}
	c.refs.Store(1)
	return c, nil
}

// streamStart is the continuation marker every IPC stream message starts with.
var streamStart = []byte{0xff, 0xff, 0xff, 0xff}

// sniff tells the format from the first bytes, or "" when neither.
func sniff(head []byte) Format {
	switch {
	case bytes.HasPrefix(head, ipc.Magic):
		return FormatFile
	case bytes.HasPrefix(head, streamStart):
		return FormatStream
	}
	return ""
}

// ErrNotArrow is wrapped by the error of a reader given input that is
// neither Arrow IPC nor Parquet (text, say), but not empty.
var ErrNotArrow = errors.New("not an Arrow IPC stream or file")

// notArrow is the error for input (starting with head) that is not Arrow.
func notArrow(head []byte, name string) error {
	if len(head) == 0 {
		return fmt.Errorf("%s: empty input: not an Arrow IPC stream or file", name)
	}
	return fmt.Errorf("%s: %w", name, ErrNotArrow)
}

func openFile(r *io.SectionReader, name string, mem memory.Allocator) (rr array.RecordReader, err error) {
	defer recoverCorrupt(&err, name, "file")
	if err := checkFile(r, r.Size()); err != nil {
		return nil, fmt.Errorf("%s: truncated or corrupt Arrow IPC file: %w", name, err)
	}
	fr, err := ipc.NewFileReader(r, ipc.WithAllocator(mem))
	if err != nil {
		return nil, fmt.Errorf("%s: truncated or corrupt Arrow IPC file: %w", name, err)
	}
	frr := &fileReader{f: fr, name: name}
	frr.refs.Store(1)
	return frr, nil
}

// recoverCorrupt turns a panic of arrow-go on corrupt input into an error.
func recoverCorrupt(err *error, name, format string) {
	if p := recover(); p != nil {
		*err = fmt.Errorf("%s: corrupt Arrow IPC %s: %v", name, format, p)
	}
}

func openStream(r io.Reader, name string, mem memory.Allocator) (rr array.RecordReader, err error) {
	defer recoverCorrupt(&err, name, "stream")
	sr, err := ipc.NewReaderFromMessageReader(newMessageReader(r), ipc.WithAllocator(mem))
	if err != nil {
		return nil, fmt.Errorf("%s: read Arrow IPC stream: %w", name, err)
	}
	return &streamReader{Reader: sr, name: name}, nil
}

// streamReader names the input in errors.
type streamReader struct {
	*ipc.Reader
	name string
}

func (s *streamReader) Err() error {
	if err := s.Reader.Err(); err != nil {
		return fmt.Errorf("%s: read Arrow IPC stream: %w", s.name, err)
	}
	return nil
}

// fileReader iterates over the record batches of an IPC file.
type fileReader struct {
	refs atomic.Int64
	f    *ipc.FileReader
	name string
	next int
	rec  arrow.RecordBatch
	err  error
}

func (r *fileReader) Retain()               { r.refs.Add(1) }
func (r *fileReader) Schema() *arrow.Schema { return r.f.Schema() }

// RecordBatch returns the current batch, valid until the next call to Next.
func (r *fileReader) RecordBatch() arrow.RecordBatch { return r.rec }

// Record returns the current batch.
//
// Deprecated: use RecordBatch.
func (r *fileReader) Record() arrow.RecordBatch { return r.rec }

func (r *fileReader) Err() error { return r.err }

func (r *fileReader) Next() bool {
	r.rec = nil
	if r.err != nil || r.next >= r.f.NumRecords() {
		return false
	}
	rec, err := r.read(r.next)
	if err != nil {
		r.err = fmt.Errorf("%s: read Arrow IPC file batch %d: %w", r.name, r.next, err)
		return false
	}
	r.next++
	r.rec = rec
	return true
}

func (r *fileReader) read(i int) (rec arrow.RecordBatch, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("corrupt record batch: %v", p)
		}
	}()
	return r.f.RecordBatch(i)
}

func (r *fileReader) Release() {
	if r.refs.Add(-1) == 0 {
		r.rec = nil
		_ = r.f.Close()
	}
}
