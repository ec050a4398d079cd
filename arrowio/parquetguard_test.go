package arrowio

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/metadata"
)

// ParquetWithFooter returns the data pages of the Parquet file data with
// the footer foot in place of its own.
func parquetWithFooter(data, foot []byte) []byte {
	n := binary.LittleEndian.Uint32(data[len(data)-8:])
	out := bytes.Clone(data[:len(data)-8-int(n)])
	out = append(out, foot...)
	out = binary.LittleEndian.AppendUint32(out, uint32(len(foot)))
	return append(out, "PAR1"...)
}

// editFooter returns data with its footer changed by edit.
func editFooter(t testing.TB, data []byte, edit func(md *metadata.FileMetaData)) []byte {
	t.Helper()
	pf, err := file.NewParquetReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	md := pf.MetaData()
	edit(md)
	foot, err := md.Serialize(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return parquetWithFooter(data, foot)
}

// thriftFooter encodes, in the thrift compact protocol, a FileMetaData
// whose schema is a chain of depth groups (each the one child of the one
// before) ending in a leaf, and that has no row groups.
func thriftFooter(depth int) []byte {
	var b []byte
	zigzag := func(v int64) { b = binary.AppendUvarint(b, uint64(v<<1^v>>63)) }
	b = append(b, 0x15) // field 1 (version), i32
	zigzag(1)
	b = append(b, 0x19) // field 2 (schema), list
	n := depth + 1
	if n < 15 {
		b = append(b, byte(n<<4|12))
	} else {
		b = binary.AppendUvarint(append(b, 0xfc), uint64(n))
	}
	for i := range n {
		if i < depth {
			b = append(b, 0x48, 1, 'g', 0x15) // name (field 4); num_children (field 5), i32
			zigzag(1)
		} else {
			b = append(b, 0x15) // type (field 1), i32: INT32
			zigzag(1)
			b = append(b, 0x38, 1, 'x') // name (field 4)
		}
		b = append(b, 0) // stop
	}
	b = append(b, 0x16) // field 3 (num_rows), i64
	zigzag(0)
	b = append(b, 0x19, 0x0c) // field 4 (row_groups), empty list of structs
	return append(b, 0)
}

// TestParquetFooterClaims: a column chunk claiming more bytes than the
// file holds, or lying outside it, is refused before anything is
// allocated for it (arrow-go allocates a chunk's claimed size whole, 2^40
// bytes being a fatal out-of-memory).
func TestParquetFooterClaims(t *testing.T) {
	data := writeParquet(t, memory.DefaultAllocator)
	cases := map[string]func(md *metadata.FileMetaData){
		"total_compressed_size 2^40": func(md *metadata.FileMetaData) {
			md.RowGroups[0].Columns[0].MetaData.TotalCompressedSize = 1 << 40
		},
		"data page past the end": func(md *metadata.FileMetaData) {
			md.RowGroups[1].Columns[1].MetaData.DataPageOffset = 1 << 40
		},
		"negative data page offset": func(md *metadata.FileMetaData) {
			md.RowGroups[0].Columns[0].MetaData.DataPageOffset = -5
		},
		"negative rows": func(md *metadata.FileMetaData) {
			md.RowGroups[0].NumRows = -1
		},
		"rows disagree": func(md *metadata.FileMetaData) {
			md.NumRows = 1 << 50
		},
		"stored Arrow schema runs past its end": func(md *metadata.FileMetaData) {
			for _, kv := range md.FileMetaData.KeyValueMetadata {
				if kv.Key == "ARROW:schema" {
					v := base64.StdEncoding.EncodeToString([]byte("\xff\xff\xff\xff\x00\x00\x01\x00"))
					kv.Value = &v
				}
			}
		},
	}
	for name, edit := range cases {
		b := editFooter(t, data, edit)
		rr, err := OpenRecordReader(bytes.NewReader(b), "claims.parquet", ReaderOptions{})
		if err == nil {
			_, err = drain(rr)
			rr.Release()
		}
		if err == nil || !strings.HasPrefix(err.Error(), "claims.parquet: corrupt Parquet file: ") {
			t.Errorf("%s: error %v, want the file refused as corrupt", name, err)
		}
	}
}

// TestParquetSchemaDepth: a schema nested deeper than maxFieldDepth is
// refused before arrow-go builds its tree (recursively: a million levels
// overflowed the stack); one of maxFieldDepth levels is not refused for
// its depth.
func TestParquetSchemaDepth(t *testing.T) {
	data := writeParquet(t, memory.DefaultAllocator)
	for depth, want := range map[int]string{
		maxFieldDepth + 1: "schema nested deeper than 64 levels",
		60_000:            "schema nested deeper than 64 levels",
		100_000:           "a schema of 100001 elements (the limit is 65536)",
		1_000_000:         "a schema of 1000001 elements (the limit is 65536)",
	} {
		b := parquetWithFooter(data, thriftFooter(depth))
		_, err := OpenRecordReader(bytes.NewReader(b), "deep.parquet", ReaderOptions{})
		if err == nil || err.Error() != "deep.parquet: corrupt Parquet file: "+want {
			t.Errorf("depth %d: error %v", depth, err)
		}
	}
	b := parquetWithFooter(data, thriftFooter(maxFieldDepth))
	if _, err := OpenRecordReader(bytes.NewReader(b), "deep.parquet", ReaderOptions{}); err != nil && strings.Contains(err.Error(), "nested") {
		t.Errorf("depth %d refused: %v", maxFieldDepth, err)
	}
}

// TestParquetFooterThrift: lengths in the footer's thrift encoding beyond
// the footer, a schema too wide and a group whose children are missing
// are refused naming the file.
func TestParquetFooterThrift(t *testing.T) {
	data := writeParquet(t, memory.DefaultAllocator)
	wide := []byte{0x15, 2, 0x19, 0xfc}
	wide = binary.AppendUvarint(wide, maxParquetSchema+1)
	wide = append(wide, bytes.Repeat([]byte{0}, maxParquetSchema+1)...)
	wide = append(wide, 0)
	cases := map[string][]byte{
		"list longer than the footer":   {0x15, 2, 0x19, 0xfc, 0xff, 0xff, 0xff, 0x7f, 0},
		"string longer than the footer": {0x15, 2, 0x19, 0x1c, 0x48, 0xff, 0xff, 0x3f, 0},
		"too many schema elements":      wide,
		"children missing":              {0x15, 2, 0x19, 0x1c, 0x15, 6, 0, 0},
		"footer longer than the file":   nil,
	}
	for name, foot := range cases {
		b := parquetWithFooter(data, foot)
		if foot == nil {
			binary.LittleEndian.PutUint32(b[len(b)-8:], uint32(len(b)))
		}
		_, err := OpenRecordReader(bytes.NewReader(b), "t.parquet", ReaderOptions{})
		if err == nil || !strings.HasPrefix(err.Error(), "t.parquet: corrupt Parquet file: ") {
			t.Errorf("%s: error %v", name, err)
		}
	}
}

// FuzzParquetFooter: the fuzz input is the footer of a Parquet file whose
// data pages are a good file's: whatever the footer claims, opening and
// reading the file never panics, never allocates what the file cannot
// hold, and errors name the input.
func FuzzParquetFooter(f *testing.F) {
	data := writeParquet(f, memory.DefaultAllocator)
	n := binary.LittleEndian.Uint32(data[len(data)-8:])
	f.Add(bytes.Clone(data[len(data)-8-int(n) : len(data)-8]))
	f.Add(thriftFooter(3))
	f.Add(thriftFooter(maxFieldDepth + 1))
	f.Fuzz(func(t *testing.T, foot []byte) {
		rr, err := OpenRecordReader(bytes.NewReader(parquetWithFooter(data, foot)), "fuzz", ReaderOptions{})
		if err == nil {
			_, err = drain(rr)
			rr.Release()
		}
		if err != nil && !strings.HasPrefix(err.Error(), "fuzz: ") {
			t.Fatalf("error %q does not name the input", err)
		}
	})
}

// TestParquetEmptyChunks: a row group of no rows — arrow-go writes its
// chunks with a dictionary page and a data page offset of 0 — passes the
// footer check and reads as no rows; such a chunk's size claim is still
// held to the file.
func TestParquetEmptyChunks(t *testing.T) {
	s := testSchema()
	var buf bytes.Buffer
	w, err := NewRecordWriter(&buf, s, WriterOptions{Format: FormatParquet})
	if err != nil {
		t.Fatal(err)
	}
	b := array.NewRecordBuilder(memory.DefaultAllocator, s)
	rec := b.NewRecordBatch()
	b.Release()
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	rec.Release()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	data := buf.Bytes()
	rr, err := OpenRecordReader(bytes.NewReader(data), "empty.parquet", ReaderOptions{})
	if err != nil {
		t.Fatalf("a zero-row file: %v", err)
	}
	n, err := drain(rr)
	rr.Release()
	if err != nil || n != 0 {
		t.Fatalf("a zero-row file: %d rows, %v", n, err)
	}
	b2 := editFooter(t, data, func(md *metadata.FileMetaData) {
		md.RowGroups[0].Columns[0].MetaData.TotalCompressedSize = 1 << 40
	})
	if _, err := OpenRecordReader(bytes.NewReader(b2), "empty.parquet", ReaderOptions{}); err == nil || !strings.Contains(err.Error(), "corrupt Parquet file") {
		t.Fatalf("an empty chunk claiming 2^40 bytes: %v", err)
	}
}
