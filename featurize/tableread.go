package featurize

// Token tables: corpora kept in a data lake as Parquet or Arrow IPC, one row
// per token. A sentence is the run of rows that share a sentence id; its
// tokens are ordered by the position column. The input is a file (Parquet,
// an Arrow IPC file or stream, concatenated streams), standard input, or a
// directory of such files, read in sorted path order, whose hive-style
// "key=value" directory names become columns when asked
// (InputOptions.Partitions).
//
// The rules a table must keep, each broken one an error naming the file
// and the row:
//   - the rows of a sentence are contiguous: a sentence id met again after
//     another sentence began in the same file is refused (sort the table by
//     sentence id, or write each sentence's rows together); a new file, or
//     a new concatenated IPC stream, always starts a new sentence;
//   - positions inside a sentence may come in any order (the sentence is
//     sorted by them, being held whole anyway) but not twice;
//   - sentence ids and positions are not null, positions fit in a signed
//     64-bit integer;
//   - the text read (sentence ids, text cells, labels, and hive names read
//     as columns) is valid UTF-8, and a row's text cells and label add up
//     to at most InputOptions.MaxLineBytes, as a line of text must;
//   - a text column holds strings; one named with Columns may also hold
//     integers, read as decimal text.

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"io/fs"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/dualcrf/dualcrf/arrowio"
	"github.com/dualcrf/dualcrf/option"
	"github.com/dualcrf/dualcrf/pipeline"
	"github.com/dualcrf/dualcrf/tables"
)

// FormatTable is the input format of token tables (Parquet, Arrow IPC). A
// table input is also recognised by its bytes when no text format was
// given (InputOptions.FormatGiven), and a directory is always read as a
// table dataset.
const FormatTable = "table"

// tableExts are the file names a table directory's files may have.
var tableExts = []string{".parquet", ".pq", ".arrow", ".arrows", ".ipc", ".feather"}

// IsTable reports whether head, an input's first bytes, starts a Parquet
// file or an Arrow IPC file or stream.
func IsTable(head []byte) bool {
	return arrowio.IsParquet(head) || bytes.HasPrefix(head, []byte("ARROW1")) || bytes.HasPrefix(head, []byte{0xff, 0xff, 0xff, 0xff})
}

// wholeTable reports whether r, whose first bytes look like a table's
// (IsTable), is one beyond doubt: an Arrow IPC stream (its first bytes,
// 0xFFFFFFFF, are not text), or a file that also ends with its format's
// magic ("PAR1", "ARROW1"), or whose magic is followed by binary. Text
// that merely starts with "PAR1" or "ARROW1" is not.
func wholeTable(r io.Reader) bool {
	ra, ok1 := r.(io.ReaderAt)
	sk, ok2 := r.(io.Seeker)
	var head [8]byte
	var n int
	if br, ok := r.(*bufio.Reader); ok {
		h, _ := br.Peek(8)
		n = copy(head[:], h)
	} else if ok1 && ok2 {
		if off, err := sk.Seek(0, io.SeekCurrent); err == nil {
			n, _ = ra.ReadAt(head[:], off)
		}
	}
	if bytes.HasPrefix(head[:n], []byte{0xff, 0xff, 0xff, 0xff}) {
		return true
	}
	for _, magic := range [][]byte{[]byte("PAR1"), []byte("ARROW1")} {
		// A table's magic is followed by binary (a Parquet page header's
		// first byte, 0x15; an IPC file's padding, 0x00); text's by a
		// separator or a letter.
		if bytes.HasPrefix(head[:n], magic) && n > len(magic) {
			if c := head[len(magic)]; c < 0x20 && c != '\t' && c != '\n' && c != '\r' {
				return true
			}
		}
	}
	if !ok1 || !ok2 {
		return false
	}
	off, err := sk.Seek(0, io.SeekCurrent)
	if err != nil {
		return false
	}
	size, err := sk.Seek(0, io.SeekEnd)
	if _, err2 := sk.Seek(off, io.SeekStart); err != nil || err2 != nil {
		return false
	}
	for _, magic := range [][]byte{[]byte("PAR1"), []byte("ARROW1")} {
		if !bytes.HasPrefix(head[:n], magic) || size-off < 2*int64(len(magic)) {
			continue
		}
		tail := make([]byte, len(magic))
		if k, _ := ra.ReadAt(tail, size-int64(len(magic))); k == len(magic) && bytes.Equal(tail, magic) {
			return true
		}
	}
	return false
}

// tableFile is one file of a table input, with its partition values.
type tableFile struct {
	path  string
	parts [][2]string // hive partition key and value, outermost first
}

// listTableFiles returns the table files under dir, sorted by path (byte
// order), skipping hidden files and directories and those starting with
// "_" (_SUCCESS, _delta_log), with the partition keys of their directories.
// Every file must have the same partition keys.
func listTableFiles(dir string) ([]tableFile, error) {
	var files []tableFile
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if path != dir && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() || !slices.Contains(tableExts, strings.ToLower(filepath.Ext(name))) {
			return nil
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		f := tableFile{path: path}
		for _, part := range strings.Split(filepath.ToSlash(filepath.Dir(rel)), "/") {
			k, v, ok := strings.Cut(part, "=")
			if !ok || k == "" {
				continue
			}
			if u, err := url.PathUnescape(v); err == nil {
				v = u
			}
			f.parts = append(f.parts, [2]string{k, v})
		}
		files = append(files, f)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("%s: no table files (%s) in the directory", dir, strings.Join(tableExts, ", "))
	}
	sort.Slice(files, func(i, j int) bool { return files[i].path < files[j].path })
	keys := partKeys(files[0])
	for _, f := range files[1:] {
		if !slices.Equal(partKeys(f), keys) {
			return nil, fmt.Errorf("%s: partition keys %v, but %s has %v", f.path, partKeys(f), files[0].path, keys)
		}
	}
	return files, nil
}

func partKeys(f tableFile) []string {
	var keys []string
	for _, p := range f.parts {
		keys = append(keys, p[0])
	}
	return keys
}

// TableReader reads sentences from token tables (see the comment at the
// top of this file for the rules). It holds one record batch and the
// sentence being built.
type TableReader struct {
	ctx   context.Context // ends the opens and reads of a directory's files; nil: never
	opts  InputOptions
	files []tableFile
	open  func(tableFile) (io.Reader, io.Closer, string, error) // opens a file

	fi      int    // files opened
	input   string // the input's name: the file, directory or standard input
	sent    int    // sentences read
	name    string
	tr      *tables.TokenReader
	closer  io.Closer
	columns []string // the sentence columns, partition keys last
	label   string   // the label column of the first file ("" without)
	hasPos  bool
	parts   []string                    // the current file's partition values
	skipped func(string) arrow.DataType // the current file's columns not read for their type

	pending *row // first row of the next sentence, read ahead
	seen    map[uint64]int32
	// starts remembers, by a hash of its id, the file (index in files) and
	// first position of each sentence of a directory with positions, to
	// tell files that split sentences (see checkSplit).
	starts   map[uint64]sentenceStart
	cur      Sentence
	buf      []row
	err      error
	finished bool
}

// row is a token row and the file it came from.
type row struct {
	tables.TokenRow
	file int
}

// newTableReader reads the table file or directory at path ("" or "-":
// stdin, the standard input) with opts.
func newTableReader(path string, stdin io.Reader, opts InputOptions) (*TableReader, error) {
	if pipeline.IsStdin(path) {
		return newTableReaderOn(stdin, pipeline.StdinName, opts), nil
	}
	tr := &TableReader{opts: opts, seen: map[uint64]int32{}, input: path}
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	tr.files = []tableFile{{path: path}}
	if st.IsDir() {
		if tr.files, err = listTableFiles(path); err != nil {
			return nil, err
		}
	}
	tr.open = func(f tableFile) (io.Reader, io.Closer, string, error) {
		// A file of the directory may be a FIFO: its open and reads end
		// with tr.ctx.
		rc, name, err := pipeline.Source{Path: f.path, Ctx: tr.ctx}.Open()
		return rc, rc, name, err
	}
	if opts.Partitions && len(tr.files[0].parts) == 0 {
		return nil, fmt.Errorf("%s: %w", path, &option.Error{Field: "InputOptions.Partitions", Msg: "no key=value directory names in it"})
	}
	if opts.Partitions {
		for _, f := range tr.files {
			for _, p := range f.parts {
				if !utf8.ValidString(p[0]) || !utf8.ValidString(p[1]) {
					return nil, fmt.Errorf("%s: %w", f.path, &option.Error{Field: "InputOptions.Partitions",
						Msg: fmt.Sprintf("directory name %q (decoded) is not valid UTF-8", p[0]+"="+p[1])})
				}
			}
		}
	}
	return tr, nil
}

// newTableReaderOn reads the one table that r holds, named name.
func newTableReaderOn(r io.Reader, name string, opts InputOptions) *TableReader {
	tr := &TableReader{opts: opts, seen: map[uint64]int32{}, files: []tableFile{{path: name}}, input: name,
		open: func(tableFile) (io.Reader, io.Closer, string, error) { return r, nopCloser{}, name, nil }}
	tr.err = refuseTextFlags(name, opts)
	if opts.Partitions && tr.err == nil {
		tr.err = fmt.Errorf("%s: %w", name, &option.Error{
			Msg: "{InputOptions.Partitions} takes its columns from a directory's key=value names; give the dataset's directory, not one file"})
	}
	return tr
}

// refuseTextFlags refuses the flags of opts.TextFlags for the token table
// name: they say how to read text, which a table is not.
func refuseTextFlags(name string, opts InputOptions) error {
	if len(opts.TextFlags) == 0 {
		return nil
	}
	return fmt.Errorf("%s: %s applies to text corpora, and this input is a token table (Parquet or Arrow IPC, told by its bytes or as a directory): leave it out", name, opts.TextFlags[0])
}

type nopCloser struct{}

func (nopCloser) Close() error { return nil }

// Columns names the token columns: the table's text columns, then the
// partition keys when asked for.
func (tr *TableReader) Columns() []string { return tr.columns }

// Sentence returns the current sentence.
func (tr *TableReader) Sentence() *Sentence { return &tr.cur }

// Err returns the first error met.
func (tr *TableReader) Err() error { return tr.err }

// Close closes the file being read.
func (tr *TableReader) Close() error {
	tr.release()
	return nil
}

func (tr *TableReader) release() {
	if tr.tr != nil {
		tr.tr.Release()
		tr.tr = nil
	}
	if tr.closer != nil {
		_ = tr.closer.Close()
		tr.closer = nil
	}
}

// Scan reads the next sentence.
func (tr *TableReader) Scan() bool {
	if tr.err != nil || tr.finished {
		return false
	}
	tr.buf = tr.buf[:0]
	if tr.pending != nil {
		tr.buf = append(tr.buf, *tr.pending)
		tr.pending = nil
	}
	for {
		r, ok := tr.nextRow()
		if !ok {
			if tr.err != nil {
				return false
			}
			tr.finished = true
			break
		}
		if len(tr.buf) > 0 && (r.Key != tr.buf[0].Key || r.file != tr.buf[0].file) {
			if err := tr.startSentence(r); err != nil {
				tr.err = err
				return false
			}
			tr.pending = &r
			break
		}
		if len(tr.buf) == 0 {
			if err := tr.startSentence(r); err != nil {
				tr.err = err
				return false
			}
		}
		if m := maxTokens(tr.opts); len(tr.buf) >= m {
			tr.err = fmt.Errorf("%s: row %d: sentence %s has more than %d tokens", tr.name, r.Row, r.Key, m)
			return false
		}
		tr.buf = append(tr.buf, r)
	}
	if len(tr.buf) == 0 {
		if tr.sent == 0 {
			tr.err = readerNoSentences(tr.input) // as every reader: a table without rows is no corpus
		}
		return false
	}
	tr.sent++
	return tr.build()
}

// startSentence records that the sentence of r begins, refusing one whose
// rows began before (non-contiguous rows). Sentences are remembered by a
// 64-bit hash of their file and id (about 20 bytes each), not their ids.
func (tr *TableReader) startSentence(r row) error {
	h := fnv.New64a()
	_, _ = h.Write([]byte(strconv.Itoa(r.file) + "\x00" + r.Key))
	k := h.Sum64()
	if first, ok := tr.seen[k]; ok {
		return fmt.Errorf("%s: row %d: sentence %s continues after other sentences (its rows began at row %d): a sentence's rows must be contiguous; sort the table by sentence", tr.name, r.Row, r.Key, first)
	}
	tr.seen[k] = int32(min(r.Row, math.MaxInt32))
	return nil
}

// build makes the current sentence from tr.buf, sorted by position.
func (tr *TableReader) build() bool {
	rows := tr.buf
	sort.SliceStable(rows, func(i, j int) bool { return rows[i].Pos < rows[j].Pos })
	for i := 1; i < len(rows); i++ {
		if rows[i].Pos == rows[i-1].Pos {
			tr.err = fmt.Errorf("%s: row %d: sentence %s has position %d twice (rows %d and %d)", tr.name, rows[i].Row, rows[i].Key, rows[i].Pos, rows[i-1].Row, rows[i].Row)
			return false
		}
	}
	s := Sentence{Tokens: make([][]string, len(rows)), Lines: make([]int, len(rows))}
	if tr.label != "" {
		s.Labels = make([]string, len(rows))
	}
	for t, r := range rows {
		s.Tokens[t] = r.Cells
		s.Lines[t] = r.Row
		if s.Labels != nil {
			s.Labels[t] = r.Label
		}
	}
	s.Line = slices.Min(s.Lines)
	if err := tr.checkSplit(rows); err != nil {
		tr.err = err
		return false
	}
	tr.cur = s
	return true
}

// sentenceStart is where a sentence of a directory was first met.
type sentenceStart struct {
	file int32 // index in TableReader.files
	pos  int64 // its lowest position
}

// checkSplit refuses the sentence of rows (sorted by position) when its id
// was met in another file of the directory with another first position:
// the files hold pieces of one sentence, as a hive partition on a
// per-token column (a tag) makes, and reading each piece as a sentence
// would quietly train on fragments. Files that each number their own
// sentences from the same first position (part-0 and part-1, genre=news
// and genre=web) are not refused; without a position column pieces cannot
// be told from sentences, so nothing is checked.
func (tr *TableReader) checkSplit(rows []row) error {
	if len(tr.files) < 2 || !tr.hasPos {
		return nil
	}
	r := rows[0]
	fi := int32(r.file>>20) - 1
	h := fnv.New64a()
	_, _ = h.Write([]byte(r.Key))
	k := h.Sum64()
	if tr.starts == nil {
		tr.starts = map[uint64]sentenceStart{}
	}
	first, ok := tr.starts[k]
	if !ok {
		tr.starts[k] = sentenceStart{file: fi, pos: r.Pos}
		return nil
	}
	if first.file == fi || first.pos == r.Pos {
		return nil
	}
	here, there := tr.files[fi], tr.files[first.file]
	var keys []string
	for i, p := range here.parts {
		if i < len(there.parts) && p[1] != there.parts[i][1] {
			keys = append(keys, fmt.Sprintf("%s (%s here, %s there)", p[0], p[1], there.parts[i][1]))
		}
	}
	why := "these files split sentences"
	if len(keys) > 0 {
		why = "the partition key " + strings.Join(keys, ", ") + " splits sentences"
	}
	return fmt.Errorf("%s: row %d: sentence %s continues a sentence of %s (positions from %d there, from %d here): %s; every file must hold whole sentences: partition by a per-sentence column (a split, a genre), not a per-token one",
		here.path, r.Row, r.Key, there.path, first.pos, r.Pos, why)
}

// nextRow returns the next row of the input, opening files as needed.
func (tr *TableReader) nextRow() (row, bool) {
	for {
		if tr.tr != nil {
			if r, ok := tr.tr.Next(); ok {
				r.Cells = append(r.Cells, tr.parts...)
				return row{TokenRow: r, file: tr.fi<<20 + r.Stream}, true
			}
			if tr.err = tr.tr.Err(); tr.err != nil {
				return row{}, false
			}
			tr.release()
		}
		if tr.fi >= len(tr.files) {
			return row{}, false
		}
		if err := tr.openFile(tr.files[tr.fi]); err != nil {
			tr.err = err
			return row{}, false
		}
		tr.fi++
	}
}

// openFile starts reading f.
func (tr *TableReader) openFile(f tableFile) error {
	r, closer, name, err := tr.open(f)
	if err != nil {
		return err
	}
	in := tr.opts
	c := tables.TokenColumns{Sentence: in.SentenceColumn, Position: in.PositionColumn, Label: in.LabelName,
		LabelAt: max(in.LabelColumn, 0), NoLabel: in.LabelColumn < 0, Text: in.Columns, As: in.ColumnMap,
		MaxRowBytes: DefaultMaxLineBytes}
	if in.MaxLineBytes > 0 {
		c.MaxRowBytes = in.MaxLineBytes
	}
	if len(in.Need) > 0 {
		c.Fill = func(names []string) string {
			if m := missingColumns(in.Need, names); len(m) == 1 && !strings.HasPrefix(m[0], "%") {
				return m[0]
			}
			return ""
		}
	}
	t, err := tables.OpenTokenReader(r, name, c)
	if err != nil {
		closer.Close()
		return err
	}
	tr.tr, tr.closer, tr.name, tr.skipped = t, closer, name, t.SkippedType
	names := slices.Clone(t.Columns())
	tr.parts = nil
	if tr.opts.Partitions {
		for _, p := range f.parts {
			switch {
			case slices.Contains(t.Columns(), p[0]):
				t.Release()
				closer.Close()
				return fmt.Errorf("%s: the partition key %s (its directory %s=%s) is also a column of the table: rename the key in the directory names, %w",
					name, p[0], p[0], p[1], &option.Error{Msg: "or read without {InputOptions.Partitions}"})
			case slices.Contains(names[len(t.Columns()):], p[0]):
				t.Release()
				closer.Close()
				return fmt.Errorf("%s: the partition key %s comes twice in its directory names: each key=value level needs its own key", name, p[0])
			}
			names = append(names, p[0])
			tr.parts = append(tr.parts, p[1])
		}
	}
	if tr.fi > 0 && (!slices.Equal(names, tr.columns) || t.LabelColumn() != tr.label || t.HasPosition() != tr.hasPos) {
		return fmt.Errorf("%s: columns %v (label %q) differ from the first file's %v (label %q)", name, names, t.LabelColumn(), tr.columns, tr.label)
	}
	tr.columns, tr.label, tr.hasPos = names, t.LabelColumn(), t.HasPosition()
	return nil
}

// columnType returns the type of a column of the table being read that is
// not read for its type ("": none such).
func (tr *TableReader) columnType(name string) string {
	if tr.skipped == nil {
		return ""
	}
	if t := tr.skipped(name); t != nil {
		return t.String()
	}
	return ""
}

// compileFor compiles set for reader r's columns; a template naming a
// column that a token table has, but of a type not read as text, is an
// error that says so.
func compileFor(set *TemplateSet, r Reader) (*Extractor, error) {
	x, err := set.Compile(r.Columns())
	var se *SyntaxError
	if me := (*MissingColumnError)(nil); errors.As(err, &me) {
		se = &SyntaxError{File: me.File, Line: me.Line}
	} else if !errors.As(err, &se) {
		se = nil
	}
	if tr, ok := r.(*TableReader); ok && se != nil {
		for _, t := range set.templates {
			for _, it := range t.items {
				if _, ok := tmplResolveColumn(it, r.Columns()); ok || t.optional || t.input {
					continue
				}
				for _, name := range append([]string{it.column}, tmplAliases[it.column]...) {
					if typ := tr.columnType(name); typ != "" {
						return nil, optionSyntaxError(se.File, se.Line,
							"template %q: the table's column %q is %s, not text (a text column holds strings; name an integer column with {InputOptions.Columns} to read it as decimal text)",
							t.name, name, typ)
					}
				}
				return x, err
			}
		}
	}
	return x, err
}

// peekTable reports whether r starts a table, returning a reader that still
// yields all of r (r itself when it reads at offsets).
func peekTable(r io.Reader) (io.Reader, bool) {
	if ra, ok := r.(io.ReaderAt); ok {
		if sk, ok := r.(io.Seeker); ok {
			if off, err := sk.Seek(0, io.SeekCurrent); err == nil {
				var head [8]byte
				n, _ := ra.ReadAt(head[:], off)
				return r, IsTable(head[:n])
			}
		}
	}
	br := bufio.NewReaderSize(r, 1<<16)
	head, err := br.Peek(8)
	if err != nil && !errors.Is(err, io.EOF) && len(head) == 0 {
		return br, false
	}
	return br, IsTable(head)
}

// maxTokens is the most tokens a sentence may have under opts.
func maxTokens(opts InputOptions) int {
	if opts.MaxSentenceTokens > 0 {
		return opts.MaxSentenceTokens
	}
	return DefaultMaxSentenceTokens
}
