package train

import (
	"errors"
	"math"
	"testing"

	"github.com/dualcrf/dualcrf/option"
)

// TestCheckNamesTheField: each method refuses a setting out of range with
// an *option.Error naming its type and field (stage and the command name
// the option from it), wrapping ErrBadProblem; Init refuses the same, and
// the zero value — every default — passes.
func TestCheckNamesTheField(t *testing.T) {
	p := randomProblem(t, 3, 3, 4, 5, 2, false, 0)
	type checkable interface {
		Method
		Check() error
	}
	for _, c := range []struct {
		m     checkable
		field string
	}{
		{&SDCA{Epsilon: 1.5}, "SDCA.Epsilon"},
		{&SDCA{Epsilon: math.NaN()}, "SDCA.Epsilon"},
		{&SDCA{SubPrecision: 1}, "SDCA.SubPrecision"},
		{&SDCA{Workers: -2}, "SDCA.Workers"},
		{&SDCA{RoundSize: -1}, "SDCA.RoundSize"},
		{&SDCA{Async: "fast"}, "SDCA.Async"},
		{&SDCA{Async: AsyncAtomic, RoundSize: 4}, "SDCA.RoundSize"},
		{&LBFGS{Store: -1}, "LBFGS.Store"},
		{&OEG{Eta: 2}, "OEG.Eta"},
		{&SAG{Variant: "nus*"}, "SAG.Variant"},
		{&SAG{InitialL: math.Inf(1)}, "SAG.InitialL"},
		{&BCFW{Hamming: "median"}, "BCFW.Hamming"},
	} {
		var oe *option.Error
		err := c.m.Check()
		if !errors.As(err, &oe) || oe.Field != c.field || !errors.Is(err, ErrBadProblem) {
			t.Errorf("%+v: Check() = %v, want an *option.Error for %s", c.m, err, c.field)
		}
		if err := c.m.Init(p); !errors.As(err, &oe) || oe.Field != c.field {
			t.Errorf("%+v: Init = %v, want the *option.Error for %s", c.m, err, c.field)
		}
	}
	for _, m := range Methods() {
		if err := m.(checkable).Check(); err != nil {
			t.Errorf("%T zero value: Check() = %v, want nil (the defaults)", m, err)
		}
	}
}

// TestCheckSettingsGivenZero: a zero that stands for a default passes
// unless the user gave it; given, it must be in range itself, and is
// refused with the value shown.
func TestCheckSettingsGivenZero(t *testing.T) {
	given := func(fields ...string) func(string) bool {
		return func(f string) bool {
			for _, g := range fields {
				if g == f {
					return true
				}
			}
			return false
		}
	}
	for _, c := range []struct {
		m         Method
		field     string
		refused   bool
		wantValue string
	}{
		{&SDCA{}, "SDCA.Epsilon", true, "0"},
		{&SDCA{}, "SDCA.SubPrecision", true, "0"},
		{&SDCA{}, "SDCA.RoundSize", true, "0"},
		{&SDCA{}, "SDCA.Async", true, `""`},
		{&SDCA{}, "SDCA.Workers", false, ""}, // 0 is DefaultWorkers, a value in range
		{&SDCA{}, "SDCA.Seed", false, ""},    // seed 0 is a seed
		{&SAG{}, "SAG.Variant", true, `""`},
		{&BCFW{}, "BCFW.Hamming", true, `""`},
		{&LBFGS{}, "LBFGS.Store", true, "0"},
		{&OEG{}, "OEG.Eta", true, "0"},
	} {
		err := CheckSettings(c.m, given(c.field))
		var oe *option.Error
		switch {
		case !c.refused && err != nil:
			t.Errorf("%s given as zero: %v, want it accepted", c.field, err)
		case c.refused && (!errors.As(err, &oe) || oe.Field != c.field || oe.Value != c.wantValue):
			t.Errorf("%s given as zero: %v, want an *option.Error for it with value %s", c.field, err, c.wantValue)
		}
		if err := CheckSettings(c.m, nil); err != nil {
			t.Errorf("%s not given: %v, want the default", c.field, err)
		}
	}
}
