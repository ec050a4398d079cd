package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/dualcrf/dualcrf/arrowio"
	"github.com/dualcrf/dualcrf/schemas"
	"github.com/dualcrf/dualcrf/stage"
	"github.com/dualcrf/dualcrf/tables"
)

// TestExplainWeightsTable writes the fixture model's weights table as Arrow
// and as Parquet and reads each back: its schema must validate and its rows
// be the model's weights (stage.WeightRows, which its own test checks
// against the weight vector), nulls where a column does not apply.
func TestExplainWeightsTable(t *testing.T) {
	f := fixtures(t)
	dir := t.TempDir()
	m, err := stage.ReadModel(t.Context(), stage.File(f.model))
	if err != nil {
		t.Fatal(err)
	}
	want := stage.WeightRows(m)
	for _, name := range []string{"w.arrow", "w.parquet", "w.feather"} {
		mustRun(t, dir, "explain", "-o", name, f.model)
		if r := mustRun(t, dir, "inspect", name); !strings.Contains(string(r.stdout), fmt.Sprintf("rows        %d\n", len(want))) {
			t.Fatalf("inspect %s:\n%s", name, r.stdout)
		}
		in, err := os.Open(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		rr, err := tables.OpenRecordReader(in, name, arrowio.ReaderOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if err := schemas.ValidateWeightsSchema(rr.Schema()); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var got []tables.WeightRow
		for rr.Next() {
			rec := rr.RecordBatch()
			col := func(i int) *array.String { return rec.Column(i).(*array.String) }
			w := rec.Column(5).(*array.Float64)
			for i := range int(rec.NumRows()) {
				r := tables.WeightRow{Kind: col(0).Value(i), Label: col(1).Value(i), FromLabel: col(2).Value(i),
					Attribute: col(3).Value(i), Template: col(4).Value(i), Weight: w.Value(i)}
				if (r.Kind == schemas.KindTrans) == col(2).IsNull(i) || (r.Kind == schemas.KindAttr) == col(3).IsNull(i) {
					t.Fatalf("%s row %d %+v: from_label null %v, attribute null %v", name, len(got), r, col(2).IsNull(i), col(3).IsNull(i))
				}
				got = append(got, r)
			}
		}
		if err := rr.Err(); err != nil {
			t.Fatal(err)
		}
		rr.Release()
		in.Close()
		if len(got) != len(want) {
			t.Fatalf("%s: %d rows, want %d", name, len(got), len(want))
		}
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("%s row %d: %+v, want %+v", name, i, got[i], want[i])
			}
		}
	}
}
