package tokenize

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// TestLine: the documented rules, case by case.
func TestLine(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"Grace flew to Lima.", "Grace|flew|to|Lima|."},
		{`"Hi," she said.`, `"|Hi|,|"|she|said|.`},
		{"The U.S. economy grew 3.5% in 1,000 days, e.g. last year.", "The|U.S.|economy|grew|3.5|%|in|1,000|days|,|e.g.|last|year|."},
		{"I don't know, can't say, won't tell.", "I|do|n't|know|,|ca|n't|say|,|wo|n't|tell|."},
		{"John's car; they're here, I'm late.", "John|'s|car|;|they|'re|here|,|I|'m|late|."},
		{"Don’t go", "Do|n’t|go"},
		{"It cost $3.50 (about €3).", "It|cost|$|3.50|(|about|€|3|)|."},
		{"See http://example.org/a?b=c, or mail a.b@example.org.", "See|http://example.org/a?b=c|,|or|mail|a.b@example.org|."},
		{"Visit www.example.com.", "Visit|www.example.com|."},
		{"Wait... what?!", "Wait|...|what|?|!"},
		{"Mr. Smith of Acme Inc. met Dr. J. Doe.", "Mr.|Smith|of|Acme|Inc.|met|Dr.|J.|Doe|."},
		{"in the '90s 'Hello' boys'", "in|the|'90s|'|Hello|'|boys|'"},
		{"``Quote'' here", "``|Quote|''|here"},
		{"well-known U.S.-based (U.S.)", "well-known|U.S.-based|(|U.S.|)"},
		{"¿Qué? «Sí»", "¿|Qué|?|«|Sí|»"},
		{"Zürich\u00a0ist schön.", "Zürich|ist|schön|."},
		{"  \t ", ""},
		{"...", "..."},
		{"'s", "'s"},
	} {
		got := strings.Join(Line(c.in), "|")
		if got != c.want {
			t.Errorf("Line(%q) = %s, want %s", c.in, got, c.want)
		}
	}
}

// checkTokens fails unless the tokens of line are non-empty, hold no white
// space and concatenate to the line's non-space characters.
func checkTokens(t *testing.T, line string, toks []string) {
	t.Helper()
	var b strings.Builder
	for _, tok := range toks {
		if tok == "" {
			t.Fatalf("Line(%q): empty token in %q", line, toks)
		}
		for i := 0; i < len(tok); {
			r, n := utf8.DecodeRuneInString(tok[i:])
			if unicode.IsSpace(r) {
				t.Fatalf("Line(%q): token %q holds white space", line, tok)
			}
			i += n
		}
		b.WriteString(tok)
	}
	var want strings.Builder
	for i := 0; i < len(line); {
		r, n := utf8.DecodeRuneInString(line[i:])
		if !unicode.IsSpace(r) {
			want.WriteString(line[i : i+n])
		}
		i += n
	}
	if b.String() != want.String() {
		t.Fatalf("Line(%q) = %q: concatenation %q, want %q", line, toks, b.String(), want.String())
	}
}

// TestLineInvalidUTF8: bytes that are not UTF-8 stay in their word.
func TestLineInvalidUTF8(t *testing.T) {
	line := "ab\xff. \xc3(x)"
	toks := Line(line)
	checkTokens(t, line, toks)
	if got := strings.Join(toks, "|"); got != "ab\xff|.|\xc3(x|)" {
		t.Errorf("Line(%q) = %q", line, got)
	}
}

// FuzzLine: no panic; tokens are non-empty, hold no white space and
// concatenate to the line's non-space characters.
func FuzzLine(f *testing.F) {
	for _, s := range []string{"Grace flew to Lima.", `"Hi,"`, "U.S. 3.5 1,000 e.g. don't", "http://x.org/a.", "''``...", "\xff'\xe2\x80\x99s", "$", "'", "n't"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		checkTokens(t, line, Line(line))
	})
}
