package featurize

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Boundary says how template positions outside the sentence read.
type Boundary uint8

// Boundary modes; see the syntax in TemplateSet's documentation.
const (
	// BoundaryOffset reads "_B-d" d positions before the sentence and
	// "_E+d" d positions after it.
	BoundaryOffset Boundary = iota
	// BoundarySide reads "__BOS__" before the sentence and "__EOS__" after
	// it, whatever the distance.
	BoundarySide
	// BoundarySkip drops a template at a token when any of its positions
	// is outside the sentence.
	BoundarySkip
)

// Boundary symbols of BoundarySide.
const (
	BoundaryBOS = "__BOS__"
	BoundaryEOS = "__EOS__"
)

// tmplMaxOffset bounds |OFFSET| in an item.
const tmplMaxOffset = 1000

var tmplBoundaryNames = [...]string{BoundaryOffset: "offset", BoundarySide: "side", BoundarySkip: "skip"}

// String returns the mode's name as written after "@boundary".
func (b Boundary) String() string {
	if int(b) < len(tmplBoundaryNames) {
		return tmplBoundaryNames[b]
	}
	return fmt.Sprintf("Boundary(%d)", int(b))
}

// tmplFunc is the function applied to an item's column text.
type tmplFunc uint8

const (
	tmplIdent tmplFunc = iota
	tmplLower
	tmplPrefix
	tmplSuffix
	tmplShape
	tmplShortShape
	tmplHasDigit
	tmplHasHyphen
	tmplIsUpper
	tmplIsTitle
	tmplNum
)

// tmplFuncNames maps the fixed function names (prefixN and suffixN aside).
var tmplFuncNames = map[string]tmplFunc{
	"lower": tmplLower, "shape": tmplShape, "shortshape": tmplShortShape,
	"hasdigit": tmplHasDigit, "hashyphen": tmplHasHyphen,
	"isupper": tmplIsUpper, "istitle": tmplIsTitle, "num": tmplNum,
}

const tmplKnownFuncs = "lower, prefix1..prefix9, suffix1..suffix9, shape, shortshape, hasdigit, hashyphen, isupper, istitle, num"

func (f tmplFunc) boolean() bool {
	return f == tmplHasDigit || f == tmplHasHyphen || f == tmplIsUpper || f == tmplIsTitle
}

// tmplItem is one COLUMN[OFFSET] reference with its function.
type tmplItem struct {
	fn     tmplFunc
	n      int    // rune count of prefixN/suffixN
	fname  string // function name as canonical text, "" for none
	column string // as written: a name or "%N"
	index  int    // N of "%N", -1 for a name
	off    int
}

// text returns the item's canonical text.
func (it tmplItem) text() string {
	ref := it.column + "[" + strconv.Itoa(it.off) + "]"
	if it.fname == "" {
		return ref
	}
	return it.fname + "(" + ref + ")"
}

// tmplTemplate is one entry of a set.
type tmplTemplate struct {
	name     string // canonical text, "@input" for the input pass-through
	input    bool
	optional bool
	items    []tmplItem
	file     string // source file and line, for Compile's errors
	line     int
}

// TemplateSet is a parsed list of feature templates: a small
// CRF++/CRFsuite-like language that turns the columns of a sentence into
// per-token attributes. It is immutable and safe for concurrent use;
// Compile binds it to an input's columns.
//
// # Syntax
//
// A template set is text, one entry per line. A '#' starts a comment that
// runs to the end of the line; blank lines are ignored; spaces and tabs
// around items are ignored. An entry is one of:
//
//   - a template: items joined by '|', e.g. "w[-1]|w[0]" or
//     "lower(w[0])|pos[0]". A template may be preceded by '?' to mark it
//     optional (see Compile).
//   - "@builtin NAME": the entries of the built-in set NAME (see Builtin),
//     in place; its "@boundary" applies unless the text gives its own.
//   - "@input": pass the input's own attributes (Sentence.Attrs, as read
//     from CRFsuite attribute files) through unchanged, names and values.
//   - "@boundary MODE": how positions outside the sentence read, for the
//     whole set (at most once per set). MODE is
//     "offset" (the default): a symbol naming the side and the distance,
//     "_B-1", "_B-2", … before the first token and "_E+1", "_E+2", … after
//     the last; "side": one symbol per side whatever the distance,
//     "__BOS__" before and "__EOS__" after; "skip": a template with any
//     position outside the sentence yields nothing at that token
//     (CRFsuite's behaviour).
//
// An item is COLUMN[OFFSET], optionally wrapped in one function:
// FUNC(COLUMN[OFFSET]). OFFSET is a signed integer ("-1", "0", "+2",
// |OFFSET| ≤ 1000) relative to the current token. COLUMN is a column name
// of the input ([A-Za-z0-9_.-]+), or "%N" for the input's column N
// (0-based). Two names are aliases used when the input has no column of
// that exact name: "w" is the first of "word", "form", "token"; "pos" is
// "tag". The label column is never among the input's columns, and "pos"
// does not stand for CoNLL-U's xpos/upos columns, which are gold tags
// nearly determining the label: a template reads those only by name.
//
// Functions transforming the text (never applied to boundary symbols):
//
//	lower      lower-case (Unicode)
//	prefixN    the first N runes, N in 1..9 (the whole text when shorter)
//	suffixN    the last N runes, N in 1..9 (the whole text when shorter)
//	shape      word shape, one character per rune: an upper-case letter
//	           reads 'X', a lower-case letter 'x', a digit 'd', anything
//	           else is kept ("McCain-2" → "XxXxxx-d"); runs are not
//	           collapsed
//	shortshape the shape with runs of the same character collapsed
//	           ("McCain-2" → "XxXx-d")
//
// Boolean functions contribute no text; the template yields an attribute
// only when every boolean item is true (and nothing at a position outside
// the sentence):
//
//	hasdigit   contains a decimal digit
//	hashyphen  contains '-'
//	isupper    has a letter and no letter that is not upper-case
//	istitle    starts with an upper-case letter, and every later letter
//	           is lower-case
//
// The real-valued function num(COLUMN[OFFSET]) parses the column as a
// finite float64 and makes it the attribute's value (otherwise 1). At most
// one num item per template; a position outside the sentence yields
// nothing; text that does not parse is an error naming the token's line.
//
// # Attribute names
//
// A template's name is its canonical text: items joined by '|' with no
// spaces, offsets written without '+' ("w[-1]|w[0]", "lower(w[1])"),
// columns as written, '?' left out. An attribute is named
// TEMPLATE=V1|V2|…, the values of the non-boolean, non-num items in order
// ("w[-1]|w[0]=he|reckons", "lower(w[-2])=_B-2"), or TEMPLATE alone when
// the template has no such items ("istitle(w[0])", "num(score[0])"). In
// values, '\' and '|' are escaped as "\\" and "\|", so the name determines
// the values; names of different templates never collide, and the same
// template text may not appear twice in a set, so a per-template cutoff is
// well-defined. (A token whose text equals a boundary symbol reads the
// same as the boundary.) Input attributes keep their own names.
//
// A set with no entries at all behaves as "@input": it passes the input's
// attributes through, and yields nothing for column formats.
type TemplateSet struct {
	templates []tmplTemplate
	boundary  Boundary
	file      string
}

// ParseTemplates reads a template set from r; name is the file name used in
// errors, which are *SyntaxError values naming the line.
func ParseTemplates(r io.Reader, name string) (*TemplateSet, error) {
	set := &TemplateSet{file: name}
	p := tmplParser{set: set, file: name, seen: map[string]int{}}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for sc.Scan() {
		p.line++
		if err := p.parseLine(sc.Text()); err != nil {
			return nil, err
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read %s:%d: %w", name, p.line+1, err)
	}
	return set, nil
}

// ParseTemplateString parses a template set held in a string; errors name
// the file "<template>".
func ParseTemplateString(text string) (*TemplateSet, error) {
	return ParseTemplates(strings.NewReader(text), "<template>")
}

// LoadTemplates returns the built-in set called spec when there is one (see
// Builtin), else parses the file at path spec. A file whose name is also a
// built-in name is reached by a path such as "./chunking".
func LoadTemplates(spec string) (*TemplateSet, error) {
	if _, ok := tmplBuiltins[spec]; ok {
		return Builtin(spec)
	}
	f, err := os.Open(spec)
	if err != nil {
		return nil, fmt.Errorf("template %q is neither a built-in set (%s) nor a readable file: %w",
			spec, strings.Join(BuiltinNames(), ", "), err)
	}
	defer f.Close()
	return ParseTemplates(f, spec)
}

// Len returns the number of entries (templates and "@input").
func (s *TemplateSet) Len() int { return len(s.templates) }

// Name returns the name of entry i: its canonical text, "@input" for the
// pass-through; it is the Template index of a Feature. Out of range, "".
func (s *TemplateSet) Name(i int) string {
	if i < 0 || i >= len(s.templates) {
		return ""
	}
	return s.templates[i].name
}

// Boundary returns how positions outside the sentence read.
func (s *TemplateSet) Boundary() Boundary { return s.boundary }

// String returns the set as canonical template text, which ParseTemplates
// reads back into an identical set: "@boundary MODE" first when the mode
// is not the default, then one entry per line. Comments are not kept.
func (s *TemplateSet) String() string {
	var b strings.Builder
	if s.boundary != BoundaryOffset {
		b.WriteString("@boundary " + s.boundary.String() + "\n")
	}
	for _, t := range s.templates {
		if t.optional {
			b.WriteByte('?')
		}
		b.WriteString(t.name)
		b.WriteByte('\n')
	}
	return b.String()
}

// tmplParser holds the state of ParseTemplates.
type tmplParser struct {
	set         *TemplateSet
	file        string
	line        int
	seen        map[string]int // template name → line
	boundarySet bool           // "@boundary" given in this text
}

func (p *tmplParser) errorf(format string, args ...any) error {
	return &SyntaxError{File: p.file, Line: p.line, Msg: fmt.Sprintf(format, args...)}
}

func (p *tmplParser) parseLine(line string) error {
	if i := strings.IndexByte(line, '#'); i >= 0 {
		line = line[:i]
	}
	line = strings.TrimSpace(line)
	switch {
	case line == "":
		return nil
	case strings.HasPrefix(line, "@"):
		return p.parseDirective(line)
	}
	t := tmplTemplate{file: p.file, line: p.line}
	if strings.HasPrefix(line, "?") {
		t.optional = true
		line = strings.TrimSpace(line[1:])
	}
	nums := 0
	for _, field := range strings.Split(line, "|") {
		it, err := p.parseItem(strings.TrimSpace(field))
		if err != nil {
			return err
		}
		if it.fn == tmplNum {
			nums++
		}
		t.items = append(t.items, it)
	}
	if nums > 1 {
		return p.errorf("template %q has %d num() items, at most one is allowed", line, nums)
	}
	names := make([]string, len(t.items))
	for i, it := range t.items {
		names[i] = it.text()
	}
	t.name = strings.Join(names, "|")
	return p.add(t)
}

func (p *tmplParser) add(t tmplTemplate) error {
	if first, dup := p.seen[t.name]; dup {
		return p.errorf("duplicate template %q (first at line %d)", t.name, first)
	}
	p.seen[t.name] = p.line
	p.set.templates = append(p.set.templates, t)
	return nil
}

func (p *tmplParser) parseDirective(line string) error {
	fields := strings.Fields(line)
	switch fields[0] {
	case "@input":
		if len(fields) != 1 {
			return p.errorf("@input takes no argument, got %q", line)
		}
		return p.add(tmplTemplate{name: "@input", input: true, file: p.file, line: p.line})
	case "@builtin":
		if len(fields) != 2 {
			return p.errorf("expected \"@builtin NAME\", got %q", line)
		}
		return p.include(fields[1])
	case "@boundary":
		if len(fields) != 2 {
			return p.errorf("expected \"@boundary offset|side|skip\", got %q", line)
		}
		if p.boundarySet {
			return p.errorf("@boundary given twice")
		}
		for b, name := range tmplBoundaryNames {
			if fields[1] == name {
				p.set.boundary, p.boundarySet = Boundary(b), true
				return nil
			}
		}
		return p.errorf("unknown boundary mode %q (known: offset, side, skip)", fields[1])
	}
	return p.errorf("unknown directive %q (known: @input, @boundary, @builtin)", fields[0])
}

// include appends the entries of the built-in set name.
func (p *tmplParser) include(name string) error {
	if _, ok := tmplBuiltins[name]; !ok {
		return p.errorf("unknown built-in template set %q (known: %s)", name, strings.Join(BuiltinNames(), ", "))
	}
	inc, err := Builtin(name)
	if err != nil {
		return fmt.Errorf("%s:%d: %w", p.file, p.line, err)
	}
	for _, t := range inc.templates {
		if err := p.add(t); err != nil {
			return err
		}
	}
	if !p.boundarySet {
		p.set.boundary = inc.boundary
	}
	return nil
}

// parseItem parses "COLUMN[OFFSET]" or "FUNC(COLUMN[OFFSET])".
func (p *tmplParser) parseItem(s string) (tmplItem, error) {
	if s == "" {
		return tmplItem{}, p.errorf("empty item (expected COLUMN[OFFSET] or FUNC(COLUMN[OFFSET]))")
	}
	it := tmplItem{index: -1}
	ref := s
	if open := strings.IndexByte(s, '('); open >= 0 {
		if !strings.HasSuffix(s, ")") {
			return it, p.errorf("item %q: missing ')'", s)
		}
		fname := strings.TrimSpace(s[:open])
		fn, n, ok := tmplLookupFunc(fname)
		if !ok {
			return it, p.errorf("item %q: unknown function %q (known: %s)", s, fname, tmplKnownFuncs)
		}
		it.fn, it.n, it.fname = fn, n, fname
		ref = strings.TrimSpace(s[open+1 : len(s)-1])
	}
	open := strings.IndexByte(ref, '[')
	if open < 0 || !strings.HasSuffix(ref, "]") {
		return it, p.errorf("item %q: expected COLUMN[OFFSET]", s)
	}
	col := strings.TrimSpace(ref[:open])
	if err := p.parseColumn(&it, col, s); err != nil {
		return it, err
	}
	offText := strings.TrimSpace(ref[open+1 : len(ref)-1])
	off, err := strconv.Atoi(offText)
	if err != nil {
		return it, p.errorf("item %q: bad offset %q (expected a signed integer)", s, offText)
	}
	if off < -tmplMaxOffset || off > tmplMaxOffset {
		return it, p.errorf("item %q: offset %d out of range ±%d", s, off, tmplMaxOffset)
	}
	it.off = off
	return it, nil
}

func (p *tmplParser) parseColumn(it *tmplItem, col, item string) error {
	if strings.HasPrefix(col, "%") {
		n, err := strconv.Atoi(col[1:])
		if err != nil || strings.TrimLeft(col[1:], "0123456789") != "" {
			return p.errorf("item %q: bad column index %q (expected %%N, N ≥ 0)", item, col)
		}
		it.column, it.index = "%"+strconv.Itoa(n), n
		return nil
	}
	if col == "" {
		return p.errorf("item %q: missing column name", item)
	}
	for _, r := range col {
		if !(r == '_' || r == '-' || r == '.' || r < utf8.RuneSelf && (unicode.IsLetter(r) || unicode.IsDigit(r))) {
			return p.errorf("item %q: bad column name %q (expected [A-Za-z0-9_.-]+ or %%N)", item, col)
		}
	}
	it.column = col
	return nil
}

// tmplLookupFunc resolves a function name, including prefixN and suffixN.
func tmplLookupFunc(name string) (tmplFunc, int, bool) {
	if fn, ok := tmplFuncNames[name]; ok {
		return fn, 0, true
	}
	for _, pre := range [...]struct {
		word string
		fn   tmplFunc
	}{{"prefix", tmplPrefix}, {"suffix", tmplSuffix}} {
		rest, ok := strings.CutPrefix(name, pre.word)
		if ok && len(rest) == 1 && rest[0] >= '1' && rest[0] <= '9' {
			return pre.fn, int(rest[0] - '0'), true
		}
	}
	return 0, 0, false
}

// tmplAliases lists the columns an alias stands for, in order of preference.
var tmplAliases = map[string][]string{
	"w":   {"word", "form", "token"},
	"pos": {"tag"},
}

// tmplResolveColumn finds the index of column name among columns.
func tmplResolveColumn(it tmplItem, columns []string) (int, bool) {
	if it.index >= 0 {
		return it.index, it.index < len(columns)
	}
	for i, c := range columns {
		if c == it.column {
			return i, true
		}
	}
	for _, alias := range tmplAliases[it.column] {
		for i, c := range columns {
			if c == alias {
				return i, true
			}
		}
	}
	return -1, false
}

// Feature is one attribute of a token produced by an Extractor.
type Feature struct {
	Name     string
	Value    float64 // 1 for a binary attribute
	Template int     // index of the producing entry in the TemplateSet
}

// tmplCompiled is a template bound to column indices.
type tmplCompiled struct {
	prefix   string // "NAME=" or "NAME" when no item contributes text
	input    bool
	disabled bool // optional template whose column is absent
	items    []tmplItem
	cols     []int // column index of each item
}

// Extractor applies a TemplateSet to sentences whose columns are fixed. It
// reuses internal buffers, so one Extractor must not be used by several
// goroutines at once; compile one per goroutine.
type Extractor struct {
	// Source names the input in errors (e.g. the corpus file name);
	// Compile sets it to "<input>".
	Source   string
	set      *TemplateSet
	columns  []string
	tmpls    []tmplCompiled
	boundary Boundary
	buf      []byte
	spans    []tmplSpan
}

// tmplSpan locates one extracted attribute's name in Extractor.buf.
type tmplSpan struct {
	token, start, end, template int
	value                       float64
}

// Compile binds the set to an input whose token columns are named columns
// (a Reader's Columns()). A template naming a column the input lacks is an
// error naming the template's file and line — unless the template is
// optional ('?'), in which case it yields nothing for this input (its
// index is kept, so Feature.Template still indexes the set). An empty set
// compiles to an implicit "@input" at index 0.
func (s *TemplateSet) Compile(columns []string) (*Extractor, error) {
	x := &Extractor{set: s, columns: append([]string(nil), columns...), boundary: s.boundary, Source: "<input>"}
	if len(s.templates) == 0 {
		x.tmpls = []tmplCompiled{{prefix: "@input", input: true}}
		return x, nil
	}
	for _, t := range s.templates {
		c, err := s.compileOne(t, columns)
		if err != nil {
			return nil, err
		}
		x.tmpls = append(x.tmpls, c)
	}
	return x, nil
}

func (s *TemplateSet) compileOne(t tmplTemplate, columns []string) (tmplCompiled, error) {
	c := tmplCompiled{input: t.input, items: t.items, prefix: t.name}
	if t.input {
		return c, nil
	}
	text := false
	for _, it := range t.items {
		col, ok := tmplResolveColumn(it, columns)
		if !ok && t.optional {
			c.disabled = true
		} else if !ok {
			return c, &MissingColumnError{File: t.file, Line: t.line, Template: t.name, Column: it.column, Columns: columns}
		}
		c.cols = append(c.cols, col)
		text = text || (!it.fn.boolean() && it.fn != tmplNum)
	}
	if text {
		c.prefix += "="
	}
	return c, nil
}

// MissingColumnError is Compile's error when a template that is not
// optional reads a column the input does not have.
type MissingColumnError struct {
	File     string   // the template file ("builtin:NAME", "<template>")
	Line     int      // the template's line
	Template string   // the template, as canonical text
	Column   string   // the column it reads, as written ("pos", "w", "%2")
	Columns  []string // the input's columns
}

func (e *MissingColumnError) Error() string {
	return (&SyntaxError{File: e.File, Line: e.Line, Msg: fmt.Sprintf("template %q: column %q is not among the input's columns [%s]",
		e.Template, e.Column, strings.Join(e.Columns, " "))}).Error()
}

// RequiredColumns returns the columns, as written ("w", "pos"), that the
// set's templates which are not optional read, each once, in order.
func (s *TemplateSet) RequiredColumns() []string {
	var cols []string
	for _, t := range s.templates {
		if t.input || t.optional {
			continue
		}
		for _, it := range t.items {
			if !slices.Contains(cols, it.column) {
				cols = append(cols, it.column)
			}
		}
	}
	return cols
}

// requiredColumns is RequiredColumns, nil for a nil set.
func (s *TemplateSet) requiredColumns() []string {
	if s == nil {
		return nil
	}
	return s.RequiredColumns()
}

// missingColumns returns those of need (columns as templates write them)
// that columns lacks.
func missingColumns(need, columns []string) []string {
	var missing []string
	for _, c := range need {
		it := tmplItem{column: c, index: -1}
		if strings.HasPrefix(c, "%") {
			if n, err := strconv.Atoi(c[1:]); err == nil {
				it.index = n
			}
		}
		if _, ok := tmplResolveColumn(it, columns); !ok {
			missing = append(missing, c)
		}
	}
	return missing
}

// Set returns the template set the extractor was compiled from.
func (x *Extractor) Set() *TemplateSet { return x.set }

// Columns returns the input column names the extractor was compiled for.
func (x *Extractor) Columns() []string { return append([]string(nil), x.columns...) }

// Extract returns the attributes of every token of s: dst[t] lists token
// t's attributes in template order. dst and its rows are reused when their
// capacity allows. The names of one call share one backing string, so
// keeping any of them keeps the whole sentence's names alive; clone those
// kept for long (VocabBuilder does). Errors are *SyntaxError values naming
// Source and the token's line (Sentence.TokenLine).
func (x *Extractor) Extract(s *Sentence, dst [][]Feature) ([][]Feature, error) {
	n := s.Len()
	x.buf, x.spans = x.buf[:0], x.spans[:0]
	for t := 0; t < n; t++ {
		for ti := range x.tmpls {
			if err := x.extractOne(s, t, ti); err != nil {
				return dst, err
			}
		}
	}
	if cap(dst) < n {
		dst = append(dst[:cap(dst)], make([][]Feature, n-cap(dst))...)
	}
	dst = dst[:n]
	for t := range dst {
		dst[t] = dst[t][:0]
	}
	names := string(x.buf)
	for _, sp := range x.spans {
		dst[sp.token] = append(dst[sp.token], Feature{Name: names[sp.start:sp.end], Value: sp.value, Template: sp.template})
	}
	return dst, nil
}

// extractOne appends template ti's attribute at token t, if any.
func (x *Extractor) extractOne(s *Sentence, t, ti int) error {
	c := &x.tmpls[ti]
	switch {
	case c.disabled:
		return nil
	case c.input:
		x.extractInput(s, t, ti)
		return nil
	}
	n := s.Len()
	start := len(x.buf)
	x.buf = append(x.buf, c.prefix...)
	value, first := 1.0, true
	for i, it := range c.items {
		p := t + it.off
		if p < 0 || p >= n {
			if x.boundary == BoundarySkip || it.fn.boolean() || it.fn == tmplNum {
				x.buf = x.buf[:start]
				return nil
			}
			x.buf = tmplAppendSep(x.buf, &first)
			x.buf = tmplAppendBoundary(x.buf, p, n, x.boundary)
			continue
		}
		v, err := x.cell(s, p, c.cols[i], it)
		if err != nil {
			return err
		}
		switch {
		case it.fn.boolean():
			if !tmplTest(it.fn, v) {
				x.buf = x.buf[:start]
				return nil
			}
		case it.fn == tmplNum:
			if value, err = x.parseNum(s, p, it, v); err != nil {
				return err
			}
		default:
			x.buf = tmplAppendSep(x.buf, &first)
			x.buf = tmplAppendValue(x.buf, it, v)
		}
	}
	x.spans = append(x.spans, tmplSpan{token: t, start: start, end: len(x.buf), template: ti, value: value})
	return nil
}

func (x *Extractor) extractInput(s *Sentence, t, ti int) {
	if t >= len(s.Attrs) {
		return
	}
	for _, a := range s.Attrs[t] {
		start := len(x.buf)
		x.buf = append(x.buf, a.Name...)
		x.spans = append(x.spans, tmplSpan{token: t, start: start, end: len(x.buf), template: ti, value: a.Value})
	}
}

// cell returns column col of token p, or an error when the row is short.
func (x *Extractor) cell(s *Sentence, p, col int, it tmplItem) (string, error) {
	if p < len(s.Tokens) && col < len(s.Tokens[p]) {
		return s.Tokens[p][col], nil
	}
	return "", x.errorAt(s, p, fmt.Sprintf("token %d has no column %d for item %s", p+1, col, it.text()))
}

func (x *Extractor) parseNum(s *Sentence, p int, it tmplItem, v string) (float64, error) {
	f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) || math.IsInf(f, 0) || math.IsNaN(f) {
		return 0, x.errorAt(s, p, fmt.Sprintf("%s: %q is not a finite number", it.text(), v))
	}
	return f, nil
}

func (x *Extractor) errorAt(s *Sentence, p int, msg string) error {
	return &SyntaxError{File: x.Source, Line: s.TokenLine(p), Msg: msg}
}

func tmplAppendSep(buf []byte, first *bool) []byte {
	if !*first {
		buf = append(buf, '|')
	}
	*first = false
	return buf
}

// tmplAppendBoundary appends the symbol of position p outside a sentence of
// n tokens.
func tmplAppendBoundary(buf []byte, p, n int, mode Boundary) []byte {
	switch {
	case mode == BoundarySide && p < 0:
		return append(buf, BoundaryBOS...)
	case mode == BoundarySide:
		return append(buf, BoundaryEOS...)
	case p < 0:
		return strconv.AppendInt(append(buf, "_B"...), int64(p), 10)
	}
	return strconv.AppendInt(append(buf, "_E+"...), int64(p-n+1), 10)
}

// tmplAppendValue appends item it's function of v, escaped.
func tmplAppendValue(buf []byte, it tmplItem, v string) []byte {
	switch it.fn {
	case tmplLower:
		return tmplAppendLower(buf, v)
	case tmplPrefix:
		return tmplAppendEscaped(buf, tmplPrefixRunes(v, it.n))
	case tmplSuffix:
		return tmplAppendEscaped(buf, tmplSuffixRunes(v, it.n))
	case tmplShape:
		return tmplAppendShape(buf, v, false)
	case tmplShortShape:
		return tmplAppendShape(buf, v, true)
	}
	return tmplAppendEscaped(buf, v)
}

// tmplAppendEscaped appends v with '\' and '|' escaped by '\'.
func tmplAppendEscaped(buf []byte, v string) []byte {
	i := 0
	for i < len(v) && v[i] != '\\' && v[i] != '|' {
		i++
	}
	buf = append(buf, v[:i]...)
	for ; i < len(v); i++ {
		if v[i] == '\\' || v[i] == '|' {
			buf = append(buf, '\\')
		}
		buf = append(buf, v[i])
	}
	return buf
}

// tmplAppendLower appends the lower-cased, escaped v without allocating.
func tmplAppendLower(buf []byte, v string) []byte {
	for i := 0; i < len(v); {
		c := v[i]
		if c < utf8.RuneSelf {
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			} else if c == '\\' || c == '|' {
				buf = append(buf, '\\')
			}
			buf = append(buf, c)
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(v[i:])
		if r == utf8.RuneError && size == 1 {
			buf = append(buf, c) // keep invalid bytes as they are
		} else {
			buf = utf8.AppendRune(buf, unicode.ToLower(r))
		}
		i += size
	}
	return buf
}

func tmplPrefixRunes(v string, n int) string {
	for i := range v {
		if n == 0 {
			return v[:i]
		}
		n--
	}
	return v
}

func tmplSuffixRunes(v string, n int) string {
	i := len(v)
	for ; n > 0 && i > 0; n-- {
		_, size := utf8.DecodeLastRuneInString(v[:i])
		i -= size
	}
	return v[i:]
}

// tmplShapeRune maps a rune to its shape character.
func tmplShapeRune(r rune) rune {
	switch {
	case unicode.IsUpper(r):
		return 'X'
	case unicode.IsLower(r):
		return 'x'
	case unicode.IsDigit(r):
		return 'd'
	}
	return r
}

// tmplAppendShape appends v's word shape, runs collapsed when short.
func tmplAppendShape(buf []byte, v string, short bool) []byte {
	last := rune(-1)
	for _, r := range v {
		s := tmplShapeRune(r)
		if short && s == last {
			continue
		}
		last = s
		if s == '\\' || s == '|' {
			buf = append(buf, '\\')
		}
		buf = utf8.AppendRune(buf, s)
	}
	return buf
}

// tmplTest evaluates a boolean function on v.
func tmplTest(fn tmplFunc, v string) bool {
	switch fn {
	case tmplHasDigit:
		return strings.IndexFunc(v, unicode.IsDigit) >= 0
	case tmplHasHyphen:
		return strings.IndexByte(v, '-') >= 0
	case tmplIsUpper:
		return strings.IndexFunc(v, unicode.IsLetter) >= 0 &&
			strings.IndexFunc(v, func(r rune) bool { return unicode.IsLetter(r) && !unicode.IsUpper(r) }) < 0
	case tmplIsTitle:
		r, size := utf8.DecodeRuneInString(v)
		return unicode.IsUpper(r) &&
			strings.IndexFunc(v[size:], func(r rune) bool { return unicode.IsLetter(r) && !unicode.IsLower(r) }) < 0
	}
	return false
}
