package featurize

import (
	"reflect"
	"strings"
	"testing"
	"unsafe"
)

func TestVocabFirstAppearanceAndCutoff(t *testing.T) {
	b := NewVocabBuilder()
	stream := []Feature{
		{Name: "w[0]=a", Template: 0}, {Name: "p[0]=X", Template: 1}, {Name: "w[0]=b", Template: 0},
		{Name: "w[0]=a", Template: 0}, {Name: "p[0]=Y", Template: 1}, {Name: "p[0]=X", Template: 1},
		{Name: "w[0]=b", Template: 0}, {Name: "w[0]=a", Template: 0, Value: 7},
	}
	b.AddSentence([][]Feature{stream[:3], stream[3:]})
	if b.Len() != 4 || b.Count("w[0]=a") != 3 || b.Count("p[0]=Y") != 1 || b.Count("nope") != 0 {
		t.Fatalf("builder: %d distinct, counts %d %d", b.Len(), b.Count("w[0]=a"), b.Count("p[0]=Y"))
	}
	cases := []struct {
		v    *Vocabulary
		want []string
	}{
		{b.Build(0), []string{"w[0]=a", "p[0]=X", "w[0]=b", "p[0]=Y"}},
		{b.Build(2), []string{"w[0]=a", "p[0]=X", "w[0]=b"}},
		{b.Build(3), []string{"w[0]=a"}},
		{b.BuildPerTemplate(3, map[int]int{1: 1}), []string{"w[0]=a", "p[0]=X", "p[0]=Y"}},
		{b.BuildPerTemplate(1, map[int]int{0: 4}), []string{"p[0]=X", "p[0]=Y"}},
	}
	for i, c := range cases {
		if got := c.v.Names(); !reflect.DeepEqual(got, c.want) {
			t.Errorf("case %d: %q, want %q", i, got, c.want)
		}
		for id, name := range c.want {
			if got, ok := c.v.ID(name); !ok || got != int32(id) || c.v.Name(int32(id)) != name {
				t.Errorf("case %d: ID(%q) = %d, %v", i, name, got, ok)
			}
		}
	}
	v := cases[0].v
	if _, ok := v.ID("w[0]=c"); ok || v.Name(-1) != "" || v.Name(4) != "" || v.Len() != 4 {
		t.Error("unknown names and ids must miss")
	}
	names := v.Names()
	names[0] = "changed"
	if v.Name(0) != "w[0]=a" {
		t.Error("Names must return a copy")
	}
}

// TestVocabClonesNames checks the builder keeps its own copy of each name,
// not the extractor's per-sentence string.
func TestVocabClonesNames(t *testing.T) {
	names := strings.Repeat("w[0]=abc", 2)
	b := NewVocabBuilder()
	b.Add(Feature{Name: names[:6]})
	name := b.Build(0).Name(0)
	if name != "w[0]=a" || unsafe.StringData(name) == unsafe.StringData(names) {
		t.Fatalf("name %q shares the caller's memory", name)
	}
}

func TestNewVocabulary(t *testing.T) {
	v, err := NewVocabulary([]string{"x", "y", "z"})
	if err != nil {
		t.Fatal(err)
	}
	if id, ok := v.ID("z"); !ok || id != 2 || v.Len() != 3 {
		t.Errorf("ID(z) = %d, %v", id, ok)
	}
	_, err = NewVocabulary([]string{"x", "y", "x"})
	if err == nil || !strings.Contains(err.Error(), `"x" at both id 0 and id 2`) {
		t.Errorf("duplicate: %v", err)
	}
}

func TestVocabAppendIDs(t *testing.T) {
	v, _ := NewVocabulary([]string{"a", "b"})
	feats := []Feature{{Name: "b", Value: 2}, {Name: "zz", Value: 1}, {Name: "a", Value: 1}, {Name: "q", Value: 3}}
	ids, vals, dropped := v.AppendIDs([]int32{9}, []float64{9}, feats)
	if !reflect.DeepEqual(ids, []int32{9, 1, 0}) || !reflect.DeepEqual(vals, []float64{9, 2, 1}) || dropped != 2 {
		t.Errorf("ids %v vals %v dropped %d", ids, vals, dropped)
	}
}
