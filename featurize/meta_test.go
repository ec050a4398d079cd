package featurize

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// TestParseInputOptions: the dualcrf.input metadata is a JSON object of
// InputOptions' fields with sane values; anything else is refused.
func TestParseInputOptions(t *testing.T) {
	got, err := ParseInputOptions(`{"format":"conll","columns":["word","pos"],"label_column":3,"keep_docstart":true}`)
	want := InputOptions{Format: "conll", Columns: []string{"word", "pos"}, LabelColumn: 3, KeepDocstart: true}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v, %v; want %+v", got, err, want)
	}
	for _, c := range []struct{ text, want string }{
		{``, "want a JSON object"},
		{`null`, "want a JSON object"},
		{`["conll"]`, "want a JSON object"},
		{`{"format":"xml","label_column":0}`, `unknown input format "xml"`},
		{`{"format":"conll","label_column":-2}`, "label_column -2"},
		{`{"format":"conll","columns":["w","w"]}`, "distinct non-empty"},
		{`{"format":"conll","colums":["w"]}`, `unknown field "colums"`},
		{`{"format":"conll"} {}`, "found more after it"},
	} {
		if _, err := ParseInputOptions(c.text); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want %q", c.text, err, c.want)
		}
	}
}

// FuzzParseInputOptions: no panic, and what is accepted survives a round
// trip through JSON.
func FuzzParseInputOptions(f *testing.F) {
	for _, in := range []InputOptions{{}, {Format: "conllu", XPOS: true}, {Format: "conll", Columns: []string{"word", "pos", "chunk"}, LabelColumn: -1}} {
		b, err := json.Marshal(in)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(b))
	}
	f.Add(`{"format":"ptb-mrg","label_column":0}`)
	f.Fuzz(func(t *testing.T, text string) {
		in, err := ParseInputOptions(text)
		if err != nil {
			return
		}
		b, err := json.Marshal(in)
		if err != nil {
			t.Fatal(err)
		}
		back, err := ParseInputOptions(string(b))
		if err != nil || !reflect.DeepEqual(back, in) {
			t.Fatalf("round trip of %q: %+v, %v; want %+v", text, back, err, in)
		}
	})
}
