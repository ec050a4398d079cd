package option_test

import (
	"errors"
	"io"
	"testing"

	"github.com/dualcrf/dualcrf/option"
)

// TestFormat: an error names its options by their Go fields, or by the
// names a program gives; braces around anything but a selector stay.
func TestFormat(t *testing.T) {
	flag := func(field string) string {
		return map[string]string{"GapTol": "--gap-tol", "SDCA.Workers": "--workers"}[field]
	}
	for _, c := range []struct {
		e          option.Error
		plain, cli string
	}{
		{option.Error{Field: "GapTol", Value: "0", Msg: "want > 0"}, "GapTol 0: want > 0", "--gap-tol 0: want > 0"},
		{option.Error{Msg: "use {SDCA.Workers} 1 in dir/{a b}/{x}"}, "use SDCA.Workers 1 in dir/{a b}/{x}", "use --workers 1 in dir/{a b}/{x}"},
		{option.Error{Msg: "unclosed {GapTol"}, "unclosed {GapTol", "unclosed {GapTol"},
	} {
		if got := c.e.Error(); got != c.plain {
			t.Errorf("Error() = %q, want %q", got, c.plain)
		}
		if got := c.e.Format(flag); got != c.cli {
			t.Errorf("Format = %q, want %q", got, c.cli)
		}
	}
	if err := (&option.Error{Msg: "x", Err: io.EOF}); !errors.Is(err, io.EOF) || err.Error() != "x" {
		t.Errorf("Err: %v", err)
	}
}
