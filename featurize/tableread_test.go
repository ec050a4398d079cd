package featurize

import (
	"bytes"
	"fmt"
	"io"
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

// tok is one row of a test token table.
type tok struct {
	s          int64
	p          int32
	w, pos, ch string
}

// tokenTable writes rows as a token table (sentence, position, word, pos,
// chunk as a dictionary) in format (arrowio.FormatParquet, FormatFile or
// FormatStream), one record batch per batch given.
func tokenTable(t testing.TB, format arrowio.Format, batches ...[]tok) []byte {
	t.Helper()
	dict := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}
	s := arrow.NewSchema([]arrow.Field{
		{Name: "sentence", Type: arrow.PrimitiveTypes.Int64},
		{Name: "position", Type: arrow.PrimitiveTypes.Int32},
		{Name: "word", Type: arrow.BinaryTypes.String},
		{Name: "pos", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "chunk", Type: dict, Nullable: true},
	}, nil)
	var buf bytes.Buffer
	w, err := arrowio.NewRecordWriter(&buf, s, arrowio.WriterOptions{Format: format})
	if err != nil {
		t.Fatal(err)
	}
	for _, rows := range batches {
		b := array.NewRecordBuilder(memory.DefaultAllocator, s)
		for _, r := range rows {
			b.Field(0).(*array.Int64Builder).Append(r.s)
			b.Field(1).(*array.Int32Builder).Append(r.p)
			b.Field(2).(*array.StringBuilder).Append(r.w)
			b.Field(3).(*array.StringBuilder).Append(r.pos)
			if err := b.Field(4).(*array.BinaryDictionaryBuilder).AppendString(r.ch); err != nil {
				t.Fatal(err)
			}
		}
		rec := b.NewRecordBatch()
		err := w.Write(rec)
		rec.Release()
		b.Release()
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// readSentences reads every sentence of r as "w/pos/label …" strings.
func readSentences(r Reader) ([]string, error) {
	var out []string
	for r.Scan() {
		s := r.Sentence()
		var toks []string
		for i, cells := range s.Tokens {
			l := ""
			if s.Labels != nil {
				l = s.Labels[i]
			}
			toks = append(toks, strings.Join(append(append([]string(nil), cells...), l), "/"))
		}
		out = append(out, strings.Join(toks, " "))
	}
	return out, r.Err()
}

var twoSentences = []tok{
	{0, 1, "saw", "VBD", "B-VP"}, {0, 0, "He", "PRP", "B-NP"}, {0, 2, "it", "PRP", "B-NP"}, // positions out of order
	{7, 0, "Yes", "UH", "O"},
}

// TestTableReaderFormats: the same token table as Parquet, an IPC file and
// an IPC stream, cut into batches across a sentence, reads as the same
// sentences, positions sorted, the last string column taken as the label.
func TestTableReaderFormats(t *testing.T) {
	want := []string{"He/PRP/B-NP saw/VBD/B-VP it/PRP/B-NP", "Yes/UH/O"}
	for _, f := range []arrowio.Format{arrowio.FormatParquet, arrowio.FormatFile, arrowio.FormatStream} {
		batches := [][]tok{twoSentences[:2], twoSentences[2:]}
		if f == arrowio.FormatFile { // one dictionary per field in an IPC file
			batches = [][]tok{twoSentences}
		}
		data := tokenTable(t, f, batches...)
		got, err := readSentences(newTableReaderOn(bytes.NewReader(data), "tokens", InputOptions{}))
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("%s: %q, %v; want %q", f, got, err, want)
		}
	}
}

// TestTableReaderRules: non-contiguous sentence rows and repeated
// positions are errors naming the input and the row; column choices by
// flag.
func TestTableReaderRules(t *testing.T) {
	cases := []struct {
		name string
		rows []tok
		opts InputOptions
		want string // error, or the sentences joined by " | "
	}{
		{"non-contiguous", []tok{{0, 0, "a", "X", "O"}, {1, 0, "b", "X", "O"}, {0, 1, "c", "X", "O"}}, InputOptions{},
			"t.parquet: row 3: sentence 0 continues after other sentences (its rows began at row 1)"},
		{"position twice", []tok{{0, 0, "a", "X", "O"}, {0, 0, "b", "X", "O"}}, InputOptions{},
			"t.parquet: row 2: sentence 0 has position 0 twice"},
		{"label by name", twoSentences, InputOptions{LabelName: "pos", Columns: []string{"word"}},
			"He/PRP saw/VBD it/PRP | Yes/UH"},
		{"label by index", twoSentences, InputOptions{LabelColumn: 4, Columns: []string{"word"}},
			"He/PRP saw/VBD it/PRP | Yes/UH"},
		{"no labels", twoSentences, InputOptions{LabelColumn: -1},
			"He/PRP/B-NP/ saw/VBD/B-VP/ it/PRP/B-NP/ | Yes/UH/O/"},
		{"sentence column", twoSentences, InputOptions{SentenceColumn: "nope"}, `t.parquet: no sentence column "nope" (TokenColumns.Sentence)`},
		{"label column", twoSentences, InputOptions{LabelName: "nope"}, `t.parquet: no label column "nope" (TokenColumns.Label)`},
		{"text column", twoSentences, InputOptions{Columns: []string{"lemma"}}, `t.parquet: no column "lemma" (TokenColumns.Text)`},
		{"label index beyond", twoSentences, InputOptions{LabelColumn: 9}, "t.parquet: TokenColumns.LabelAt 9: the table has 5 columns"},
		{"position not integer", twoSentences, InputOptions{PositionColumn: "word"}, `t.parquet: position column "word" is utf8, want an integer type`},
		{"row order", twoSentences, InputOptions{PositionColumn: "", SentenceColumn: "sentence", LabelName: "chunk", Columns: []string{"word"}},
			"He/B-NP saw/B-VP it/B-NP | Yes/O"},
	}
	for _, c := range cases {
		data := tokenTable(t, arrowio.FormatParquet, c.rows)
		got, err := readSentences(newTableReaderOn(bytes.NewReader(data), "t.parquet", c.opts))
		res := strings.Join(got, " | ")
		if err != nil {
			res = err.Error()
		}
		if !strings.HasPrefix(res, c.want) {
			t.Errorf("%s: got %q, want %q", c.name, res, c.want)
		}
	}
}

// TestTableReaderDirectory: a directory is read file by file in sorted
// path order, skipping hidden and "_" files; a new file starts a new
// sentence (ids restart); --partitions adds the hive keys as columns.
func TestTableReaderDirectory(t *testing.T) {
	dir := t.TempDir()
	write := func(rel string, data []byte) {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("genre=news/part-1.parquet", tokenTable(t, arrowio.FormatParquet, []tok{{0, 0, "B", "X", "O"}}))
	write("genre=news/part-0.arrow", tokenTable(t, arrowio.FormatFile, []tok{{0, 0, "A", "X", "O"}}))
	write("genre=web%20log/part-0.parquet", tokenTable(t, arrowio.FormatParquet, []tok{{0, 0, "C", "X", "O"}}))
	write("genre=news/_SUCCESS", nil)
	write("genre=news/.part-9.parquet", []byte("not a table"))
	write("genre=news/README.txt", []byte("not a table"))
	tr, err := newTableReader(dir, nil, InputOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got, err := readSentences(tr)
	if want := []string{"A/X/O", "B/X/O", "C/X/O"}; err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("got %q, %v; want %q", got, err, want)
	}
	tr, err = newTableReader(dir, nil, InputOptions{Partitions: true})
	if err != nil {
		t.Fatal(err)
	}
	got, err = readSentences(tr)
	if want := []string{"A/X/news/O", "B/X/news/O", "C/X/web log/O"}; err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("partitions: got %q, %v; want %q", got, err, want)
	}
	if c := tr.Columns(); !reflect.DeepEqual(c, []string{"word", "pos", "genre"}) {
		t.Errorf("columns %v", c)
	}
	if _, err := newTableReader(filepath.Join(dir, "genre=news", "part-0.arrow"), nil, InputOptions{Partitions: true}); err == nil {
		t.Error("--partitions on a path without key=value directories accepted")
	}
}

// TestTableFeaturizeRun: featurize.Run reads a token table (a file, and
// standard input from a pipe) and makes the same feature table as from
// the equivalent CoNLL text.
func TestTableFeaturizeRun(t *testing.T) {
	rows := []tok{{0, 0, "He", "PRP", "B-NP"}, {0, 1, "saw", "VBD", "B-VP"}, {1, 0, "Yes", "UH", "O"}}
	text := "He PRP B-NP\nsaw VBD B-VP\n\nYes UH O\n"
	dir := t.TempDir()
	tp, cp := filepath.Join(dir, "t.parquet"), filepath.Join(dir, "t.txt")
	if err := os.WriteFile(tp, tokenTable(t, arrowio.FormatParquet, rows), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cp, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	set, err := ParseTemplates(strings.NewReader("w[0]\npos[-1]|pos[0]\n"), "t")
	if err != nil {
		t.Fatal(err)
	}
	run := func(src pipeline.Source) string {
		var out bytes.Buffer
		sum, err := Run(t.Context(), src, &out, RunOptions{Templates: set})
		if err != nil {
			t.Fatal(err)
		}
		return fmt.Sprint(sum.Sentences, sum.Tokens, sum.Attributes, sum.Labels, sum.LabelCounts)
	}
	want := run(pipeline.Source{Path: cp})
	if got := run(pipeline.Source{Path: tp}); got != want {
		t.Errorf("from Parquet: %s, from text: %s", got, want)
	}
	data, _ := os.ReadFile(tp)
	if got := run(pipeline.Source{Path: "-", Stdin: io.MultiReader(bytes.NewReader(data))}); got != want {
		t.Errorf("from a Parquet stream: %s, from text: %s", got, want)
	}
}

// FuzzTableReader: a damaged token table gives sentences or an error
// naming the input, never a panic.
func FuzzTableReader(f *testing.F) {
	f.Add(tokenTable(f, arrowio.FormatParquet, twoSentences))
	f.Add(tokenTable(f, arrowio.FormatStream, twoSentences[:2], twoSentences[2:]))
	f.Add(tokenTable(f, arrowio.FormatFile, twoSentences))
	f.Fuzz(func(t *testing.T, b []byte) {
		_, err := readSentences(newTableReaderOn(bytes.NewReader(b), "fuzz", InputOptions{}))
		if err != nil && !strings.HasPrefix(err.Error(), "fuzz") {
			t.Fatalf("error %q does not name the input", err)
		}
	})
}

// TestTableReaderColumnMap: --column NAME=SOURCE renames a text column or
// adds one; an unknown source or two columns of one name are errors.
func TestTableReaderColumnMap(t *testing.T) {
	data := tokenTable(t, arrowio.FormatStream, twoSentences)
	for _, c := range []struct {
		m       [][2]string
		cols    string
		wantErr string
	}{
		{[][2]string{{"tag", "pos"}}, "word tag", ""},
		{[][2]string{{"x", "nosuch"}}, "", `no column "nosuch" (TokenColumns.As x=nosuch)`},
		{[][2]string{{"word", "pos"}}, "", `two text columns named "word"`},
		{[][2]string{{"c", "chunk"}}, "", `column "chunk" (TokenColumns.As c=chunk) is`},
	} {
		r := newTableReaderOn(bytes.NewReader(data), "tokens", InputOptions{LabelName: "chunk", ColumnMap: c.m})
		_, err := readSentences(r)
		switch {
		case c.wantErr == "" && err != nil:
			t.Errorf("%q: %v", c.m, err)
		case c.wantErr == "" && strings.Join(r.Columns(), " ") != c.cols:
			t.Errorf("%q: columns %q, want %s", c.m, r.Columns(), c.cols)
		case c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr)):
			t.Errorf("%q: error %v, want %q", c.m, err, c.wantErr)
		}
	}
}
