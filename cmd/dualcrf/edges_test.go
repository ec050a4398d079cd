package main

// Edges of the token-table and output surfaces: words CoNLL cannot hold,
// flags a token table does not use, concatenated Parquet on standard
// input, partitions that split sentences.

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/dualcrf/dualcrf/arrowio"
	"github.com/dualcrf/dualcrf/tables"
)

// tokenRow is a row of a test token table.
type tokenRow struct {
	sent, pos        int64
	word, tag, label string
}

// writeTokenTable writes rows as a Parquet token table (sentence,
// position, word, tag, label) at path, making its directory.
func writeTokenTable(t *testing.T, path string, rows []tokenRow) {
	t.Helper()
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "sentence", Type: arrow.PrimitiveTypes.Int64},
		{Name: "position", Type: arrow.PrimitiveTypes.Int64},
		{Name: "word", Type: arrow.BinaryTypes.String},
		{Name: "tag", Type: arrow.BinaryTypes.String},
		{Name: "label", Type: arrow.BinaryTypes.String},
	}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	for _, r := range rows {
		b.Field(0).(*array.Int64Builder).Append(r.sent)
		b.Field(1).(*array.Int64Builder).Append(r.pos)
		b.Field(2).(*array.StringBuilder).Append(r.word)
		b.Field(3).(*array.StringBuilder).Append(r.tag)
		b.Field(4).(*array.StringBuilder).Append(r.label)
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w, err := arrowio.NewRecordWriter(f, schema, arrowio.WriterOptions{Format: arrowio.FormatParquet})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// spacedRows are two sentences, the first with the word "New York".
var spacedRows = []tokenRow{
	{1, 0, "He", "PRP", "B-NP"}, {1, 1, "flew", "VBD", "B-VP"}, {1, 2, "to", "TO", "B-PP"},
	{1, 3, "New York", "NNP", "B-NP"}, {1, 4, ".", ".", "O"},
	{2, 0, "It", "PRP", "B-NP"}, {2, 1, "rains", "VBZ", "B-VP"}, {2, 2, ".", ".", "O"},
}

// TestCoNLLRefusesWhitespaceWords: decode --format conll of a token table
// whose words hold a space or a tab is refused, naming the sentence and
// token, and writes nothing (formerly it wrote "New York NNP B-NP B-NP",
// which reads back with a column too many); Parquet keeps such words
// through decode and featurize.
func TestCoNLLRefusesWhitespaceWords(t *testing.T) {
	f := fixtures(t)
	dir := t.TempDir()
	tab := slices.Clone(spacedRows)
	tab[3].word, tab[6].word = "York", "a\tb"
	writeTokenTable(t, filepath.Join(dir, "space.parquet"), spacedRows)
	writeTokenTable(t, filepath.Join(dir, "tab.parquet"), tab)
	for _, c := range []struct{ in, want string }{
		{"space.parquet", `sentence 1, token 4: column word "New York" holds whitespace`},
		{"tab.parquet", `sentence 2, token 2: column word "a\tb" holds whitespace`},
	} {
		r := runInProcess(t, dir, "", "decode", "-m", f.model, "--text", c.in, "--format", "conll", "-o", "out.conll")
		if r.code != 1 || !strings.Contains(string(r.stderr), c.want) || !strings.Contains(string(r.stderr), "--format parquet") {
			t.Errorf("%s: want exit 1 and %q; got %v", c.in, c.want, r)
		}
		if _, err := os.Stat(filepath.Join(dir, "out.conll")); err == nil {
			t.Errorf("%s: a refused decode wrote out.conll", c.in)
		}
	}
	// Parquet: the words come back whole.
	for _, c := range []struct{ in, word string }{{"space.parquet", "New York"}, {"tab.parquet", "a\tb"}} {
		mustRun(t, dir, "decode", "-m", f.model, "--text", c.in, "-o", "pred.parquet")
		mustRun(t, dir, "featurize", "-m", f.model, "-o", "back.arrow", "pred.parquet")
		rf, err := os.Open(filepath.Join(dir, "back.arrow"))
		if err != nil {
			t.Fatal(err)
		}
		ft, err := tables.ReadFeatureTable(rf, "back.arrow", tables.FeatureReadOptions{})
		rf.Close()
		if err != nil {
			t.Fatal(err)
		}
		w := slices.Index(ft.Columns, "word")
		if w < 0 || !slices.Contains(ft.Text[w], c.word) {
			t.Errorf("%s: words after decode and featurize through Parquet: columns %v, %v", c.in, ft.Columns, ft.Text)
		}
	}
}

// TestTableRefusesTextFlags: the flags only a text corpus reads are
// refused on a token table — a file, a directory, standard input —
// naming the flag and the input kind (formerly -f ocr, --keep-docstart and
// -f conllu were ignored and the run exited 0); -f conll and -f table,
// which a table is read under, still work.
func TestTableRefusesTextFlags(t *testing.T) {
	dir := t.TempDir()
	writeTokenTable(t, filepath.Join(dir, "lake", "split=train", "part-0.parquet"), spacedRows)
	file := filepath.Join(dir, "lake", "split=train", "part-0.parquet")
	for _, in := range []string{file, filepath.Join(dir, "lake"), "-"} {
		stdin := ""
		if in == "-" {
			stdin = file
		}
		for _, flags := range [][]string{{"-f", "ocr"}, {"--input-format", "conllu"}, {"--keep-docstart"}, {"-f", "ocr", "--folds", "0"}, {"-f", "conllu", "--xpos"}} {
			args := append(append([]string{"featurize"}, flags...), "-o", "out.arrow", in)
			r := runInProcess(t, dir, stdin, args...)
			if r.code != 1 || !strings.Contains(string(r.stderr), flags[0]) || !strings.Contains(string(r.stderr), "this input is a token table") {
				t.Errorf("want a refusal naming %s and the token table; got %v", flags[0], r)
			}
		}
		for _, format := range []string{"conll", "table"} {
			if r := runInProcess(t, dir, stdin, "featurize", "-f", format, "-o", "out.arrow", in); r.code != 0 {
				t.Errorf("-f %s: %v", format, r)
			}
		}
	}
}

// TestPartitionSplittingSentences: a directory whose files hold pieces of
// one sentence (a hive partition on a per-token column) is refused, naming
// the key, both files and the row (formerly each piece became a sentence:
// 1000 sentences read as 21,417); files that each number their own
// sentences from the same first position are read as before.
func TestPartitionSplittingSentences(t *testing.T) {
	dir := t.TempDir()
	byTag := map[string][]tokenRow{}
	for _, r := range spacedRows {
		byTag[r.tag] = append(byTag[r.tag], r)
	}
	for tag, rows := range byTag {
		writeTokenTable(t, filepath.Join(dir, "split", "pos="+strings.ReplaceAll(tag, ".", "dot"), "part-0.parquet"), rows)
	}
	r := runInProcess(t, dir, "", "featurize", "-o", "out.arrow", "split")
	want := "split/pos=PRP/part-0.parquet: row 1: sentence 1 continues a sentence of split/pos=NNP/part-0.parquet (positions from 3 there, from 0 here): the partition key pos (PRP here, NNP there) splits sentences"
	if r.code != 1 || !strings.Contains(string(r.stderr), want) {
		t.Errorf("want exit 1 and %q; got %v", want, r)
	}
	writeTokenTable(t, filepath.Join(dir, "whole", "genre=news", "part-0.parquet"), spacedRows[:5])
	writeTokenTable(t, filepath.Join(dir, "whole", "genre=news", "part-1.parquet"), spacedRows[:5])
	writeTokenTable(t, filepath.Join(dir, "whole", "genre=web", "part-0.parquet"), spacedRows)
	r = mustRun(t, dir, "featurize", "--partitions", "-o", "out.arrow", "whole")
	if !strings.Contains(string(r.stderr), "featurize: 4 sentences, 18 tokens") {
		t.Errorf("whole sentences per file: %s", r.stderr)
	}
}

// TestTableColumnEdges: --position-column none, which the help offers,
// orders tokens by row even when the table has a position column (formerly:
// no position column "none"); a partition key met twice in a file's
// directories, or that is also a column of the table, is refused naming
// the file (formerly: "feature schema: text column … given twice").
func TestTableColumnEdges(t *testing.T) {
	dir := t.TempDir()
	rows := slices.Clone(spacedRows)
	rows[0].pos, rows[1].pos = 1, 0 // "flew He …" by position, "He flew …" by row
	writeTokenTable(t, filepath.Join(dir, "t.parquet"), rows)
	for _, c := range []struct{ flag, first string }{{"position", "flew"}, {"none", "He"}} {
		mustRun(t, dir, "featurize", "--position-column", c.flag, "-o", "f.arrow", "t.parquet")
		rf, err := os.Open(filepath.Join(dir, "f.arrow"))
		if err != nil {
			t.Fatal(err)
		}
		ft, err := tables.ReadFeatureTable(rf, "f.arrow", tables.FeatureReadOptions{})
		rf.Close()
		if err != nil {
			t.Fatal(err)
		}
		if w := slices.Index(ft.Columns, "word"); w < 0 || ft.Text[w][0] != c.first {
			t.Errorf("--position-column %s: first word %v, want %s", c.flag, ft.Text, c.first)
		}
	}
	writeTokenTable(t, filepath.Join(dir, "twice", "split=a", "split=b", "p.parquet"), spacedRows)
	writeTokenTable(t, filepath.Join(dir, "column", "word=x", "p.parquet"), spacedRows)
	for _, c := range []struct{ dir, want string }{
		{"twice", "twice/split=a/split=b/p.parquet: the partition key split comes twice in its directory names"},
		{"column", "column/word=x/p.parquet: the partition key word (its directory word=x) is also a column of the table"},
	} {
		r := runInProcess(t, dir, "", "featurize", "--partitions", "-o", "out.arrow", c.dir)
		if r.code != 1 || !strings.Contains(string(r.stderr), c.want) {
			t.Errorf("want %q; got %v", c.want, r)
		}
	}
}
