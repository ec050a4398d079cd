package tables

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/dualcrf/dualcrf/arrowio"
	"github.com/dualcrf/dualcrf/crf"
	"github.com/dualcrf/dualcrf/crf/crftest"
	"github.com/dualcrf/dualcrf/internal/datatest"
	"github.com/dualcrf/dualcrf/schemas"
)

// tableInput is a sentence with its attribute ids and values, as given to
// FeatureWriter.Write.
type tableInput struct {
	s      FeatureSentence
	attrs  [][]int32
	values [][]float64
}

// sentence returns x as FeatureWriter.Write takes it.
func (x *tableInput) sentence() *FeatureSentence {
	s := x.s
	s.Attrs, s.Values = x.attrs, x.values
	return &s
}

// tableRandomCorpus makes n random sentences over nattrs attributes and the
// label set labels; about one token in five has real values, one in ten no
// label.
func tableRandomCorpus(rng *rand.Rand, n, nattrs int, labels []string) []tableInput {
	in := make([]tableInput, n)
	for i := range in {
		T := 1 + rng.IntN(9)
		x := tableInput{s: FeatureSentence{Line: 1 + 10*i, Labels: make([]string, T)}}
		for t := 0; t < T; t++ {
			x.s.Tokens = append(x.s.Tokens, []string{fmt.Sprintf("w%d", rng.IntN(50)), fmt.Sprintf("P%d", rng.IntN(5))})
			if rng.IntN(10) > 0 {
				x.s.Labels[t] = labels[rng.IntN(len(labels))]
			}
			ids := make([]int32, rng.IntN(6))
			for j := range ids {
				ids[j] = int32(rng.IntN(nattrs))
			}
			x.attrs = append(x.attrs, ids)
		}
		if rng.IntN(5) == 0 {
			x.values = make([][]float64, T)
			for t := range x.values {
				if rng.IntN(2) == 0 {
					continue
				}
				for range x.attrs[t] {
					x.values[t] = append(x.values[t], rng.NormFloat64())
				}
			}
		}
		in[i] = x
	}
	return in
}

// tableExpected builds, independently of the reader, the dataset that
// reading back the table of in must give: labels get ids in the order of
// known, then of first appearance.
func tableExpected(in []tableInput, attrNames, known []string) *crf.Dataset {
	d := &crf.Dataset{AttrNames: attrNames, SentStart: []int{0}, AttrStart: []int{0}}
	ids := map[string]int32{}
	label := func(l string) int32 {
		if l == "" {
			return -1
		}
		if id, ok := ids[l]; ok {
			return id
		}
		ids[l] = int32(len(d.LabelNames))
		d.LabelNames = append(d.LabelNames, l)
		return ids[l]
	}
	for _, l := range known {
		label(l)
	}
	real := false
	for _, x := range in {
		for t := range x.attrs {
			d.Labels = append(d.Labels, label(x.s.Labels[t]))
			d.Attrs = append(d.Attrs, x.attrs[t]...)
			d.AttrStart = append(d.AttrStart, len(d.Attrs))
			for j := range x.attrs[t] {
				v := 1.0
				if x.values != nil && x.values[t] != nil {
					v = x.values[t][j]
				}
				real = real || v != 1
				d.Values = append(d.Values, v)
			}
		}
		d.SentStart = append(d.SentStart, len(d.Labels))
	}
	if !real {
		d.Values = nil
	}
	d.NumAttrs, d.NumLabels = len(d.AttrNames), len(d.LabelNames)
	return d
}

// tableNames returns n names with the given prefix.
func tableNames(prefix string, n int) []string {
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("%s%d", prefix, i)
	}
	return names
}

// tableWrite writes in as a feature table and returns its bytes.
func tableWrite(t testing.TB, in []tableInput, opts FeatureOptions) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := NewFeatureWriter(&buf, opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range in {
		if err := w.Write(x.sentence()); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestTableRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	attrNames := tableNames("a=", 40)
	labels := []string{"B-NP", "I-NP", "O", "B-VP"}
	in := tableRandomCorpus(rng, 60, len(attrNames), labels)
	want := tableExpected(in, attrNames, labels[:2])
	for _, format := range []arrowio.Format{arrowio.FormatStream, arrowio.FormatFile} {
		for _, comp := range []arrowio.Compression{arrowio.CompressNone, arrowio.CompressZstd, arrowio.CompressLZ4} {
			t.Run(string(format)+"/"+string(comp), func(t *testing.T) {
				mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
				defer mem.AssertSize(t, 0)
				data := tableWrite(t, in, FeatureOptions{
					Columns:     []string{"word", "pos"},
					AttrNames:   attrNames,
					LabelNames:  labels[:2],
					Metadata:    map[string]string{schemas.KeyTemplates: "U00:%x[0,0]"},
					BatchTokens: 37,
					Writer:      arrowio.WriterOptions{Format: format, Compression: comp},
					Mem:         mem,
				})
				tab, err := ReadFeatureTable(bytes.NewReader(data), "t.arrow", FeatureReadOptions{Mem: mem})
				if err != nil {
					t.Fatal(err)
				}
				if err := crftest.CompareDatasets(tab.Data, want); err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(tab.Columns, []string{"word", "pos"}) {
					t.Fatalf("columns %v", tab.Columns)
				}
				tok := 0
				for _, x := range in {
					for _, row := range x.s.Tokens {
						if tab.Text[0][tok] != row[0] || tab.Text[1][tok] != row[1] {
							t.Fatalf("token %d text %q %q, want %q", tok, tab.Text[0][tok], tab.Text[1][tok], row)
						}
						tok++
					}
				}
				if got := tab.Metadata[schemas.KeyTemplates]; got != "U00:%x[0,0]" {
					t.Fatalf("templates metadata %q", got)
				}
			})
		}
	}
}

// tableBatchCount counts the record batches of an IPC stream or file.
func tableBatchCount(t *testing.T, data []byte) int {
	t.Helper()
	rr, err := OpenRecordReader(bytes.NewReader(data), "t", arrowio.ReaderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer rr.Release()
	n := 0
	for rr.Next() {
		n++
	}
	if err := rr.Err(); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestTableLateLabel writes a label first seen in the last of several
// batches: the stream carries it as a dictionary delta, the file format
// writes every batch with the final dictionary.
func TestTableLateLabel(t *testing.T) {
	attrNames := []string{"x", "y", "z"}
	var in []tableInput
	for i := 0; i < 10; i++ {
		l := []string{"A", "B", ""}
		if i == 9 {
			l = []string{"B", "LATE", "A"}
		}
		in = append(in, tableInput{
			s:     FeatureSentence{Labels: l},
			attrs: [][]int32{{0}, {1, 2}, {}},
		})
	}
	want := tableExpected(in, attrNames, []string{"A"})
	for _, format := range []arrowio.Format{arrowio.FormatStream, arrowio.FormatFile} {
		t.Run(string(format), func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			data := tableWrite(t, in, FeatureOptions{
				AttrNames: attrNames, LabelNames: []string{"A"}, BatchTokens: 3,
				Writer: arrowio.WriterOptions{Format: format}, Mem: mem,
			})
			if n := tableBatchCount(t, data); n != 10 {
				t.Fatalf("%d batches, want 10", n)
			}
			tab, err := ReadFeatureTable(bytes.NewReader(data), "late", FeatureReadOptions{Mem: mem})
			if err != nil {
				t.Fatal(err)
			}
			if err := crftest.CompareDatasets(tab.Data, want); err != nil {
				t.Fatal(err)
			}
			if got := tab.Data.LabelNames; !reflect.DeepEqual(got, []string{"A", "B", "LATE"}) {
				t.Fatalf("labels %v", got)
			}
		})
	}
}

// TestTableRealValues checks that real attribute values survive, including
// a token whose values are all 1 (written as null).
func TestTableRealValues(t *testing.T) {
	in := []tableInput{{
		s:      FeatureSentence{Labels: []string{"N", "V"}},
		attrs:  [][]int32{{0, 1}, {1}},
		values: [][]float64{{0.25, -3e-7}, {1}},
	}, {
		s:     FeatureSentence{Labels: []string{"N"}},
		attrs: [][]int32{{2}},
	}}
	data := tableWrite(t, in, FeatureOptions{AttrNames: []string{"len", "bias", "cap"}})
	tab, err := ReadFeatureTable(bytes.NewReader(data), "real", FeatureReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if want := []float64{0.25, -3e-7, 1, 1}; !reflect.DeepEqual(tab.Data.Values, want) {
		t.Fatalf("values %v, want %v", tab.Data.Values, want)
	}
	if s := tab.Summary(); s.RealValued != 1 {
		t.Fatalf("RealValued %d, want 1", s.RealValued)
	}
}

// TestTableEmpty: a table of no sentence is valid; reading it gives an
// empty dataset that still has the attribute and label names.
func TestTableEmpty(t *testing.T) {
	for _, format := range []arrowio.Format{arrowio.FormatStream, arrowio.FormatFile} {
		t.Run(string(format), func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			data := tableWrite(t, nil, FeatureOptions{
				Columns: []string{"word"}, AttrNames: []string{"a", "b"}, LabelNames: []string{"L"},
				Writer: arrowio.WriterOptions{Format: format}, Mem: mem,
			})
			tab, err := ReadFeatureTable(bytes.NewReader(data), "empty", FeatureReadOptions{Mem: mem})
			if err != nil {
				t.Fatal(err)
			}
			d := tab.Data
			if d.Len() != 0 || d.NumTokens() != 0 {
				t.Fatalf("%d sentences %d tokens", d.Len(), d.NumTokens())
			}
			if !reflect.DeepEqual(d.AttrNames, []string{"a", "b"}) || !reflect.DeepEqual(d.LabelNames, []string{"L"}) {
				t.Fatalf("names %v %v", d.AttrNames, d.LabelNames)
			}
		})
	}
}

func TestTableSummary(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	attrNames := tableNames("f", 25)
	in := tableRandomCorpus(rng, 40, len(attrNames), []string{"X", "Y", "Z"})
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	var buf bytes.Buffer
	w, err := NewFeatureWriter(&buf, FeatureOptions{Columns: []string{"word", "pos"}, AttrNames: attrNames, BatchTokens: 50, Mem: mem})
	if err != nil {
		t.Fatal(err)
	}
	want := FeatureSummary{Version: "1", Columns: []string{"word", "pos"}, Attributes: len(attrNames)}
	counts := map[string]int{}
	for _, x := range in {
		if err := w.Write(x.sentence()); err != nil {
			t.Fatal(err)
		}
		want.Sentences++
		want.MaxLen = max(want.MaxLen, len(x.attrs))
		for tok, ids := range x.attrs {
			want.Tokens++
			want.AttrOccurrences += len(ids)
			if l := x.s.Labels[tok]; l != "" {
				counts[l]++
			} else {
				want.Unlabelled++
			}
			if x.values != nil && !allOnes(x.values[tok]) {
				want.RealValued++
			}
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	tab, err := ReadFeatureTable(bytes.NewReader(buf.Bytes()), "s", FeatureReadOptions{Mem: mem})
	if err != nil {
		t.Fatal(err)
	}
	streamed, err := InspectFeatureTable(bytes.NewReader(buf.Bytes()), "s", FeatureReadOptions{Mem: mem})
	if err != nil {
		t.Fatal(err)
	}
	for name, got := range map[string]FeatureSummary{"writer": w.Summary(), "FeatureTable.Summary": tab.Summary(), "InspectFeatureTable": streamed} {
		for i, l := range got.Labels {
			if got.LabelCounts[i] != counts[l] {
				t.Errorf("%s: label %s count %d, want %d", name, l, got.LabelCounts[i], counts[l])
			}
		}
		if len(got.Labels) != len(counts) {
			t.Errorf("%s: labels %v, want the %d of %v", name, got.Labels, len(counts), counts)
		}
		got.Labels, got.LabelCounts, got.Metadata = nil, nil, nil
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: summary\n got %+v\nwant %+v", name, got, want)
		}
	}
}

func TestTableWriterRejects(t *testing.T) {
	w, err := NewFeatureWriter(&bytes.Buffer{}, FeatureOptions{Columns: []string{"word"}, AttrNames: []string{"a", "b"}})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Abort()
	one := []string{"w"}
	cases := []struct {
		name   string
		s      FeatureSentence
		attrs  [][]int32
		values [][]float64
		want   string
	}{
		{"empty", FeatureSentence{}, nil, nil, "empty sentence"},
		{"attr range", FeatureSentence{Tokens: [][]string{one}}, [][]int32{{2}}, nil, "attribute id 2 out of range [0,2)"},
		{"negative attr", FeatureSentence{Tokens: [][]string{one}}, [][]int32{{-1}}, nil, "attribute id -1 out of range"},
		{"labels", FeatureSentence{Tokens: [][]string{one}, Labels: []string{"a", "b"}}, [][]int32{{0}}, nil, "2 labels for 1 tokens"},
		{"columns", FeatureSentence{Tokens: [][]string{{"w", "x"}}}, [][]int32{{0}}, nil, "token 0 has 2 columns, want 1"},
		{"values", FeatureSentence{Tokens: [][]string{one}}, [][]int32{{0, 1}}, [][]float64{{1}}, "1 values for 2 attributes"},
		{"nan", FeatureSentence{Tokens: [][]string{one}, Line: 7}, [][]int32{{0}}, [][]float64{{math.NaN()}}, "sentence 0 (line 7): token 0: attribute value NaN is not finite"},
	}
	for _, c := range cases {
		s := c.s
		s.Attrs, s.Values = c.attrs, c.values
		err := w.Write(&s)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.name, err, c.want)
		}
	}
	for _, o := range []FeatureOptions{
		{AttrNames: []string{"a", "a"}},
		{LabelNames: []string{"L", ""}},
		{Columns: []string{"label"}},
		{Metadata: map[string]string{schemas.KeyVersion: "9"}},
	} {
		if w, err := NewFeatureWriter(&bytes.Buffer{}, o); err == nil {
			w.Abort()
			t.Errorf("options %+v accepted", o)
		}
	}
}

// TestTableAbort: an aborted table and one whose stream lost its end marker
// must not read as complete.
func TestTableAbort(t *testing.T) {
	in := []tableInput{{s: FeatureSentence{Labels: []string{"A"}}, attrs: [][]int32{{0}}}}
	for _, format := range []arrowio.Format{arrowio.FormatStream, arrowio.FormatFile} {
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		var buf bytes.Buffer
		w, err := NewFeatureWriter(&buf, FeatureOptions{AttrNames: []string{"a"}, BatchTokens: 1, Writer: arrowio.WriterOptions{Format: format}, Mem: mem})
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 3; i++ {
			if err := w.Write(&FeatureSentence{Labels: in[0].s.Labels, Attrs: in[0].attrs}); err != nil {
				t.Fatal(err)
			}
		}
		w.Abort()
		if err := w.Close(); err != nil {
			t.Fatalf("Close after Abort: %v", err)
		}
		mem.AssertSize(t, 0)
		if _, err := ReadFeatureTable(bytes.NewReader(buf.Bytes()), "aborted", FeatureReadOptions{}); err == nil {
			t.Errorf("%s: aborted table read without error", format)
		}
	}
}

// TestTableTruncated cuts a stream and a file at every byte: reading must
// fail with an error naming the input, never panic or return a short table.
func TestTableTruncated(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	attrNames := tableNames("a", 10)
	in := tableRandomCorpus(rng, 6, len(attrNames), []string{"A", "B"})
	for _, format := range []arrowio.Format{arrowio.FormatStream, arrowio.FormatFile} {
		data := tableWrite(t, in, FeatureOptions{Columns: []string{"word", "pos"}, AttrNames: attrNames, BatchTokens: 8,
			Writer: arrowio.WriterOptions{Format: format, Compression: arrowio.CompressZstd}})
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		for n := 0; n < len(data); n++ {
			_, err := ReadFeatureTable(bytes.NewReader(data[:n]), "cut.arrow", FeatureReadOptions{Mem: mem})
			if err == nil {
				t.Fatalf("%s cut at %d of %d bytes: no error", format, n, len(data))
			}
			if !strings.HasPrefix(err.Error(), "cut.arrow: ") {
				t.Fatalf("%s cut at %d: error %q does not name the input", format, n, err)
			}
		}
		mem.AssertSize(t, 0)
	}
	// The stream without its 8-byte end-of-stream marker ends on a message
	// boundary: only the missing marker tells it from a whole stream.
	data := tableWrite(t, in, FeatureOptions{AttrNames: attrNames})
	_, err := ReadFeatureTable(bytes.NewReader(data[:len(data)-8]), "cut.arrow", FeatureReadOptions{})
	if err == nil || !strings.Contains(err.Error(), "end-of-stream marker") {
		t.Fatalf("stream without end marker: %v", err)
	}
}

func TestTableNotArrow(t *testing.T) {
	for name, data := range map[string]string{
		"text":  "Confidence NN B-NP\nin IN B-PP\n",
		"empty": "",
		"short": "\xff\xff",
		"gzip":  "\x1f\x8b\x08\x00\x00\x00",
	} {
		_, err := ReadFeatureTable(strings.NewReader(data), "model.bin", FeatureReadOptions{})
		if err == nil || !strings.Contains(err.Error(), "model.bin: ") || !strings.Contains(err.Error(), "not an Arrow IPC stream or file") {
			t.Errorf("%s: error %v", name, err)
		}
	}
}

// tableHandWritten writes one record batch of the given columns as an IPC
// stream, for tables the FeatureWriter would refuse to make.
func tableHandWritten(t *testing.T, schema *arrow.Schema, cols []arrow.Array) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := ipc.NewWriter(&buf, ipc.WithSchema(schema))
	rec := array.NewRecordBatch(schema, cols, int64(cols[0].Len()))
	defer rec.Release()
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// tableColumnsFor builds feature-table columns for rows given as
// (sentence, position, label index or -1, attribute indices, values).
type tableRow struct {
	sent   int64
	pos    int32
	label  int32
	attrs  []int32
	values []float64
}

func tableColumnsFor(t *testing.T, schema *arrow.Schema, rows []tableRow, labels, attrs []string) []arrow.Array {
	mem := memory.DefaultAllocator
	rb := array.NewRecordBuilder(mem, schema)
	defer rb.Release()
	idx := func(name string) int { return schema.FieldIndices(name)[0] }
	sent := rb.Field(idx(schemas.ColSentence)).(*array.Int64Builder)
	pos := rb.Field(idx(schemas.ColPosition)).(*array.Int32Builder)
	lab := rb.Field(idx(schemas.ColLabel)).(*array.BinaryDictionaryBuilder)
	al := rb.Field(idx(schemas.ColAttrs)).(*array.ListBuilder)
	ab := al.ValueBuilder().(*array.BinaryDictionaryBuilder)
	vl := rb.Field(idx(schemas.ColValues)).(*array.ListBuilder)
	vb := vl.ValueBuilder().(*array.Float64Builder)
	for _, r := range rows {
		sent.Append(r.sent)
		pos.Append(r.pos)
		if r.label < 0 {
			lab.AppendNull()
		} else if err := lab.AppendString(labels[r.label]); err != nil {
			t.Fatal(err)
		}
		al.Append(true)
		for _, a := range r.attrs {
			if err := ab.AppendString(attrs[a]); err != nil {
				t.Fatal(err)
			}
		}
		if r.values == nil {
			vl.AppendNull()
		} else {
			vl.Append(true)
			vb.AppendValues(r.values, nil)
		}
	}
	rec := rb.NewRecordBatch()
	defer rec.Release()
	cols := rec.Columns()
	for _, c := range cols {
		c.Retain()
	}
	return cols
}

// TestTableBadRows checks the row checks of the reader on hand-made tables.
func TestTableBadRows(t *testing.T) {
	schema, err := schemas.FeatureSchema(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	labels, attrs := []string{"A", "B"}, []string{"x", "y"}
	cases := []struct {
		name string
		rows []tableRow
		want string
	}{
		{"nan", []tableRow{{0, 0, 0, []int32{0}, nil}, {0, 1, 1, []int32{0, 1}, []float64{2, math.NaN()}}},
			`bad: batch 0 row 1 (sentence 0 position 1): value of attribute "y" is NaN`},
		{"inf", []tableRow{{0, 0, 0, []int32{1}, []float64{math.Inf(-1)}}},
			`row 0 (sentence 0 position 0): value of attribute "y" is -Inf`},
		{"values length", []tableRow{{0, 0, 0, []int32{0, 1}, []float64{2}}}, "1 values for 2 attributes"},
		{"start", []tableRow{{1, 0, 0, nil, nil}}, "row 0 (sentence 1 position 0): the table must start at sentence 0 position 0"},
		{"gap", []tableRow{{0, 0, 0, nil, nil}, {2, 0, 0, nil, nil}}, "row 1 (sentence 2 position 0): sentence 2 follows sentence 0"},
		{"position", []tableRow{{0, 0, 0, nil, nil}, {0, 2, 0, nil, nil}}, "row 1 (sentence 0 position 2): row follows sentence 0 position 0"},
		{"interleaved", []tableRow{{0, 0, 0, nil, nil}, {1, 0, 0, nil, nil}, {0, 1, 0, nil, nil}}, "row 2 (sentence 0 position 1): row follows sentence 1 position 0"},
	}
	for _, c := range cases {
		data := tableHandWritten(t, schema, tableColumnsFor(t, schema, c.rows, labels, attrs))
		_, err := ReadFeatureTable(bytes.NewReader(data), "bad", FeatureReadOptions{})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.name, err, c.want)
		}
	}
}

// TestTableBadSchema reads tables whose schema is not a feature table's.
func TestTableBadSchema(t *testing.T) {
	md := arrow.NewMetadata([]string{schemas.KeyFormat, schemas.KeyVersion}, []string{schemas.FeatureFormat, "2"})
	schema := arrow.NewSchema([]arrow.Field{{Name: "sentence", Type: arrow.PrimitiveTypes.Int64}}, &md)
	b := array.NewInt64Builder(memory.DefaultAllocator)
	defer b.Release()
	b.Append(0)
	col := b.NewArray()
	data := tableHandWritten(t, schema, []arrow.Array{col})
	col.Release()
	_, err := ReadFeatureTable(bytes.NewReader(data), "v2.arrow", FeatureReadOptions{})
	want := `v2.arrow: invalid feature table schema: unsupported feature-table version "2" (this build reads 1)`
	if err == nil || err.Error() != want {
		t.Fatalf("error %v, want %s", err, want)
	}
	var se *schemas.SchemaError
	if !errors.As(err, &se) {
		t.Fatalf("error %T is not a *schemas.SchemaError", err)
	}
}

// tableReadConll parses a CoNLL-2000 file (word POS chunk, blank line
// between sentences) with no help from the package's readers.
func tableReadConll(t *testing.T, path string) []FeatureSentence {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var out []FeatureSentence
	var cur FeatureSentence
	sc := bufio.NewScanner(zr)
	for line := 1; sc.Scan(); line++ {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 {
			if len(cur.Labels) > 0 {
				out = append(out, cur)
			}
			cur = FeatureSentence{}
			continue
		}
		if cur.Line == 0 {
			cur.Line = line
		}
		cur.Tokens = append(cur.Tokens, fields[:2])
		cur.Labels = append(cur.Labels, fields[2])
	}
	if len(cur.Labels) > 0 {
		out = append(out, cur)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestTableConll2000 writes the CoNLL-2000 training set with simple
// word/POS attributes and checks the read-back table against the corpus
// figures published with the data (data/README.md), and likewise the slice
// the repository carries (its first 1,000 sentences, counted with awk).
func TestTableConll2000(t *testing.T) {
	t.Run("slice", func(t *testing.T) {
		tableConll2000(t, datatest.Carried(t, "cmd", "dualcrf", "demodata", "train.txt.gz"), 1000, 23719, 20, 42)
	})
	t.Run("full", func(t *testing.T) {
		// 8,936 sentences, 211,727 tokens, 22 chunk labels, 44 POS tags.
		tableConll2000(t, datatest.Path(t, "conll2000", "train.txt.gz"), 8936, 211727, 22, 44)
	})
}

func tableConll2000(t *testing.T, path string, sentences, tokens, labels, tags int) {
	sents := tableReadConll(t, path)
	vocab := map[string]int32{}
	var names []string
	id := func(name string) int32 {
		if i, ok := vocab[name]; ok {
			return i
		}
		vocab[name] = int32(len(names))
		names = append(names, name)
		return vocab[name]
	}
	attrs := make([][][]int32, len(sents))
	for i, s := range sents {
		for _, tok := range s.Tokens {
			attrs[i] = append(attrs[i], []int32{id("w=" + tok[0]), id("p=" + tok[1])})
		}
	}
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	var buf bytes.Buffer
	w, err := NewFeatureWriter(&buf, FeatureOptions{
		Columns: []string{"word", "pos"}, AttrNames: names, Mem: mem,
		Writer: arrowio.WriterOptions{Compression: arrowio.CompressZstd},
	})
	if err != nil {
		t.Fatal(err)
	}
	for i := range sents {
		sents[i].Attrs = attrs[i]
		if err := w.Write(&sents[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	tab, err := ReadFeatureTable(bytes.NewReader(buf.Bytes()), "train.arrow", FeatureReadOptions{Mem: mem})
	if err != nil {
		t.Fatal(err)
	}
	s := tab.Summary()
	if s.Sentences != sentences || s.Tokens != tokens || len(s.Labels) != labels || s.Unlabelled != 0 {
		t.Fatalf("sentences %d tokens %d labels %d unlabelled %d", s.Sentences, s.Tokens, len(s.Labels), s.Unlabelled)
	}
	pos := 0
	for _, n := range names {
		if strings.HasPrefix(n, "p=") {
			pos++
		}
	}
	if pos != tags || s.AttrOccurrences != 2*tokens {
		t.Fatalf("%d POS attributes, %d occurrences", pos, s.AttrOccurrences)
	}
	if tab.Text[0][0] != "Confidence" || tab.Data.LabelNames[tab.Data.Labels[0]] != "B-NP" {
		t.Fatalf("first token %q %q", tab.Text[0][0], tab.Data.LabelNames[tab.Data.Labels[0]])
	}
	t.Logf("CoNLL-2000 train, word+pos attributes, zstd stream: %d bytes", buf.Len())
}

// tableFuzzSeeds returns small valid tables in each format.
func tableFuzzSeeds(t testing.TB) [][]byte {
	rng := rand.New(rand.NewPCG(7, 8))
	in := tableRandomCorpus(rng, 5, 6, []string{"A", "B", "C"})
	var seeds [][]byte
	for _, format := range []arrowio.Format{arrowio.FormatStream, arrowio.FormatFile} {
		for _, comp := range []arrowio.Compression{arrowio.CompressNone, arrowio.CompressLZ4} {
			var buf bytes.Buffer
			w, err := NewFeatureWriter(&buf, FeatureOptions{Columns: []string{"word", "pos"}, AttrNames: tableNames("a", 6),
				LabelNames: []string{"A"}, BatchTokens: 6, Writer: arrowio.WriterOptions{Format: format, Compression: comp}})
			if err != nil {
				t.Fatal(err)
			}
			for _, x := range in {
				if err := w.Write(x.sentence()); err != nil {
					t.Fatal(err)
				}
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			seeds = append(seeds, buf.Bytes())
		}
	}
	return seeds
}

// TestTableCorrupt flips random bytes of valid tables: reading must end in
// a table or an error naming the input, never a panic or a runaway
// allocation. (No leak check: when arrow-go panics while decoding a corrupt
// batch it does not release the buffers it had made; the Go allocator's
// garbage collector reclaims them.)
func TestTableCorrupt(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for _, seed := range tableFuzzSeeds(t) {
		for i := 0; i < 300; i++ {
			data := bytes.Clone(seed)
			for k := 1 + rng.IntN(4); k > 0; k-- {
				data[rng.IntN(len(data))] ^= byte(1 + rng.IntN(255))
			}
			if _, err := ReadFeatureTable(bytes.NewReader(data), "bad.arrow", FeatureReadOptions{}); err != nil &&
				!strings.HasPrefix(err.Error(), "bad.arrow: ") {
				t.Fatalf("error %q does not name the input", err)
			}
		}
	}
}

// FuzzReadFeatureTable: ReadFeatureTable never panics and names the input
// in errors.
func FuzzReadFeatureTable(f *testing.F) {
	for _, seed := range tableFuzzSeeds(f) {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if _, err := ReadFeatureTable(bytes.NewReader(data), "fuzz", FeatureReadOptions{}); err != nil &&
			!strings.HasPrefix(err.Error(), "fuzz: ") {
			t.Fatalf("error %q does not name the input", err)
		}
	})
}

// tableBenchCorpus synthesises a CoNLL-2000-sized corpus: 8,936 sentences
// of 24±12 tokens, 19 attributes per token drawn Zipf-like from a
// 75,000-attribute vocabulary, word and POS columns, 22 labels.
func tableBenchCorpus() ([]tableInput, []string) {
	rng := rand.New(rand.NewPCG(2000, 8936))
	attrNames := make([]string, 75000)
	for i := range attrNames {
		attrNames[i] = fmt.Sprintf("U%02d=w%d", i%19, i)
	}
	labels := tableNames("L", 22)
	zipf := func(n uint64) int { return int(float64(n) * math.Pow(rng.Float64(), 3)) }
	in := make([]tableInput, 8936)
	for i := range in {
		T := 12 + rng.IntN(25)
		x := tableInput{s: FeatureSentence{Labels: make([]string, T)}}
		for t := 0; t < T; t++ {
			x.s.Tokens = append(x.s.Tokens, []string{fmt.Sprintf("w%d", zipf(20000)), fmt.Sprintf("P%d", zipf(44))})
			x.s.Labels[t] = labels[zipf(22)]
			ids := make([]int32, 19)
			for j := range ids {
				ids[j] = int32(zipf(75000))
			}
			x.attrs = append(x.attrs, ids)
		}
		in[i] = x
	}
	return in, attrNames
}

// BenchmarkTable writes and reads the synthetic CoNLL-2000-sized table in
// each format and compression; bytes/table is the size of the output.
func BenchmarkTable(b *testing.B) {
	in, attrNames := tableBenchCorpus()
	for _, format := range []arrowio.Format{arrowio.FormatStream, arrowio.FormatFile} {
		for _, comp := range []arrowio.Compression{arrowio.CompressNone, arrowio.CompressZstd, arrowio.CompressLZ4} {
			opts := FeatureOptions{Columns: []string{"word", "pos"}, AttrNames: attrNames,
				Writer: arrowio.WriterOptions{Format: format, Compression: comp}}
			data := tableWrite(b, in, opts)
			b.Run("write/"+string(format)+"/"+string(comp), func(b *testing.B) {
				for b.Loop() {
					tableWrite(b, in, opts)
				}
				b.ReportMetric(float64(len(data)), "bytes/table")
			})
			b.Run("read/"+string(format)+"/"+string(comp), func(b *testing.B) {
				for b.Loop() {
					if _, err := ReadFeatureTable(bytes.NewReader(data), "bench", FeatureReadOptions{}); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(len(data)), "bytes/table")
			})
		}
	}
}

var tableUpdate = flag.Bool("update-table", false, "rewrite tables/testdata/feature golden files")

// tableGoldenInput is a small fixed corpus: two text columns, a label first
// seen in the last batch, a token without label, a real-valued attribute.
func tableGoldenInput() []tableInput {
	return []tableInput{
		{s: FeatureSentence{Tokens: [][]string{{"He", "PRP"}, {"reckons", "VBZ"}}, Labels: []string{"B-NP", "B-VP"}},
			attrs: [][]int32{{0, 2}, {1, 2}}},
		{s: FeatureSentence{Tokens: [][]string{{"the", "DT"}, {"deficit", "NN"}, {".", "."}}, Labels: []string{"B-NP", "I-NP", ""}},
			attrs: [][]int32{{0, 3}, {1}, {}}, values: [][]float64{{0.5, 1}, nil, nil}},
		{s: FeatureSentence{Tokens: [][]string{{"rose", "VBD"}}, Labels: []string{"B-LATE"}},
			attrs: [][]int32{{3, 2, 1, 0}}},
	}
}

// TestTableGolden pins the bytes of the feature table: a change to the
// writer's output, or to the reading of an old table, shows here. Refresh
// with go test ./tables -run TestTableGolden -update-table (and bump
// schemas.FeatureVersion when old tables no longer read the same).
func TestTableGolden(t *testing.T) {
	in := tableGoldenInput()
	attrNames := []string{"w[0]=He", "w[0]=reckons", "bias", "pos[0]=NN|DT"}
	want := tableExpected(in, attrNames, []string{"B-NP", "B-VP", "I-NP"})
	for _, format := range []arrowio.Format{arrowio.FormatStream, arrowio.FormatFile} {
		path := filepath.Join("testdata", "feature", "small."+string(format)+".arrow")
		data := tableWrite(t, in, FeatureOptions{
			Columns: []string{"word", "pos"}, AttrNames: attrNames, LabelNames: []string{"B-NP", "B-VP", "I-NP"},
			Metadata:    map[string]string{schemas.KeyTemplates: "U00:%x[0,0]\nU01:%x[0,1]", schemas.KeyMinCount: "1"},
			BatchTokens: 2, Writer: arrowio.WriterOptions{Format: format},
		})
		if *tableUpdate {
			if err := os.WriteFile(path, data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		golden, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(data, golden) {
			t.Errorf("%s: writer output (%d bytes) differs from the golden file (%d bytes)", path, len(data), len(golden))
		}
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		tab, err := ReadFeatureTable(f, path, FeatureReadOptions{})
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		if err := crftest.CompareDatasets(tab.Data, want); err != nil {
			t.Errorf("%s: %v", path, err)
		}
		if got := tab.Text[0]; !reflect.DeepEqual(got, []string{"He", "reckons", "the", "deficit", ".", "rose"}) {
			t.Errorf("%s: words %q", path, got)
		}
	}
}
