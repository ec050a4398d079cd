package featurize

import (
	"bytes"
	"io"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/dualcrf/dualcrf/arrowio"
	"github.com/dualcrf/dualcrf/pipeline"
)

// column is one column of a test table: its field and a function that
// appends its values to the field's builder.
type column struct {
	f   arrow.Field
	add func(b array.Builder)
}

// columnTable writes the columns (of equal length) as one record batch in
// format.
func columnTable(t testing.TB, format arrowio.Format, cols ...column) []byte {
	t.Helper()
	var fields []arrow.Field
	for _, c := range cols {
		fields = append(fields, c.f)
	}
	s := arrow.NewSchema(fields, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, s)
	defer b.Release()
	for i, c := range cols {
		c.add(b.Field(i))
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	var buf bytes.Buffer
	w, err := arrowio.NewRecordWriter(&buf, s, arrowio.WriterOptions{Format: format})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func int64Col(name string, v ...int64) column {
	return column{arrow.Field{Name: name, Type: arrow.PrimitiveTypes.Int64}, func(b array.Builder) { b.(*array.Int64Builder).AppendValues(v, nil) }}
}

func uint64Col(name string, v ...uint64) column {
	return column{arrow.Field{Name: name, Type: arrow.PrimitiveTypes.Uint64}, func(b array.Builder) { b.(*array.Uint64Builder).AppendValues(v, nil) }}
}

func stringCol(name string, v ...string) column {
	return column{arrow.Field{Name: name, Type: arrow.BinaryTypes.String}, func(b array.Builder) { b.(*array.StringBuilder).AppendValues(v, nil) }}
}

func binaryCol(name string, v ...string) column {
	return column{arrow.Field{Name: name, Type: arrow.BinaryTypes.Binary}, func(b array.Builder) {
		for _, s := range v {
			b.(*array.BinaryBuilder).Append([]byte(s))
		}
	}}
}

func listCol(name string, v ...string) column {
	return column{arrow.Field{Name: name, Type: arrow.ListOf(arrow.BinaryTypes.String)}, func(b array.Builder) {
		lb := b.(*array.ListBuilder)
		for _, s := range v {
			lb.Append(true)
			lb.ValueBuilder().(*array.StringBuilder).Append(s)
		}
	}}
}

// readTable reads the sentences of table data, named name, with opts.
func readTable(data []byte, name string, opts InputOptions) (string, error) {
	got, err := readSentences(newTableReaderOn(bytes.NewReader(data), name, opts))
	return strings.Join(got, " | "), err
}

// TestTableRowBytes: a row's text (its cells and label) is bounded by
// --max-line-bytes, as a line of text is (a 200 MB cell took 13 GB and
// minutes, and was accepted).
func TestTableRowBytes(t *testing.T) {
	long := strings.Repeat("x", 2000)
	data := columnTable(t, arrowio.FormatParquet, int64Col("sentence", 0, 0), stringCol("word", "a", long), stringCol("label", "O", "O"))
	_, err := readTable(data, "t.parquet", InputOptions{MaxLineBytes: 1000})
	if want := "t.parquet: row 2: 2001 bytes of text, more than 1000 (the limit, TokenColumns.MaxRowBytes; its longest cell, column word, has 2000)"; err == nil || err.Error() != want {
		t.Errorf("error %v, want %q", err, want)
	}
	if got, err := readTable(data, "t.parquet", InputOptions{MaxLineBytes: 2001}); err != nil || got != "a/O "+long+"/O" {
		t.Errorf("at the limit: %.40q, %v", got, err)
	}
	huge := strings.Repeat("y", DefaultMaxLineBytes)
	data = columnTable(t, arrowio.FormatStream, int64Col("sentence", 0), stringCol("word", huge), stringCol("label", "O"))
	if _, err := readTable(data, "t.arrows", InputOptions{}); err == nil || !strings.Contains(err.Error(), "more than 1048576 (the limit, TokenColumns.MaxRowBytes") {
		t.Errorf("the default limit: error %v", err)
	}
	data = columnTable(t, arrowio.FormatParquet, int64Col("sentence", 0, 0, 0), stringCol("word", "a", "b", "c"), stringCol("label", "O", "O", "O"))
	if _, err := readTable(data, "t.parquet", InputOptions{MaxSentenceTokens: 2}); err == nil || !strings.Contains(err.Error(), "t.parquet: row 3: sentence 0 has more than 2 tokens") {
		t.Errorf("--max-sentence-tokens: error %v", err)
	}
}

// TestTableInvalidUTF8: invalid UTF-8 in a text cell, a label or a
// sentence id of a Parquet or IPC table, or in a hive directory name read
// as a column, is refused naming the file, row and column (it was
// featurized into a table that dualcrf's own readers refused).
func TestTableInvalidUTF8(t *testing.T) {
	for _, f := range []arrowio.Format{arrowio.FormatParquet, arrowio.FormatStream, arrowio.FormatFile} {
		for name, cols := range map[string][]column{
			"column word":     {int64Col("sentence", 0, 0), stringCol("word", "a", "b\xffc"), stringCol("label", "O", "O")},
			"column label":    {int64Col("sentence", 0, 0), stringCol("word", "a", "b"), stringCol("label", "O", "\xc3")},
			"column sentence": {stringCol("sentence", "s", "s\xfe"), stringCol("word", "a", "b"), stringCol("label", "O", "O")},
		} {
			_, err := readTable(columnTable(t, f, cols...), "t", InputOptions{})
			if want := "t: row 2: " + name + ": invalid UTF-8 (byte "; err == nil || !strings.HasPrefix(err.Error(), want) {
				t.Errorf("%s, %s: error %v, want %q…", f, name, err, want)
			}
		}
	}
	dir := t.TempDir()
	part := filepath.Join(dir, "lang=%FF")
	if err := os.MkdirAll(part, 0o755); err != nil {
		t.Fatal(err)
	}
	data := columnTable(t, arrowio.FormatParquet, int64Col("sentence", 0), stringCol("word", "a"), stringCol("label", "O"))
	if err := os.WriteFile(filepath.Join(part, "p.parquet"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := newTableReader(dir, nil, InputOptions{Partitions: true})
	if want := filepath.Join(part, "p.parquet") + `: InputOptions.Partitions: directory name "lang=\xff" (decoded) is not valid UTF-8`; err == nil || err.Error() != want {
		t.Errorf("hive key: error %v, want %q", err, want)
	}
}

// TestTableUint64: unsigned 64-bit positions beyond the signed range are
// refused (they wrapped negative, sorting the last token first), and
// unsigned sentence ids read as themselves.
func TestTableUint64(t *testing.T) {
	data := columnTable(t, arrowio.FormatParquet, int64Col("sentence", 0, 0), uint64Col("position", 1<<63, 0), stringCol("word", "b", "a"), stringCol("label", "O", "O"))
	_, err := readTable(data, "t.parquet", InputOptions{})
	if want := "t.parquet: row 1: position 9223372036854775808 (column position) is beyond 9223372036854775807"; err == nil || err.Error() != want {
		t.Errorf("error %v, want %q", err, want)
	}
	data = columnTable(t, arrowio.FormatParquet, uint64Col("sentence", math.MaxUint64, math.MaxUint64), uint64Col("position", 1, 1), stringCol("word", "b", "a"), stringCol("label", "O", "O"))
	_, err = readTable(data, "t.parquet", InputOptions{})
	if want := "t.parquet: row 2: sentence 18446744073709551615 has position 1 twice"; err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("error %v, want %q", err, want)
	}
	data = columnTable(t, arrowio.FormatParquet, int64Col("sentence", 0, 0), uint64Col("position", math.MaxInt64, 0), stringCol("word", "b", "a"), stringCol("label", "O", "P"))
	if got, err := readTable(data, "t.parquet", InputOptions{}); err != nil || got != "a/P b/O" {
		t.Errorf("positions 2^63-1 and 0: %q, %v", got, err)
	}
}

// TestTableColumnTypes: a text column named with --columns must hold
// strings or integers (read as decimal text): binary and list columns are
// refused naming the column and its type (they were base64- and
// JSON-encoded); a template naming a column the table has but does not
// read as text says so, rather than that the column is missing.
func TestTableColumnTypes(t *testing.T) {
	base := []column{int64Col("sentence", 0, 0), stringCol("label", "O", "O")}
	for name, c := range map[string]column{
		`t.parquet: column "word" (TokenColumns.Text) is binary: a text column must hold strings (or integers, read as decimal text)`: binaryCol("word", "a", "b"),
		`t.parquet: column "word" (TokenColumns.Text) is list<`:                                                                       listCol("word", "a", "b"),
	} {
		_, err := readTable(columnTable(t, arrowio.FormatParquet, append(base, c)...), "t.parquet", InputOptions{Columns: []string{"word"}})
		if err == nil || !strings.HasPrefix(err.Error(), name) {
			t.Errorf("error %v, want %q", err, name)
		}
	}
	data := columnTable(t, arrowio.FormatParquet, append(base, int64Col("word", 7, -3), stringCol("pos", "X", "Y"))...)
	if got, err := readTable(data, "t.parquet", InputOptions{Columns: []string{"word"}}); err != nil || got != "7/O -3/O" {
		t.Errorf("an integer column: %q, %v", got, err)
	}
	path := filepath.Join(t.TempDir(), "t.parquet")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	set, err := ParseTemplates(strings.NewReader("w[0]\n"), "tmpl")
	if err != nil {
		t.Fatal(err)
	}
	_, err = Run(t.Context(), pipeline.Source{Path: path}, io.Discard, RunOptions{Templates: set, Input: InputOptions{Columns: nil}})
	want := `t.parquet: tmpl:1: template "w[0]": the table's column "word" is int64, not text`
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("template on an integer column: error %v, want %q", err, want)
	}
}

// TestExplicitTextFormat: a text corpus whose first token is "PAR1" or
// "ARROW1" is read as text when its format is given (a file and standard
// input); without a format given it is still told by its bytes.
func TestExplicitTextFormat(t *testing.T) {
	dir := t.TempDir()
	for _, first := range []string{"PAR1", "ARROW1"} {
		text := first + " NN B-NP\nsaw VBD B-VP\n\n"
		path := filepath.Join(dir, first+".txt")
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		for _, src := range []pipeline.Source{{Path: path}, {Path: "-", Stdin: strings.NewReader(text)}} {
			sum, err := Run(t.Context(), src, io.Discard, RunOptions{Input: InputOptions{Format: "conll", FormatGiven: true}})
			if err != nil || sum.Sentences != 1 || sum.Tokens != 2 {
				t.Errorf("%s, %s: %d sentences, %d tokens, %v; want the text read", first, src.Name(), sum.Sentences, sum.Tokens, err)
			}
		}
		r, c, err := OpenReader(pipeline.Source{Path: path}, InputOptions{Format: "conll", FormatGiven: true})
		if err != nil {
			t.Fatal(err)
		}
		got, err := readSentences(r)
		c.Close()
		if want := []string{first + "/NN/B-NP saw/VBD/B-VP"}; err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("%s: OpenReader: %q, %v", first, got, err)
		}
		if _, err := Run(t.Context(), pipeline.Source{Path: path}, io.Discard, RunOptions{Input: InputOptions{Format: "conll"}}); err == nil {
			t.Errorf("%s: a format not given (a model's, say) read as text; want the bytes to decide", first)
		}
	}
}

// FuzzParquetTokenTable: a damaged Parquet token table (the input is
// given the Parquet magic when it lacks it) gives sentences or an error
// naming the input, never a panic, with the row limits in force.
func FuzzParquetTokenTable(f *testing.F) {
	f.Add(tokenTable(f, arrowio.FormatParquet, twoSentences))
	f.Add(tokenTable(f, arrowio.FormatParquet, twoSentences[:2], twoSentences[2:]))
	f.Add(columnTable(f, arrowio.FormatParquet, uint64Col("sentence", 1, 1), uint64Col("position", 1<<63, 0), stringCol("word", "a", "b\xff"), stringCol("label", "O", "O")))
	f.Add(columnTable(f, arrowio.FormatParquet, int64Col("sentence", 0, 0), binaryCol("word", "a", "b"), listCol("pos", "X", "Y"), stringCol("label", "O", "O")))
	f.Fuzz(func(t *testing.T, b []byte) {
		if !arrowio.IsParquet(b) {
			b = append([]byte("PAR1"), b...)
		}
		for _, opts := range []InputOptions{{MaxLineBytes: 64, MaxSentenceTokens: 64}, {Columns: []string{"word"}, MaxLineBytes: 64}} {
			_, err := readSentences(newTableReaderOn(bytes.NewReader(b), "fuzz", opts))
			if err != nil && !strings.HasPrefix(err.Error(), "fuzz") {
				t.Fatalf("error %q does not name the input", err)
			}
		}
	})
}
