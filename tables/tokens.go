package tables

// Token tables: a corpus as a table of one row per token, as a data lake
// keeps it (Parquet, Arrow IPC) — a sentence id, a position, text columns
// and a label. TokenReader yields the rows of one table with its columns
// resolved from the schema; package featurize groups them into sentences.

import (
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/dualcrf/dualcrf/arrowio"
	"github.com/dualcrf/dualcrf/option"
	"github.com/dualcrf/dualcrf/schemas"
)

// The column names a token table's columns are looked for by, in order,
// when TokenColumns does not name them. They fit the tables dualcrf writes
// (a prediction table: sentence, position, the text columns, gold, pred; a
// feature table: sentence, position, the text columns, label) and common
// token-table layouts.
var (
	DefaultSentenceColumns = []string{"sentence", "sentence_id", "sent_id", "sid"}
	DefaultPositionColumns = []string{"position", "token_id", "token_index", "tid"}
	DefaultLabelColumns    = []string{"label", "gold"}
	// notText are columns never taken as text or label by default: a
	// prediction table's outputs.
	notText = []string{"pred", "confidence", "logprob"}
)

// PositionNone as TokenColumns.Position orders a sentence's tokens by
// their rows, whatever position column the table has (unless it has a
// column named "none").
const PositionNone = "none"

// TokenColumns say which columns of a token table to read.
type TokenColumns struct {
	Sentence string   // the sentence id column; "": the first of DefaultSentenceColumns found
	Position string   // the position column; "": the first of DefaultPositionColumns found, else row order; PositionNone: row order
	Label    string   // the label column by name
	LabelAt  int      // or by 1-based index (0: by name, or the default)
	NoLabel  bool     // the table has no label column
	Text     []string // the text columns; nil: every string column but the others and pred
	// MaxRowBytes bounds the text of a row (its text cells and label, what
	// a line of a text corpus holds); 0: no limit.
	MaxRowBytes int
	// As reads more columns as text columns under other names: As[i] is
	// {name, source}, the table column source read as the text column
	// name (appended after the others, or renaming source when it is one).
	As [][2]string
	// Fill, when set and As is empty, is asked about a table that has a
	// pred column (a prediction table) with the names of the other text
	// columns: a non-empty answer is the name under which pred is read as
	// one more text column (the column a model's templates need).
	Fill func(names []string) string
}

// TokenRow is one row of a token table.
type TokenRow struct {
	Key    string   // the sentence id, as text
	Pos    int64    // the position (the row number when there is no position column)
	Cells  []string // the text columns' values ("" for null)
	Label  string   // the label ("" for null or none)
	Row    int      // 1-based row number in the table
	Stream int      // 0-based concatenated IPC stream (sentence ids restart in each)
}

// TokenReader reads the rows of one token table.
type TokenReader struct {
	rr    array.RecordReader
	name  string
	cols  tokenCols
	rec   arrow.RecordBatch
	i     int
	rowNo int // rows before rec
	err   error
}

type tokenCols struct {
	sentence, position, label int // -1: absent
	text                      []int
	names                     []string
	skipped                   map[string]arrow.DataType // columns not read for their type
	maxRow                    int
	limitName                 string
}

// OpenTokenReader reads the token table that r holds (Parquet, Arrow IPC,
// chosen by its bytes); name names it in errors.
func OpenTokenReader(r io.Reader, name string, c TokenColumns) (*TokenReader, error) {
	rr, err := OpenRecordReader(r, name, arrowio.ReaderOptions{})
	if err != nil {
		return nil, err
	}
	if err := refuseRanked(rr.Schema()); err != nil {
		rr.Release()
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	cols, err := resolveTokenColumns(rr.Schema(), c)
	if err != nil {
		rr.Release()
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	cols.maxRow = c.MaxRowBytes
	return &TokenReader{rr: rr, name: name, cols: cols, rowNo: 1}, nil
}

// ErrRankedLabellings refuses an n-best prediction table as a token table:
// it holds each sentence once per labelling.
var ErrRankedLabellings = errors.New("a prediction table of ranked labellings (decode --nbest: a rank column, each sentence's rows once per labelling, rank 1 the best), " +
	"where a token table holds each sentence once: decode without --nbest to feed a next stage, or keep the rows of rank 1 (eval and inspect read those)")

// refuseRanked refuses the schema of an n-best prediction table
// (ErrRankedLabellings). Read as a token table, its second labelling of a
// sentence would be the sentence's positions over again.
func refuseRanked(s *arrow.Schema) error {
	if schemas.MetadataMap(s)[schemas.KeyFormat] == schemas.PredictionFormat && len(s.FieldIndices(schemas.ColRank)) > 0 {
		return ErrRankedLabellings
	}
	return nil
}

// SkippedType returns the type of column name when the table has it but
// it is not read for its type (not a string), else nil.
func (r *TokenReader) SkippedType(name string) arrow.DataType { return r.cols.skipped[name] }

// Columns names the text columns, in the order of TokenRow.Cells.
func (r *TokenReader) Columns() []string { return r.cols.names }

// HasLabel reports whether the table has a label column.
func (r *TokenReader) HasLabel() bool { return r.cols.label >= 0 }

// LabelColumn names the label column ("" without).
func (r *TokenReader) LabelColumn() string {
	if r.cols.label < 0 {
		return ""
	}
	return r.rr.Schema().Field(r.cols.label).Name
}

// HasPosition reports whether the table has a position column.
func (r *TokenReader) HasPosition() bool { return r.cols.position >= 0 }

// Err returns the first error met.
func (r *TokenReader) Err() error { return r.err }

// Release releases the table.
func (r *TokenReader) Release() {
	if r.rr != nil {
		r.rr.Release()
		r.rr = nil
	}
}

// Next returns the next row; false at the end or on error (see Err).
func (r *TokenReader) Next() (row TokenRow, ok bool) {
	for r.err == nil {
		if r.rec != nil && r.i < int(r.rec.NumRows()) {
			row, r.err = r.read(r.i)
			r.i++
			return row, r.err == nil
		}
		if r.rec != nil {
			r.rowNo += int(r.rec.NumRows())
			r.rec = nil
		}
		if !r.rr.Next() {
			r.err = r.rr.Err()
			return row, false
		}
		r.rec, r.i = r.rr.RecordBatch(), 0
	}
	return row, false
}

// read copies row i of the current batch. A corrupt batch (an offset or a
// dictionary index out of range, which arrow-go does not check) is an
// error naming the input and the row.
func (r *TokenReader) read(i int) (row TokenRow, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%s: row %d: corrupt table: %v", r.name, r.rowNo+i, p)
		}
	}()
	return r.readRow(i)
}

// readRow is read without the recovery. The text read (sentence id, text
// cells, label) must be valid UTF-8, as a text corpus must, and a row's
// cells and label at most MaxRowBytes long.
func (r *TokenReader) readRow(i int) (TokenRow, error) {
	rec, c := r.rec, r.cols
	row := TokenRow{Row: r.rowNo + i, Stream: arrowio.StreamOf(r.rr), Cells: make([]string, len(c.text))}
	name := func(k int) string { return rec.Schema().Field(k).Name }
	text := func(k int) (string, error) {
		v := cellString(rec.Column(k), i)
		if !utf8.ValidString(v) {
			return "", fmt.Errorf("%s: row %d: column %s: invalid UTF-8 (%s)", r.name, row.Row, name(k), invalidAt(v))
		}
		return v, nil
	}
	sc := rec.Column(c.sentence)
	if sc.IsNull(i) {
		return row, fmt.Errorf("%s: row %d: null sentence id (column %s)", r.name, row.Row, name(c.sentence))
	}
	var err error
	if row.Key, err = text(c.sentence); err != nil {
		return row, err
	}
	row.Pos = int64(row.Row)
	if c.position >= 0 {
		pc := rec.Column(c.position)
		if pc.IsNull(i) {
			return row, fmt.Errorf("%s: row %d: null position (column %s)", r.name, row.Row, name(c.position))
		}
		if u, ok := pc.(*array.Uint64); ok && u.Value(i) > math.MaxInt64 {
			return row, fmt.Errorf("%s: row %d: position %d (column %s) is beyond %d", r.name, row.Row, u.Value(i), name(c.position), int64(math.MaxInt64))
		}
		row.Pos, _ = intValue(pc, i)
	}
	n := 0
	for j, k := range c.text {
		if !rec.Column(k).IsNull(i) {
			if row.Cells[j], err = text(k); err != nil {
				return row, err
			}
			n += len(row.Cells[j])
		}
	}
	if c.label >= 0 && !rec.Column(c.label).IsNull(i) {
		if row.Label, err = text(c.label); err != nil {
			return row, err
		}
		n += len(row.Label)
	}
	if c.maxRow > 0 && n > c.maxRow {
		big, at := 0, 0
		for j, v := range row.Cells {
			if len(v) > big {
				big, at = len(v), j
			}
		}
		where := fmt.Sprintf("its longest cell, column %s, has %d", c.names[at], big)
		if len(row.Label) > big {
			where = fmt.Sprintf("its label, column %s, has %d", name(c.label), len(row.Label))
		}
		return row, fmt.Errorf("%s: row %d: %w", r.name, row.Row,
			&option.Error{Msg: fmt.Sprintf("%d bytes of text, more than %d (the limit, {TokenColumns.MaxRowBytes}; %s)", n, c.maxRow, where)})
	}
	return row, nil
}

// invalidAt describes the first invalid byte of s.
func invalidAt(s string) string {
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n <= 1 {
			return fmt.Sprintf("byte %#02x at byte %d of the cell", s[i], i+1)
		}
		i += n
	}
	return "no invalid byte"
}

// resolveTokenColumns finds the sentence, position, label and text columns
// of schema s.
func resolveTokenColumns(s *arrow.Schema, opts TokenColumns) (tokenCols, error) {
	c := tokenCols{sentence: -1, position: -1, label: -1}
	find := func(given string, defaults []string, what, field string) (int, error) {
		if given != "" {
			if idx := s.FieldIndices(given); len(idx) > 0 {
				return idx[0], nil
			}
			return -1, &option.Error{Msg: fmt.Sprintf("no %s column %q ({%s}); the table has %s", what, given, field, strings.Join(fieldNames(s), ", "))}
		}
		for _, name := range defaults {
			if idx := s.FieldIndices(name); len(idx) > 0 {
				return idx[0], nil
			}
		}
		return -1, nil
	}
	var err error
	if c.sentence, err = find(opts.Sentence, DefaultSentenceColumns, "sentence", "TokenColumns.Sentence"); err != nil {
		return c, err
	}
	if c.sentence < 0 {
		return c, &option.Error{Msg: fmt.Sprintf("no sentence id column (looked for %s; name it with {TokenColumns.Sentence}); the table has %s",
			strings.Join(DefaultSentenceColumns, ", "), strings.Join(fieldNames(s), ", "))}
	}
	switch {
	case opts.Position == PositionNone && len(s.FieldIndices(PositionNone)) == 0:
		// row order, whatever position columns the table has
	default:
		if c.position, err = find(opts.Position, DefaultPositionColumns, "position", "TokenColumns.Position"); err != nil {
			return c, err
		}
	}
	if c.position >= 0 && !arrow.IsInteger(s.Field(c.position).Type.ID()) {
		return c, fmt.Errorf("position column %q is %s, want an integer type", s.Field(c.position).Name, s.Field(c.position).Type)
	}
	taken := func(i int) bool { return i == c.sentence || i == c.position }
	switch {
	case opts.NoLabel:
	case opts.Label != "":
		if c.label, err = find(opts.Label, nil, "label", "TokenColumns.Label"); err != nil {
			return c, err
		}
	case opts.LabelAt > 0:
		if opts.LabelAt > s.NumFields() {
			return c, &option.Error{Field: "TokenColumns.LabelAt", Value: strconv.Itoa(opts.LabelAt),
				Msg: fmt.Sprintf("the table has %d columns (%s)", s.NumFields(), strings.Join(fieldNames(s), ", "))}
		}
		c.label = opts.LabelAt - 1
	default:
		c.label, _ = find("", DefaultLabelColumns, "", "")
		// A prediction table (it has pred) without gold has no label: its
		// last string column is text, not a label.
		if c.label < 0 && len(opts.Text) == 0 && len(s.FieldIndices("pred")) == 0 {
			for i := s.NumFields() - 1; i >= 0; i-- {
				if !taken(i) && isTextType(s.Field(i).Type) && !slices.Contains(notText, s.Field(i).Name) {
					c.label = i
					break
				}
			}
		}
	}
	if c.label >= 0 && (taken(c.label) || !isTextType(s.Field(c.label).Type)) {
		return c, fmt.Errorf("label column %q is %s: want a string column other than the sentence and position", s.Field(c.label).Name, s.Field(c.label).Type)
	}
	if len(opts.Text) > 0 {
		for _, name := range opts.Text {
			idx := s.FieldIndices(name)
			if len(idx) == 0 {
				return c, &option.Error{Msg: fmt.Sprintf("no column %q ({TokenColumns.Text}); the table has %s", name, strings.Join(fieldNames(s), ", "))}
			}
			if t := s.Field(idx[0]).Type; !isTextType(t) && !arrow.IsInteger(t.ID()) {
				return c, &option.Error{Msg: fmt.Sprintf("column %q ({TokenColumns.Text}) is %s: a text column must hold strings (or integers, read as decimal text)", name, t)}
			}
			c.text = append(c.text, idx[0])
		}
	} else {
		for i := 0; i < s.NumFields(); i++ {
			f := s.Field(i)
			if taken(i) || i == c.label || slices.Contains(notText, f.Name) || slices.Contains(DefaultLabelColumns, f.Name) {
				continue
			}
			if isTextType(f.Type) {
				c.text = append(c.text, i)
			} else {
				if c.skipped == nil {
					c.skipped = map[string]arrow.DataType{}
				}
				c.skipped[f.Name] = f.Type
			}
		}
	}
	for _, k := range c.text {
		if k == c.label || taken(k) {
			return c, fmt.Errorf("column %q is both a text column and the sentence, position or label", s.Field(k).Name)
		}
		c.names = append(c.names, s.Field(k).Name)
	}
	as := opts.As
	if len(as) == 0 && opts.Fill != nil {
		if idx := s.FieldIndices("pred"); len(idx) > 0 && idx[0] != c.label && !slices.Contains(c.text, idx[0]) {
			if name := opts.Fill(slices.Clone(c.names)); name != "" {
				as = [][2]string{{name, "pred"}}
			}
		}
	}
	for _, a := range as {
		name, src := a[0], a[1]
		idx := s.FieldIndices(src)
		if len(idx) == 0 {
			return c, &option.Error{Msg: fmt.Sprintf("no column %q ({TokenColumns.As} %s=%s); the table has %s", src, name, src, strings.Join(fieldNames(s), ", "))}
		}
		k := idx[0]
		if k == c.label || taken(k) || !isTextType(s.Field(k).Type) {
			return c, &option.Error{Msg: fmt.Sprintf("column %q ({TokenColumns.As} %s=%s) is %s: want a string column other than the sentence, position and label", src, name, src, s.Field(k).Type)}
		}
		if i := slices.Index(c.text, k); i >= 0 {
			c.names[i] = name
		} else {
			c.text = append(c.text, k)
			c.names = append(c.names, name)
		}
	}
	for i, n := range c.names {
		if slices.Contains(c.names[:i], n) {
			return c, &option.Error{Msg: fmt.Sprintf("two text columns named %q ({TokenColumns.As}); the table has %s", n, strings.Join(fieldNames(s), ", "))}
		}
	}
	if len(c.text) == 0 {
		var cols []string
		for _, f := range s.Fields() {
			cols = append(cols, f.Name+" ("+f.Type.String()+")")
		}
		return c, &option.Error{Msg: fmt.Sprintf("no text column (a text column holds strings; name text columns with {TokenColumns.Text}, integer ones included); the table has %s", strings.Join(cols, ", "))}
	}
	return c, nil
}

func fieldNames(s *arrow.Schema) []string {
	var names []string
	for _, f := range s.Fields() {
		names = append(names, f.Name)
	}
	return names
}

// isTextType reports whether t holds strings (plain, large, view or
// dictionary encoded).
func isTextType(t arrow.DataType) bool {
	switch t := t.(type) {
	case *arrow.StringType, *arrow.LargeStringType, *arrow.StringViewType:
		return true
	case *arrow.DictionaryType:
		return isTextType(t.ValueType)
	}
	return false
}

// cellString returns value i of a as text.
func cellString(a arrow.Array, i int) string {
	switch a := a.(type) {
	case *array.Uint64:
		return strconv.FormatUint(a.Value(i), 10)
	case *array.String:
		return a.Value(i)
	case *array.LargeString:
		return a.Value(i)
	case *array.StringView:
		return a.Value(i)
	case *array.Dictionary:
		return cellString(a.Dictionary(), a.GetValueIndex(i))
	}
	if v, ok := intValue(a, i); ok {
		return strconv.FormatInt(v, 10)
	}
	return a.ValueStr(i)
}

// intValue returns value i of an integer array.
func intValue(a arrow.Array, i int) (int64, bool) {
	switch a := a.(type) {
	case *array.Int64:
		return a.Value(i), true
	case *array.Int32:
		return int64(a.Value(i)), true
	case *array.Int16:
		return int64(a.Value(i)), true
	case *array.Int8:
		return int64(a.Value(i)), true
	case *array.Uint64:
		return int64(a.Value(i)), true
	case *array.Uint32:
		return int64(a.Value(i)), true
	case *array.Uint16:
		return int64(a.Value(i)), true
	case *array.Uint8:
		return int64(a.Value(i)), true
	}
	return 0, false
}
