package schemas

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestParseLabels: a model's labels are a non-empty JSON array of distinct
// non-empty names.
func TestParseLabels(t *testing.T) {
	if got, err := ParseLabels(`["B-NP","I-NP","O"]`); err != nil || strings.Join(got, " ") != "B-NP I-NP O" {
		t.Fatalf("got %q, %v", got, err)
	}
	for _, c := range []struct{ text, want string }{
		{`[]`, "no labels"}, {`null`, "no labels"}, {`["A",""]`, "label 1 is empty"},
		{`["A","A"]`, `label "A" appears twice`}, {`{"A":1}`, "want a JSON array"}, {`["A"`, "want a JSON array"},
	} {
		if _, err := ParseLabels(c.text); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want %q", c.text, err, c.want)
		}
	}
}

// TestParseTrainingFacts: a JSON object, its keys sorted, values compacted.
func TestParseTrainingFacts(t *testing.T) {
	facts, err := ParseTrainingFacts(`{"stopped": "gap", "epochs": 9, "gap": 0.0075}`)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, f := range facts {
		b.WriteString(f.Key + "=" + f.Value + ";")
	}
	if b.String() != `epochs=9;gap=0.0075;stopped="gap";` {
		t.Errorf("facts %s", b.String())
	}
	for _, text := range []string{`null`, `[1]`, `{"a":}`, ``} {
		if _, err := ParseTrainingFacts(text); err == nil {
			t.Errorf("%q accepted", text)
		}
	}
}

// FuzzParseLabels: no panic; what is accepted round-trips through JSON.
func FuzzParseLabels(f *testing.F) {
	f.Add(`["B-NP","I-NP","O"]`)
	f.Add(`["é","\u0000"]`)
	f.Fuzz(func(t *testing.T, text string) {
		labels, err := ParseLabels(text)
		if err != nil {
			return
		}
		b, err := json.Marshal(labels)
		if err != nil {
			t.Fatal(err)
		}
		back, err := ParseLabels(string(b))
		if err != nil || strings.Join(back, "\x00") != strings.Join(labels, "\x00") {
			t.Fatalf("round trip of %q: %q, %v", text, back, err)
		}
	})
}

// FuzzParseTrainingFacts: no panic; every accepted value is valid JSON.
func FuzzParseTrainingFacts(f *testing.F) {
	f.Add(`{"epochs":9,"stopped":"gap","primal":4.93,"dual":4.92,"gap":0.0075,"sampler":"gap","seed":1}`)
	f.Fuzz(func(t *testing.T, text string) {
		facts, err := ParseTrainingFacts(text)
		if err != nil {
			return
		}
		for i, fact := range facts {
			if !json.Valid([]byte(fact.Value)) || i > 0 && facts[i-1].Key >= fact.Key {
				t.Fatalf("fact %d of %q: %+v", i, text, fact)
			}
		}
	})
}
