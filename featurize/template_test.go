package featurize

import (
	"bufio"
	"compress/gzip"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/dualcrf/dualcrf/internal/datatest"
)

// templateTestReadConll2000 reads a gzipped CoNLL-2000 file (WORD POS CHUNK,
// blank line between sentences): columns "word", "pos"; label = chunk.
func templateTestReadConll2000(tb testing.TB, name string) []Sentence {
	tb.Helper()
	return templateTestReadConllFile(tb, datatest.Path(tb, "conll2000", name))
}

// templateTestReadConllFile reads a gzipped CoNLL-2000 file as
// templateTestReadConll2000 does.
func templateTestReadConllFile(tb testing.TB, path string) []Sentence {
	tb.Helper()
	f, err := os.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		tb.Fatal(err)
	}
	var out []Sentence
	cur := Sentence{}
	sc := bufio.NewScanner(zr)
	for line := 1; sc.Scan(); line++ {
		text := sc.Text()
		if strings.TrimSpace(text) == "" {
			if len(cur.Tokens) > 0 {
				out = append(out, cur)
			}
			cur = Sentence{}
			continue
		}
		fields := strings.Split(text, " ")
		if len(fields) != 3 {
			tb.Fatalf("%s:%d: %d fields", path, line, len(fields))
		}
		if cur.Line == 0 {
			cur.Line = line
		}
		cur.Tokens = append(cur.Tokens, fields[:2])
		cur.Labels = append(cur.Labels, fields[2])
	}
	if err := sc.Err(); err != nil {
		tb.Fatal(err)
	}
	if len(cur.Tokens) > 0 {
		out = append(out, cur)
	}
	return out
}

var tmplConllColumns = []string{"word", "pos"}

// tmplSentence builds a sentence from "word/pos" tokens.
func tmplSentence(tokens ...string) *Sentence {
	s := &Sentence{Line: 1}
	for _, tok := range tokens {
		s.Tokens = append(s.Tokens, strings.SplitN(tok, "/", 2))
	}
	return s
}

// tmplExtractNames extracts s with text compiled for cols and returns the
// attribute names "name" or "name:value" (when the value is not 1) per token.
func tmplExtractNames(t *testing.T, text string, cols []string, s *Sentence) [][]string {
	t.Helper()
	set, err := ParseTemplateString(text)
	if err != nil {
		t.Fatal(err)
	}
	x, err := set.Compile(cols)
	if err != nil {
		t.Fatal(err)
	}
	feats, err := x.Extract(s, nil)
	if err != nil {
		t.Fatal(err)
	}
	out := make([][]string, len(feats))
	for i, tok := range feats {
		out[i] = []string{}
		for _, f := range tok {
			name := f.Name
			if f.Value != 1 {
				name += ":" + strconv.FormatFloat(f.Value, 'g', -1, 64)
			}
			out[i] = append(out[i], name)
		}
	}
	return out
}

func TestParseTemplateErrors(t *testing.T) {
	cases := []struct {
		text string
		line int
		want string
	}{
		{"w[0]\nlowr(w[0])\n", 2, `unknown function "lowr"`},
		{"w[0]|pos[x]\n", 1, `bad offset "x"`},
		{"w[1.5]\n", 1, `bad offset "1.5"`},
		{"w[0\n", 1, "expected COLUMN[OFFSET]"},
		{"w[2000]\n", 1, "out of range"},
		{"lower(w[0]\n", 1, "missing ')'"},
		{"w[0]||pos[0]\n", 1, "empty item"},
		{"w/x[0]\n", 1, "bad column name"},
		{"%x[0]\n", 1, "bad column index"},
		{"#c\n\nnum(a[0])|num(b[0])\n", 3, "at most one"},
		{"w[0]\n\nw[+0]\n", 3, "duplicate template \"w[0]\" (first at line 1)"},
		{"@boundary skip\n@boundary side\n", 2, "given twice"},
		{"@boundary none\n", 1, "unknown boundary mode"},
		{"@include x\n", 1, "unknown directive"},
		{"@input\n@input\n", 2, "duplicate"},
		{"w[0]\n@builtin chunkin\n", 2, `unknown built-in template set "chunkin" (known: chunking, ner, pos)`},
		{"@builtin chunking\nlower(w[0])\n", 2, "duplicate"},
	}
	for _, c := range cases {
		_, err := ParseTemplateString(c.text)
		var se *SyntaxError
		if !errors.As(err, &se) {
			t.Errorf("%q: error %v, want a *SyntaxError", c.text, err)
			continue
		}
		if se.File != "<template>" || se.Line != c.line || !strings.Contains(se.Msg, c.want) {
			t.Errorf("%q: got %s:%d: %s; want line %d containing %q", c.text, se.File, se.Line, se.Msg, c.line, c.want)
		}
	}
}

func TestTemplateFileErrors(t *testing.T) {
	cases := []struct{ file, want string }{
		{"bad_function.tmpl", `testdata/templates/bad_function.tmpl:3: item "lowr(w[0])": unknown function "lowr"`},
		{"bad_offset.tmpl", `testdata/templates/bad_offset.tmpl:3: item "pos[x]": bad offset "x"`},
		{"unknown_builtin.tmpl", `testdata/templates/unknown_builtin.tmpl:2: unknown built-in template set "chunkin"`},
		{"unknown_column.tmpl", `testdata/templates/unknown_column.tmpl:4: template "lemma[-1]|w[0]": column "lemma" is not among the input's columns [word pos]`},
		{"missing.tmpl", "neither a built-in set (chunking, ner, pos) nor a readable file"},
	}
	for _, c := range cases {
		set, err := LoadTemplates(filepath.Join("testdata", "templates", c.file))
		if err == nil {
			_, err = set.Compile(tmplConllColumns)
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.file, err, c.want)
		}
	}
}

func TestBuiltinUnknown(t *testing.T) {
	_, err := Builtin("chunk")
	if err == nil || !strings.Contains(err.Error(), `"chunk" (known: chunking, ner, pos)`) {
		t.Fatalf("error %v", err)
	}
}

func TestTemplateRoundTrip(t *testing.T) {
	custom := "# everything\n@boundary skip\n@input\nw[0]|%1[-1]\nlower( w[ +1 ] )\nprefix2(w[0])|suffix9(w[0])\nshape(w[0])\n" +
		"shortshape(w[0])\nhasdigit(w[0])|isupper(w[0])\nhashyphen(w[0])|w[0]\nistitle(w[0])\n?num(score[0])|pos[0]\n"
	sets := map[string]*TemplateSet{}
	for _, name := range BuiltinNames() {
		s, err := Builtin(name)
		if err != nil {
			t.Fatal(err)
		}
		sets[name] = s
	}
	for name, text := range map[string]string{"custom": custom, "empty": ""} {
		s, err := ParseTemplateString(text)
		if err != nil {
			t.Fatal(err)
		}
		sets[name] = s
	}
	sentence := tmplSentence("He/PRP", "reckons/VBZ", "the/DT", "A-1|x/NN", "Übel/NN")
	for name, s := range sets {
		back, err := ParseTemplateString(s.String())
		if err != nil {
			t.Fatalf("%s: re-parse: %v\n%s", name, err, s)
		}
		if back.String() != s.String() || back.Len() != s.Len() || back.Boundary() != s.Boundary() {
			t.Errorf("%s: round trip differs:\n%s\nvs\n%s", name, s, back)
		}
		a := tmplMustExtract(t, s, tmplConllColumns, sentence)
		b := tmplMustExtract(t, back, tmplConllColumns, sentence)
		if !reflect.DeepEqual(a, b) {
			t.Errorf("%s: features differ after round trip", name)
		}
	}
	if got := sets["custom"].String(); !strings.Contains(got, "@boundary skip\n@input\nw[0]|%1[-1]\nlower(w[1])\n") ||
		!strings.Contains(got, "\n?num(score[0])|pos[0]\n") {
		t.Errorf("canonical text:\n%s", got)
	}
}

func tmplMustExtract(t *testing.T, s *TemplateSet, cols []string, sent *Sentence) [][]Feature {
	t.Helper()
	x, err := s.Compile(cols)
	if err != nil {
		t.Fatal(err)
	}
	f, err := x.Extract(sent, nil)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func TestChunkingFileEqualsBuiltin(t *testing.T) {
	file, err := LoadTemplates("testdata/templates/chunking.tmpl")
	if err != nil {
		t.Fatal(err)
	}
	builtin, err := LoadTemplates("chunking")
	if err != nil {
		t.Fatal(err)
	}
	if file.String() != builtin.String() || builtin.Len() != 19 || builtin.Boundary() != BoundarySide {
		t.Errorf("file:\n%s\nbuiltin (%d templates, %s):\n%s", file, builtin.Len(), builtin.Boundary(), builtin)
	}
	ext, err := LoadTemplates("testdata/templates/extended.tmpl")
	if err != nil {
		t.Fatal(err)
	}
	if ext.Len() != 21 || ext.Boundary() != BoundarySkip || ext.Name(0) != "lower(w[-2])" || ext.Name(20) != "istitle(w[0])" {
		t.Errorf("extended: %d templates, %s:\n%s", ext.Len(), ext.Boundary(), ext)
	}
}

func TestBoundarySymbols(t *testing.T) {
	text := "w[-2]\nw[2]\nw[-1]|w[1]\nlower(w[-1])\nistitle(w[-1])\n"
	s := tmplSentence("He/PRP", "Went/VBD")
	want := map[Boundary][][]string{
		BoundaryOffset: {
			{"w[-2]=_B-2", "w[2]=_E+1", "w[-1]|w[1]=_B-1|Went", "lower(w[-1])=_B-1"},
			{"w[-2]=_B-1", "w[2]=_E+2", "w[-1]|w[1]=He|_E+1", "lower(w[-1])=he", "istitle(w[-1])"},
		},
		BoundarySide: {
			{"w[-2]=__BOS__", "w[2]=__EOS__", "w[-1]|w[1]=__BOS__|Went", "lower(w[-1])=__BOS__"},
			{"w[-2]=__BOS__", "w[2]=__EOS__", "w[-1]|w[1]=He|__EOS__", "lower(w[-1])=he", "istitle(w[-1])"},
		},
		BoundarySkip: {{}, {"lower(w[-1])=he", "istitle(w[-1])"}},
	}
	for mode, w := range want {
		got := tmplExtractNames(t, "@boundary "+mode.String()+"\n"+text, tmplConllColumns, s)
		if !reflect.DeepEqual(got, w) {
			t.Errorf("%s: got %q, want %q", mode, got, w)
		}
	}
}

func TestTemplateFunctions(t *testing.T) {
	text := "lower(w[0])\nprefix2(w[0])\nsuffix3(w[0])\nprefix9(w[0])\nshape(w[0])\nshortshape(w[0])\n" +
		"hasdigit(w[0])\nhashyphen(w[0])\nisupper(w[0])\nistitle(w[0])\n%1[0]|w[0]\n"
	s := tmplSentence("McCain-22/NNP", "ÉTÉ/NN", "a|b\\c/SYM", "Zoë/X|Y")
	want := [][]string{
		{"lower(w[0])=mccain-22", "prefix2(w[0])=Mc", "suffix3(w[0])=-22", "prefix9(w[0])=McCain-22",
			"shape(w[0])=XxXxxx-dd", "shortshape(w[0])=XxXx-d", "hasdigit(w[0])", "hashyphen(w[0])",
			"%1[0]|w[0]=NNP|McCain-22"}, // not a title: 'C' is upper-case
		{"lower(w[0])=été", "prefix2(w[0])=ÉT", "suffix3(w[0])=ÉTÉ", "prefix9(w[0])=ÉTÉ",
			"shape(w[0])=XXX", "shortshape(w[0])=X", "isupper(w[0])", "%1[0]|w[0]=NN|ÉTÉ"},
		{`lower(w[0])=a\|b\\c`, `prefix2(w[0])=a\|`, `suffix3(w[0])=b\\c`, `prefix9(w[0])=a\|b\\c`,
			`shape(w[0])=x\|x\\x`, `shortshape(w[0])=x\|x\\x`, `%1[0]|w[0]=SYM|a\|b\\c`},
		{"lower(w[0])=zoë", "prefix2(w[0])=Zo", "suffix3(w[0])=Zoë", "prefix9(w[0])=Zoë",
			"shape(w[0])=Xxx", "shortshape(w[0])=Xx", "istitle(w[0])", `%1[0]|w[0]=X\|Y|Zoë`},
	}
	got := tmplExtractNames(t, text, tmplConllColumns, s)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got\n%q\nwant\n%q", got, want)
	}
}

func TestRealValuedAttributes(t *testing.T) {
	cols := []string{"word", "score"}
	s := &Sentence{Line: 10, Tokens: [][]string{{"a", "0.5"}, {"b", "-2e3"}, {"c", "1"}}}
	got := tmplExtractNames(t, "num(score[0])\nnum(score[-1])|w[0]\n", cols, s)
	want := [][]string{
		{"num(score[0]):0.5"},
		{"num(score[0]):-2000", "num(score[-1])|w[0]=b:0.5"},
		{"num(score[0])", "num(score[-1])|w[0]=c:-2000"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
	for _, bad := range []string{"x1", "NaN", "1e999", ""} {
		set, _ := ParseTemplateString("num(score[0])\n")
		x, _ := set.Compile(cols)
		x.Source = "scores.txt"
		s.Tokens[1][1] = bad
		_, err := x.Extract(s, nil)
		want := `scores.txt:11: num(score[0]): "` + bad + `" is not a finite number`
		if err == nil || err.Error() != want {
			t.Errorf("%q: error %v, want %s", bad, err, want)
		}
	}
}

func TestInputAttributes(t *testing.T) {
	s := &Sentence{Attrs: [][]Attr{{{"a", 1}, {"b", 0.25}}, {}, {{"c", 2}}}}
	for _, text := range []string{"", "@input\n"} {
		got := tmplExtractNames(t, text, nil, s)
		want := [][]string{{"a", "b:0.25"}, {}, {"c:2"}}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%q: got %q, want %q", text, got, want)
		}
	}
	// Column templates cannot apply to attribute-only input.
	set, _ := ParseTemplateString("@input\nw[0]\n")
	if _, err := set.Compile(nil); err == nil || !strings.Contains(err.Error(), `<template>:2: template "w[0]": column "w"`) {
		t.Errorf("compile error %v", err)
	}
	x, _ := set.Compile([]string{"word"})
	if _, err := x.Extract(s, nil); err == nil || !strings.Contains(err.Error(), "token 1 has no column 0") {
		t.Errorf("extract error %v", err)
	}
}

func TestOptionalTemplatesAndAliases(t *testing.T) {
	ner, err := Builtin("ner")
	if err != nil {
		t.Fatal(err)
	}
	s := tmplSentence("Jan/N", "Peeters/N")
	withPOS := tmplMustExtract(t, ner, []string{"word", "pos"}, s)
	wordOnly := tmplMustExtract(t, ner, []string{"word"}, &Sentence{Tokens: [][]string{{"Jan"}, {"Peeters"}}})
	if len(withPOS[0]) != 20 || len(wordOnly[0]) != 15 {
		t.Errorf("ner: %d attributes with POS, %d without; want 20 and 15", len(withPOS[0]), len(wordOnly[0]))
	}
	if last := wordOnly[0][len(wordOnly[0])-1]; last.Template != 14 || last.Name != "lower(w[2])=_E+1" {
		t.Errorf("last word-only attribute %+v", last)
	}
	if f := withPOS[1][19]; f.Template != 19 || f.Name != "pos[2]=_E+2" {
		t.Errorf("last attribute with POS %+v", f)
	}
	// Aliases: w reads "form", pos reads "tag" when there is no "pos".
	got := tmplExtractNames(t, "w[0]|pos[0]\n", []string{"id", "form", "tag"}, &Sentence{Tokens: [][]string{{"1", "Hi", "UH"}}})
	if want := [][]string{{"w[0]|pos[0]=Hi|UH"}}; !reflect.DeepEqual(got, want) {
		t.Errorf("aliases: got %q", got)
	}
	// pos does not stand for CoNLL-U's gold xpos column: the optional pos
	// templates of the built-in sets yield nothing there.
	set, err := ParseTemplateString("w[0]|pos[0]\n")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := set.Compile([]string{"word", "lemma", "xpos", "feats"}); err == nil {
		t.Error("pos[0] compiled against a CoNLL-U input: it would read the gold xpos tags")
	}
	pos, _ := Builtin("pos")
	if x, err := pos.Compile([]string{"form", "lemma"}); err != nil || x.numTemplates() != 22 {
		t.Errorf("pos builtin on form,lemma: %v", err)
	}
}

// TestExtractReusesMemory checks that a reused dst costs one allocation per
// sentence (the shared names string).
func TestExtractReusesMemory(t *testing.T) {
	set, _ := Builtin("chunking")
	x, _ := set.Compile(tmplConllColumns)
	s := tmplSentence("He/PRP", "reckons/VBZ", "the/DT", "current/JJ", "account/NN", "deficit/NN")
	dst, err := x.Extract(s, nil)
	if err != nil {
		t.Fatal(err)
	}
	allocs := testing.AllocsPerRun(50, func() { dst, _ = x.Extract(s, dst) })
	if allocs > 1 {
		t.Errorf("%.1f allocations per Extract, want ≤ 1", allocs)
	}
	if len(dst) != 6 || len(dst[0]) != 19 || dst[0][5].Name != "lower(w[-1])|lower(w[0])=__BOS__|he" {
		t.Errorf("features %v", dst[0])
	}
}

// tmplConllCount featurizes CoNLL-2000 train with set and returns the
// builder, the number of tokens and the distinct labels.
func tmplConllCount(t testing.TB, set *TemplateSet, sents []Sentence) (*VocabBuilder, int, map[string]bool) {
	x, err := set.Compile(tmplConllColumns)
	if err != nil {
		t.Fatal(err)
	}
	b := NewVocabBuilder()
	labels := map[string]bool{}
	var dst [][]Feature
	tokens := 0
	for i := range sents {
		if dst, err = x.Extract(&sents[i], dst); err != nil {
			t.Fatal(err)
		}
		b.AddSentence(dst)
		tokens += len(dst)
		for _, l := range sents[i].Labels {
			labels[l] = true
		}
	}
	return b, tokens, labels
}

// TestChunkingAttributeCount checks the paper's figures on CoNLL-2000 train:
// 74,658 attributes seen at least 3 times, 22 labels, d = 1,643,026.
// The alternative conventions' counts come from an independent Python
// computation.
func TestChunkingAttributeCount(t *testing.T) {
	sents := templateTestReadConll2000(t, "train.txt.gz")
	if len(sents) != 8936 {
		t.Fatalf("%d sentences, want 8,936", len(sents))
	}
	chunking, err := Builtin("chunking")
	if err != nil {
		t.Fatal(err)
	}
	b, tokens, labels := tmplConllCount(t, chunking, sents)
	v := b.Build(3)
	if tokens != 211727 || v.Len() != 74658 || len(labels) != 22 {
		t.Fatalf("%d tokens, %d attributes, %d labels; want 211,727, 74,658, 22", tokens, v.Len(), len(labels))
	}
	k := len(labels)
	if d := v.Len()*k + k*k + 3*k; d != 1643026 {
		t.Errorf("d = %d, want 1,643,026", d)
	}
	// Every token yields one attribute per template.
	all := b.Build(0)
	var total int64
	for _, name := range all.Names() {
		total += b.Count(name)
	}
	if total != 19*211727 || all.Len() != b.Len() || b.Len() != 324343 {
		t.Errorf("%d occurrences of %d distinct attributes, want 19 × 211,727 of 324,343 (Python)", total, b.Len())
	}
	alternatives := []struct {
		name string
		set  *TemplateSet
		want int
	}{
		{"per-offset boundary symbols", chunking.withBoundary(BoundaryOffset), 74662},
		{"skip at the boundaries", chunking.withBoundary(BoundarySkip), 73619},
	}
	bigrams := strings.NewReplacer("lower(w[-1])|lower(w[0])", "w[-1]|w[0]", "lower(w[0])|lower(w[1])", "w[0]|w[1]")
	cased, err := ParseTemplateString(bigrams.Replace(chunking.String()))
	if err != nil {
		t.Fatal(err)
	}
	alternatives = append(alternatives, struct {
		name string
		set  *TemplateSet
		want int
	}{"bigrams not lower-cased", cased, 74436})
	for _, a := range alternatives {
		b, _, _ := tmplConllCount(t, a.set, sents)
		if got := b.Build(3).Len(); got != a.want {
			t.Errorf("%s: %d attributes, want %d", a.name, got, a.want)
		}
	}
}

// TestTestSetWithTrainVocabulary featurizes CoNLL-2000 test with the
// training vocabulary: exactly the attributes seen ≥ 3 times in train are
// kept, counted here with a plain map. It runs on the slice the repository
// carries (300 test sentences, 7,222 tokens) and on the full corpus.
func TestTestSetWithTrainVocabulary(t *testing.T) {
	t.Run("slice", func(t *testing.T) {
		testSetWithTrainVocabulary(t, templateTestReadConllFile(t, conll2000Slice(t, "train.txt.gz")),
			templateTestReadConllFile(t, conll2000Slice(t, "test.txt.gz")), 7222)
	})
	t.Run("full", func(t *testing.T) {
		testSetWithTrainVocabulary(t, templateTestReadConll2000(t, "train.txt.gz"), templateTestReadConll2000(t, "test.txt.gz"), 47377)
	})
}

func testSetWithTrainVocabulary(t *testing.T, train, test []Sentence, testTokens int) {
	set, _ := Builtin("chunking")
	b, _, _ := tmplConllCount(t, set, train)
	vocab := b.Build(3)
	x, _ := set.Compile(tmplConllColumns)
	trainCounts := map[string]int{}
	var dst [][]Feature
	for i := range train {
		dst, _ = x.Extract(&train[i], dst)
		for _, tok := range dst {
			for _, f := range tok {
				trainCounts[f.Name]++
			}
		}
	}
	var ids []int32
	var vals []float64
	kept, dropped := 0, 0
	for i := range test {
		var err error
		if dst, err = x.Extract(&test[i], dst); err != nil {
			t.Fatal(err)
		}
		for _, tok := range dst {
			var n int
			ids, vals, n = vocab.AppendIDs(ids[:0], vals[:0], tok)
			dropped += n
			kept += len(ids)
			j := 0
			for _, f := range tok {
				if trainCounts[f.Name] < 3 {
					continue
				}
				if j >= len(ids) || vocab.Name(ids[j]) != f.Name || vals[j] != 1 {
					t.Fatalf("sentence %d: attribute %q not kept in order", i, f.Name)
				}
				j++
			}
			if j != len(ids) {
				t.Fatalf("sentence %d: %d ids kept, want %d", i, len(ids), j)
			}
		}
	}
	if kept+dropped != testTokens*19 || dropped == 0 {
		t.Errorf("kept %d + dropped %d, want 19 × %d tokens in all", kept, dropped, testTokens)
	}
	t.Logf("test set: %d attribute occurrences kept, %d dropped as unknown", kept, dropped)
}

// BenchmarkExtractConll2000 measures chunking-template extraction over
// CoNLL-2000 train, in tokens per second.
func BenchmarkExtractConll2000(b *testing.B) {
	sents := templateTestReadConll2000(b, "train.txt.gz")
	set, _ := Builtin("chunking")
	x, err := set.Compile(tmplConllColumns)
	if err != nil {
		b.Fatal(err)
	}
	var dst [][]Feature
	tokens := 0
	for b.Loop() {
		for i := range sents {
			dst, _ = x.Extract(&sents[i], dst)
			tokens += len(dst)
		}
	}
	b.ReportMetric(float64(tokens)/b.Elapsed().Seconds(), "tokens/s")
}

// FuzzParseTemplates checks that parsing never panics and that every set
// parsed round-trips through String and extracts without panicking.
func FuzzParseTemplates(f *testing.F) {
	for _, name := range BuiltinNames() {
		f.Add(tmplBuiltins[name])
	}
	f.Add("@boundary skip\n@input\n?num(%1[-1])|w[+2]\n")
	f.Add("@builtin ner\nshortshape(pos[0])|hasdigit(w[-1])\n")
	f.Fuzz(func(t *testing.T, text string) {
		set, err := ParseTemplateString(text)
		if err != nil {
			return
		}
		back, err := ParseTemplateString(set.String())
		if err != nil || back.String() != set.String() {
			t.Fatalf("round trip of %q: %v\n%s", text, err, set)
		}
		x, err := set.Compile([]string{"word", "pos", "score"})
		if err != nil {
			return
		}
		s := &Sentence{Line: 1, Tokens: [][]string{{"A|b", "NN", "1"}, {"é-2", "\\", "x"}}, Attrs: [][]Attr{{{Name: "a", Value: 2}}}}
		if _, err := x.Extract(s, nil); err != nil && !strings.Contains(err.Error(), "not a finite number") {
			t.Fatalf("extract: %v", err)
		}
	})
}
