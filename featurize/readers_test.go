package featurize

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"

	"github.com/dualcrf/dualcrf/internal/datatest"
	"github.com/dualcrf/dualcrf/pipeline"
)

// readersOpen opens a file with Open and closes it at the end of the test.
func readersOpen(t testing.TB, path string) (io.Reader, string) {
	t.Helper()
	rc, name, err := pipeline.OpenInput(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rc.Close() })
	return rc, name
}

// readersCheckSentence verifies the shape of a sentence: every token row
// has one cell per column, there is one label (if any) and one attribute
// row (if any) per token, and the sentence is not empty.
func readersCheckSentence(s *Sentence, columns []string) error {
	n := s.Len()
	if n == 0 {
		return fmt.Errorf("line %d: empty sentence", s.Line)
	}
	if s.Line <= 0 {
		return fmt.Errorf("sentence has line %d", s.Line)
	}
	if s.Tokens != nil {
		if len(s.Tokens) != n {
			return fmt.Errorf("line %d: %d token rows for %d tokens", s.Line, len(s.Tokens), n)
		}
		for t, row := range s.Tokens {
			if len(row) != len(columns) {
				return fmt.Errorf("line %d: token %d has %d cells for columns %v", s.Line, t, len(row), columns)
			}
		}
	}
	if s.Labels != nil && len(s.Labels) != n {
		return fmt.Errorf("line %d: %d labels for %d tokens", s.Line, len(s.Labels), n)
	}
	if s.Attrs != nil && len(s.Attrs) != n {
		return fmt.Errorf("line %d: %d attribute rows for %d tokens", s.Line, len(s.Attrs), n)
	}
	if s.Tokens == nil && s.Attrs == nil {
		return fmt.Errorf("line %d: neither tokens nor attributes", s.Line)
	}
	return nil
}

// readersStats are counts over a whole corpus.
type readersStats struct {
	sentences, tokens int
	labels            map[string]int
	firstLine         int
}

// readersCount reads r to the end, checking every sentence.
func readersCount(t testing.TB, r Reader) readersStats {
	t.Helper()
	st := readersStats{labels: map[string]int{}}
	for r.Scan() {
		s := r.Sentence()
		if err := readersCheckSentence(s, r.Columns()); err != nil {
			t.Fatal(err)
		}
		if st.sentences == 0 {
			st.firstLine = s.Line
		}
		st.sentences++
		st.tokens += s.Len()
		for _, l := range s.Labels {
			st.labels[l]++
		}
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	return st
}

// readersDump renders every sentence of r as text, for golden files.
func readersDump(r Reader) (string, error) {
	var b strings.Builder
	b.WriteString("columns:")
	for r.Scan() {
		if b.Len() == len("columns:") {
			for _, c := range r.Columns() {
				b.WriteString(" " + c)
			}
			b.WriteString("\n")
		}
		s := r.Sentence()
		if err := readersCheckSentence(s, r.Columns()); err != nil {
			return b.String(), err
		}
		fmt.Fprintf(&b, "sentence line %d\n", s.Line)
		for t := 0; t < s.Len(); t++ {
			if s.Attrs != nil {
				b.WriteString(s.Labels[t] + "\t=>")
				for _, a := range s.Attrs[t] {
					b.WriteString(" " + a.Name + ":" + strconv.FormatFloat(a.Value, 'g', -1, 64))
				}
				b.WriteString("\n")
				continue
			}
			b.WriteString(strings.Join(s.Tokens[t], "\t"))
			if s.Labels != nil {
				b.WriteString("\t=> " + s.Labels[t])
			}
			b.WriteString("\n")
		}
	}
	return b.String(), r.Err()
}

// readersByName picks the reader for a test file by its extension:
// .conll (with ".nolabel.conll" read unlabelled), .conllu, .pos, .mrg,
// .crfsuite.
func readersByName(r io.Reader, name string) (Reader, error) {
	switch filepath.Ext(name) {
	case ".conll":
		opts := DefaultConllOptions()
		if strings.HasSuffix(name, ".nolabel.conll") {
			opts.LabelColumn = LabelNone
		}
		return NewConllReader(r, name, opts), nil
	case ".conllu":
		return newConlluReader(r, name, ConlluOptions{}), nil
	case ".pos":
		return newTreebankReader(r, name, TreebankPOS), nil
	case ".mrg":
		return newTreebankReader(r, name, TreebankMRG), nil
	case ".crfsuite":
		return NewCRFsuiteReader(r, name), nil
	}
	return nil, fmt.Errorf("no reader for %s", name)
}

// TestReadersGolden reads each testdata/readers input and compares the
// dump with its hand-written .golden file; on a mismatch it writes the
// dump to a .got file next to it.
func TestReadersGolden(t *testing.T) {
	inputs, err := filepath.Glob(filepath.Join("testdata", "readers", "*"))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, in := range inputs {
		if ext := filepath.Ext(in); ext == ".golden" || ext == ".got" {
			continue
		}
		n++
		t.Run(filepath.Base(in), func(t *testing.T) {
			f, err := os.Open(in)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			r, err := readersByName(f, in)
			if err != nil {
				t.Fatal(err)
			}
			got, err := readersDump(r)
			if err != nil {
				t.Fatalf("%v\n%s", err, got)
			}
			want, err := os.ReadFile(in + ".golden")
			if err != nil {
				t.Fatal(err)
			}
			if got != string(want) {
				os.WriteFile(in+".got", []byte(got), 0o644)
				t.Errorf("dump differs from %s.golden (written to %s.got):\n%s", in, in, got)
			} else {
				os.Remove(in + ".got")
			}
		})
	}
	if n < 7 {
		t.Fatalf("only %d golden inputs found", n)
	}
}

func readersLabelNames(m map[string]int) []string {
	names := make([]string, 0, len(m))
	for l := range m {
		names = append(names, l)
	}
	sort.Strings(names)
	return names
}

// TestConll2000 counts the corpus as the data's documentation does (the
// full files' figures are published with the data, see data/README.md),
// and the slice the repository carries (its first 1,000 and 300
// sentences, counted with awk).
func TestConll2000(t *testing.T) {
	for _, tc := range []struct {
		name, file        string
		carried           bool
		sentences, tokens int
		labels            int
	}{
		{"slice/train", "train.txt.gz", true, 1000, 23719, 20},
		{"slice/test", "test.txt.gz", true, 300, 7222, 16},
		{"train", "train.txt.gz", false, 8936, 211727, 22},
		{"test", "test.txt.gz", false, 2012, 47377, 19},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := conll2000Slice(t, tc.file)
			if !tc.carried {
				path = datatest.Path(t, "conll2000", tc.file)
			}
			rc, name := readersOpen(t, path)
			r := NewConllReader(rc, name, DefaultConllOptions())
			st := readersCount(t, r)
			if st.sentences != tc.sentences || st.tokens != tc.tokens || len(st.labels) != tc.labels {
				t.Errorf("%s: %d sentences, %d tokens, %d labels; want %d, %d, %d",
					tc.file, st.sentences, st.tokens, len(st.labels), tc.sentences, tc.tokens, tc.labels)
			}
			if got := strings.Join(r.Columns(), ","); got != "word,pos" {
				t.Errorf("columns %s, want word,pos", got)
			}
			if tc.name == "test" && st.labels["I-LST"] != 2 {
				t.Errorf("I-LST occurs %d times in test, want 2", st.labels["I-LST"])
			}
		})
	}
}

// conll2000Slice returns the path of the CoNLL-2000 slice the repository
// carries (the demo's: the first 1,000 training and 300 test sentences).
func conll2000Slice(t testing.TB, file string) string {
	return datatest.Carried(t, "cmd", "dualcrf", "demodata", file)
}

func TestConll2002(t *testing.T) {
	for _, tc := range []struct {
		file                       string
		sentences, tokens, withDoc int
	}{
		{"ned.train.gz", 15806, 202644, 202931},
		{"ned.testa.gz", 2895, 37687, 37761},
		{"ned.testb.gz", 5195, 68875, 68994},
	} {
		t.Run(tc.file, func(t *testing.T) {
			path := datatest.Path(t, "conll2002", tc.file)
			rc, name := readersOpen(t, path)
			st := readersCount(t, NewConllReader(rc, name, DefaultConllOptions()))
			if st.sentences != tc.sentences || st.tokens != tc.tokens || len(st.labels) != 9 {
				t.Errorf("%d sentences, %d tokens, %d labels %v; want %d, %d, 9",
					st.sentences, st.tokens, len(st.labels), readersLabelNames(st.labels), tc.sentences, tc.tokens)
			}
			rc, name = readersOpen(t, path)
			opts := DefaultConllOptions()
			opts.KeepDocstart = true
			st = readersCount(t, NewConllReader(rc, name, opts))
			if st.sentences != tc.sentences || st.tokens != tc.withDoc {
				t.Errorf("keeping -DOCSTART-: %d sentences, %d tokens; want %d, %d",
					st.sentences, st.tokens, tc.sentences, tc.withDoc)
			}
		})
	}
}

// TestConlluEWT counts UD English EWT r2.16 against its published figures;
// the development file is carried by the repository (testdata/corpora).
func TestConlluEWT(t *testing.T) {
	for _, tc := range []struct {
		file             string
		sentences, words int
	}{
		{"en_ewt-ud-train.conllu.gz", 12544, 204577},
		{"en_ewt-ud-dev.conllu.gz", 2001, 25147},
		{"en_ewt-ud-test.conllu.gz", 2077, 25094},
	} {
		t.Run(tc.file, func(t *testing.T) {
			var path string
			if tc.file == "en_ewt-ud-dev.conllu.gz" { // carried by the repository
				path = datatest.Carried(t, "testdata", "corpora", "ud_english_ewt", tc.file)
			} else {
				path = datatest.Path(t, "ud_english_ewt", tc.file)
			}
			rc, name := readersOpen(t, path)
			st := readersCount(t, newConlluReader(rc, name, ConlluOptions{}))
			if st.sentences != tc.sentences || st.tokens != tc.words || len(st.labels) != 17 {
				t.Errorf("%d sentences, %d words, %d UPOS; want %d, %d, 17",
					st.sentences, st.tokens, len(st.labels), tc.sentences, tc.words)
			}
			if st.labels[""] != 0 {
				t.Errorf("%d words without UPOS", st.labels[""])
			}
			if tc.file != "en_ewt-ud-train.conllu.gz" {
				return
			}
			rc, name = readersOpen(t, path)
			st = readersCount(t, newConlluReader(rc, name, ConlluOptions{XPOSLabel: true}))
			if len(st.labels) != 49 {
				t.Errorf("%d XPOS labels, want 49: %v", len(st.labels), readersLabelNames(st.labels))
			}
		})
	}
}

func TestTreebankZipMRG(t *testing.T) {
	z, err := OpenTreebankZip(datatest.Path(t, "treebank", "treebank.zip"), TreebankMRG)
	if err != nil {
		t.Fatal(err)
	}
	defer z.Close()
	st := readersCount(t, z)
	if st.sentences != 3914 || st.tokens != 94084 || len(st.labels) != 45 {
		t.Errorf("%d sentences, %d tokens, %d tags; want 3914, 94084, 45", st.sentences, st.tokens, len(st.labels))
	}
	if st.labels[treebankNone] != 0 {
		t.Errorf("-NONE- kept %d times", st.labels[treebankNone])
	}
	if err := z.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestTreebankZipPOS(t *testing.T) {
	z, err := OpenTreebankZip(datatest.Path(t, "treebank", "treebank.zip"), TreebankPOS)
	if err != nil {
		t.Fatal(err)
	}
	defer z.Close()
	st := readersCount(t, z)
	plain := 0
	for l := range st.labels {
		if !strings.Contains(l, "|") {
			plain++
		}
	}
	t.Logf("tagged/*.pos: %d sentences, %d tokens, %d tags (%d without '|')", st.sentences, st.tokens, len(st.labels), plain)
	// 94,200 items per SOURCES.md. 3,950 sentences was computed
	// independently by a Python prototype of the boundary rule documented on
	// TreebankReader (the .mrg files have 3,914 trees).
	if st.tokens != 94200 || st.sentences != 3950 {
		t.Errorf("%d sentences, %d tokens; want 3950, 94200", st.sentences, st.tokens)
	}
	// The .pos files use "(" ")" where the trees have -LRB- -RRB-, and a
	// few ambiguous tags A|B; otherwise the tag set is that of the trees.
	for _, tag := range []string{"-LRB-", "-RRB-", treebankNone} {
		if st.labels[tag] != 0 {
			t.Errorf("tag %s occurs in .pos", tag)
		}
	}
}

// TestTreebankPOSAgreesWithMRG compares the first file of both formats,
// whose sentences coincide.
func TestTreebankPOSAgreesWithMRG(t *testing.T) {
	zip := datatest.Path(t, "treebank", "treebank.zip")
	var dumps [2]string
	for i, format := range []TreebankFormat{TreebankMRG, TreebankPOS} {
		z, err := OpenTreebankZip(zip, format)
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		for z.Scan() && strings.Contains(z.Member(), "wsj_0001.") {
			s := z.Sentence()
			for t := range s.Tokens {
				fmt.Fprintf(&b, "%s/%s ", s.Tokens[t][0], s.Labels[t])
			}
			b.WriteString("\n")
		}
		if err := z.Err(); err != nil {
			t.Fatal(err)
		}
		z.Close()
		dumps[i] = b.String()
	}
	if dumps[0] != dumps[1] || strings.Count(dumps[0], "\n") != 2 {
		t.Errorf("wsj_0001 differs:\nmrg:\n%spos:\n%s", dumps[0], dumps[1])
	}
}

// TestCRFsuiteChunking generates the attribute file of CRFsuite's chunking
// example from CoNLL-2000 train and reads it back. The figures are those
// crfsuite learn reports for that file.
func TestCRFsuiteChunking(t *testing.T) {
	rc, name := readersOpen(t, datatest.Path(t, "conll2000", "train.txt.gz"))
	pr, pw := io.Pipe()
	go func() {
		pw.CloseWithError(WriteCRFsuiteChunking(pw, NewConllReader(rc, name, DefaultConllOptions()), name))
	}()
	defer pr.Close()
	r := NewCRFsuiteReader(pr, "chunking.crfsuite")
	attrs := map[string]struct{}{}
	labels := map[string]struct{}{}
	items, seqs := 0, 0
	for r.Scan() {
		s := r.Sentence()
		if err := readersCheckSentence(s, nil); err != nil {
			t.Fatal(err)
		}
		if s.Tokens != nil {
			t.Fatal("CRFsuite reader filled Tokens")
		}
		seqs++
		items += s.Len()
		for i, row := range s.Attrs {
			labels[s.Labels[i]] = struct{}{}
			for _, a := range row {
				if a.Value != 1 {
					t.Fatalf("line %d: %s has value %g", s.Line, a.Name, a.Value)
				}
				attrs[a.Name] = struct{}{}
			}
		}
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	if len(attrs) != 335674 || len(labels) != 22 || items != 211727 || seqs != 8936 {
		t.Errorf("%d attributes, %d labels, %d items, %d sequences; want 335674, 22, 211727, 8936",
			len(attrs), len(labels), items, seqs)
	}
	for _, a := range []string{"w[-1]|w[0]=He|reckons", "pos[0]=__COLON__", `w[0]=1\/2`, "__BOS__", "__EOS__",
		"pos[-2]|pos[-1]|pos[0]=NN|IN|DT"} {
		if _, ok := attrs[a]; !ok {
			t.Errorf("attribute %q not read", a)
		}
	}
}

func TestCRFsuiteEscape(t *testing.T) {
	for _, tc := range []struct{ raw, escaped string }{
		{"plain", "plain"},
		{"a:b", `a\:b`},
		{`a\b`, `a\\b`},
		{`\:`, `\\\:`},
		{"", ""},
	} {
		if got := crfsuiteEscape(tc.raw); got != tc.escaped {
			t.Errorf("crfsuiteEscape(%q) = %q, want %q", tc.raw, got, tc.escaped)
		}
		if got := CRFsuiteUnescape(tc.escaped); got != tc.raw {
			t.Errorf("CRFsuiteUnescape(%q) = %q, want %q", tc.escaped, got, tc.raw)
		}
	}
	if got := CRFsuiteUnescape(`a\b\`); got != `a\b\` {
		t.Errorf("lone backslashes: got %q", got)
	}
	// An escaped colon is part of the name, not a value separator.
	r := NewCRFsuiteReader(strings.NewReader("L\tw=a\\:2\tv=b\\\\:3\n"), "x")
	if !r.Scan() {
		t.Fatal(r.Err())
	}
	got := r.Sentence().Attrs[0]
	want := []Attr{{"w=a:2", 1}, {`v=b\`, 3}}
	if len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("got %v, want %v", got, want)
	}
}

// readersKind names a reader constructor for table-driven tests.
type readersKind string

func (k readersKind) reader(r io.Reader, name string) Reader {
	switch k {
	case "conll":
		return NewConllReader(r, name, DefaultConllOptions())
	case "conllu":
		return newConlluReader(r, name, ConlluOptions{})
	case "pos":
		return newTreebankReader(r, name, TreebankPOS)
	case "mrg":
		return newTreebankReader(r, name, TreebankMRG)
	case "crfsuite":
		return NewCRFsuiteReader(r, name)
	}
	panic("unknown reader kind " + k)
}

func readersReadAll(r Reader) (int, error) {
	n := 0
	for r.Scan() {
		n++
	}
	return n, r.Err()
}

func TestReadersBadInput(t *testing.T) {
	for _, tc := range []struct {
		kind  readersKind
		input string
		want  string // the whole error text
	}{
		{"conll", "a B C\nb C\n", "bad.txt:2: expected 3 columns, found 2"},
		{"conll", "a B C\n\nx Y Z\ny Z W V\n", "bad.txt:4: expected 3 columns, found 4"},
		// A comment first line is the line at fault, not the token line after it.
		{"conll", "# comment\na B C\n", `bad.txt:1: "# comment" looks like a comment, but CoNLL files have none: it was read as a token line of 2 columns, and the next token line (line 2) has 3; remove it`},
		{"conll", "# a comment line\n\na B C\n", `bad.txt:1: "# a comment line" looks like a comment, but CoNLL files have none: it was read as a token line of 4 columns, and the next token line (line 3) has 3; remove it`},
		// A pound sign is a token (CoNLL-2000 has "# # B-NP"): a later line is at fault.
		{"conll", "# # B-NP\na B C\nb C\n", "bad.txt:3: expected 3 columns, found 2"},
		{"conll", "word\nother\n", "bad.txt:1: missing label column: found 1 column, expected token columns and a label column (read unlabelled text without a label column)"},
		{"conll", "a B C\nb \xffC D\n", "bad.txt:2: invalid UTF-8: byte 0xff at byte 3 of the line"},
		{"conll", "", "bad.txt: no sentences"},
		{"conll", "\n \n\t\n", "bad.txt: no sentences"},
		{"conll", "-DOCSTART- -X- O\n\n", "bad.txt: no sentences"},
		{"conllu", "", "bad.txt: no sentences"},
		{"conllu", "# only a comment\n", "bad.txt: no sentences"},
		{"conllu", "1\tI\tI\tPRON\tPRP\t_\t0\troot\t0:root\n", "bad.txt:1: expected 10 tab-separated fields, found 9"},
		{"conllu", "1 I I PRON PRP _ 0 root _ _\n", "bad.txt:1: expected 10 tab-separated fields, found 1"},
		{"conllu", "1\tI\tI\tPRON\tPRP\t_\t0\troot\t_\t_\n3\tx\tx\tX\tX\t_\t1\tdep\t_\t_\n", `bad.txt:2: expected word ID 2, found "3"`},
		{"conllu", "x\tI\tI\tPRON\tPRP\t_\t0\troot\t_\t_\n", `bad.txt:1: invalid ID "x": expected n, n-m or n.m`},
		{"pos", "", "bad.txt: no sentences"},
		{"pos", "[ a/DT ]\nword ./.\n", `bad.txt:2: expected word/TAG, found "word"`},
		{"pos", "a\\/b\n", `bad.txt:1: expected word/TAG, found "a\\/b"`},
		{"mrg", "", "bad.txt: no sentences"},
		{"mrg", "( (S (NN a) )\n\n", "bad.txt:1: unterminated tree: 1 '(' still open at end of input"},
		{"mrg", "( (S (NN a) )))\n", "bad.txt:1: unexpected ')' outside a tree"},
		{"mrg", "(NN a b)\n", `bad.txt:1: unexpected "b": a constituent holds one word or subtrees`},
		{"mrg", "NN a\n", `bad.txt:1: expected '(', found "NN"`},
		{"mrg", "( (S ) )\n", "bad.txt:1: empty constituent (S)"},
		{"crfsuite", "", "bad.txt: no sentences"},
		{"crfsuite", "B-NP\tw=a:NaN\n", `bad.txt:1: attribute value must be a finite number: "w=a:NaN"`},
		{"crfsuite", "B-NP\t:1\n", `bad.txt:1: empty attribute name in ":1"`},
		{"crfsuite", "O\n\xc3\x28\tx\n", "bad.txt:2: invalid UTF-8: byte 0xc3 at byte 1 of the line"},
	} {
		_, err := readersReadAll(tc.kind.reader(strings.NewReader(tc.input), "bad.txt"))
		if err == nil || err.Error() != tc.want {
			t.Errorf("%s %q: error %v, want %s", tc.kind, tc.input, err, tc.want)
			continue
		}
		var se *SyntaxError
		if !errors.As(err, &se) || se.File != "bad.txt" {
			t.Errorf("%s %q: %v is not a SyntaxError of bad.txt", tc.kind, tc.input, err)
		}
	}
}

func TestConllOptions(t *testing.T) {
	in := "B-NP He PRP\nI-NP x Y\n"
	r := NewConllReader(strings.NewReader(in), "x", ConllOptions{Columns: []string{"form", "tag"}, LabelColumn: 0})
	if !r.Scan() {
		t.Fatal(r.Err())
	}
	s := r.Sentence()
	if got := fmt.Sprint(r.Columns(), s.Tokens, s.Labels); got != "[form tag] [[He PRP] [x Y]] [B-NP I-NP]" {
		t.Errorf("got %s", got)
	}
	r = NewConllReader(strings.NewReader(in), "x", ConllOptions{Columns: []string{"form"}, LabelColumn: LabelLast})
	if _, err := readersReadAll(r); err == nil || err.Error() != "x:1: expected 2 columns (1 named token columns + label), found 3" {
		t.Errorf("wrong column count: %v", err)
	}
	r = NewConllReader(strings.NewReader(in), "x", ConllOptions{LabelColumn: 5})
	if _, err := readersReadAll(r); err == nil || !strings.Contains(err.Error(), "x:1: missing label column") {
		t.Errorf("label column out of range: %v", err)
	}
	r = NewConllReader(strings.NewReader("a b c d e f\n"), "x", DefaultConllOptions())
	if !r.Scan() || strings.Join(r.Columns(), " ") != "word pos chunk c3 c4" {
		t.Errorf("default names: %v, %v", r.Columns(), r.Err())
	}
}

// TestReadersCRLF checks that CRLF line ends give the same sentences as LF.
func TestReadersCRLF(t *testing.T) {
	inputs, err := filepath.Glob(filepath.Join("testdata", "readers", "*"))
	if err != nil {
		t.Fatal(err)
	}
	cases := map[string][]byte{}
	for _, in := range inputs {
		if ext := filepath.Ext(in); ext != ".golden" && ext != ".got" {
			b, err := os.ReadFile(in)
			if err != nil {
				t.Fatal(err)
			}
			cases[in] = b
		}
	}
	rc, _, err := pipeline.OpenInput(conll2000Slice(t, "test.txt.gz"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(rc)
	rc.Close()
	if err != nil {
		t.Fatal(err)
	}
	cases["test.conll"] = b
	for name, lf := range cases {
		crlf := bytes.ReplaceAll(bytes.ReplaceAll(lf, []byte("\r\n"), []byte("\n")), []byte("\n"), []byte("\r\n"))
		var dumps [2]string
		for i, b := range [][]byte{lf, crlf} {
			r, err := readersByName(bytes.NewReader(b), name)
			if err != nil {
				t.Fatal(err)
			}
			if dumps[i], err = readersDump(r); err != nil {
				t.Fatalf("%s (%d): %v", name, i, err)
			}
		}
		if dumps[0] != dumps[1] {
			t.Errorf("%s: CRLF gives other sentences:\n%s\nvs\n%s", name, dumps[0], dumps[1])
		}
	}
}

func TestReadersLongLine(t *testing.T) {
	word := strings.Repeat("x", 300_000)
	in := "a B O\n" + word + " NN O\n\nb C O"
	r := NewConllReader(strings.NewReader(in), "long", DefaultConllOptions())
	st := readersCount(t, r)
	if st.sentences != 2 || st.tokens != 3 {
		t.Fatalf("%d sentences, %d tokens", st.sentences, st.tokens)
	}
	r = NewConllReader(strings.NewReader(in), "long", DefaultConllOptions())
	r.Scan()
	if got := r.Sentence().Tokens[1][0]; got != word {
		t.Errorf("long word read as %d bytes", len(got))
	}
}

// readersCompressed writes b compressed with gzip or zstd.
func readersCompressed(t *testing.T, b []byte, format string) []byte {
	var buf bytes.Buffer
	var w io.WriteCloser
	switch format {
	case "gzip":
		w = gzip.NewWriter(&buf)
	case "zstd":
		zw, err := zstd.NewWriter(&buf)
		if err != nil {
			t.Fatal(err)
		}
		w = zw
	}
	if _, err := w.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// readersCorpus is a CoNLL text of n sentences of 3 tokens.
func readersCorpus(n int) []byte {
	var b bytes.Buffer
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "w%d NN B-NP\nis VBZ B-VP\nhere RB O\n\n", i)
	}
	return b.Bytes()
}

func TestOpenCompressed(t *testing.T) {
	plain := readersCorpus(20000)
	dir := t.TempDir()
	for _, format := range []string{"", "gzip", "zstd"} {
		data := plain
		if format != "" {
			data = readersCompressed(t, plain, format)
		}
		// Names say nothing of the format: the magic bytes decide.
		path := filepath.Join(dir, "corpus-"+format+".txt")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		rc, name, err := pipeline.OpenInput(path)
		if err != nil {
			t.Fatal(err)
		}
		st := readersCount(t, NewConllReader(rc, name, DefaultConllOptions()))
		if err := rc.Close(); err != nil {
			t.Error(err)
		}
		if st.sentences != 20000 || st.tokens != 60000 || name != path {
			t.Errorf("%s: %d sentences, %d tokens, name %s", format, st.sentences, st.tokens, name)
		}
	}
	if _, _, err := pipeline.OpenInput(filepath.Join(dir, "missing.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
}

func TestOpenTruncated(t *testing.T) {
	plain := readersCorpus(20000)
	dir := t.TempDir()
	for _, format := range []string{"gzip", "zstd"} {
		data := readersCompressed(t, plain, format)
		path := filepath.Join(dir, "train.txt.gz")
		if err := os.WriteFile(path, data[:len(data)/2], 0o644); err != nil {
			t.Fatal(err)
		}
		rc, name, err := pipeline.OpenInput(path)
		if err != nil {
			t.Fatal(err)
		}
		n, err := readersReadAll(NewConllReader(rc, name, DefaultConllOptions()))
		rc.Close()
		want := ": unexpected end of compressed data (truncated " + format + " stream)" // after path:LINE
		if err == nil || !strings.HasPrefix(err.Error(), path+":") || !strings.HasSuffix(err.Error(), want) {
			t.Errorf("%s: error %v, want %s:LINE%s", format, err, path, want)
		}
		if n == 0 || n >= 20000 {
			t.Errorf("%s: %d sentences before the error", format, n)
		}
	}
}

func TestOpenStdinName(t *testing.T) {
	rc, err := pipeline.Decompress(bytes.NewReader(readersCompressed(t, []byte("a B C\n"), "gzip")), pipeline.StdinName)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	r := NewConllReader(rc, pipeline.StdinName, DefaultConllOptions())
	if !r.Scan() || r.Sentence().Tokens[0][0] != "a" {
		t.Fatalf("stdin: %v", r.Err())
	}
}

// TestReadersReuse checks that a sentence stays intact until the next Scan
// even though the reader reuses its buffers.
func TestReadersReuse(t *testing.T) {
	r := NewConllReader(bytes.NewReader(readersCorpus(50)), "x", DefaultConllOptions())
	for i := 0; r.Scan(); i++ {
		s := r.Sentence()
		if want := fmt.Sprintf("w%d", i); s.Tokens[0][0] != want || s.Labels[2] != "O" || s.Line != 4*i+1 {
			t.Fatalf("sentence %d: %v %v line %d", i, s.Tokens, s.Labels, s.Line)
		}
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
}

// BenchmarkConllReader reads CoNLL-2000 train (decompressed in memory).
func BenchmarkConllReader(b *testing.B) {
	rc, name := readersOpen(b, datatest.Path(b, "conll2000", "train.txt.gz"))
	data, err := io.ReadAll(rc)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	b.ResetTimer()
	tokens := 0
	for i := 0; i < b.N; i++ {
		r := NewConllReader(bytes.NewReader(data), name, DefaultConllOptions())
		for r.Scan() {
			tokens += r.Sentence().Len()
		}
		if err := r.Err(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(tokens)/b.Elapsed().Seconds(), "tokens/s")
}
