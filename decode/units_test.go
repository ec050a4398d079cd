package decode

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// TestScoresAreFractions: precision, recall and F1 are fractions in [0, 1]
// in Scores and its JSON, like the accuracy, while conlleval's report still
// prints percentages.
func TestScoresAreFractions(t *testing.T) {
	// Gold NP[1-2] VP[3]; predicted NP[1] NP[2] VP[3]: 2 gold chunks, 3
	// found, 1 correct (VP); tokens 3 of 3 have the right type, 2 of 3 the
	// right tag.
	s := evaluate(t, EvalOptions{}, sentence{tags("B-NP I-NP B-VP"), tags("B-NP B-NP B-VP")})
	c := s.Chunks
	p, r := 1.0/3, 1.0/2
	f := 2 * p * r / (p + r)
	if c.Precision != p || c.Recall != r || c.F1 != f {
		t.Errorf("chunks P/R/F1 = %v/%v/%v, want %v/%v/%v", c.Precision, c.Recall, c.F1, p, r, f)
	}
	var js struct {
		Accuracy float64 `json:"accuracy"`
		Chunks   struct {
			Precision, Recall, F1 float64
		} `json:"chunks"`
		Labels []struct {
			Label                 string
			Precision, Recall, F1 float64
		} `json:"labels"`
	}
	var buf bytes.Buffer
	if err := s.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(buf.Bytes(), &js); err != nil {
		t.Fatal(err)
	}
	if js.Chunks.Precision != p || js.Chunks.Recall != r || js.Chunks.F1 != f || js.Accuracy != 2.0/3 {
		t.Errorf("JSON scores %+v, accuracy %v; want fractions %v/%v/%v, 2/3", js.Chunks, js.Accuracy, p, r, f)
	}
	for _, l := range js.Labels {
		if l.Precision > 1 || l.Recall > 1 || l.F1 > 1 {
			t.Errorf("JSON label %s scores %v/%v/%v, want fractions", l.Label, l.Precision, l.Recall, l.F1)
		}
	}
	want := "accuracy:  66.67%; precision:  33.33%; recall:  50.00%; FB1:  40.00\n"
	if got := report(t, s); !strings.Contains(got, want) {
		t.Errorf("report:\n%s\nwant the line %q", got, want)
	}
}
