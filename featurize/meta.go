package featurize

import (
	"encoding/json"
	"fmt"
	"strings"
)

// ParseInputOptions parses the InputOptions a table or model records under
// KeyInput: a JSON object with only InputOptions' fields, a known format (or
// none, meaning conll), a label column ≥ -1 and distinct non-empty column
// names.
func ParseInputOptions(text string) (InputOptions, error) {
	var in InputOptions
	if !strings.HasPrefix(strings.TrimSpace(text), "{") {
		return in, fmt.Errorf("want a JSON object of input options")
	}
	dec := json.NewDecoder(strings.NewReader(text))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil {
		return in, fmt.Errorf("want a JSON object of input options: %w", err)
	}
	if dec.More() {
		return in, fmt.Errorf("want one JSON object of input options, found more after it")
	}
	known := in.Format == ""
	for _, f := range Formats() {
		known = known || in.Format == f
	}
	if !known {
		return in, fmt.Errorf("unknown input format %q (want one of %s)", in.Format, strings.Join(Formats(), ", "))
	}
	if in.LabelColumn < -1 {
		return in, fmt.Errorf("label_column %d (want -1 for none, 0 for the last, or a 1-based column)", in.LabelColumn)
	}
	if len(in.Columns) == 0 {
		in.Columns = nil // as written: the key is left out when there are none
	}
	seen := make(map[string]bool, len(in.Columns))
	for _, c := range in.Columns {
		if c == "" || seen[c] {
			return in, fmt.Errorf("columns %q: want distinct non-empty names", in.Columns)
		}
		seen[c] = true
	}
	return in, nil
}
