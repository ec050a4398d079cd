package decode

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dualcrf/dualcrf/internal/datatest"
)

// sentence is one sentence of gold and predicted tags.
type sentence struct{ gold, pred []string }

// evaluate runs an Evaluator with opts over the sentences.
func evaluate(t testing.TB, opts EvalOptions, sents ...sentence) Scores {
	t.Helper()
	e := NewEvaluator(opts)
	for i, s := range sents {
		if err := e.Add(s.gold, s.pred); err != nil {
			t.Fatalf("Add sentence %d: %v", i+1, err)
		}
	}
	return e.Result()
}

func report(t testing.TB, s Scores) string {
	t.Helper()
	var b bytes.Buffer
	if err := s.WriteConlleval(&b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func tags(s string) []string { return strings.Fields(s) }

// counts are the integers conlleval reports; the test derives them by hand.
type counts struct {
	tokens, correctTags, gold, found, correct int
}

func checkCounts(t *testing.T, s Scores, want counts) {
	t.Helper()
	got := counts{tokens: s.Tokens, correctTags: s.CorrectTokens}
	if s.Chunks != nil {
		got.gold, got.found, got.correct = s.Chunks.Gold, s.Chunks.Predicted, s.Chunks.Correct
	}
	if got != want {
		t.Errorf("counts = %+v, want %+v", got, want)
	}
}

// checkType checks the gold/found/correct counts of one chunk type.
func checkType(t *testing.T, s Scores, typ string, gold, found, correct int) {
	t.Helper()
	for _, ts := range s.Chunks.Types {
		if ts.Type == typ {
			if ts.Gold != gold || ts.Predicted != found || ts.Correct != correct {
				t.Errorf("type %q: gold/found/correct = %d/%d/%d, want %d/%d/%d",
					typ, ts.Gold, ts.Predicted, ts.Correct, gold, found, correct)
			}
			return
		}
	}
	t.Errorf("type %q missing from %+v", typ, s.Chunks.Types)
}

// typeLine is one per-type line of the report, padded as conlleval's "%17s".
func typeLine(typ, prf string, found int) string {
	return fmt.Sprintf("%17s: %s  %d\n", typ, prf, found)
}

func TestIAfterOStartsChunk(t *testing.T) {
	// Gold "O I-NP I-NP O": I-NP after O starts a chunk (rule O,I), which
	// the O after it closes: one NP over tokens 2-3. The prediction writes
	// the same chunk in IOB2, "O B-NP I-NP O": start O,B, same end. One
	// gold phrase, one found, one correct; token 2 differs (I-NP vs B-NP),
	// so 3 of 4 tags are right: accuracy 75%.
	s := evaluate(t, EvalOptions{}, sentence{tags("O I-NP I-NP O"), tags("O B-NP I-NP O")})
	checkCounts(t, s, counts{tokens: 4, correctTags: 3, gold: 1, found: 1, correct: 1})
	want := "processed 4 tokens with 1 phrases; found: 1 phrases; correct: 1.\n" +
		"accuracy:  75.00%; precision: 100.00%; recall: 100.00%; FB1: 100.00\n" +
		"               NP: precision: 100.00%; recall: 100.00%; FB1: 100.00  1\n"
	if got := report(t, s); got != want {
		t.Errorf("report:\n%s\nwant:\n%s", got, want)
	}
	if s.Accuracy != 0.75 {
		t.Errorf("Accuracy = %v, want 0.75", s.Accuracy)
	}
}

func TestIAfterOtherTypeStartsChunk(t *testing.T) {
	// Gold "B-NP I-VP I-VP": I-VP after B-NP changes type, so the NP ends
	// and a VP starts (the type rules of endOfChunk and startOfChunk):
	// chunks NP[1], VP[2-3]. Prediction "B-NP B-VP I-VP" has the same two
	// chunks: 2 gold, 2 found, 2 correct, one per type; token 2 differs.
	s := evaluate(t, EvalOptions{}, sentence{tags("B-NP I-VP I-VP"), tags("B-NP B-VP I-VP")})
	checkCounts(t, s, counts{tokens: 3, correctTags: 2, gold: 2, found: 2, correct: 2})
	checkType(t, s, "NP", 1, 1, 1)
	checkType(t, s, "VP", 1, 1, 1)

	// Prediction "B-NP I-NP I-VP" reads NP[1-2], VP[3]: both chunks differ
	// from gold NP[1], VP[2-3] in one boundary, so 0 correct of 2 and 2.
	// Tokens 1 and 3 agree: 2 of 3.
	s = evaluate(t, EvalOptions{}, sentence{tags("B-NP I-VP I-VP"), tags("B-NP I-NP I-VP")})
	checkCounts(t, s, counts{tokens: 3, correctTags: 2, gold: 2, found: 2, correct: 0})
	checkType(t, s, "NP", 1, 1, 0)
	checkType(t, s, "VP", 1, 1, 0)
}

func TestOnlyO(t *testing.T) {
	// No tag but O: no chunk starts (startOfChunk never fires on O), so 0
	// phrases and 0 found. conlleval leaves precision, recall and FB1 at
	// their initial 0.0 when there is nothing to divide by, prints no type
	// line, and still prints the accuracy: 3 of 3 tokens.
	s := evaluate(t, EvalOptions{}, sentence{tags("O O O"), tags("O O O")})
	checkCounts(t, s, counts{tokens: 3, correctTags: 3})
	c := s.Chunks
	if c.Precision != 0 || c.Recall != 0 || c.F1 != 0 || len(c.Types) != 0 {
		t.Errorf("chunks = %+v, want all zero and no types", *c)
	}
	want := "processed 3 tokens with 0 phrases; found: 0 phrases; correct: 0.\n" +
		"accuracy: 100.00%; precision:   0.00%; recall:   0.00%; FB1:   0.00\n"
	if got := report(t, s); got != want {
		t.Errorf("report:\n%s\nwant:\n%s", got, want)
	}
}

func TestEmptyEvaluator(t *testing.T) {
	// Nothing added: conlleval prints the first line only (the accuracy
	// line needs tokenCounter > 0).
	var e Evaluator
	s := e.Result()
	want := "processed 0 tokens with 0 phrases; found: 0 phrases; correct: 0.\n"
	if got := report(t, s); got != want {
		t.Errorf("report %q, want %q", got, want)
	}
	if s.Accuracy != 0 || s.Tokens != 0 {
		t.Errorf("scores %+v, want zero", s)
	}
}

func TestSentenceBoundaryClosesChunk(t *testing.T) {
	// Sentence 1 ends in B-NP, sentence 2 begins with I-NP. conlleval sees
	// a blank line between them, read as tags O O: it ends the NP of
	// sentence 1 (rule B,O), and the I-NP after it starts a new one (rule
	// O,I). Two NP chunks, and the prediction, equal to gold, finds both.
	s1 := sentence{tags("O B-NP"), tags("O B-NP")}
	s2 := sentence{tags("I-NP O"), tags("I-NP O")}
	s := evaluate(t, EvalOptions{}, s1, s2)
	checkCounts(t, s, counts{tokens: 4, correctTags: 4, gold: 2, found: 2, correct: 2})

	// The same four tags as one sentence hold a single chunk NP[2-3].
	one := sentence{tags("O B-NP I-NP O"), tags("O B-NP I-NP O")}
	s = evaluate(t, EvalOptions{}, one)
	checkCounts(t, s, counts{tokens: 4, correctTags: 4, gold: 1, found: 1, correct: 1})

	// Gold as in the two sentences, prediction O instead of B-NP at the
	// end of sentence 1: its I-NP in sentence 2 still starts a chunk
	// equal to gold's second one. Found 1, correct 1 of gold 2; 3 of 4
	// tags right.
	s = evaluate(t, EvalOptions{}, sentence{tags("O B-NP"), tags("O O")}, s2)
	checkCounts(t, s, counts{tokens: 4, correctTags: 3, gold: 2, found: 1, correct: 1})
}

func TestIOBESSingletons(t *testing.T) {
	gold := tags("S-PER S-PER O B-LOC E-LOC S-LOC")
	pred := tags("B-PER E-PER O B-LOC I-LOC E-LOC")
	// Tokens: only 3 (O) and 4 (B-LOC) agree: 2 of 6.
	//
	// conlleval's own rules do not know S-: S-PER after O starts a chunk
	// only because the type changes ("" to PER), S-PER after S-PER neither
	// ends nor starts one, O after S-PER ends it (type change). E-LOC after
	// B-LOC and S-LOC after E-LOC (same type) neither end nor start a
	// chunk. So gold reads PER[1-2], LOC[4-6]; the prediction also reads
	// PER[1-2] (B then E, ended by E,O) and LOC[4-6]: 2 gold, 2 found, 2
	// correct although the IOBES chunks differ.
	s := evaluate(t, EvalOptions{}, sentence{gold, pred})
	checkCounts(t, s, counts{tokens: 6, correctTags: 2, gold: 2, found: 2, correct: 2})

	// With IOBES rules S- starts and ends a chunk and E- ends one: gold is
	// PER[1], PER[2], LOC[4-5], LOC[6] (4 chunks); the prediction is
	// PER[1-2], LOC[4-6] (2 chunks), none equal to a gold one.
	for _, sch := range []Scheme{SchemeIOBES, SchemeAuto} {
		s = evaluate(t, EvalOptions{Scheme: sch}, sentence{gold, pred})
		checkCounts(t, s, counts{tokens: 6, correctTags: 2, gold: 4, found: 2, correct: 0})
		checkType(t, s, "PER", 2, 1, 0)
		checkType(t, s, "LOC", 2, 1, 0)
		// Gold against itself: all 4 chunks found and correct.
		s = evaluate(t, EvalOptions{Scheme: sch}, sentence{gold, gold})
		checkCounts(t, s, counts{tokens: 6, correctTags: 6, gold: 4, found: 4, correct: 4})
	}

	// Singletons next to O or another type are chunks for conlleval too:
	// "S-PER O S-LOC" holds PER[1] and LOC[3]; the prediction "S-PER O O"
	// gets PER right: gold 2, found 1, correct 1.
	s = evaluate(t, EvalOptions{}, sentence{tags("S-PER O S-LOC"), tags("S-PER O O")})
	checkCounts(t, s, counts{tokens: 3, correctTags: 2, gold: 2, found: 1, correct: 1})
	checkType(t, s, "PER", 1, 1, 1)
	checkType(t, s, "LOC", 1, 0, 0)
}

func TestEClosesChunk(t *testing.T) {
	// IOE2 "I-NP E-NP I-NP E-NP": I after O starts NP[1-2]; E after I
	// continues it; I after E ends it and starts NP[3-4] (rules E,I); the
	// boundary ends that one (E,O). IOE1 "E-NP E-NP" is two one-token
	// chunks (rules E,E). Prediction = gold: 2+2 chunks, all correct.
	ioe2 := sentence{tags("I-NP E-NP I-NP E-NP"), tags("I-NP E-NP I-NP E-NP")}
	ioe1 := sentence{tags("E-NP E-NP"), tags("E-NP E-NP")}
	s := evaluate(t, EvalOptions{}, ioe2, ioe1)
	checkCounts(t, s, counts{tokens: 6, correctTags: 6, gold: 4, found: 4, correct: 4})

	// IOBES "B-NP E-NP B-NP E-NP": conlleval has no rule for B after E of
	// the same type, so it reads a single NP[1-4]; with IOBES rules E ends
	// NP[1-2] and B starts NP[3-4]. The prediction "B-NP I-NP I-NP E-NP"
	// is NP[1-4] in both readings: correct 1 of 1 for conlleval, 0 of 2
	// with IOBES. Tokens 2 (E-NP vs I-NP) and 3 (B-NP vs I-NP) differ:
	// 2 of 4 right.
	g, p := tags("B-NP E-NP B-NP E-NP"), tags("B-NP I-NP I-NP E-NP")
	s = evaluate(t, EvalOptions{}, sentence{g, p})
	checkCounts(t, s, counts{tokens: 4, correctTags: 2, gold: 1, found: 1, correct: 1})
	s = evaluate(t, EvalOptions{Scheme: SchemeIOBES}, sentence{g, p})
	checkCounts(t, s, counts{tokens: 4, correctTags: 2, gold: 2, found: 1, correct: 0})
}

func TestIOB1(t *testing.T) {
	// IOB1 writes I- everywhere and B- only for a chunk that directly
	// follows a chunk of the same type. Gold "I-NP I-NP B-NP I-VP O I-NP"
	// is NP[1-2] (I after O), NP[3] (B), VP[4] (type change), NP[6] (I
	// after O): 4 chunks. The prediction is the same chunking in IOB2,
	// "B-NP I-NP B-NP B-VP O B-NP": 4 found, 4 correct, 3 NP and 1 VP.
	// Tokens 1, 4, 6 differ (I vs B): 3 of 6, accuracy 50%.
	g, p := tags("I-NP I-NP B-NP I-VP O I-NP"), tags("B-NP I-NP B-NP B-VP O B-NP")
	for _, sch := range []Scheme{SchemeConlleval, SchemeAuto, SchemeIOB1, SchemeIOB2} {
		s := evaluate(t, EvalOptions{Scheme: sch}, sentence{g, p})
		checkCounts(t, s, counts{tokens: 6, correctTags: 3, gold: 4, found: 4, correct: 4})
		checkType(t, s, "NP", 3, 3, 3)
		checkType(t, s, "VP", 1, 1, 1)
	}
}

func TestMismatchedLengths(t *testing.T) {
	e := NewEvaluator(EvalOptions{})
	if err := e.Add(tags("B-NP I-NP"), tags("B-NP I-NP")); err != nil {
		t.Fatal(err)
	}
	err := e.Add(tags("B-NP O O"), tags("B-NP O"))
	if !errors.Is(err, ErrLength) {
		t.Fatalf("Add with 3 gold and 2 predicted tags: err = %v, want ErrLength", err)
	}
	if !strings.Contains(err.Error(), "sentence 2") {
		t.Errorf("error %q does not name sentence 2", err)
	}
	// The failed sentence counts for nothing: 2 tokens, 1 chunk.
	s := e.Result()
	if s.Tokens != 2 || s.Sentences != 1 || s.Chunks.Gold != 1 {
		t.Errorf("after failed Add: %d tokens, %d sentences, %d phrases; want 2, 1, 1",
			s.Tokens, s.Sentences, s.Chunks.Gold)
	}
}

func TestSchemeValidation(t *testing.T) {
	cases := []struct {
		scheme     Scheme
		gold, pred string
		ok         bool
	}{
		{SchemeIOB2, "B-NP I-NP O", "B-NP B-NP O", true},
		{SchemeIOB2, "B-NP E-NP O", "B-NP I-NP O", false}, // E- is not IOB
		{SchemeIOB1, "B-NP I-NP", "S-NP I-NP", false},     // predicted S-
		{SchemeIOB1, "B", "O", false},                     // no type
		{SchemeIOBES, "S-NP B-VP E-VP", "S-NP B-VP I-VP", true},
		{SchemeIOBES, "S-NP", "X-NP", false},
		{SchemeConlleval, "S-NP [ . -X-", "X-NP ] O B", true}, // conlleval takes any tag
		{SchemeAuto, "S-NP [ .", "X-NP ] O", true},
	}
	for _, c := range cases {
		e := NewEvaluator(EvalOptions{Scheme: c.scheme})
		err := e.Add(tags(c.gold), tags(c.pred))
		if (err == nil) != c.ok || (err != nil && !errors.Is(err, ErrScheme)) {
			t.Errorf("%v: Add(%q, %q) = %v, want ok=%v", c.scheme, c.gold, c.pred, err, c.ok)
		}
	}
	// NoChunks ignores the scheme.
	e := NewEvaluator(EvalOptions{Scheme: SchemeIOB2, NoChunks: true})
	if err := e.Add(tags("NN -LRB-"), tags("NN VB")); err != nil {
		t.Errorf("NoChunks: %v", err)
	}
}

func TestParseScheme(t *testing.T) {
	for _, s := range []Scheme{SchemeConlleval, SchemeAuto, SchemeIOB1, SchemeIOB2, SchemeIOBES} {
		got, err := ParseScheme(strings.ToUpper(s.String()))
		if err != nil || got != s {
			t.Errorf("ParseScheme(%q) = %v, %v", strings.ToUpper(s.String()), got, err)
		}
	}
	if s, err := ParseScheme(""); err != nil || s != SchemeConlleval {
		t.Errorf(`ParseScheme("") = %v, %v; want conlleval`, s, err)
	}
	if _, err := ParseScheme("bilou"); err == nil {
		t.Error(`ParseScheme("bilou") succeeded`)
	}
}

func TestNoChunks(t *testing.T) {
	// POS tags, compared whole. Gold "DT NN VB" / "DT NN", predicted
	// "DT VB VB" / "DT NN": 4 of 5 right (token 2 of sentence 1 wrong).
	// Per label (fractions): DT gold 2, predicted 2, correct 2 → 1/1/1.
	// NN gold 2, predicted 1, correct 1 → P 1, R 0.5, F 2·1·0.5/1.5.
	// VB gold 1, predicted 2, correct 1 → P 0.5, R 1, F the same 2/3.
	s := evaluate(t, EvalOptions{NoChunks: true},
		sentence{tags("DT NN VB"), tags("DT VB VB")}, sentence{tags("DT NN"), tags("DT NN")})
	checkCounts(t, s, counts{tokens: 5, correctTags: 4})
	if s.Chunks != nil || s.Scheme != "none" {
		t.Errorf("NoChunks: Chunks = %v, Scheme = %q", s.Chunks, s.Scheme)
	}
	want := []LabelScore{
		{"DT", Tally{2, 2, 2, 1, 1, 1}},
		{"NN", Tally{2, 1, 1, 1, 0.5, 2 * 1 * 0.5 / 1.5}},
		{"VB", Tally{1, 2, 1, 0.5, 1, 2 * 0.5 * 1 / 1.5}},
	}
	if fmt.Sprint(s.Labels) != fmt.Sprint(want) {
		t.Errorf("labels = %v\nwant %v", s.Labels, want)
	}
	if got, w := report(t, s), "processed 5 tokens.\naccuracy:  80.00%\n"; got != w {
		t.Errorf("report %q, want %q", got, w)
	}
}

func TestLabelScoresWithChunks(t *testing.T) {
	// Token-level label scores are kept in chunk mode too. Gold "B-NP I-NP
	// O", predicted "B-NP B-NP O": B-NP gold 1 predicted 2 correct 1
	// (P 0.5, R 1); I-NP gold 1 predicted 0 (P 0, R 0, F 0); O 1/1/1.
	s := evaluate(t, EvalOptions{}, sentence{tags("B-NP I-NP O"), tags("B-NP B-NP O")})
	want := []LabelScore{
		{"B-NP", Tally{1, 2, 1, 0.5, 1, 2 * 0.5 * 1 / 1.5}},
		{"I-NP", Tally{1, 0, 0, 0, 0, 0}},
		{"O", Tally{1, 1, 1, 1, 1, 1}},
	}
	if fmt.Sprint(s.Labels) != fmt.Sprint(want) {
		t.Errorf("labels = %v\nwant %v", s.Labels, want)
	}
}

func TestConllevalQuirks(t *testing.T) {
	// Tag "B" has prefix B and type "": O,B starts a chunk of type "",
	// the boundary (B,O) ends it. "" is a key of both foundCorrect and
	// foundGuessed, and the script's de-duplication `not($lastType) or
	// $lastType ne $i` lets it through twice, "" being false in perl.
	s := evaluate(t, EvalOptions{}, sentence{tags("B O"), tags("B O")})
	checkCounts(t, s, counts{tokens: 2, correctTags: 2, gold: 1, found: 1, correct: 1})
	line := typeLine("", "precision: 100.00%; recall: 100.00%; FB1: 100.00", 1)
	want := "processed 2 tokens with 1 phrases; found: 1 phrases; correct: 1.\n" +
		"accuracy: 100.00%; precision: 100.00%; recall: 100.00%; FB1: 100.00\n" + line + line
	if got := report(t, s); got != want {
		t.Errorf("report:\n%s\nwant:\n%s", got, want)
	}

	// Type "0" is false in perl, so "B-0" has type "" and its tag compares
	// equal to "B": 2 of 2 tokens right although the strings differ.
	s = evaluate(t, EvalOptions{}, sentence{tags("B-0 O"), tags("B O")})
	checkCounts(t, s, counts{tokens: 2, correctTags: 2, gold: 1, found: 1, correct: 1})

	// The prefix is cut at the first '-', the rest is the type: "B-A-B"
	// is type "A-B", so "I-A-B" continues it and "I-A" starts another.
	s = evaluate(t, EvalOptions{}, sentence{tags("B-A-B I-A-B I-A"), tags("B-A-B I-A-B I-A-B")})
	checkCounts(t, s, counts{tokens: 3, correctTags: 2, gold: 2, found: 1, correct: 0})
	checkType(t, s, "A-B", 1, 1, 0)
	checkType(t, s, "A", 1, 0, 0)

	// The end-of-input credit. Gold = predicted = "B-X S". Token 2: B,S
	// with types X then "" ends X in both (type rule): X is correct; it
	// also starts a chunk of type "" in both ("S" is not O, types differ),
	// open and correct so far. The boundary (S,O with types "" and "")
	// fires no end rule, so the chunk stays open; only conlleval's final
	// `if ($inCorrect) { $correctChunk++ }` credits it: 2 correct of 2.
	s = evaluate(t, EvalOptions{}, sentence{tags("B-X S"), tags("B-X S")})
	checkCounts(t, s, counts{tokens: 2, correctTags: 2, gold: 2, found: 2, correct: 2})
	checkType(t, s, "", 1, 1, 1)

	// "." tags neither end nor start on a type change. Gold "B-NP I-NP
	// I-NP" is one NP. Predicted "B-NP .-NP I-VP": NP starts at 1, ".-NP"
	// (same type) continues it, I-VP after "." starts a VP (type rule on
	// the current tag) without ending anything (no rule for "." then I).
	// At token 3 neither side ends, but the types differ (NP, VP): the
	// open correct chunk is dropped. Gold 1, found 2, correct 0; only
	// token 1 agrees.
	s = evaluate(t, EvalOptions{}, sentence{tags("B-NP I-NP I-NP"), tags("B-NP .-NP I-VP")})
	checkCounts(t, s, counts{tokens: 3, correctTags: 1, gold: 1, found: 2, correct: 0})

	// A type credited twice but found once: 200%. Gold = predicted =
	// "B- -NP .-NP". Token 1 (B, "") starts a chunk of type "". Token 2
	// (prefix "", type NP) ends it by the type rule (credit 1 for "") and
	// starts an NP. Token 3 (".", NP) neither ends nor starts anything, nor
	// does the boundary after it (no rule ends a chunk after "."), so the
	// NP is open and correct at the end of input, and the final credit
	// goes to $lastCorrectType, by then the boundary's "": "" has found 1,
	// gold 1, correct 2; NP has found 1, gold 1, correct 0. Overall 2 of 2.
	s = evaluate(t, EvalOptions{}, sentence{tags("B- -NP .-NP"), tags("B- -NP .-NP")})
	checkCounts(t, s, counts{tokens: 3, correctTags: 3, gold: 2, found: 2, correct: 2})
	checkType(t, s, "", 1, 1, 2)
	checkType(t, s, "NP", 1, 1, 0)
	line = typeLine("", "precision: 200.00%; recall: 200.00%; FB1: 200.00", 1)
	want = "processed 3 tokens with 2 phrases; found: 2 phrases; correct: 2.\n" +
		"accuracy: 100.00%; precision: 100.00%; recall: 100.00%; FB1: 100.00\n" + line + line +
		typeLine("NP", "precision:   0.00%; recall:   0.00%; FB1:   0.00", 1)
	if got := report(t, s); got != want {
		t.Errorf("report:\n%s\nwant:\n%s", got, want)
	}

	// A type is padded by bytes, as perl pads a byte string: "ÉTÉ" is 5
	// bytes, so 12 spaces precede it, where fmt's %17s would give 14.
	s = evaluate(t, EvalOptions{}, sentence{tags("S-ÉTÉ"), tags("S-ÉTÉ")})
	if got := report(t, s); !strings.Contains(got, "\n"+strings.Repeat(" ", 12)+"ÉTÉ: ") {
		t.Errorf("report does not pad ÉTÉ to 17 bytes:\n%s", got)
	}
}

// readConll reads lines "word ... gold pred" with a blank line after each
// sentence, as conlleval reads them.
func readConll(t testing.TB, path string) []sentence {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []sentence
	var cur sentence
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		fs := strings.Fields(sc.Text())
		switch {
		case len(fs) == 0:
			out = append(out, cur)
			cur = sentence{}
		case len(fs) < 3:
			t.Fatalf("%s:%d: want word, gold and predicted tags", path, n)
		default:
			cur.gold = append(cur.gold, fs[len(fs)-2])
			cur.pred = append(cur.pred, fs[len(fs)-1])
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(cur.gold) > 0 {
		out = append(out, cur)
	}
	return out
}

// TestGolden scores testdata/eval/golden.txt (5 sentences, 21 tokens) and
// compares the report with golden.conlleval, derived by hand:
//
//	gold chunks                        predicted chunks
//	s1: NP[1] VP[2] NP[3-6] VP[7-8]    NP[1] VP[2] NP[3-4] NP[5-6] VP[7-8]
//	s2: PP[1] NP[2-5]                  PP[1] ADVP[2] NP[3-5]
//	s3: NP[1] VP[2] ADJP[3-4]          NP[1] ADJP[3-4] (I-ADJP after O starts it)
//	s4: INTJ[1]                        INTJ[1]
//	s5: ADVP[1]                        INTJ[1] (I-INTJ after the boundary: a new chunk)
//
// Gold 11 (NP 4, VP 3, ADJP 1, ADVP 1, INTJ 1, PP 1), found
// 12 (NP 5, VP 2, ADJP 1, ADVP 1, INTJ 2, PP 1), correct 7 (s1: NP[1], VP[2],
// VP[7-8]; s2: PP; s3: NP, ADJP; s4: INTJ) = NP 2, VP 2, PP, ADJP, INTJ.
// Tags differ at s1 t5, s2 t2 t3, s3 t2 t3, s5 t1: 15 of 21 right, 71.43%.
// Precision 700/12 = 58.33, recall 700/11 = 63.64, FB1 = 1400/23 = 60.87.
// NP: 2/5 = 40.00, 2/4 = 50.00, FB1 4000/90 = 44.44; VP: 2/2 = 100,
// 2/3 = 66.67, FB1 80.00; INTJ: 1/2 = 50, 1/1 = 100, FB1 66.67; ADVP: 0/1
// found, 0/1 gold, all 0; ADJP and PP 100.
func TestGolden(t *testing.T) {
	sents := readConll(t, filepath.Join("testdata", "eval", "golden.txt"))
	want, err := os.ReadFile(filepath.Join("testdata", "eval", "golden.conlleval"))
	if err != nil {
		t.Fatal(err)
	}
	s := evaluate(t, EvalOptions{}, sents...)
	if got := report(t, s); got != string(want) {
		t.Errorf("report:\n%s\nwant (testdata/eval/golden.conlleval):\n%s", got, want)
	}
	checkType(t, s, "NP", 4, 5, 2)
	checkType(t, s, "INTJ", 1, 2, 1)

	// The JSON holds the same figures, types sorted.
	var b bytes.Buffer
	if err := s.WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	var back Scores
	if err := json.Unmarshal(b.Bytes(), &back); err != nil {
		t.Fatalf("JSON does not decode: %v\n%s", err, b.String())
	}
	var types []string
	for _, ts := range back.Chunks.Types {
		types = append(types, ts.Type)
	}
	if got := strings.Join(types, " "); got != "ADJP ADVP INTJ NP PP VP" {
		t.Errorf("JSON types %q", got)
	}
	if back.Tokens != 21 || back.CorrectTokens != 15 || back.Chunks.Correct != 7 ||
		back.Chunks.Gold != 11 || back.Chunks.Predicted != 12 || back.Sentences != 5 {
		t.Errorf("JSON scores %+v", back)
	}
	for _, key := range []string{`"accuracy": 0.7142857142857143`, `"f1":`, `"labels": [`, `"scheme": "conlleval"`} {
		if !strings.Contains(b.String(), key) {
			t.Errorf("JSON lacks %s:\n%s", key, b.String())
		}
	}
}

func TestResultDoesNotChangeState(t *testing.T) {
	// Result in the middle, then more sentences: same as one Result at the end.
	a := []sentence{
		{tags("B-NP I-NP O"), tags("B-NP O O")},
		{tags("I-VP B-NP"), tags("I-VP B-NP")},
	}
	e := NewEvaluator(EvalOptions{})
	for _, s := range a {
		_ = e.Result()
		if err := e.Add(s.gold, s.pred); err != nil {
			t.Fatal(err)
		}
	}
	got, _ := json.Marshal(e.Result())
	want, _ := json.Marshal(evaluate(t, EvalOptions{}, a...))
	if !bytes.Equal(got, want) {
		t.Errorf("with intermediate Result: %s\nwithout: %s", got, want)
	}
}

func ExampleEvaluator() {
	e := NewEvaluator(EvalOptions{}) // conlleval rules
	_ = e.Add([]string{"B-NP", "I-NP", "B-VP", "O"}, []string{"B-NP", "I-NP", "B-NP", "O"})
	_ = e.Add([]string{"O", "I-PP"}, []string{"O", "I-PP"})
	_ = e.WriteConlleval(os.Stdout)
	// Output:
	// processed 6 tokens with 3 phrases; found: 3 phrases; correct: 2.
	// accuracy:  83.33%; precision:  66.67%; recall:  66.67%; FB1:  66.67
	//                NP: precision:  50.00%; recall: 100.00%; FB1:  66.67  2
	//                PP: precision: 100.00%; recall: 100.00%; FB1: 100.00  1
	//                VP: precision:   0.00%; recall:   0.00%; FB1:   0.00  0
}

// iobSpans lists the chunks of IOB1/IOB2 tags directly: a chunk of type X
// opens at B-X, or at I-X when the token before is not inside an X chunk,
// and runs over the I-X tokens that follow. Sentences never share a chunk.
func iobSpans(sents [][]string) map[[3]string]bool {
	out := map[[3]string]bool{}
	for si, tags := range sents {
		start, typ := -1, ""
		closeAt := func(i int) {
			if start >= 0 {
				out[[3]string{fmt.Sprint(si), fmt.Sprint(start, ":", i), typ}] = true
			}
			start = -1
		}
		for i, tg := range tags {
			p, ty, _ := strings.Cut(tg, "-")
			switch {
			case tg == "O":
				closeAt(i)
			case p == "B" || start < 0 || ty != typ:
				closeAt(i)
				start, typ = i, ty
			}
		}
		closeAt(len(tags))
	}
	return out
}

// randomIOB draws sentences of IOB tags over types NP and VP.
func randomIOB(r *rand.Rand, n int) []sentence {
	alpha := []string{"O", "B-NP", "I-NP", "B-VP", "I-VP"}
	out := make([]sentence, n)
	for i := range out {
		l := r.IntN(8)
		for range l {
			out[i].gold = append(out[i].gold, alpha[r.IntN(len(alpha))])
			out[i].pred = append(out[i].pred, alpha[r.IntN(len(alpha))])
		}
	}
	return out
}

func TestIOBAgainstSpans(t *testing.T) {
	// On IOB tags conlleval's streaming count (inCorrect, lastCorrect…)
	// must equal the intersection of the chunk sets listed directly.
	r := rand.New(rand.NewPCG(1, 2))
	for trial := range 500 {
		sents := randomIOB(r, 1+r.IntN(4))
		var g, p [][]string
		for _, s := range sents {
			g, p = append(g, s.gold), append(p, s.pred)
		}
		gs, ps := iobSpans(g), iobSpans(p)
		correct := 0
		for k := range gs {
			if ps[k] {
				correct++
			}
		}
		for _, sch := range []Scheme{SchemeConlleval, SchemeAuto} {
			s := evaluate(t, EvalOptions{Scheme: sch}, sents...)
			c := s.Chunks
			if c.Gold != len(gs) || c.Predicted != len(ps) || c.Correct != correct {
				t.Fatalf("trial %d %v %v: gold/found/correct %d/%d/%d, spans give %d/%d/%d",
					trial, sch, sents, c.Gold, c.Predicted, c.Correct, len(gs), len(ps), correct)
			}
		}
	}
}

// quirkAlphabet mixes well-formed tags with the odd ones conlleval still
// reads: bare prefixes, brackets, ".", an O with a type, type "0", a
// hyphenated type, an empty prefix, a non-ASCII type.
var quirkAlphabet = []string{
	"O", "B-NP", "I-NP", "E-NP", "S-NP", "B-VP", "I-VP", "E-VP", "S-VP",
	"B", "I", "E", "S", "[", "]", ".", ".-NP", "O-NP", "B-0", "I-0",
	"B-A-B", "I-A-B", "-NP", "B-", "I-ÉTÉ", "-X-", "X",
}

// TestAgainstRecalledPerl compares the report with the output of
// testdata/eval/conlleval_recalled.pl (conlleval written down from memory;
// see its header) on random documents over quirkAlphabet. Skipped without
// perl.
func TestAgainstRecalledPerl(t *testing.T) {
	perl, err := exec.LookPath("perl")
	if err != nil {
		t.Skip("perl not found")
	}
	script := filepath.Join("testdata", "eval", "conlleval_recalled.pl")
	r := rand.New(rand.NewPCG(3, 4))
	trials := 300
	if testing.Short() {
		trials = 30
	}
	for trial := range trials {
		// Mostly documents of 1-4 sentences, every tenth of 1-400.
		nsent := 1 + r.IntN(4)
		if trial%10 == 0 {
			nsent = 1 + r.IntN(400)
		}
		var in bytes.Buffer
		var sents []sentence
		for range nsent {
			var s sentence
			for range r.IntN(7) {
				s.gold = append(s.gold, quirkAlphabet[r.IntN(len(quirkAlphabet))])
				s.pred = append(s.pred, quirkAlphabet[r.IntN(len(quirkAlphabet))])
				fmt.Fprintf(&in, "w %s %s\n", s.gold[len(s.gold)-1], s.pred[len(s.pred)-1])
			}
			in.WriteString("\n")
			sents = append(sents, s)
		}
		cmd := exec.Command(perl, script)
		cmd.Stdin = bytes.NewReader(in.Bytes())
		want, err := cmd.Output()
		if err != nil {
			t.Fatalf("perl: %v", err)
		}
		got := report(t, evaluate(t, EvalOptions{}, sents...))
		if got != string(want) {
			t.Fatalf("trial %d, input:\n%s\ngot:\n%s\nperl:\n%s", trial, in.String(), got, want)
		}
	}
}

// token is one line of a CoNLL-2000 file.
type token struct{ pos, chunk string }

func readConll2000(t testing.TB, path string) [][]token {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	var out [][]token
	var cur []token
	sc := bufio.NewScanner(zr)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) == 0 {
			if len(cur) > 0 {
				out = append(out, cur)
			}
			cur = nil
			continue
		}
		cur = append(cur, token{fs[1], fs[2]})
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if len(cur) > 0 {
		out = append(out, cur)
	}
	return out
}

// TestConll2000Baseline reproduces the baseline published with the
// CoNLL-2000 shared task (README of the data: "selecting the chunk tag
// which was most frequently associated with the current part-of-speech
// tag": precision 72.58%, recall 82.14%, F 77.07) and the phrase count of
// the test set in conlleval's example output (47377 tokens, 23852 phrases).
func TestConll2000Baseline(t *testing.T) {
	train := readConll2000(t, datatest.Path(t, "conll2000", "train.txt.gz"))
	test := readConll2000(t, datatest.Path(t, "conll2000", "test.txt.gz"))

	freq := map[string]map[string]int{}
	for _, s := range train {
		for _, tk := range s {
			if freq[tk.pos] == nil {
				freq[tk.pos] = map[string]int{}
			}
			freq[tk.pos][tk.chunk]++
		}
	}
	best := map[string]string{}
	for pos, m := range freq {
		n := -1
		for chunk, c := range m {
			if c > n || (c == n && chunk < best[pos]) {
				best[pos], n = chunk, c
			}
		}
	}

	base, self := NewEvaluator(EvalOptions{}), NewEvaluator(EvalOptions{})
	for _, s := range test {
		gold, pred := make([]string, len(s)), make([]string, len(s))
		for i, tk := range s {
			gold[i], pred[i] = tk.chunk, best[tk.pos]
			if pred[i] == "" {
				pred[i] = "O"
			}
		}
		if err := base.Add(gold, pred); err != nil {
			t.Fatal(err)
		}
		if err := self.Add(gold, gold); err != nil {
			t.Fatal(err)
		}
	}
	var b bytes.Buffer
	if err := base.WriteConlleval(&b); err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitN(b.String(), "\n", 3)
	if !strings.HasPrefix(lines[0], "processed 47377 tokens with 23852 phrases;") ||
		!strings.HasSuffix(lines[1], "precision:  72.58%; recall:  82.14%; FB1:  77.07") {
		t.Errorf("baseline report:\n%s\nwant 47377 tokens, 23852 phrases, 72.58/82.14/77.07", b.String())
	}

	s := self.Result()
	c := s.Chunks
	if s.Tokens != 47377 || c.Gold != 23852 || c.Predicted != 23852 || c.Correct != 23852 ||
		c.F1 != 1 || s.Accuracy != 1 {
		t.Errorf("gold against itself: %d tokens, %d/%d/%d phrases, F1 %v, accuracy %v",
			s.Tokens, c.Gold, c.Predicted, c.Correct, c.F1, s.Accuracy)
	}
}

// fuzzWellFormed is the length of the well-formed head of quirkAlphabet
// (O, and prefixes B I E S with a type).
const fuzzWellFormed = 9

// FuzzEvaluator reads a byte string as tag pairs (gold, predicted) drawn from
// quirkAlphabet, a byte ≥ 0xF0 ending the sentence; the first byte picks the
// scheme and whether only well-formed tags are used.
func FuzzEvaluator(f *testing.F) {
	f.Add([]byte{0, 1, 1, 2, 2, 0, 0, 0xF0, 3, 3})
	f.Add([]byte{1, 4, 1, 4, 4, 2, 3, 0xFF, 7, 8, 6, 5})
	f.Add([]byte{2, 9, 10, 11, 12, 13, 14, 15, 16, 0xF0, 17, 18, 19, 20, 21, 22})
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) == 0 {
			return
		}
		scheme := []Scheme{SchemeConlleval, SchemeAuto}[data[0]&1]
		n := len(quirkAlphabet)
		wellFormed := data[0]&2 == 0
		if wellFormed {
			n = fuzzWellFormed
		}
		var sents []sentence
		var cur sentence
		for i := 1; i < len(data); i++ {
			if data[i] >= 0xF0 || i+1 == len(data) {
				sents = append(sents, cur)
				cur = sentence{}
				continue
			}
			cur.gold = append(cur.gold, quirkAlphabet[int(data[i])%n])
			cur.pred = append(cur.pred, quirkAlphabet[int(data[i+1])%n])
			i++
		}
		sents = append(sents, cur)

		s := evaluate(t, EvalOptions{Scheme: scheme}, sents...)
		checkInvariants(t, s, wellFormed)
		var b bytes.Buffer
		if err := s.WriteConlleval(&b); err != nil {
			t.Fatal(err)
		}
		if err := s.WriteJSON(&b); err != nil {
			t.Fatal(err)
		}
		if !wellFormed {
			return
		}
		if !hasSOrEB(sents) {
			// Without S- tags and E-T B-T pairs both rule sets agree.
			other := evaluate(t, EvalOptions{Scheme: SchemeConlleval + SchemeAuto - scheme}, sents...)
			other.Scheme = s.Scheme
			a, _ := json.Marshal(s)
			b, _ := json.Marshal(other)
			if !bytes.Equal(a, b) {
				t.Errorf("conlleval and auto rules disagree:\n%s\n%s", a, b)
			}
		}
		// Gold against itself: every chunk found and correct.
		self := make([]sentence, len(sents))
		for i, st := range sents {
			self[i] = sentence{st.gold, st.gold}
		}
		ss := evaluate(t, EvalOptions{Scheme: scheme}, self...)
		c := ss.Chunks
		if ss.Tokens > 0 && ss.Accuracy != 1 {
			t.Errorf("self accuracy %v", ss.Accuracy)
		}
		if c.Gold > 0 && (c.Correct != c.Gold || c.Predicted != c.Gold ||
			c.Precision != 1 || c.Recall != 1 || c.F1 != 1) {
			t.Errorf("gold against itself: %+v", c.Tally)
		}
		for _, ts := range c.Types {
			if ts.Gold > 0 && ts.F1 != 1 {
				t.Errorf("gold against itself, type %q: %+v", ts.Type, ts.Tally)
			}
		}
	})
}

// hasSOrEB reports whether a gold or predicted sequence has an S- tag or
// an E-T directly followed by B-T.
func hasSOrEB(sents []sentence) bool {
	for _, st := range sents {
		for _, seq := range [][]string{st.gold, st.pred} {
			for i, tg := range seq {
				if strings.HasPrefix(tg, "S-") ||
					i > 0 && strings.HasPrefix(seq[i-1], "E-") && tg == "B-"+seq[i-1][2:] {
					return true
				}
			}
		}
	}
	return false
}

// checkInvariants checks what holds for any tags: accuracy in [0, 1],
// correct ≤ found and ≤ gold overall and per label, fractions in [0, 1]
// overall and per label. Per chunk type these hold only for well-formed
// tags: with odd ones conlleval can credit a type more often than it found
// it (see TestConllevalQuirks).
func checkInvariants(t *testing.T, s Scores, wellFormed bool) {
	t.Helper()
	if s.Accuracy < 0 || s.Accuracy > 1 || s.CorrectTokens > s.Tokens {
		t.Errorf("accuracy %v (%d of %d)", s.Accuracy, s.CorrectTokens, s.Tokens)
	}
	tallies := []Tally{s.Chunks.Tally}
	for _, l := range s.Labels {
		tallies = append(tallies, l.Tally)
	}
	if wellFormed {
		for _, ts := range s.Chunks.Types {
			tallies = append(tallies, ts.Tally)
			if ts.Correct > ts.Gold || ts.Correct > ts.Predicted {
				t.Errorf("type %q: %+v", ts.Type, ts.Tally)
			}
		}
	}
	for i, tl := range tallies {
		for _, v := range []float64{tl.Precision, tl.Recall, tl.F1} {
			if !(v >= 0 && v <= 1) {
				t.Errorf("tally %d: %+v out of [0, 1]", i, tl)
			}
		}
	}
	c := s.Chunks
	if c.Correct > c.Predicted || c.Correct > c.Gold {
		t.Errorf("correct %d > found %d or gold %d", c.Correct, c.Predicted, c.Gold)
	}
	for _, l := range s.Labels {
		if l.Correct > l.Predicted || l.Correct > l.Gold {
			t.Errorf("label %q: %+v", l.Label, l.Tally)
		}
	}
}

// TestAutoNoChunks: with AutoNoChunks, labels without any chunk prefix
// are scored by token accuracy with a note; one chunk tag among them keeps
// the chunk scores; without AutoNoChunks nothing changes.
func TestAutoNoChunks(t *testing.T) {
	pos := [2][]string{{"DT", "NN", "VBD", "."}, {"DT", "NN", "VBN", "."}}
	ev := NewEvaluator(EvalOptions{AutoNoChunks: true})
	if err := ev.Add(pos[0], pos[1]); err != nil {
		t.Fatal(err)
	}
	s := ev.Result()
	if s.Chunks != nil || s.Note != NoChunkPrefixNote || s.Scheme != "none" || s.Accuracy != 0.75 {
		t.Errorf("POS tags: %+v, want token accuracy 0.75 and the note", s)
	}
	var b strings.Builder
	if err := s.WriteConlleval(&b); err != nil {
		t.Fatal(err)
	}
	if want := "processed 4 tokens.\naccuracy:  75.00%\nnote: " + NoChunkPrefixNote + "\n"; b.String() != want {
		t.Errorf("report %q, want %q", b.String(), want)
	}
	iob := NewEvaluator(EvalOptions{AutoNoChunks: true})
	if err := iob.Add([]string{"B-NP", "I-NP", "O"}, []string{"B-NP", "B-NP", "O"}); err != nil {
		t.Fatal(err)
	}
	if s := iob.Result(); s.Chunks == nil || s.Note != "" {
		t.Errorf("IOB tags: %+v, want chunk scores and no note", s)
	}
	plain := NewEvaluator(EvalOptions{})
	if err := plain.Add(pos[0], pos[1]); err != nil {
		t.Fatal(err)
	}
	if s := plain.Result(); s.Chunks == nil || s.Note != "" {
		t.Errorf("POS tags without AutoNoChunks: %+v, want chunk scores as before", s)
	}
}
