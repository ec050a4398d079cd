package featurize

import (
	"strings"
	"testing"

	"github.com/dualcrf/dualcrf/schemas"
)

// TestSettingsFrom: featurization metadata that later stages could not use
// is refused when read, naming the file and the key.
func TestSettingsFrom(t *testing.T) {
	base := map[string]string{schemas.KeyTemplates: "@boundary side\nw[0]\n", schemas.KeyMinCount: "2", "dualcrf.input": `{"format":"conll","label_column":0}`}
	if s, err := settingsFrom(base, "m.arrow"); err != nil || s.minCount != 2 || s.input.Format != "conll" {
		t.Fatalf("good metadata: %+v, %v", s, err)
	}
	for _, c := range []struct{ key, value, want string }{
		{schemas.KeyMinCount, "-3", "m.arrow: metadata dualcrf.min_count=\"-3\""},
		{schemas.KeyMinCount, "two", "m.arrow: metadata dualcrf.min_count=\"two\""},
		{"dualcrf.input", `{"format":"xml"}`, `m.arrow: metadata dualcrf.input: unknown input format "xml"`},
		{"dualcrf.input", `{"format":"conll","label_column":-7}`, "m.arrow: metadata dualcrf.input: label_column -7"},
		{schemas.KeyTemplates, "w[0", "m.arrow: its templates"},
	} {
		md := map[string]string{}
		for k, v := range base {
			md[k] = v
		}
		md[c.key] = c.value
		if _, err := settingsFrom(md, "m.arrow"); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s=%q: error %v, want %q", c.key, c.value, err, c.want)
		}
	}
}
