package tables

import (
	"errors"
	"strings"
	"testing"

	"github.com/dualcrf/dualcrf/option"
)

// TestOptionWords: errors that advise an option name it by its Go field in
// an *option.Error, which a command renders in its own words.
func TestOptionWords(t *testing.T) {
	err := Coverage{Tokens: 3, Attrs: 6, UnknownAttrs: 6}.Mismatch("d.arrow", "m.arrow")
	var oe *option.Error
	if !errors.As(err, &oe) || !strings.HasSuffix(err.Error(), "featurize the text with FeaturizeOptions.Like m.arrow)") {
		t.Fatalf("Mismatch: %v", err)
	}
	if got := oe.Format(func(string) string { return "--model" }); got != "featurize the text with --model m.arrow" {
		t.Errorf("rendered: %s", got)
	}
}
