package tables

import (
	"bytes"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/dualcrf/dualcrf/arrowio"
	"github.com/dualcrf/dualcrf/schemas"
)

// weightRowsSample has a row of every kind, with nulls where they belong.
func weightRowsSample() []WeightRow {
	return []WeightRow{
		{Kind: schemas.KindAttr, Label: "B-NP", Attribute: "pos[0]=DT", Template: "pos[0]", Weight: 1.5},
		{Kind: schemas.KindAttr, Label: "I-NP", Attribute: "w=x:y", Weight: -0.25},
		{Kind: schemas.KindTrans, Label: "I-NP", FromLabel: "B-NP", Weight: 7},
		{Kind: schemas.KindBias, Label: "O", Weight: 0},
		{Kind: schemas.KindStart, Label: "O", Weight: 0.5},
		{Kind: schemas.KindEnd, Label: "O", Weight: -0.5},
	}
}

// readWeightsBytes reads a weights table from data, failing the test on a
// panic or an error that does not start with the table's name.
func readWeightsBytes(t *testing.T, data []byte) ([]WeightRow, error) {
	t.Helper()
	rr, err := OpenRecordReader(bytes.NewReader(data), "w.arrow", arrowio.ReaderOptions{})
	if err != nil {
		return nil, err
	}
	defer rr.Release()
	rows, err := ReadWeights(rr, "w.arrow")
	if err != nil && !strings.HasPrefix(err.Error(), "w.arrow") {
		t.Fatalf("error %q does not start with the table's name", err)
	}
	return rows, err
}

// TestWeightsRoundTrip writes every kind of row in each format and reads
// them back unchanged.
func TestWeightsRoundTrip(t *testing.T) {
	want := weightRowsSample()
	for _, opts := range []arrowio.WriterOptions{{}, {Format: arrowio.FormatStream}, {Format: arrowio.FormatParquet}} {
		var buf bytes.Buffer
		if err := WriteWeights(&buf, want, map[string]string{schemas.KeySource: "m.arrow"}, opts); err != nil {
			t.Fatal(err)
		}
		got, err := readWeightsBytes(t, buf.Bytes())
		if err != nil {
			t.Fatalf("%s: %v", opts.Format, err)
		}
		if len(got) != len(want) {
			t.Fatalf("%s: %d rows, want %d", opts.Format, len(got), len(want))
		}
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("%s row %d: %+v, want %+v", opts.Format, i, got[i], want[i])
			}
		}
	}
}

// TestReadWeightsRefuses: rows that break the table's rules are refused,
// naming the row.
func TestReadWeightsRefuses(t *testing.T) {
	for _, c := range []struct {
		what string
		edit func(r *WeightRow)
		want string
	}{
		{"unknown kind", func(r *WeightRow) { r.Kind = "state" }, "row 1: kind"},
		{"transition without a previous label", func(r *WeightRow) { r.Kind = schemas.KindTrans }, "row 1: a trans row"},
		{"bias row with an attribute", func(r *WeightRow) { r.Attribute = "x" }, "row 1: a bias row with attribute"},
		{"NaN weight", func(r *WeightRow) { r.Weight = math.NaN() }, "row 1: weight NaN"},
		{"empty label", func(r *WeightRow) { r.Label = "" }, "row 1: empty label"},
	} {
		rows := weightRowsSample()
		rows[1] = WeightRow{Kind: schemas.KindBias, Label: "B-NP", Weight: 1}
		c.edit(&rows[1])
		var buf bytes.Buffer
		if err := WriteWeights(&buf, rows, nil, arrowio.WriterOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := readWeightsBytes(t, buf.Bytes()); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error with %q", c.what, err, c.want)
		}
	}
}

// FuzzReadWeights feeds arbitrary bytes to the weights-table reader: an
// error naming the table, never a panic.
func FuzzReadWeights(f *testing.F) {
	for _, opts := range []arrowio.WriterOptions{{}, {Format: arrowio.FormatStream}, {Format: arrowio.FormatParquet}} {
		var buf bytes.Buffer
		if err := WriteWeights(&buf, weightRowsSample(), nil, opts); err != nil {
			f.Fatal(err)
		}
		f.Add(buf.Bytes())
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		readWeightsBytes(t, data)
	})
}

// countingReader counts the batches a RecordReader has handed out.
type countingReader struct {
	array.RecordReader
	batches int
}

func (c *countingReader) Next() bool {
	ok := c.RecordReader.Next()
	if ok {
		c.batches++
	}
	return ok
}

// TestEachWeightRowStreams: the rows of a weights table of several batches
// are handed out as their batch is read (inspect read them all into memory
// first: a model's weights table holds about twelve times its weights), and
// they are ReadWeights' rows.
func TestEachWeightRowStreams(t *testing.T) {
	var rows []WeightRow
	for i := range 3*DefaultBatchTokens + 5 {
		rows = append(rows, WeightRow{Kind: schemas.KindAttr, Label: "L", Attribute: "a" + strconv.Itoa(i), Weight: 1})
	}
	var buf bytes.Buffer
	if err := WriteWeights(&buf, rows, nil, arrowio.WriterOptions{}); err != nil {
		t.Fatal(err)
	}
	rr, err := OpenRecordReader(bytes.NewReader(buf.Bytes()), "w.arrow", arrowio.ReaderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer rr.Release()
	cr := &countingReader{RecordReader: rr}
	n := 0
	err = EachWeightRow(cr, "w.arrow", func(r WeightRow) error {
		if want := n/DefaultBatchTokens + 1; cr.batches != want || r.Attribute != rows[n].Attribute {
			t.Fatalf("row %d (%s) handed out with %d batches read, want %d", n, r.Attribute, cr.batches, want)
		}
		n++
		return nil
	})
	if err != nil || n != len(rows) {
		t.Fatalf("%d rows, %v", n, err)
	}
}
