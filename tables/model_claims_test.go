package tables

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/dualcrf/dualcrf/arrowio"
	"github.com/dualcrf/dualcrf/schemas"
)

// claimingModel writes a model file whose schema claims K labels (all
// named in its metadata) but whose rows are only trans transition rows of
// zeros, in format: of this version, or of version 2 (dense) when dense.
func claimingModel(t *testing.T, K, trans int, format arrowio.Format, dense bool) []byte {
	t.Helper()
	labels := make([]string, K)
	for i := range labels {
		labels[i] = fmt.Sprint("L", i)
	}
	lj, err := json.Marshal(labels)
	if err != nil {
		t.Fatal(err)
	}
	md := map[string]string{schemas.KeyLabels: string(lj), schemas.KeyBias: "false", schemas.KeyChecksum: "x"}
	s, err := schemas.ModelSchema(md)
	if dense {
		s, err = schemas.ModelDenseSchema(K, md)
	}
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	w, err := arrowio.NewRecordWriter(&buf, s, arrowio.WriterOptions{Format: format, Compression: arrowio.Compression("zstd")})
	if err != nil {
		t.Fatal(err)
	}
	b := array.NewRecordBuilder(memory.DefaultAllocator, s)
	defer b.Release()
	for i := range trans {
		b.Field(0).(*array.StringBuilder).Append(schemas.KindTrans)
		b.Field(1).(*array.StringBuilder).Append(labels[i])
		if dense {
			b.Field(2).(*array.FixedSizeListBuilder).Append(true)
			b.Field(2).(*array.FixedSizeListBuilder).ValueBuilder().(*array.Float64Builder).AppendValues(make([]float64, K), nil)
			continue
		}
		b.Field(2).(*array.ListBuilder).Append(true) // no weight stored: all zero
		b.Field(3).(*array.ListBuilder).Append(true)
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestReadModelLabelClaims: a model claiming more labels than a model may
// have is refused from its schema, before any row is read (a million
// labels with a few compressed rows made every reader of models allocate
// gigabytes first); a Parquet model with fewer rows than its labels'
// transition rows is refused from its footer's row count.
func TestReadModelLabelClaims(t *testing.T) {
	for _, dense := range []bool{false, true} {
		for _, f := range []arrowio.Format{arrowio.FormatStream, arrowio.FormatParquet} {
			data := claimingModel(t, maxModelLabels+1, 2, f, dense)
			_, err := ReadModel(bytes.NewReader(data), "big.model", arrowio.ReaderOptions{})
			want := fmt.Sprintf("big.model: model has %d labels: more than the %d a model may have", maxModelLabels+1, maxModelLabels)
			if dense {
				want = fmt.Sprintf("big.model: model has %d weights per row: more labels than the %d a model may have", maxModelLabels+1, maxModelLabels)
			}
			if err == nil || !strings.HasPrefix(err.Error(), want) {
				t.Errorf("%s (dense %v): error %v, want %q", f, dense, err, want)
			}
		}
		data := claimingModel(t, 100, 2, arrowio.FormatParquet, dense)
		_, err := ReadModel(bytes.NewReader(data), "few.model", arrowio.ReaderOptions{})
		if want := "few.model: model has 2 rows, fewer than the 100 transition rows of its 100 labels"; err == nil || err.Error() != want {
			t.Errorf("dense %v: error %v, want %q", dense, err, want)
		}
	}
}
