package tables

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/dualcrf/dualcrf/arrowio"
)

// TestModelParquetRoundTrip: a model written as Parquet reads back whole,
// its checksum verified; the same file rewritten with one metadata value
// changed is refused by the checksum.
func TestModelParquetRoundTrip(t *testing.T) {
	m, _ := markedModel(t)
	var buf bytes.Buffer
	if err := WriteModel(&buf, m, arrowio.WriterOptions{Format: arrowio.FormatParquet}); err != nil {
		t.Fatal(err)
	}
	if !arrowio.IsParquet(buf.Bytes()) {
		t.Fatal("not Parquet")
	}
	got, err := ReadModel(bytes.NewReader(buf.Bytes()), "model.parquet", arrowio.ReaderOptions{})
	if err != nil {
		t.Fatalf("intact Parquet model: %v", err)
	}
	if fmt.Sprint(got.Weights) != fmt.Sprint(m.Weights) || fmt.Sprint(got.AttrNames) != fmt.Sprint(m.AttrNames) ||
		fmt.Sprint(got.LabelNames) != fmt.Sprint(m.LabelNames) {
		t.Fatal("Parquet model read back differs")
	}
	tampered := rewriteParquet(t, buf.Bytes(), func(md map[string]string) { md["dualcrf.lambda"] = "0.02" })
	_, err = ReadModel(bytes.NewReader(tampered), "model.parquet", arrowio.ReaderOptions{})
	if err == nil || !strings.Contains(err.Error(), "model.parquet: checksum mismatch") {
		t.Errorf("changed λ: error %v, want a checksum mismatch", err)
	}
}

// rewriteParquet reads a Parquet table and writes it again with its schema
// metadata edited by edit.
func rewriteParquet(t *testing.T, data []byte, edit func(map[string]string)) []byte {
	t.Helper()
	rr, err := OpenRecordReader(bytes.NewReader(data), "in.parquet", arrowio.ReaderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer rr.Release()
	md := map[string]string{}
	for i, k := range rr.Schema().Metadata().Keys() {
		md[k] = rr.Schema().Metadata().Values()[i]
	}
	edit(md)
	meta := arrow.MetadataFrom(md)
	schema := arrow.NewSchema(rr.Schema().Fields(), &meta)
	var out bytes.Buffer
	w, err := arrowio.NewRecordWriter(&out, schema, arrowio.WriterOptions{Format: arrowio.FormatParquet, Mem: memory.DefaultAllocator})
	if err != nil {
		t.Fatal(err)
	}
	for rr.Next() {
		rec := rr.RecordBatch()
		re := array.NewRecordBatch(schema, rec.Columns(), rec.NumRows())
		err := w.Write(re)
		re.Release()
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := rr.Err(); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}
