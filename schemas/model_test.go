package schemas

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
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

// TestValidateModelSchema: the model schema of this version and the dense
// one of version 2 validate; a version 1 model is refused saying why; a
// weights column of another element type, labels of another type and a
// missing checksum are named; version 2's columns under version 3 are
// refused.
func TestValidateModelSchema(t *testing.T) {
	s, err := ModelSchema(map[string]string{KeyLabels: `["A","B","C"]`, KeyChecksum: "sha256:00"})
	if err != nil {
		t.Fatal(err)
	}
	if err := ValidateModelSchema(s); err != nil {
		t.Fatalf("this version's schema: %v", err)
	}
	dense, err := ModelDenseSchema(3, map[string]string{KeyLabels: `["A","B","C"]`, KeyChecksum: "sha256:00"})
	if err != nil {
		t.Fatal(err)
	}
	if err := ValidateModelSchema(dense); err != nil {
		t.Fatalf("version 2's schema: %v", err)
	}
	v1 := arrow.NewMetadata([]string{KeyFormat, KeyVersion, KeyLabels}, []string{ModelFormat, "1", `["A"]`})
	if err := ValidateModelSchema(arrow.NewSchema(dense.Fields(), &v1)); err == nil || !strings.Contains(err.Error(), "version 1 carries no checksum") {
		t.Errorf("version 1: %v", err)
	}
	md := arrow.NewMetadata([]string{KeyFormat, KeyVersion, KeyLabels}, []string{ModelFormat, ModelVersion, `["A"]`})
	fields := append([]arrow.Field(nil), s.Fields()...)
	fields[2].Type = arrow.ListOf(arrow.PrimitiveTypes.Int64)
	fields[3].Type = arrow.ListOf(arrow.PrimitiveTypes.Float32)
	err = ValidateModelSchema(arrow.NewSchema(fields, &md))
	for _, want := range []string{`column "labels" has type list<item: int64, nullable>, want list<int32>`,
		`column "weights" has type list<item: float32, nullable>, want list<float64>`, "no dualcrf.checksum key"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("int64 labels, float32 weights, no checksum: error %v lacks %q", err, want)
		}
	}
	md2 := arrow.NewMetadata([]string{KeyFormat, KeyVersion, KeyLabels}, []string{ModelFormat, ModelVersionDense, `["A"]`})
	fields = append([]arrow.Field(nil), dense.Fields()...)
	fields[2].Type = arrow.FixedSizeListOf(3, arrow.PrimitiveTypes.Float32)
	err = ValidateModelSchema(arrow.NewSchema(fields, &md2))
	if want := `column "weights" has type fixed_size_list<item: float32, nullable>[3], want fixed_size_list<float64>[K]`; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("version 2, float32 weights: error %v lacks %q", err, want)
	}
	if err := ValidateModelSchema(arrow.NewSchema(dense.Fields(), &md)); err == nil || !strings.Contains(err.Error(), `missing column "labels"`) {
		t.Errorf("version 2's columns as version 3: %v", err)
	}
}

// TestModelHash: the checksum depends on every metadata entry but itself
// and on every row, in order.
func TestModelHash(t *testing.T) {
	sum := func(md map[string]string, rows ...[]float64) string {
		h := NewModelHash(md)
		for i, r := range rows {
			h.Row(KindAttr, string(rune('a'+i)), r)
		}
		return h.Sum()
	}
	md := map[string]string{KeyLabels: `["A","B"]`, KeyLambda: "0.1"}
	base := sum(md, []float64{1, 2}, []float64{3, 4})
	if !strings.HasPrefix(base, "sha256:") || len(base) != len("sha256:")+64 {
		t.Fatalf("checksum %q", base)
	}
	withSum := map[string]string{KeyLabels: `["A","B"]`, KeyLambda: "0.1", KeyChecksum: "anything"}
	if sum(withSum, []float64{1, 2}, []float64{3, 4}) != base {
		t.Error("the checksum entry itself changes the checksum")
	}
	for what, other := range map[string]string{
		"λ":          sum(map[string]string{KeyLabels: `["A","B"]`, KeyLambda: "0.2"}, []float64{1, 2}, []float64{3, 4}),
		"a weight":   sum(md, []float64{1, 2}, []float64{3, 4.000000000000001}),
		"row order":  sum(md, []float64{3, 4}, []float64{1, 2}),
		"a new key":  sum(map[string]string{KeyLabels: `["A","B"]`, KeyLambda: "0.1", "x": ""}, []float64{1, 2}, []float64{3, 4}),
		"split rows": sum(md, []float64{1, 2, 3, 4}),
	} {
		if other == base {
			t.Errorf("changing %s leaves the checksum", what)
		}
	}
}
