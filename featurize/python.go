package featurize

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// PythonOptions describe the Python feature module WritePython writes.
type PythonOptions struct {
	// Model names the model the templates come from, and Checksum its
	// checksum, in the module's docstring ("" leaves them out).
	Model, Checksum string
	// CRFsuiteModel names the CRFsuite model file in the docstring's
	// example ("" : model.crfsuite).
	CRFsuiteModel string
	// Columns are the token columns a sentence's rows hold, in order: the
	// columns of the text the model was trained on (KeyColumns). Templates
	// are bound to them as Compile binds them to an input's columns.
	Columns []string
	// Markers are added after the template attributes, as WriteCRFsuite
	// adds them.
	Markers Markers
	// Generator names what wrote the module, in its docstring.
	Generator string
	// Module is the module's name, for the docstring's example ("" :
	// features).
	Module string
}

// The function codes of the Python module, in the order of its _TEXT and
// _TEST tables: the text functions first, then the boolean ones, then num.
var pyFuncCodes = map[tmplFunc]int{
	tmplIdent: 0, tmplLower: 1, tmplPrefix: 2, tmplSuffix: 3, tmplShape: 4, tmplShortShape: 5,
	tmplHasDigit: 6, tmplHasHyphen: 7, tmplIsUpper: 8, tmplIsTitle: 9, tmplNum: 10,
}

// WritePython writes a Python 3 module, standard library only, whose
// sent2attributes(sentence) returns the attributes set makes for a
// sentence — the names, values and order Extractor.Extract gives, then the
// markers, exactly as WriteCRFsuite writes them — and whose
// sent2features(sentence) gives them in the form python-crfsuite's
// Tagger.tag takes. A sentence is a list of token rows holding o.Columns.
// The Unicode behaviour of the templates' functions (lower-casing, letter
// classes, digits, the white space num() trims) is Go's, carried in tables
// the module embeds, so that it does not depend on the Python version's
// Unicode database. The module is a function of its inputs only: the same
// model gives the same bytes.
func WritePython(w io.Writer, set *TemplateSet, o PythonOptions) error {
	x, err := set.Compile(o.Columns)
	if err != nil {
		return err
	}
	uses := map[tmplFunc]bool{}
	input, allOne := false, true
	var tmpls strings.Builder
	for _, c := range x.tmpls {
		switch {
		case c.disabled:
			continue
		case c.input:
			input, allOne = true, false
			tmpls.WriteString("    (None, ()),  # @input\n")
			continue
		}
		tmpls.WriteString("    (" + pyString(c.prefix) + ", (")
		for i, it := range c.items {
			uses[it.fn] = true
			if it.fn == tmplNum {
				allOne = false
			}
			if i > 0 {
				tmpls.WriteString(", ")
			}
			fmt.Fprintf(&tmpls, "(%d, %d, %d, %d, %s)", pyFuncCodes[it.fn], it.n, c.cols[i], it.off, pyString(it.text()))
		}
		if len(c.items) == 1 {
			tmpls.WriteString(",")
		}
		tmpls.WriteString(")),\n")
	}
	classes := uses[tmplShape] || uses[tmplShortShape]
	tables := map[string]string{
		"LOWER_RUNS": "()", "UPPER": "()", "LOWERCASE": "()", "LETTER": "()", "DIGIT": "()", "SPACE": `""`,
	}
	if uses[tmplLower] {
		tables["LOWER_RUNS"] = pyInts(lowerRuns())
	}
	if classes || uses[tmplIsUpper] || uses[tmplIsTitle] {
		tables["UPPER"] = pyInts(runeRanges(unicode.IsUpper))
	}
	if classes || uses[tmplIsTitle] {
		tables["LOWERCASE"] = pyInts(runeRanges(unicode.IsLower))
	}
	if uses[tmplIsUpper] || uses[tmplIsTitle] {
		tables["LETTER"] = pyInts(runeRanges(unicode.IsLetter))
	}
	if classes || uses[tmplHasDigit] {
		tables["DIGIT"] = pyInts(runeRanges(unicode.IsDigit))
	}
	if uses[tmplNum] {
		var sp []rune
		for r := rune(0); r <= unicode.MaxRune; r++ {
			if unicode.IsSpace(r) {
				sp = append(sp, r)
			}
		}
		tables["SPACE"] = pyString(string(sp))
	}
	cols := make([]string, len(o.Columns))
	for i, c := range o.Columns {
		cols[i] = pyString(c)
	}
	markers := []string{pyString(o.Markers.Bias), pyString(o.Markers.Start), pyString(o.Markers.End)}
	r := strings.NewReplacer(
		"{{DOC}}", pyDoc(set, o, input, allOne),
		"{{COLUMNS}}", pyTuple(cols),
		"{{TEMPLATES_TEXT}}", pyString(set.String()),
		"{{MARKERS}}", "("+strings.Join(markers, ", ")+")",
		"{{TEMPLATES}}", tmpls.String(),
		"{{BOUNDARY}}", strconv.Itoa(int(set.boundary)),
		"{{INPUT}}", pyBool(input),
		"{{ALL_ONE}}", pyBool(allOne),
		"{{LOWER_RUNS}}", tables["LOWER_RUNS"],
		"{{UPPER}}", tables["UPPER"],
		"{{LOWERCASE}}", tables["LOWERCASE"],
		"{{LETTER}}", tables["LETTER"],
		"{{DIGIT}}", tables["DIGIT"],
		"{{SPACE}}", tables["SPACE"],
		"{{UNICODE}}", unicode.Version,
	)
	bw := bufio.NewWriter(w)
	if _, err := r.WriteString(bw, pyModule); err != nil {
		return err
	}
	return bw.Flush()
}

// pyDoc is the module's docstring.
func pyDoc(set *TemplateSet, o PythonOptions, input, allOne bool) string {
	var b strings.Builder
	model := pyDocText(cmpOr(o.Model, "a dualcrf model"))
	para := func(text string) { b.WriteString(wrapText(text, 76) + "\n\n") }
	para(fmt.Sprintf("Attributes of the feature templates of %s, for CRFsuite's tagger.", model))
	made := fmt.Sprintf("Written by %s from the model %s", pyDocText(cmpOr(o.Generator, "dualcrf")), model)
	if o.Checksum != "" {
		made += " (" + pyDocText(o.Checksum) + ")"
	}
	para(made + ". It computes the attributes exactly as dualcrf featurize does: the same names, values and " +
		"order, the same lower-casing, word shapes and letter classes (Go's Unicode " + unicode.Version +
		" tables, embedded here, whatever this Python's own Unicode version). Python 3.7 or later, standard library only.")
	b.WriteString("Templates (TEMPLATES):\n\n")
	for _, line := range strings.Split(strings.TrimRight(set.String(), "\n"), "\n") {
		if line == "" {
			line = "@input"
		}
		b.WriteString("    " + pyDocText(line) + "\n")
	}
	b.WriteString("\n")
	cols := make([]string, len(o.Columns))
	for i, c := range o.Columns {
		cols[i] = pyDocText(c)
	}
	para(fmt.Sprintf("A sentence is a list of tokens; a token is a sequence of its columns in the order of COLUMNS (%s), "+
		"or a dict mapping column names to text, or a str when there is one column.", strings.Join(cols, ", ")))
	if input {
		para("The templates pass the input's own attributes through (@input): give them as attributes, " +
			"one list per token of names or (name, value) pairs.")
	}
	if names := o.Markers.names(); len(names) > 0 {
		para(fmt.Sprintf("The model's label bias, start and end weights are the marker attributes %s, %s and %s: "+
			"the first on every token, the second on the first token, the third on the last; they follow the template attributes.",
			pyDocText(o.Markers.Bias), pyDocText(o.Markers.Start), pyDocText(o.Markers.End)))
	}
	module := pyDocText(cmpOr(o.Module, "features"))
	fmt.Fprintf(&b, "With python-crfsuite:\n\n    import pycrfsuite\n    import %s\n\n    tagger = pycrfsuite.Tagger()\n", module)
	fmt.Fprintf(&b, "    tagger.open(%s)\n", pyDocText(pyString(cmpOr(o.CRFsuiteModel, "model.crfsuite"))))
	example := "[('He', 'PRP'), ('reckons', 'VBZ')]"
	if len(o.Columns) == 1 {
		example = "['He', 'reckons']"
	}
	fmt.Fprintf(&b, "    labels = tagger.tag(%s.sent2features(%s))\n\n", module, example)
	form := "each token's attribute names (every value is 1)"
	if !allOne {
		form = "each token's attributes as a dict of name to value (repeated names summed)"
	}
	b.WriteString(wrapText("sent2features gives "+form+"; sent2attributes gives (name, value) pairs, in order, for any other use.", 76))
	return b.String()
}

// cmpOr returns s, or def when s is empty.
func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// wrapText breaks text into lines of at most width bytes at spaces (a
// longer word keeps a line of its own).
func wrapText(text string, width int) string {
	var b strings.Builder
	n := 0
	for i, w := range strings.Fields(text) {
		switch {
		case i == 0:
		case n+1+len(w) > width:
			b.WriteByte('\n')
			n = 0
		default:
			b.WriteByte(' ')
			n++
		}
		b.WriteString(w)
		n += len(w)
	}
	return b.String()
}

// pyDocText makes s safe inside the module's docstring: no backslashes or
// quotes that would end or escape it, ASCII only.
func pyDocText(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '\\':
			b.WriteString(`\\`)
		case r == '"':
			b.WriteString(`\"`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		case r < utf8.RuneSelf:
			b.WriteRune(r)
		case r <= 0xffff:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			fmt.Fprintf(&b, `\U%08x`, r)
		}
	}
	return b.String()
}

// pyString returns s as a Python string literal, ASCII only.
func pyString(s string) string {
	var b strings.Builder
	b.WriteByte('\'')
	for _, r := range s {
		switch {
		case r == '\\' || r == '\'':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r >= 0x20 && r < 0x7f:
			b.WriteRune(r)
		case r <= 0xff:
			fmt.Fprintf(&b, `\x%02x`, r)
		case r <= 0xffff:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			fmt.Fprintf(&b, `\U%08x`, r)
		}
	}
	b.WriteByte('\'')
	return b.String()
}

func pyBool(v bool) string {
	if v {
		return "True"
	}
	return "False"
}

// pyTuple writes items as a Python tuple.
func pyTuple(items []string) string {
	if len(items) == 1 {
		return "(" + items[0] + ",)"
	}
	return "(" + strings.Join(items, ", ") + ")"
}

// pyInts writes v as a Python tuple of integers, 12 a line.
func pyInts(v []int) string {
	var b strings.Builder
	b.WriteString("(")
	for i, x := range v {
		if i%12 == 0 {
			b.WriteString("\n    ")
		} else {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%d,", x)
	}
	b.WriteString("\n)")
	return b.String()
}

// runeRanges returns the runes for which pred holds as the boundaries of
// half-open ranges, lo₀, hi₀, lo₁, hi₁, …: a rune is in the set when the
// number of boundaries ≤ it is odd.
func runeRanges(pred func(rune) bool) []int {
	var out []int
	in := false
	for r := rune(0); r <= unicode.MaxRune+1; r++ {
		if p := r <= unicode.MaxRune && pred(r); p != in {
			out = append(out, int(r))
			in = p
		}
	}
	return out
}

// lowerRuns returns Go's lower-case mapping (unicode.ToLower) of every rune
// it changes, as runs of four numbers: the first rune, the run's length,
// the stride between its runes and the difference lower − rune they share.
func lowerRuns() []int {
	var out []int
	start, count, stride, delta := rune(-1), 0, rune(0), rune(0)
	flush := func() {
		if count > 0 {
			out = append(out, int(start), count, int(stride), int(delta))
		}
	}
	for r := rune(0); r <= unicode.MaxRune; r++ {
		l := unicode.ToLower(r)
		if l == r {
			continue
		}
		next := start + rune(count)*stride
		switch {
		case count == 1 && l-r == delta && r-start <= 2:
			stride, count = r-start, 2
		case count > 1 && l-r == delta && r == next:
			count++
		default:
			flush()
			start, count, stride, delta = r, 1, 1, l-r
		}
	}
	flush()
	return out
}

// pyModule is the module's text; WritePython fills in the {{…}} fields.
const pyModule = `# Generated by dualcrf export: do not edit (run the export again instead).
"""{{DOC}}
"""

import bisect

__all__ = ['COLUMNS', 'MARKERS', 'TEMPLATES', 'FeatureError', 'sent2attributes', 'sent2features']

#: The token columns a sentence's rows hold, in order.
COLUMNS = {{COLUMNS}}
#: The feature templates, as dualcrf writes them.
TEMPLATES = {{TEMPLATES_TEXT}}
#: The marker attributes of the label bias, start and end weights ('' : none).
MARKERS = {{MARKERS}}


class FeatureError(ValueError):
    """A token the templates cannot read: a missing column, or a num() text
    that is not a finite number (dualcrf featurize refuses the same)."""


# Each template: (attribute-name prefix, items); None for @input. An item is
# (function, N of prefixN/suffixN, column index, offset, item text). The
# functions: 0 the text, 1 lower, 2 prefixN, 3 suffixN, 4 shape,
# 5 shortshape, 6 hasdigit, 7 hashyphen, 8 isupper, 9 istitle, 10 num.
_TEMPLATES = (
{{TEMPLATES}})
_BOUNDARY = {{BOUNDARY}}  # 0 offset (_B-1, _E+1), 1 side (__BOS__, __EOS__), 2 skip
_INPUT = {{INPUT}}
_ALL_ONE = {{ALL_ONE}}
_MARKER_SET = frozenset(m for m in MARKERS if m)

# Go's Unicode {{UNICODE}} tables, as dualcrf uses them. Lower-casing
# (unicode.ToLower): runs of (first code point, count, stride, delta).
_LOWER_RUNS = {{LOWER_RUNS}}
# Classes as boundaries of half-open ranges: unicode.IsUpper, IsLower,
# IsLetter, IsDigit.
_UPPER = {{UPPER}}
_LOWERCASE = {{LOWERCASE}}
_LETTER = {{LETTER}}
_DIGIT = {{DIGIT}}
# unicode.IsSpace, which num() trims (strings.TrimSpace).
_SPACE = {{SPACE}}


def _runs(runs):
    table = {}
    for i in range(0, len(runs), 4):
        first, count, stride, delta = runs[i:i + 4]
        for k in range(count):
            c = first + k * stride
            table[c] = c + delta
    return table


def _class_table():
    table = {}
    for ranges, shape in ((_UPPER, 'X'), (_LOWERCASE, 'x'), (_DIGIT, 'd')):
        for i in range(0, len(ranges), 2):
            for c in range(ranges[i], ranges[i + 1]):
                table[c] = shape
    return table


_LOWER = _runs(_LOWER_RUNS)
_SHAPE = _class_table()


def _in(ranges, c):
    return bisect.bisect_right(ranges, ord(c)) & 1


def _esc(v):
    if '\\' in v or '|' in v:
        return v.replace('\\', '\\\\').replace('|', '\\|')
    return v


def _lower(v, n):
    return _esc(v.lower() if v.isascii() else v.translate(_LOWER))


def _ident(v, n):
    return _esc(v)


def _prefix(v, n):
    return _esc(v[:n])


def _suffix(v, n):
    return _esc(v[-n:])


def _shape(v, n):
    return _esc(v.translate(_SHAPE))


def _shortshape(v, n):
    out = []
    last = None
    for c in v.translate(_SHAPE):
        if c != last:
            out.append(c)
            last = c
    return _esc(''.join(out))


def _hasdigit(v):
    for c in v:
        if _in(_DIGIT, c):
            return True
    return False


def _hashyphen(v):
    return '-' in v


def _isupper(v):
    letter = False
    for c in v:
        if _in(_LETTER, c):
            if not _in(_UPPER, c):
                return False
            letter = True
    return letter


def _istitle(v):
    if not v or not _in(_UPPER, v[0]):
        return False
    for c in v[1:]:
        if _in(_LETTER, c) and not _in(_LOWERCASE, c):
            return False
    return True


_TEXT = (_ident, _lower, _prefix, _suffix, _shape, _shortshape)
_TEST = (None, None, None, None, None, None, _hasdigit, _hashyphen, _isupper, _istitle)
_HEX = 'abcdefABCDEF'


def _underscore_ok(s):
    # Go's strconv: an underscore only between digits, or after a base prefix.
    saw = '^'
    i = 0
    if s[:1] in ('+', '-'):
        s = s[1:]
    hexa = False
    if len(s) >= 2 and s[0] == '0' and s[1] in 'bBoOxX':
        i = 2
        saw = '0'
        hexa = s[1] in 'xX'
    while i < len(s):
        c = s[i]
        if '0' <= c <= '9' or hexa and c in _HEX:
            saw = '0'
        elif c == '_':
            if saw != '0':
                return False
            saw = '_'
        elif saw == '_':
            return False
        else:
            saw = '!'
        i += 1
    return saw != '_'


def _go_float(s):
    # Go's strconv.ParseFloat(s, 64) for the numbers it reads as finite
    # (decimal, and hexadecimal with a p exponent); None for the rest.
    n = len(s)
    i = 0
    if i < n and s[i] in '+-':
        i += 1
    hexa = i + 2 < n and s[i] == '0' and s[i + 1] in 'xX'
    if hexa:
        i += 2
    dot = digits = underscores = False
    while i < n:
        c = s[i]
        if c == '_':
            underscores = True
        elif c == '.':
            if dot:
                break
            dot = True
        elif '0' <= c <= '9' or hexa and c in _HEX:
            digits = True
        else:
            break
        i += 1
    if not digits:
        return None
    mantissa = s[:i].replace('_', '')
    exp = ''
    if i < n and s[i] in ('pP' if hexa else 'eE'):
        i += 1
        sign = ''
        if i < n and s[i] in '+-':
            sign = s[i]
            i += 1
        if i >= n or not '0' <= s[i] <= '9':
            return None
        e = 0
        while i < n and ('0' <= s[i] <= '9' or s[i] == '_'):
            if s[i] == '_':
                underscores = True
            elif e < 10000:
                e = e * 10 + ord(s[i]) - 48
            i += 1
        exp = sign + str(e)
    elif hexa:
        return None
    if i != n or underscores and not _underscore_ok(s):
        return None
    if hexa:
        try:
            return float.fromhex(mantissa + 'p' + exp)
        except OverflowError:
            return None
    return float(mantissa + ('e' + exp if exp else ''))


def _num(v, p, item):
    f = _go_float(v.strip(_SPACE))
    if f is None or f != f or f in (float('inf'), float('-inf')):
        raise FeatureError('token %d: %s: %r is not a finite number' % (p + 1, item, v))
    return f


def _rows(sentence):
    rows = []
    for row in sentence:
        if isinstance(row, str):
            row = (row,)
        elif isinstance(row, dict):
            row = tuple(row.get(c) for c in COLUMNS)
        rows.append(row)
    return rows


def _cell(rows, p, col, item):
    row = rows[p] if p < len(rows) else ()
    v = row[col] if col < len(row) else None
    if v is None:
        raise FeatureError('token %d has no column %d (%s) for item %s' % (p + 1, col, COLUMNS[col], item))
    if not isinstance(v, str):
        raise TypeError('token %d, column %s: %r is not a str' % (p + 1, COLUMNS[col], v))
    return v


def _boundary(p, n):
    if _BOUNDARY == 1:
        return '__BOS__' if p < 0 else '__EOS__'
    if p < 0:
        return '_B' + str(p)
    return '_E+' + str(p - n + 1)


def sent2attributes(sentence, attributes=None):
    """The attributes of every token of sentence: one list per token of
    (name, value) pairs, in the order dualcrf featurize gives them, the
    markers last. attributes, for templates with @input, holds the input's
    own attributes: one list per token of names or (name, value) pairs."""
    if attributes is not None and not _INPUT:
        raise ValueError('attributes given, but these templates have no @input: a sentence is its token rows')
    rows = _rows(sentence) if sentence is not None else []
    if sentence is not None:
        n = len(rows)
    elif attributes is not None:
        n = len(attributes)
    else:
        n = 0
    bias, start, end = MARKERS
    out = []
    for t in range(n):
        attrs = []
        for prefix, items in _TEMPLATES:
            if prefix is None:
                if attributes is not None and t < len(attributes):
                    for a in attributes[t]:
                        name, value = (a, 1.0) if isinstance(a, str) else (a[0], float(a[1]))
                        if name not in _MARKER_SET:
                            attrs.append((name, value))
                continue
            parts = []
            value = 1.0
            for fn, k, col, off, item in items:
                p = t + off
                if p < 0 or p >= n:
                    if _BOUNDARY == 2 or fn >= 6:
                        break
                    parts.append(_boundary(p, n))
                    continue
                v = _cell(rows, p, col, item)
                if fn < 6:
                    parts.append(_TEXT[fn](v, k))
                elif fn == 10:
                    value = _num(v, p, item)
                elif not _TEST[fn](v):
                    break
            else:
                attrs.append((prefix + '|'.join(parts), value))
        if bias:
            attrs.append((bias, 1.0))
        if start and t == 0:
            attrs.append((start, 1.0))
        if end and t == n - 1:
            attrs.append((end, 1.0))
        out.append(attrs)
    return out


def sent2features(sentence, attributes=None):
    """The attributes of every token of sentence in the form
    python-crfsuite's Tagger.tag and ItemSequence take (see the module's
    documentation)."""
    seq = sent2attributes(sentence, attributes)
    if _ALL_ONE:
        return [[name for name, _ in attrs] for attrs in seq]
    out = []
    for attrs in seq:
        d = {}
        for name, value in attrs:
            d[name] = d.get(name, 0.0) + value
        out.append(d)
    return out
`
