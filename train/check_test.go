package train

import (
	"errors"
	"math"
	"testing"
)

// TestCheckNamesTheField: each method refuses a setting out of range with a
// *FieldError naming its method and field (stage and the command name the
// option from it), wrapping ErrBadProblem; Init refuses the same, and the
// zero value — every default — passes.
func TestCheckNamesTheField(t *testing.T) {
	p := randomProblem(t, 3, 3, 4, 5, 2, false, 0)
	type checkable interface {
		Method
		Check() error
	}
	for _, c := range []struct {
		m             checkable
		method, field string
	}{
		{&SDCA{Epsilon: 1.5}, "SDCA", "Epsilon"},
		{&SDCA{Epsilon: math.NaN()}, "SDCA", "Epsilon"},
		{&SDCA{SubPrecision: 1}, "SDCA", "SubPrecision"},
		{&SDCA{Workers: -2}, "SDCA", "Workers"},
		{&SDCA{RoundSize: -1}, "SDCA", "RoundSize"},
		{&SDCA{Async: "fast"}, "SDCA", "Async"},
		{&SDCA{Async: AsyncAtomic, RoundSize: 4}, "SDCA", "RoundSize"},
		{&LBFGS{Store: -1}, "LBFGS", "Store"},
		{&OEG{Eta: 2}, "OEG", "Eta"},
		{&SAG{Variant: "nus*"}, "SAG", "Variant"},
		{&SAG{InitialL: math.Inf(1)}, "SAG", "InitialL"},
	} {
		var fe *FieldError
		err := c.m.Check()
		if !errors.As(err, &fe) || fe.Method != c.method || fe.Field != c.field || !errors.Is(err, ErrBadProblem) {
			t.Errorf("%+v: Check() = %v, want a *FieldError for %s.%s", c.m, err, c.method, c.field)
		}
		if err := c.m.Init(p); !errors.As(err, &fe) || fe.Field != c.field {
			t.Errorf("%+v: Init = %v, want the *FieldError for %s", c.m, err, c.field)
		}
	}
	for _, m := range []checkable{&SDCA{}, &LBFGS{}, &OEG{}, &SAG{}} {
		if err := m.Check(); err != nil {
			t.Errorf("%T zero value: Check() = %v, want nil (the defaults)", m, err)
		}
	}
}
