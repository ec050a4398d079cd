package main

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/dualcrf/dualcrf/featurize"
	"github.com/dualcrf/dualcrf/schemas"
)

var (
	posOnce  sync.Once
	posModel string
	posErr   string
)

// posTagger trains (once) a small part-of-speech tagger on the training
// slice's words and POS tags (the POS column as the label) and returns
// its path.
func posTagger(t *testing.T) string {
	t.Helper()
	f := fixtures(t)
	posOnce.Do(func() {
		dir := filepath.Join(f.dir, "pos")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			posErr = err.Error()
			return
		}
		rewriteLines(t, f.trainText, filepath.Join(dir, "pos.txt"), func(fl []string) []string { return fl[:2] })
		for _, args := range [][]string{
			{"featurize", "-t", "pos", "-o", "pos-train.arrow", "pos.txt"},
			{"train", "-q", "--max-epochs", "4", "-o", "pos.arrow", "pos-train.arrow"},
		} {
			if r := runInProcess(t, dir, "", args...); r.code != 0 {
				posErr = r.String()
				return
			}
		}
		posModel = filepath.Join(dir, "pos.arrow")
	})
	if posErr != "" {
		t.Fatal(posErr)
	}
	return posModel
}

// conllRows splits CoNLL output into sentences of token lines of fields.
func conllRows(out string) [][][]string {
	var sents [][][]string
	var cur [][]string
	for _, line := range strings.Split(out, "\n") {
		if strings.TrimSpace(line) == "" {
			if cur != nil {
				sents = append(sents, cur)
			}
			cur = nil
			continue
		}
		cur = append(cur, strings.Fields(line))
	}
	if cur != nil {
		sents = append(sents, cur)
	}
	return sents
}

// column returns field i of every token of the sentences, a sentence a
// string.
func column(sents [][][]string, i int) []string {
	var out []string
	for _, s := range sents {
		var f []string
		for _, tok := range s {
			f = append(f, tok[i])
		}
		out = append(out, strings.Join(f, " "))
	}
	return out
}

// TestDecodePlainText: --input-format plain tags running text a sentence a
// line, tokenized; tokens reads a token a line; the tags then feed the
// chunker as its pos column (chaining), by default and with --column,
// through a file and through a pipe.
func TestDecodePlainText(t *testing.T) {
	f := fixtures(t)
	pos := posTagger(t)
	dir := t.TempDir()
	text := "The economy grew 3.5% in the U.S., analysts said.\n\nPrices didn't fall.\n"
	if err := os.WriteFile(filepath.Join(dir, "s.txt"), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	wantWords := []string{"The economy grew 3.5 % in the U.S. , analysts said .", "Prices did n't fall ."}

	r := mustRun(t, dir, "decode", "-m", pos, "--input-format", "plain", "--text", "s.txt", "--format", "conll")
	tagged := conllRows(string(r.stdout))
	if got := column(tagged, 0); strings.Join(got, "|") != strings.Join(wantWords, "|") {
		t.Fatalf("plain words %q, want %q", got, wantWords)
	}
	for _, s := range tagged {
		for _, tok := range s {
			if len(tok) != 2 {
				t.Fatalf("token line %q: want word and tag", tok)
			}
		}
	}
	tags := column(tagged, 1)

	// --no-labels is accepted (plain text has none) and changes nothing.
	r2 := mustRun(t, dir, "decode", "-m", pos, "--input-format", "plain", "--no-labels", "--text", "s.txt", "--format", "conll")
	if string(r2.stdout) != string(r.stdout) {
		t.Errorf("--no-labels changed the output:\n%s\nwant\n%s", r2.stdout, r.stdout)
	}

	// Tokens: the same words a token a line give the same tags.
	var toks strings.Builder
	for _, s := range wantWords {
		toks.WriteString(strings.ReplaceAll(s, " ", "\n") + "\n\n")
	}
	if err := os.WriteFile(filepath.Join(dir, "toks.txt"), []byte(toks.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	r3 := mustRun(t, dir, "decode", "-m", pos, "--input-format", "tokens", "--text", "toks.txt", "--format", "conll")
	if string(r3.stdout) != string(r.stdout) {
		t.Errorf("tokens input:\n%s\nwant as plain:\n%s", r3.stdout, r.stdout)
	}

	// Chaining: the tagger's predictions are the chunker's pos column.
	mustRun(t, dir, "decode", "-m", pos, "--input-format", "plain", "--text", "s.txt", "-o", "tagged.arrow")
	chunked := mustRun(t, dir, "decode", "-m", f.model, "--text", "tagged.arrow", "--format", "conll")
	rows := conllRows(string(chunked.stdout))
	if got := column(rows, 0); strings.Join(got, "|") != strings.Join(wantWords, "|") {
		t.Errorf("chained words %q, want %q", got, wantWords)
	}
	if got := column(rows, 1); strings.Join(got, "|") != strings.Join(tags, "|") {
		t.Errorf("chained pos column %q, want the tagger's %q", got, tags)
	}
	for _, s := range rows {
		for _, tok := range s {
			if len(tok) != 3 || !(tok[2] == "O" || strings.HasPrefix(tok[2], "B-") || strings.HasPrefix(tok[2], "I-")) {
				t.Fatalf("chained token %q: want word, pos and a chunk tag", tok)
			}
		}
	}
	explicit := mustRun(t, dir, "decode", "-m", f.model, "--text", "tagged.arrow", "--column", "pos=pred", "--format", "conll")
	if string(explicit.stdout) != string(chunked.stdout) {
		t.Errorf("--column pos=pred:\n%s\nwant the default mapping's\n%s", explicit.stdout, chunked.stdout)
	}
	piped := mustShellPipe(t, dir, filepath.Join(dir, "s.txt"),
		[]string{"decode", "-m", pos, "--input-format", "plain", "--text", "-"},
		[]string{"decode", "-m", f.model, "--text", "-", "--format", "conll"})
	if got := string(piped[1].stdout); got != string(chunked.stdout) {
		t.Errorf("piped chain:\n%s\nwant\n%s", got, chunked.stdout)
	}
}

// TestDecodeRunningTextAsConll: a line of words read as CoNLL columns is
// one token of many columns; decode warns, pointing at --input-format
// plain, when the model was trained on fewer columns, and not when the
// columns are named.
func TestDecodeRunningTextAsConll(t *testing.T) {
	f := fixtures(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "s.txt"), []byte("Grace flew to Lima .\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := mustRun(t, dir, "decode", "-m", f.model, "--text", "s.txt", "--no-labels", "--format", "conll")
	if !strings.Contains(string(r.stderr), "5 token columns (word pos chunk c3 c4), but the model was trained on text of 2 (word pos)") ||
		!strings.Contains(string(r.stderr), "--input-format plain") {
		t.Errorf("stderr %q, want the column warning", r.stderr)
	}
	r = mustRun(t, dir, "decode", "-m", f.model, "--text", "s.txt", "--no-labels", "--columns", "word,pos,a,b,c", "--format", "conll")
	if len(r.stderr) != 0 {
		t.Errorf("with --columns: stderr %q, want none", r.stderr)
	}
	// The model records the columns it was trained on.
	m := readFeatureTable(t, f.train)
	if got := m.Metadata[featurize.KeyColumns]; got != `["word","pos"]` {
		t.Errorf("training table %s = %q, want [\"word\",\"pos\"]", featurize.KeyColumns, got)
	}
}

// TestFeaturizeTemplateByColumns: without --template, words and labels get
// the ner templates, words, POS and labels the chunking ones.
func TestFeaturizeTemplateByColumns(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{"wl.txt": "Grace B-PER\nflew O\n", "wpl.txt": "Grace NNP B-NP\nflew VBD B-VP\n"}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct{ in, want, note string }{
		{"wl.txt", "ner", "featurize: template ner, chosen from the input's columns [word]"},
		{"wpl.txt", "chunking", ""},
	} {
		r := mustRun(t, dir, "featurize", "-o", "out.arrow", c.in)
		set, err := featurize.Builtin(c.want)
		if err != nil {
			t.Fatal(err)
		}
		if got := readFeatureTable(t, filepath.Join(dir, "out.arrow")).Metadata[schemas.KeyTemplates]; got != set.String() {
			t.Errorf("%s: templates\n%s\nwant builtin %s", c.in, got, c.want)
		}
		if c.note != "" && !strings.Contains(string(r.stderr), c.note) || c.note == "" && strings.Contains(string(r.stderr), "template") {
			t.Errorf("%s: stderr %q, want note %q", c.in, r.stderr, c.note)
		}
	}
}

// TestFeaturizePlainAndColumnFlags: featurize reads plain and tokens text
// (a word column, no labels), and refuses --column outside tables and
// CoNLL.
func TestFeaturizePlainAndColumnFlags(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "s.txt"), []byte("Grace flew to Lima.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	mustRun(t, dir, "featurize", "-f", "plain", "-o", "p.arrow", "s.txt")
	tab := readFeatureTable(t, filepath.Join(dir, "p.arrow"))
	if tab.Data.NumTokens() != 5 || strings.Join(tab.Columns, ",") != "word" {
		t.Errorf("plain: %d tokens, columns %q; want 5 and word", tab.Data.NumTokens(), tab.Columns)
	}
	r := runInProcess(t, dir, "", "featurize", "-f", "plain", "--column", "pos=pred", "-o", "x.arrow", "s.txt")
	if r.code == 0 || !strings.Contains(string(r.stderr), "--column applies to --input-format conll or table") {
		t.Errorf("plain with --column: %v", r)
	}
}

// TestEvalTagsWithoutChunks: labels without chunk prefixes are scored by
// token accuracy with a note, in text and JSON; --scheme forces the chunk
// report; IOB labels keep it.
func TestEvalTagsWithoutChunks(t *testing.T) {
	f := fixtures(t)
	pos := posTagger(t)
	dir := t.TempDir()
	rewriteLines(t, f.testText, filepath.Join(dir, "pos.txt"), func(fl []string) []string { return fl[:2] })
	mustRun(t, dir, "decode", "-m", pos, "--text", "pos.txt", "-o", "pred.arrow")
	r := mustRun(t, dir, "eval", "pred.arrow")
	if out := string(r.stdout); !strings.HasPrefix(out, "processed ") || !strings.Contains(out, "\naccuracy: ") ||
		!strings.Contains(out, "note: labels have no chunk prefixes (B-, I-): reporting token accuracy; chunk scores do not apply") || strings.Contains(out, "phrases") {
		t.Errorf("eval of POS tags:\n%s", out)
	}
	r = mustRun(t, dir, "eval", "--json", "pred.arrow")
	if out := string(r.stdout); !strings.Contains(out, `"note": "labels have no chunk prefixes`) || strings.Contains(out, `"chunks"`) {
		t.Errorf("eval --json of POS tags:\n%s", out)
	}
	r = mustRun(t, dir, "eval", "--scheme", "conlleval", "pred.arrow")
	if out := string(r.stdout); !strings.Contains(out, "phrases") || strings.Contains(out, "note:") {
		t.Errorf("eval --scheme conlleval of POS tags:\n%s", out)
	}
	r = mustRun(t, dir, "eval", f.pred)
	if out := string(r.stdout); !strings.Contains(out, "phrases") || strings.Contains(out, "note:") {
		t.Errorf("eval of chunk tags:\n%s", out)
	}
}
