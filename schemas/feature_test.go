package schemas

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
)

func TestFeatureSchemaValid(t *testing.T) {
	s, err := FeatureSchema([]string{"word", "pos"}, map[string]string{KeyTemplates: "U01:%x[0,0]", KeyMinCount: "2"})
	if err != nil {
		t.Fatal(err)
	}
	if err := ValidateFeatureSchema(s); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range s.Fields() {
		names = append(names, f.Name)
	}
	if want := []string{"sentence", "position", "word", "pos", "label", "attrs", "values"}; !reflect.DeepEqual(names, want) {
		t.Fatalf("columns %v, want %v", names, want)
	}
	if got := FeatureTextColumns(s); !reflect.DeepEqual(got, []string{"word", "pos"}) {
		t.Fatalf("text columns %v", got)
	}
	md := MetadataMap(s)
	want := map[string]string{KeyFormat: FeatureFormat, KeyVersion: FeatureVersion, KeyTemplates: "U01:%x[0,0]", KeyMinCount: "2"}
	if !reflect.DeepEqual(md, want) {
		t.Fatalf("metadata %v, want %v", md, want)
	}
	// Sorted keys: equal inputs give equal schemas, hence equal bytes.
	keys := s.Metadata().Keys()
	for i := 1; i < len(keys); i++ {
		if keys[i-1] >= keys[i] {
			t.Fatalf("metadata keys not sorted: %v", keys)
		}
	}
}

func TestFeatureSchemaRejects(t *testing.T) {
	cases := []struct {
		cols []string
		md   map[string]string
		want string
	}{
		{[]string{"word", "word"}, nil, `text column "word" given twice`},
		{[]string{"attrs"}, nil, `text column "attrs" clashes with a fixed column`},
		{[]string{""}, nil, "empty text column name"},
		{nil, map[string]string{KeyFormat: "model"}, `dualcrf.format="model" conflicts with "feature-table"`},
	}
	for _, c := range cases {
		_, err := FeatureSchema(c.cols, c.md)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("FeatureSchema(%q, %v): error %v, want %q", c.cols, c.md, err, c.want)
		}
	}
}

// withFields returns the valid schema with its fields changed by edit.
func withFields(t *testing.T, md map[string]string, edit func([]arrow.Field) []arrow.Field) *arrow.Schema {
	t.Helper()
	s, err := FeatureSchema([]string{"word"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	fields := edit(append([]arrow.Field(nil), s.Fields()...))
	meta := s.Metadata()
	if md != nil {
		var keys, values []string
		for k, v := range md {
			keys, values = append(keys, k), append(values, v)
		}
		meta = arrow.NewMetadata(keys, values)
	}
	return arrow.NewSchema(fields, &meta)
}

// replace returns an edit that gives column name the type typ.
func replace(name string, typ arrow.DataType) func([]arrow.Field) []arrow.Field {
	return func(fs []arrow.Field) []arrow.Field {
		for i := range fs {
			if fs[i].Name == name {
				fs[i].Type = typ
			}
		}
		return fs
	}
}

func TestValidateFeatureSchemaErrors(t *testing.T) {
	same := func(fs []arrow.Field) []arrow.Field { return fs }
	drop := func(name string) func([]arrow.Field) []arrow.Field {
		return func(fs []arrow.Field) []arrow.Field {
			var out []arrow.Field
			for _, f := range fs {
				if f.Name != name {
					out = append(out, f)
				}
			}
			return out
		}
	}
	int64Dict := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int64, ValueType: arrow.BinaryTypes.String}
	cases := []struct {
		name string
		md   map[string]string
		edit func([]arrow.Field) []arrow.Field
		want string
	}{
		{"no format", map[string]string{}, same,
			"invalid feature table schema: schema metadata has no dualcrf.format key (want \"feature-table\"): not written by dualcrf"},
		{"other table", map[string]string{KeyFormat: "model", KeyVersion: "1"}, same,
			`invalid feature table schema: schema metadata dualcrf.format is "model", want "feature-table"`},
		{"no version", map[string]string{KeyFormat: FeatureFormat}, same,
			"invalid feature table schema: schema metadata has no dualcrf.version key (this build reads feature-table version 1)"},
		{"version 2", map[string]string{KeyFormat: FeatureFormat, KeyVersion: "2"}, same,
			`invalid feature table schema: unsupported feature-table version "2" (this build reads 1)`},
		{"missing attrs", nil, drop(ColAttrs), `invalid feature table schema: missing column "attrs"`},
		{"position int64", nil, replace(ColPosition, arrow.PrimitiveTypes.Int64),
			`invalid feature table schema: column "position" has type int64, want int32`},
		{"label utf8", nil, replace(ColLabel, arrow.BinaryTypes.String),
			`column "label" has type utf8, want dictionary<int32, utf8>`},
		{"label int64 index", nil, replace(ColLabel, int64Dict),
			`column "label" has type dictionary<values=utf8, indices=int64, ordered=false>, want dictionary<int32, utf8>`},
		{"attrs list<int32>", nil, replace(ColAttrs, arrow.ListOf(arrow.PrimitiveTypes.Int32)),
			`column "attrs" has type list<item: int32, nullable>, want list<dictionary<int32, utf8>>`},
		{"values float32", nil, replace(ColValues, arrow.ListOf(arrow.PrimitiveTypes.Float32)),
			`column "values" has type list<item: float32, nullable>, want list<float64>`},
		{"text int", nil, replace("word", arrow.PrimitiveTypes.Int32),
			`column "word" has type int32, want utf8 (pass-through text)`},
		{"duplicate", nil, func(fs []arrow.Field) []arrow.Field { return append(fs, fs[0]) },
			`column "sentence" appears 2 times`},
		{"two problems", nil, func(fs []arrow.Field) []arrow.Field {
			return replace(ColSentence, arrow.PrimitiveTypes.Int32)(drop(ColValues)(fs))
		}, `invalid feature table schema: column "sentence" has type int32, want int64; missing column "values"`},
	}
	for _, c := range cases {
		err := ValidateFeatureSchema(withFields(t, c.md, c.edit))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v\nwant %s", c.name, err, c.want)
			continue
		}
		var se *SchemaError
		if !errors.As(err, &se) || se.Table != "feature table" {
			t.Errorf("%s: error %T is not a feature-table *SchemaError", c.name, err)
		}
	}
	// A list item named otherwise, or nullable, is still a feature table
	// (pyarrow and arrow-go name and flag list items differently).
	s := withFields(t, nil, replace(ColAttrs, arrow.ListOfField(arrow.Field{Name: "element", Type: stringDictType(), Nullable: true})))
	if err := ValidateFeatureSchema(s); err != nil {
		t.Fatal(err)
	}
}
