package featurize

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"github.com/dualcrf/dualcrf/arrowio"
	"github.com/dualcrf/dualcrf/internal/datatest"
	"github.com/dualcrf/dualcrf/pipeline"
)

// pyDriver runs the modules of its directory on sentences read as JSON
// lines from standard input ({"module": …, "rows": …, "attrs": …}) and
// prints, per sentence, its attributes with their values in float.hex form,
// or the FeatureError the module raised; "features" is sent2features'
// result.
const pyDriver = `import importlib, json, sys
sys.path.insert(0, sys.argv[1])
for line in sys.stdin:
    s = json.loads(line)
    m = importlib.import_module(s['module'])
    try:
        attrs = m.sent2attributes(s.get('rows'), s.get('attrs'))
        feats = m.sent2features(s.get('rows'), s.get('attrs'))
    except m.FeatureError as e:
        print(json.dumps({'error': str(e)}))
        continue
    print(json.dumps({'attrs': [[[n, v.hex()] for n, v in a] for a in attrs], 'features': feats}))
`

// pyResult is the driver's answer for one sentence.
type pyResult struct {
	Attrs    [][][2]string   `json:"attrs"`
	Features json.RawMessage `json:"features"`
	Error    string          `json:"error"`
}

// pySentence is a sentence as the driver reads it.
type pySentence struct {
	Module string     `json:"module"`
	Rows   [][]string `json:"rows,omitempty"`
	Attrs  [][]any    `json:"attrs,omitempty"`
}

// pyCase is a module (templates, columns, markers) and sentences to run it
// on.
type pyCase struct {
	set     *TemplateSet
	columns []string
	mk      Markers
	sents   []*Sentence
}

// runPython writes each case's module and runs the driver once over all
// their sentences; it returns the answers, case by case, and the modules'
// texts.
func runPython(t *testing.T, cases []pyCase) ([][]pyResult, []string) {
	t.Helper()
	python := datatest.Python3(t)
	dir := t.TempDir()
	var in bytes.Buffer
	enc := json.NewEncoder(&in)
	mods := make([]string, len(cases))
	for i, c := range cases {
		var mod bytes.Buffer
		if err := WritePython(&mod, c.set, PythonOptions{Model: "test.arrow", Columns: c.columns, Markers: c.mk}); err != nil {
			t.Fatal(err)
		}
		mods[i] = mod.String()
		name := fmt.Sprintf("features%d", i)
		if err := os.WriteFile(filepath.Join(dir, name+".py"), mod.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		for _, s := range c.sents {
			ps := pySentence{Module: name, Rows: s.Tokens}
			for _, row := range s.Attrs {
				r := []any{}
				for _, a := range row {
					if a.Value == 1 && len(r)%2 == 0 {
						r = append(r, a.Name) // a name alone, or a (name, value) pair
					} else {
						r = append(r, []any{a.Name, a.Value})
					}
				}
				ps.Attrs = append(ps.Attrs, r)
			}
			if err := enc.Encode(ps); err != nil {
				t.Fatal(err)
			}
		}
	}
	cmd := exec.Command(python, "-c", pyDriver, dir)
	cmd.Stdin = &in
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("python: %v\n%s", err, stderr.String())
	}
	var res []pyResult
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<26)
	for sc.Scan() {
		var r pyResult
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("python output %q: %v", sc.Text(), err)
		}
		res = append(res, r)
	}
	byCase := make([][]pyResult, len(cases))
	for i, c := range cases {
		if len(res) < len(c.sents) {
			t.Fatalf("python answered %d sentences too few", len(c.sents)-len(res))
		}
		byCase[i], res = res[:len(c.sents)], res[len(c.sents):]
	}
	if len(res) != 0 {
		t.Fatalf("python answered %d sentences too many", len(res))
	}
	return byCase, mods
}

// goAttributes is what WriteCRFsuite writes for sentence s: the template
// attributes but the input's markers, then the markers.
func goAttributes(x *Extractor, s *Sentence, mk Markers) ([][]Feature, error) {
	feats, err := x.Extract(s, nil)
	if err != nil {
		return nil, err
	}
	out := make([][]Feature, len(feats))
	for t, fs := range feats {
		for _, f := range fs {
			if !mk.isMarker(f.Name) {
				out[t] = append(out[t], Feature{Name: strings.Clone(f.Name), Value: f.Value})
			}
		}
		for _, m := range markersAt(mk, t, len(feats)) {
			out[t] = append(out[t], Feature{Name: m, Value: 1})
		}
	}
	return out, nil
}

// comparePython checks that each case's module gives for every sentence
// exactly the attributes, values (bit for bit) and order Go's extractor
// gives, or fails where Go fails; it returns the tokens compared.
func comparePython(t *testing.T, cases ...pyCase) int {
	t.Helper()
	res, _ := runPython(t, cases)
	tokens, failures, sents := 0, 0, 0
	for ci, c := range cases {
		x, err := c.set.Compile(c.columns)
		if err != nil {
			t.Fatal(err)
		}
		for i, s := range c.sents {
			sents++
			want, err := goAttributes(x, s, c.mk)
			got := res[ci][i]
			if (err != nil) != (got.Error != "") {
				t.Fatalf("case %d sentence %d (%q): Go error %v, Python error %q", ci, i, s.Tokens, err, got.Error)
			}
			if err != nil {
				failures++
				continue
			}
			if len(got.Attrs) != len(want) {
				t.Fatalf("case %d sentence %d: Python gave %d tokens, Go %d", ci, i, len(got.Attrs), len(want))
			}
			for tok := range want {
				g, w := got.Attrs[tok], want[tok]
				if len(g) != len(w) {
					t.Fatalf("case %d sentence %d token %d: Python gave %d attributes, Go %d:\n python %q\n go     %v", ci, i, tok, len(g), len(w), g, w)
				}
				for j := range w {
					v, err := strconv.ParseFloat(g[j][1], 64)
					if err != nil {
						t.Fatalf("value %q: %v", g[j][1], err)
					}
					if g[j][0] != w[j].Name || math.Float64bits(v) != math.Float64bits(w[j].Value) {
						t.Fatalf("case %d sentence %d token %d attribute %d: Python %q = %v, Go %q = %v", ci, i, tok, j, g[j][0], v, w[j].Name, w[j].Value)
					}
				}
				tokens++
			}
		}
	}
	t.Logf("%d modules, %d sentences: %d tokens equal, %d sentences refused by both", len(cases), sents, tokens, failures)
	return tokens
}

// sentencesOf groups tokens (each a row of columns) into sentences of n.
func sentencesOf(rows [][]string, n int) []*Sentence {
	var out []*Sentence
	for len(rows) > 0 {
		k := min(n, len(rows))
		out = append(out, &Sentence{Tokens: rows[:k:k], Line: 1})
		rows = rows[k:]
	}
	return out
}

// TestPythonEveryRune compares the module with Go on text made of every
// Unicode code point (surrogates aside): tokens of 127 consecutive code
// points for the text functions (lower-casing, shapes, prefixes and
// suffixes, escaping of '|' and '\'), and tokens of one code point, alone
// and after an upper-case letter, for the class tests (isupper, istitle,
// hasdigit, shape) at every boundary of Go's letter, upper-case,
// lower-case, digit and lower-casing tables and on a sample elsewhere.
func TestPythonEveryRune(t *testing.T) {
	var chunks [][]string
	var cur []rune
	for r := rune(0); r <= unicode.MaxRune; r++ {
		if r >= 0xd800 && r <= 0xdfff {
			continue
		}
		if cur = append(cur, r); len(cur) == 127 {
			chunks = append(chunks, []string{string(cur), string(cur[:7])})
			cur = cur[:0]
		}
	}
	chunks = append(chunks, []string{string(cur), "|\\"})
	text, err := ParseTemplateString(`w[0]
lower(w[0])
shape(w[0])
shortshape(w[0])
prefix3(w[0])|suffix9(w[1])
lower(w[-1])|pos[0]
hashyphen(w[0])
`)
	if err != nil {
		t.Fatal(err)
	}
	chunkCase := pyCase{text, []string{"word", "tag"}, Markers{}, sentencesOf(chunks, 40)}

	pick := map[rune]bool{}
	for _, pred := range []func(rune) bool{unicode.IsLetter, unicode.IsUpper, unicode.IsLower, unicode.IsDigit, unicode.IsSpace,
		func(r rune) bool { return unicode.ToLower(r) != r }} {
		b := runeRanges(pred)
		for _, r := range b {
			for _, d := range []int{-1, 0, 1} {
				pick[rune(r+d)] = true
			}
		}
	}
	var single [][]string
	for r := rune(0); r <= unicode.MaxRune; r++ {
		if (pick[r] || r < 0x300 || r%499 == 0) && !(r >= 0xd800 && r <= 0xdfff) {
			single = append(single, []string{string(r)}, []string{"A" + string(r)})
		}
	}
	classes, err := ParseTemplateString("shape(w[0])\nisupper(w[0])\nistitle(w[0])\nhasdigit(w[0])\n")
	if err != nil {
		t.Fatal(err)
	}
	comparePython(t, chunkCase, pyCase{classes, []string{"word"}, Markers{}, sentencesOf(single, 50)})
}

// TestPythonTemplates compares the module with Go on small sentences for
// each boundary mode, column references by name, alias and index, optional
// templates over a missing column, boolean items in conjunctions, and the
// markers (a one-token sentence has all three).
func TestPythonTemplates(t *testing.T) {
	body := `w[0]
lower(w[-2])|w[0]
pos[-1]|pos[0]|pos[1]
%1[2]
lower(%0[-3])
?chunk[0]
istitle(w[0])|lower(w[1])
isupper(w[-1])|hasdigit(w[1])
hasdigit(w[0])|hashyphen(w[0])
shortshape(w[0])|suffix2(w[0])
prefix9(w[0])
`
	rows := [][]string{{"The", "DT"}, {"Straße", "NN"}, {"ǅemal-3", "NNP"}, {"İZMİR", "NNP"}, {"a|b\\c", "SYM"}, {"ΣΊΣΥΦΟΣ", "NNP"},
		{"naïve", "JJ"}, {"𝔸𝕓𝟙", "X"}, {"١٢٣", "CD"}, {"x:y", ":"}, {"__BOS__", "X"}, {"_B-1", "X"}}
	sents := []*Sentence{{Tokens: rows, Line: 1}, {Tokens: rows[:1], Line: 20}, {Tokens: rows[3:5], Line: 30}}
	mk := Markers{Bias: "@bias", Start: "@start", End: "@end"}
	var cases []pyCase
	for _, boundary := range []string{"offset", "side", "skip"} {
		set, err := ParseTemplateString("@boundary " + boundary + "\n" + body)
		if err != nil {
			t.Fatal(err)
		}
		for _, cols := range [][]string{{"word", "pos"}, {"form", "tag"}, {"token", "pos", "chunk"}} {
			cases = append(cases, pyCase{set, cols, mk, sents})
		}
		cases = append(cases, pyCase{set, []string{"word", "pos"}, Markers{}, sents})
	}
	word := make([][]string, len(rows))
	for i, r := range rows {
		word[i] = r[:1]
	}
	for _, name := range BuiltinNames() {
		set, err := Builtin(name)
		if err != nil {
			t.Fatal(err)
		}
		cases = append(cases, pyCase{set, []string{"word", "pos"}, mk, sents})
		if len(set.RequiredColumns()) == 1 {
			cases = append(cases, pyCase{set, []string{"word"}, mk, []*Sentence{{Tokens: word, Line: 1}}})
		}
	}
	comparePython(t, cases...)
}

// TestPythonNum compares num() with Go's strconv.ParseFloat after
// strings.TrimSpace: values bit for bit where Go reads a finite number,
// an error where it does not (syntax, range, NaN, infinities, Unicode
// digits, white space Python would trim but Go does not).
func TestPythonNum(t *testing.T) {
	texts := []string{"1", " 2.5 ", "\u00a03\u2003", "\u00855\u3000", "\x1c5", "1_000", "1__0", "_1", "1_", "1_0e1_0", "1e_5",
		"0x1p-2", "0x_1p0", "0X1P+3", "0x1.8", "0x1.8p1", "0x.8p1", "-0x1.fffffffffffff8p1023", "0x1p1024", "0x1p-1080", "0x1p-1074",
		"0x", "0x1p", "0x1p_1", "0x1p1_0", "0b101", "00x1p0",
		".5", "5.", "+.5e-3", "-.5E+3", "1e400", "-1e400", "1e-400", "4.9e-324", "2.4703282292062328e-324", "2.4703282292062327e-324",
		"1e99999", "0e99999", "1.7976931348623157e308", "1.7976931348623159e308",
		"0." + strings.Repeat("0", 300) + "1e310", "123456789012345678901234567890", "0.1", "-0", "+0", "inf", "-Inf", "+infinity", "nan", "NaN", "infinity1",
		"١٢", "1e", "e5", "--1", "+-1", "1.2.3", "", " ", "1 2", "١", "3.0\t", "\t-4e-2\n"}
	var rows [][]string
	for _, s := range texts {
		rows = append(rows, []string{"w", s})
	}
	set, err := ParseTemplateString("num(n[0])\nw[0]|num(n[0])\nisupper(w[0])|num(n[0])\n")
	if err != nil {
		t.Fatal(err)
	}
	// One sentence a text, so that a refused text fails its sentence only.
	sents := sentencesOf(rows, 1)
	if n := comparePython(t, pyCase{set, []string{"word", "n"}, Markers{Bias: "@b"}, sents}); n < 30 {
		t.Errorf("only %d of %d texts read as numbers", n, len(texts))
	}
}

// TestPythonInput compares @input: the input's attributes pass through,
// names and values, except those named like a marker; templates on
// columns mix with them.
func TestPythonInput(t *testing.T) {
	set, err := ParseTemplateString("@input\nw[0]\n")
	if err != nil {
		t.Fatal(err)
	}
	s := &Sentence{Tokens: [][]string{{"a"}, {"b"}}, Line: 1, Attrs: [][]Attr{
		{{"x:y", 1}, {"@bias", 1}, {"v", 0.25}, {"v", -3}},
		{{"@start@", 1}, {"é\\|", 1e-300}, {"@end", 2}},
	}}
	mk := Markers{Bias: "@bias", Start: "@start@", End: "@end"}
	cols := &Sentence{Attrs: s.Attrs, Line: 1}
	comparePython(t, pyCase{set, []string{"word"}, mk, []*Sentence{s}}, pyCase{&TemplateSet{}, nil, mk, []*Sentence{cols}})
}

// TestPythonFeaturesForm: sent2features gives name lists when every value
// is 1, and dicts (repeated names summed) when num() or @input may give
// other values.
func TestPythonFeaturesForm(t *testing.T) {
	mk := Markers{Bias: "@bias"}
	ones, _ := ParseTemplateString("w[0]\n")
	values, _ := ParseTemplateString("@input\nnum(w[0])\n")
	res, mods := runPython(t, []pyCase{
		{ones, []string{"word"}, mk, []*Sentence{{Tokens: [][]string{{"a"}, {"b"}}}}},
		{values, []string{"word"}, mk, []*Sentence{{Tokens: [][]string{{"2"}}, Attrs: [][]Attr{{{"x", 1}, {"x", 1}, {"y", 0.5}}}}}},
	})
	if got := string(res[0][0].Features); got != `[["w[0]=a", "@bias"], ["w[0]=b", "@bias"]]` {
		t.Errorf("sent2features, every value 1: %s", got)
	}
	if !strings.Contains(mods[0], "sent2features gives each token's attribute names") || !strings.Contains(mods[0], "'@bias'") {
		t.Errorf("module docstring:\n%s", mods[0])
	}
	if got := string(res[1][0].Features); got != `[{"x": 2.0, "y": 0.5, "num(w[0])": 2.0, "@bias": 1.0}]` {
		t.Errorf("sent2features with values: %s", got)
	}
}

// TestPythonDeterministic: the same inputs make the same module, which
// names the model and its templates.
func TestPythonDeterministic(t *testing.T) {
	set, _ := Builtin("ner")
	o := PythonOptions{Model: "m.arrow", Checksum: "sha256:00", Columns: []string{"word", "pos"}, Markers: Markers{"@bias", "@start", "@end"}, Module: "ner_features"}
	var a, b bytes.Buffer
	if err := WritePython(&a, set, o); err != nil {
		t.Fatal(err)
	}
	if err := WritePython(&b, set, o); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Fatal("two modules of the same model differ")
	}
	for _, want := range []string{"(sha256:00)", "    suffix4(w[0])\n", "import ner_features", "COLUMNS = ('word', 'pos')"} {
		if !strings.Contains(a.String(), want) {
			t.Errorf("module lacks %q", want)
		}
	}
	if bytes.ContainsFunc(a.Bytes(), func(r rune) bool { return r >= 0x80 }) {
		t.Error("module is not ASCII")
	}
}

// readCopies reads up to max sentences of the input in the format given, copied.
func readCopies(t *testing.T, src pipeline.Source, in InputOptions, max int) ([]*Sentence, []string) {
	t.Helper()
	r, closer, err := OpenReader(src, in)
	if err != nil {
		t.Fatal(err)
	}
	defer closer.Close()
	var sents []*Sentence
	for r.Scan() && len(sents) < max {
		s := r.Sentence()
		cp := &Sentence{Line: s.Line}
		for _, row := range s.Tokens {
			cp.Tokens = append(cp.Tokens, append([]string(nil), row...))
		}
		for _, row := range s.Attrs {
			cp.Attrs = append(cp.Attrs, append([]Attr(nil), row...))
		}
		sents = append(sents, cp)
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	return sents, r.Columns()
}

// TestPythonReaders compares the module with Go on the sentences of every
// reader, with the columns it gives and the templates featurize chooses
// for it (by its columns for the column formats, the format's default
// set otherwise; the input's own attributes for CRFsuite and OCR files):
// CoNLL (chunking; with -DOCSTART- lines; without labels), CoNLL-U and
// the Penn Treebank's .pos and .mrg (pos), CRFsuite attribute files and
// OCR letters (@input), plain text and token lines (ner), and a token
// table (chunking).
func TestPythonReaders(t *testing.T) {
	mk := Markers{Bias: "@bias", Start: "@start", End: "@end"}
	dir := t.TempDir()
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	readers := filepath.Join("testdata", "readers")
	ocr := ocrSample() + ocrLine(4, "d", false, 3, 1, 1, 5, 6, 7) + ocrLine(5, "e", true, 3, 2, 1, 8)
	cases := []struct {
		name, path string
		in         InputOptions
		template   string // "" : chosen from the columns
	}{
		{"conll", datatest.Carried(t, "cmd", "dualcrf", "demodata", "test.txt.gz"), InputOptions{}, ""},
		{"conll-docstart", filepath.Join(readers, "docstart2003.conll"), InputOptions{}, ""},
		{"conll-nolabels", filepath.Join(readers, "text.nolabel.conll"), InputOptions{LabelColumn: -1}, ""},
		{"conllu", datatest.Carried(t, "testdata", "corpora", "ud_english_ewt", "en_ewt-ud-dev.conllu.gz"), InputOptions{Format: "conllu"}, "pos"},
		{"conllu-xpos", filepath.Join(readers, "sample.conllu"), InputOptions{Format: "conllu", XPOS: true}, "pos"},
		{"ptb-pos", filepath.Join(readers, "sample.pos"), InputOptions{Format: "ptb-pos"}, "pos"},
		{"ptb-mrg", filepath.Join(readers, "sample.mrg"), InputOptions{Format: "ptb-mrg"}, "pos"},
		{"crfsuite", filepath.Join(readers, "sample.crfsuite"), InputOptions{Format: "crfsuite"}, "@input"},
		{"ocr", write("letter.data", []byte(ocr)), InputOptions{Format: "ocr"}, "@input"},
		{"plain", write("plain.txt", []byte("Grace flew to Lima, Peru.\nI don't know \u00e9t\u00e9 3.5%!\n")), InputOptions{Format: FormatPlain}, ""},
		{"tokens", write("tokens.txt", []byte("Grace\nflew\n\nİZMİR\n|\\\n")), InputOptions{Format: FormatTokens}, ""},
		{"table", write("t.parquet", tokenTable(t, arrowio.FormatParquet, []tok{{0, 0, "He", "PRP", "B-NP"}, {0, 1, "saw", "VBD", "B-VP"}, {1, 0, "Ça", "UH", "O"}})), InputOptions{}, ""},
	}
	var pcs []pyCase
	for _, c := range cases {
		sents, cols := readCopies(t, pipeline.Source{Path: c.path}, c.in, 400)
		var set *TemplateSet
		var err error
		switch c.template {
		case "":
			set, _, err = DefaultTemplates(cols)
		case "@input":
			set = &TemplateSet{}
		default:
			set, err = Builtin(c.template)
		}
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		t.Logf("%s: columns %q, %d templates, %d sentences", c.name, cols, set.Len(), len(sents))
		pcs = append(pcs, pyCase{set, cols, mk, sents})
	}
	comparePython(t, pcs...)
}
