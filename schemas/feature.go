package schemas

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
)

// The feature table: one row per token, the rows of a sentence contiguous and
// in order, record batches cut on sentence boundaries.
//
//	sentence  int64                           0-based sentence index, 0,1,2,… in row order
//	position  int32                           0-based token index within the sentence
//	<text>    utf8                            pass-through columns (word, pos, …), named by the writer
//	label     dictionary<int32, utf8>         gold label, null when unknown
//	attrs     list<dictionary<int32, utf8>>   the token's attributes; the dictionary holds the
//	                                          attribute names, so an index is an attribute id
//	values    list<float64>                   one value per attribute, null when all are 1
//
// The table is self-describing: label and attribute names travel as Arrow
// dictionaries (label dictionaries may grow by delta batches in the stream
// format), so no side file is needed to read it.
const (
	// FeatureFormat is the KeyFormat value of a feature table.
	FeatureFormat = "feature-table"
	// FeatureVersion is the feature-table layout version this build writes and reads.
	FeatureVersion = "1"

	ColSentence = "sentence" // int64 sentence index
	ColPosition = "position" // int32 token index within the sentence
	ColLabel    = "label"    // dictionary<int32, utf8> gold label
	ColAttrs    = "attrs"    // list<dictionary<int32, utf8>> attribute ids
	ColValues   = "values"   // list<float64> attribute values, null ⇒ all 1

	// KeyTemplates holds the feature-template text the table was made with.
	KeyTemplates = "dualcrf.templates"
	// KeyMinCount holds the minimum attribute count used to build the vocabulary.
	KeyMinCount = "dualcrf.min_count"
)

// featureColumns are the fixed columns of the feature table with their types.
func featureColumns() []struct {
	name  string
	check typeCheck
} {
	return []struct {
		name  string
		check typeCheck
	}{
		{ColSentence, isType(arrow.INT64, "int64")},
		{ColPosition, isType(arrow.INT32, "int32")},
		{ColLabel, isStringDict()},
		{ColAttrs, isListOf(isStringDict())},
		{ColValues, isListOf(isType(arrow.FLOAT64, "float64"))},
	}
}

// isFeatureColumn reports whether name is one of the fixed feature-table columns.
func isFeatureColumn(name string) bool {
	for _, c := range featureColumns() {
		if c.name == name {
			return true
		}
	}
	return false
}

// FeatureSchema returns the feature-table schema with the given pass-through
// text columns (in order, between position and label) and schema metadata:
// KeyFormat and KeyVersion plus the caller's free keys (KeyTemplates,
// KeyMinCount, KeySource, …). Text column names must be non-empty, distinct
// and differ from the fixed column names.
func FeatureSchema(textColumns []string, metadata map[string]string) (*arrow.Schema, error) {
	seen := make(map[string]bool, len(textColumns))
	for _, c := range textColumns {
		switch {
		case c == "":
			return nil, fmt.Errorf("feature schema: empty text column name")
		case isFeatureColumn(c):
			return nil, fmt.Errorf("feature schema: text column %q clashes with a fixed column", c)
		case seen[c]:
			return nil, fmt.Errorf("feature schema: text column %q given twice", c)
		}
		seen[c] = true
	}
	md, err := buildMetadata(FeatureFormat, FeatureVersion, metadata)
	if err != nil {
		return nil, fmt.Errorf("feature schema: %w", err)
	}
	fields := []arrow.Field{
		{Name: ColSentence, Type: arrow.PrimitiveTypes.Int64},
		{Name: ColPosition, Type: arrow.PrimitiveTypes.Int32},
	}
	for _, c := range textColumns {
		fields = append(fields, arrow.Field{Name: c, Type: arrow.BinaryTypes.String, Nullable: true})
	}
	fields = append(fields,
		arrow.Field{Name: ColLabel, Type: stringDictType(), Nullable: true},
		arrow.Field{Name: ColAttrs, Type: arrow.ListOfNonNullable(stringDictType())},
		arrow.Field{Name: ColValues, Type: arrow.ListOfNonNullable(arrow.PrimitiveTypes.Float64), Nullable: true},
	)
	return arrow.NewSchema(fields, &md), nil
}

// ValidateFeatureSchema checks that s is a feature table this build can read:
// metadata KeyFormat = FeatureFormat and KeyVersion = FeatureVersion, every
// fixed column present once with its type, and every other column utf8. The
// error is a *SchemaError listing each problem.
func ValidateFeatureSchema(s *arrow.Schema) error {
	p := &problems{table: "feature table"}
	if s == nil {
		p.addf("no schema")
		return p.err()
	}
	if !checkFormat(p, s, FeatureFormat, FeatureVersion) {
		return p.err()
	}
	for _, c := range featureColumns() {
		checkColumn(p, s, c.name, c.check)
	}
	seen := make(map[string]bool)
	for _, f := range s.Fields() {
		switch {
		case isFeatureColumn(f.Name):
		case seen[f.Name]:
			p.addf("column %q appears more than once", f.Name)
		case f.Type.ID() != arrow.STRING:
			p.addf("column %q has type %s, want utf8 (pass-through text)", f.Name, f.Type)
		}
		seen[f.Name] = true
	}
	return p.err()
}

// FeatureTextColumns returns the names of the pass-through text columns of a
// feature-table schema, in schema order.
func FeatureTextColumns(s *arrow.Schema) []string {
	var cols []string
	for _, f := range s.Fields() {
		if !isFeatureColumn(f.Name) {
			cols = append(cols, f.Name)
		}
	}
	return cols
}
