package featurize

import (
	"fmt"
	"strings"
	"testing"
)

// TestLineLimit: a line longer than the limit is an error naming the file
// and line, in every format; a line at the limit is read (formerly any line
// was read whole, however long).
func TestLineLimit(t *testing.T) {
	// pad makes the line around a word 100 bytes long.
	pad := func(before, after string) string {
		return before + strings.Repeat("x", 100-len(before)-len(after)) + after + "\n"
	}
	inputs := map[string]string{
		"conll":    "a B\n" + pad("", " B") + "\n",
		"conllu":   "1\ta\ta\tX\tX\t_\t0\troot\t_\t_\n" + pad("2\t", "\t_\tX\t_\t_\t0\t_\t_\t_"),
		"crfsuite": "B\ta\n" + pad("B\t", ""),
		"ptb-pos":  "a/DT\n" + pad("", "/NN"),
		"ptb-mrg":  "((NN a)\n" + pad("(NN ", "))"),
	}
	for format, text := range inputs {
		lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
		if got := len(lines[1]); got != 100 {
			t.Fatalf("%s: second line of %d bytes", format, got)
		}
		r, err := newFormatReader(strings.NewReader(text), "in.txt", InputOptions{Format: format, MaxLineBytes: 100})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := readAllSentences(r); err != nil {
			t.Errorf("%s: a line at the limit: %v", format, err)
		}
		r, _ = newFormatReader(strings.NewReader(text), "in.txt", InputOptions{Format: format, MaxLineBytes: 99})
		_, err = readAllSentences(r)
		wantSyntaxError(t, err, "in.txt", 2, "line longer than 99 bytes")
	}
}

// TestSentenceLimit: a sentence of more tokens than the limit is an error
// naming the file and line, in every format.
func TestSentenceLimit(t *testing.T) {
	tokens := func(n int, f func(i int) string) string {
		var b strings.Builder
		for i := 0; i < n; i++ {
			b.WriteString(f(i))
		}
		return b.String()
	}
	inputs := map[string]func(n int) string{
		"conll": func(n int) string { return tokens(n, func(int) string { return "a B\n" }) },
		"conllu": func(n int) string {
			return tokens(n, func(i int) string { return fmt.Sprintf("%d\ta\ta\tX\tX\t_\t0\t_\t_\t_\n", i+1) })
		},
		"crfsuite": func(n int) string { return tokens(n, func(int) string { return "B\ta\n" }) },
		"ptb-pos":  func(n int) string { return tokens(n, func(int) string { return "a/DT\n" }) },
		"ptb-mrg":  func(n int) string { return "(S\n" + tokens(n, func(int) string { return "(NN a)\n" }) + ")\n" },
	}
	for format, text := range inputs {
		for _, n := range []int{5, 6} {
			r, err := newFormatReader(strings.NewReader(text(n)), "in.txt", InputOptions{Format: format, MaxSentenceTokens: 5})
			if err != nil {
				t.Fatal(err)
			}
			_, err = readAllSentences(r)
			if n == 5 {
				if err != nil {
					t.Errorf("%s: 5 tokens: %v", format, err)
				}
				continue
			}
			line := 6
			if format == "ptb-mrg" {
				line = 7
			}
			wantSyntaxError(t, err, "in.txt", line, "has more than 5 tokens")
		}
	}
}
