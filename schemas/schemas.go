// Package schemas defines every Arrow schema dualcrf reads or writes: column
// names and types, schema-metadata keys, format versions and validation.
//
// Each table has its own file (feature.go for the feature table; the model,
// prediction table and training log follow the same pattern); this file holds
// what they share: the metadata keys that identify a table and the helpers
// that check columns.
//
// Every table written by dualcrf carries two schema-metadata entries,
// KeyFormat (which table it is) and KeyVersion (the layout version of that
// table), so a stage can refuse a file it does not understand with a precise
// message instead of misreading it.
package schemas

import (
	"fmt"
	"sort"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
)

// Schema-metadata keys shared by all tables. Values are strings.
const (
	// KeyFormat names the table kind, e.g. FeatureFormat.
	KeyFormat = "dualcrf.format"
	// KeyVersion is the layout version of that table kind, a decimal integer.
	KeyVersion = "dualcrf.version"
	// KeyCreatedBy names the program that wrote the table (e.g. "dualcrf 0.1").
	KeyCreatedBy = "dualcrf.created_by"
	// KeySource names the input the table was made from (file name or "-").
	KeySource = "dualcrf.source"
)

// SchemaError lists what is wrong with a schema. Table names the table kind
// that was expected ("feature table").
type SchemaError struct {
	Table    string
	Problems []string
}

func (e *SchemaError) Error() string {
	return fmt.Sprintf("invalid %s schema: %s", e.Table, strings.Join(e.Problems, "; "))
}

// problems collects schema problems; it becomes a *SchemaError or nil.
type problems struct {
	table string
	list  []string
}

func (p *problems) addf(format string, args ...any) {
	p.list = append(p.list, fmt.Sprintf(format, args...))
}

func (p *problems) err() error {
	if len(p.list) == 0 {
		return nil
	}
	return &SchemaError{Table: p.table, Problems: p.list}
}

// checkFormat checks the identifying metadata of schema s: KeyFormat must be
// format and KeyVersion must be version. It reports at most one problem,
// since a wrong table kind or version makes column checks meaningless.
func checkFormat(p *problems, s *arrow.Schema, format, version string) bool {
	md := s.Metadata()
	got, ok := metaValue(md, KeyFormat)
	switch {
	case !ok:
		p.addf("schema metadata has no %s key (want %q): not written by dualcrf", KeyFormat, format)
		return false
	case got != format:
		p.addf("schema metadata %s is %q, want %q", KeyFormat, got, format)
		return false
	}
	gotVersion, ok := metaValue(md, KeyVersion)
	switch {
	case !ok:
		p.addf("schema metadata has no %s key (this build reads %s version %s)", KeyVersion, format, version)
		return false
	case gotVersion != version:
		p.addf("unsupported %s version %q (this build reads %s)", format, gotVersion, version)
		return false
	}
	return true
}

// metaValue returns the value of key in md.
func metaValue(md arrow.Metadata, key string) (string, bool) {
	i := md.FindKey(key)
	if i < 0 {
		return "", false
	}
	return md.Values()[i], true
}

// MetadataMap returns the schema metadata of s as a map.
func MetadataMap(s *arrow.Schema) map[string]string {
	md := s.Metadata()
	m := make(map[string]string, md.Len())
	for i, k := range md.Keys() {
		m[k] = md.Values()[i]
	}
	return m
}

// buildMetadata merges the identifying keys with the caller's free keys, in
// sorted key order so equal inputs give equal bytes. A free key may repeat an
// identifying key only with the same value.
func buildMetadata(format, version string, extra map[string]string) (arrow.Metadata, error) {
	m := map[string]string{KeyFormat: format, KeyVersion: version}
	for k, v := range extra {
		if fixed, ok := m[k]; ok && fixed != v {
			return arrow.Metadata{}, fmt.Errorf("schema metadata %s=%q conflicts with %q", k, v, fixed)
		}
		m[k] = v
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	values := make([]string, len(keys))
	for i, k := range keys {
		values[i] = m[k]
	}
	return arrow.NewMetadata(keys, values), nil
}

// typeCheck tells whether a column type is acceptable; want describes the
// expected type for messages.
type typeCheck struct {
	want string
	ok   func(arrow.DataType) bool
}

// checkColumn checks that s has exactly one column name whose type passes c.
// It returns the column's index, or -1 with a problem recorded.
func checkColumn(p *problems, s *arrow.Schema, name string, c typeCheck) int {
	idx := s.FieldIndices(name)
	switch {
	case len(idx) == 0:
		p.addf("missing column %q", name)
		return -1
	case len(idx) > 1:
		p.addf("column %q appears %d times", name, len(idx))
		return -1
	}
	if t := s.Field(idx[0]).Type; !c.ok(t) {
		p.addf("column %q has type %s, want %s", name, t, c.want)
		return -1
	}
	return idx[0]
}

// isType accepts exactly the type with the given id (primitive types).
func isType(id arrow.Type, want string) typeCheck {
	return typeCheck{want: want, ok: func(t arrow.DataType) bool { return t.ID() == id }}
}

// isStringDict accepts dictionary<int32, utf8>.
func isStringDict() typeCheck {
	return typeCheck{want: "dictionary<int32, utf8>", ok: stringDict}
}

func stringDict(t arrow.DataType) bool {
	d, ok := t.(*arrow.DictionaryType)
	return ok && d.IndexType.ID() == arrow.INT32 && d.ValueType.ID() == arrow.STRING
}

// isListOf accepts list<elem> whatever the item field's name and
// nullability (writers differ on both).
func isListOf(elem typeCheck) typeCheck {
	return typeCheck{
		want: "list<" + elem.want + ">",
		ok: func(t arrow.DataType) bool {
			l, ok := t.(*arrow.ListType)
			return ok && elem.ok(l.Elem())
		},
	}
}

// stringDictType is dictionary<int32, utf8>, unordered.
func stringDictType() *arrow.DictionaryType {
	return &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}
}

// Field-metadata key and value that state a column's unit.
const (
	// KeyUnit is the field-metadata key naming a column's unit.
	KeyUnit = "dualcrf.unit"
	// UnitFraction marks a score in [0, 1] (accuracy, precision, recall, F1).
	UnitFraction = "fraction in [0,1]"
	// UnitSeconds marks a duration in seconds.
	UnitSeconds = "seconds"
)

// unit returns field metadata stating unit u.
func unit(u string) arrow.Metadata {
	return arrow.NewMetadata([]string{KeyUnit}, []string{u})
}
