package featurize

import (
	"errors"
	"strings"
	"testing"
)

// readAll reads every sentence of r as "tok tok|tok tok" and its error.
func readAll(r Reader) (string, error) {
	var sents []string
	for r.Scan() {
		s := r.Sentence()
		var toks []string
		for _, row := range s.Tokens {
			toks = append(toks, strings.Join(row, "/"))
		}
		if s.Labels != nil {
			toks = append(toks, "LABELS")
		}
		sents = append(sents, strings.Join(toks, " "))
	}
	return strings.Join(sents, "|"), r.Err()
}

// TestPlainReader: one sentence a line, tokenized; blank lines skipped;
// one column, word; no labels; line numbers kept.
func TestPlainReader(t *testing.T) {
	r := newPlainReader(strings.NewReader("Grace flew to Lima.\n\n  \n\"Hi,\" she said.\r\n"), "in.txt")
	got, err := readAll(r)
	if err != nil {
		t.Fatal(err)
	}
	if want := `Grace flew to Lima .|" Hi , " she said .`; got != want {
		t.Errorf("sentences %q, want %q", got, want)
	}
	if c := r.Columns(); len(c) != 1 || c[0] != "word" {
		t.Errorf("columns %q, want [word]", c)
	}
	if r.Sentence().Line != 4 {
		t.Errorf("last sentence at line %d, want 4", r.Sentence().Line)
	}
}

// TestTokensReader: one token a line, a blank line between sentences.
func TestTokensReader(t *testing.T) {
	r := newTokensReader(strings.NewReader("Grace\nflew \n\n\n\tHe\nleft\n.\n"), "in.txt")
	got, err := readAll(r)
	if err != nil {
		t.Fatal(err)
	}
	if want := "Grace flew|He left ."; got != want {
		t.Errorf("sentences %q, want %q", got, want)
	}
}

// TestPlainTokensErrors: the readers' refusals name the file and line.
func TestPlainTokensErrors(t *testing.T) {
	for _, c := range []struct {
		name, format, in, want string
		opts                   InputOptions
	}{
		{"plain empty", FormatPlain, "\n \n", "in.txt: no sentences", InputOptions{}},
		{"tokens empty", FormatTokens, "", "in.txt: no sentences", InputOptions{}},
		{"tokens two words", FormatTokens, "Grace\nflew to\n", "in.txt:2: 2 words on a line: InputOptions.Format tokens reads one token a line", InputOptions{}},
		{"plain invalid utf-8", FormatPlain, "ok\nab\xffc\n", "in.txt:2: invalid UTF-8", InputOptions{}},
		{"plain too many tokens", FormatPlain, "a b c d\n", "in.txt:1: the sentence that begins at line 1 has more than 3 tokens", InputOptions{MaxSentenceTokens: 3}},
		{"tokens too many tokens", FormatTokens, "a\nb\nc\nd\n", "in.txt:4: the sentence that begins at line 1 has more than 3 tokens", InputOptions{MaxSentenceTokens: 3}},
		{"plain long line", FormatPlain, "abcdefgh\n", "in.txt:1: line longer than 4 bytes", InputOptions{MaxLineBytes: 4}},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := c.opts
			o.Format = c.format
			r, err := newFormatReader(strings.NewReader(c.in), "in.txt", o)
			if err != nil {
				t.Fatal(err)
			}
			_, err = readAll(r)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v, want %q", err, c.want)
			}
		})
	}
}

// TestConllRunningTextHint: running text read as CoNLL columns fails at
// the first line of another length, pointing at --input-format plain.
func TestConllRunningTextHint(t *testing.T) {
	r := NewConllReader(strings.NewReader("Grace flew to Lima .\nHe left .\n"), "s.txt", DefaultConllOptions())
	_, err := readAll(r)
	if err == nil || !strings.Contains(err.Error(), "s.txt:2: expected 5 columns, found 3 (") || !strings.Contains(err.Error(), "InputOptions.Format plain") {
		t.Errorf("error %v, want the column count and InputOptions.Format plain", err)
	}
	r = NewConllReader(strings.NewReader("a B C\nb C D E\n"), "x.txt", DefaultConllOptions())
	if _, err := readAll(r); err == nil || strings.Contains(err.Error(), "plain") {
		t.Errorf("error %v, want one without the running-text hint (up to 4 columns are CoNLL-like)", err)
	}
}

// TestDefaultTemplates: chunking with a pos column, ner with words only,
// an error listing the sets without words.
func TestDefaultTemplates(t *testing.T) {
	for _, c := range []struct {
		cols []string
		want string
	}{
		{[]string{"word", "pos"}, "chunking"},
		{[]string{"word", "tag", "chunk"}, "chunking"},
		{[]string{"word"}, "ner"},
		{[]string{"form", "lemma"}, "ner"},
	} {
		set, name, err := DefaultTemplates(c.cols)
		if err != nil || name != c.want {
			t.Errorf("DefaultTemplates(%q) = %q, %v; want %s", c.cols, name, err, c.want)
			continue
		}
		want, _ := Builtin(c.want)
		if set.String() != want.String() {
			t.Errorf("DefaultTemplates(%q): set is not builtin %s", c.cols, c.want)
		}
	}
	if _, _, err := DefaultTemplates([]string{"a", "b"}); err == nil || !strings.Contains(err.Error(), "chunking, ner, pos") {
		t.Errorf("DefaultTemplates([a b]) error %v, want one listing the built-in sets", err)
	}
}

// TestMissingColumns: RequiredColumns leaves out optional templates;
// MissingColumns resolves aliases.
func TestMissingColumns(t *testing.T) {
	set, err := Builtin("chunking")
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(set.RequiredColumns(), ","); got != "w,pos" {
		t.Errorf("chunking requires %s, want w,pos", got)
	}
	if got := strings.Join(set.missingColumnsOf([]string{"word"}), ","); got != "pos" {
		t.Errorf("chunking on [word] misses %s, want pos", got)
	}
	if got := set.missingColumnsOf([]string{"token", "tag"}); got != nil {
		t.Errorf("chunking on [token tag] misses %q, want none (aliases)", got)
	}
	ner, _ := Builtin("ner")
	if got := strings.Join(ner.RequiredColumns(), ","); got != "w" {
		t.Errorf("ner requires %s, want w (pos is optional)", got)
	}
	_, err = set.Compile([]string{"word"})
	var me *MissingColumnError
	if !errors.As(err, &me) || me.Column != "pos" || me.File != "builtin:chunking" {
		t.Errorf("Compile error %v, want a *MissingColumnError for pos", err)
	}
}
