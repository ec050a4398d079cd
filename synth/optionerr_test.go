package synth

import (
	"errors"
	"testing"

	"github.com/dualcrf/dualcrf/option"
)

// TestOptionWords: an option out of range is an *option.Error naming the
// option by its field, which a command renders as its flag.
func TestOptionWords(t *testing.T) {
	o := Options{Sentences: -1, MinLen: 1, MaxLen: 2, Labels: 3, Attrs: 10, PerToken: 2}
	err := o.check()
	var oe *option.Error
	if !errors.As(err, &oe) || oe.Field != "Options.Sentences" || err.Error() != "synth: Options.Sentences -1: want ≥ 0" {
		t.Fatalf("check: %v", err)
	}
	if got := oe.Format(func(string) string { return "--sentences" }); got != "--sentences -1: want ≥ 0" {
		t.Errorf("rendered: %s", got)
	}
}
