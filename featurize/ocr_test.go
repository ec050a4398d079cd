package featurize

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dualcrf/dualcrf/pipeline"
)

// ocrLine is one line of letter.data: the letter with the given pixels set.
func ocrLine(id int, letter string, last bool, word, pos, fold int, set ...int) string {
	next := id + 1
	if last {
		next = -1
	}
	px := make([]string, OCRPixels)
	for i := range px {
		px[i] = "0"
	}
	for _, k := range set {
		px[k] = "1"
	}
	return fmt.Sprintf("%d\t%s\t%d\t%d\t%d\t%d\t%s\t\n", id, letter, next, word, pos, fold, strings.Join(px, "\t"))
}

// ocrSample is two words: "ab" in fold 0 and "c" in fold 3.
func ocrSample() string {
	return ocrLine(1, "a", false, 1, 1, 0, 0, 127) + ocrLine(2, "b", true, 1, 2, 0, 9) +
		ocrLine(3, "c", true, 2, 1, 3)
}

func TestOCRReaderWordsAndPixels(t *testing.T) {
	r := newOCRReader(strings.NewReader(ocrSample()), "s.data", nil)
	var got []string
	for r.Scan() {
		s := r.Sentence()
		var b strings.Builder
		for i, l := range s.Labels {
			fmt.Fprintf(&b, "%s(line %d):", l, s.TokenLine(i))
			for _, a := range s.Attrs[i] {
				fmt.Fprintf(&b, " %s=%g", a.Name, a.Value)
			}
			b.WriteString("; ")
		}
		got = append(got, b.String())
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	want := []string{"a(line 1): p_0_0=1 p_15_7=1; b(line 2): p_1_1=1; ", "c(line 3):; "}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("got %q\nwant %q", got, want)
	}
}

func TestOCRReaderFolds(t *testing.T) {
	for _, tc := range []struct {
		folds string
		want  []string
	}{{"0", []string{"a b"}}, {"3", []string{"c"}}, {"0-9", []string{"a b", "c"}}, {"1,3", []string{"c"}}} {
		sel, err := ParseFolds(tc.folds)
		if err != nil {
			t.Fatal(err)
		}
		r := newOCRReader(strings.NewReader(ocrSample()), "s.data", sel)
		var got []string
		for r.Scan() {
			got = append(got, strings.Join(r.Sentence().Labels, " "))
		}
		if err := r.Err(); err != nil {
			t.Fatalf("folds %s: %v", tc.folds, err)
		}
		if fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("folds %s: got %q, want %q", tc.folds, got, tc.want)
		}
	}
}

func TestParseFoldsRefuses(t *testing.T) {
	for _, spec := range []string{"10", "-1", "a", "3-1", "1,", "0-", "1-2-3"} {
		if _, err := ParseFolds(spec); err == nil {
			t.Errorf("ParseFolds(%q) accepted", spec)
		}
	}
}

func TestOCRReaderErrors(t *testing.T) {
	good := ocrSample()
	lines := strings.SplitAfter(good, "\n")
	for _, tc := range []struct{ name, in, want string }{
		{"empty", "", "s.data: no sentences"},
		{"truncated word", lines[0], "s.data:1: input ends inside the word that begins at line 1"},
		{"short", strings.Replace(lines[0], "\t0\t", "\t", 1), "s.data:1: 133 tab-separated fields"},
		{"long", strings.Replace(lines[0], "\t0\t", "\t0\t0\t", 1), "s.data:1: more than 134 tab-separated fields"},
		{"pixel", lines[0] + strings.Replace(lines[1], "\t0\t\n", "\tx\t\n", 1), "s.data:2: pixel p_15_7 is \"x\""},
		{"id", lines[0] + strings.Replace(lines[1], "2\tb\t-1", "5\tb\t-1", 1), "s.data:2: id 5 does not follow id 1"},
		{"word", lines[0] + strings.Replace(lines[1], "-1\t1\t2\t0", "-1\t7\t2\t0", 1), "s.data:2: word_id 7, fold 0 differ"},
		{"fold", strings.Replace(lines[2], "-1\t2\t1\t3", "-1\t2\t1\t12", 1), "s.data:1: fold 12 is not in 0-9"},
		{"blank in word", lines[0] + "\n" + lines[1], "s.data:2: blank line inside the word"},
		{"no word of fold", good, ""},
	} {
		var sel []bool
		if tc.name == "no word of fold" {
			sel, _ = ParseFolds("5")
			tc.want = "s.data: no word of the selected folds among 2 words"
		}
		r := newOCRReader(strings.NewReader(tc.in), "s.data", sel)
		for r.Scan() {
		}
		err := r.Err()
		var se *SyntaxError
		if err == nil || !errors.As(err, &se) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want a SyntaxError containing %q", tc.name, err, tc.want)
		}
	}
}

// TestOCRTableHasAllPixelsAndLetters: a table of one word still has the
// 128 pixel attributes and the 26 letters, in the fixed order, so that
// d = 128·26 + 26² + 3·26 = 4,082 whatever the folds hold.
func TestOCRTableHasAllPixelsAndLetters(t *testing.T) {
	p := filepath.Join(t.TempDir(), "one.data")
	if err := os.WriteFile(p, []byte(ocrSample()), 0o644); err != nil {
		t.Fatal(err)
	}
	in := InputOptions{Format: "ocr", Folds: "3"}
	tab, _, err := Table(context.Background(), pipeline.Source{Path: p}, RunOptions{Input: in})
	if err != nil {
		t.Fatal(err)
	}
	d := tab.Data
	if d.NumAttrs != OCRPixels || d.NumLabels != 26 || d.LabelNames[2] != "c" || d.AttrNames[9] != "p_1_1" {
		t.Fatalf("A = %d, K = %d, labels %v, attrs %v…", d.NumAttrs, d.NumLabels, d.LabelNames, d.AttrNames[:10])
	}
	if d.Len() != 1 || d.Labels[0] != 2 {
		t.Fatalf("n = %d, labels %v", d.Len(), d.Labels)
	}
	var out bytes.Buffer
	sum, err := Run(context.Background(), pipeline.Source{Path: p}, &out, RunOptions{Input: InputOptions{Format: "ocr"}})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Attributes != OCRPixels || len(sum.Labels) != 26 || sum.Sentences != 2 || sum.Coverage != nil {
		t.Fatalf("summary %+v", sum)
	}
}

func TestFoldsOnlyForOCR(t *testing.T) {
	_, err := newFormatReader(strings.NewReader("a B\n"), "x", InputOptions{Format: "conll", Folds: "1"})
	if err == nil {
		t.Fatal("--folds accepted for conll")
	}
}

func FuzzOCR(f *testing.F) {
	f.Add([]byte(ocrSample()))
	f.Add([]byte(ocrLine(1, "a", true, 1, 1, 0, 3)))
	f.Add([]byte(strings.ReplaceAll(ocrSample(), "\t\n", "\r\n")))
	f.Fuzz(func(t *testing.T, data []byte) {
		r := newOCRReader(bytes.NewReader(data), "fuzz.in", nil)
		n := 0
		for r.Scan() {
			s := r.Sentence()
			if len(s.Labels) == 0 || len(s.Attrs) != len(s.Labels) || s.Tokens != nil {
				t.Fatalf("word %d: %d labels, %d attribute rows", n, len(s.Labels), len(s.Attrs))
			}
			for _, row := range s.Attrs {
				if len(row) > OCRPixels {
					t.Fatalf("%d pixels set", len(row))
				}
			}
			n++
		}
		if err := r.Err(); err != nil {
			var se *SyntaxError
			if !errors.As(err, &se) || se.File != "fuzz.in" {
				t.Fatalf("error %v (%T) does not name the input", err, err)
			}
		} else if n == 0 {
			t.Fatal("no word and no error")
		}
	})
}
