package train

import (
	"errors"
	"reflect"
	"slices"
	"testing"

	"github.com/dualcrf/dualcrf/option"
)

// TestDescriptions: every method's declaration holds together: a unique
// name, a title, a known loss (a twin for any but the log loss), options
// of RunOptions only, settings that are exported fields whose Default is of
// the field's type and in range, and every exported field of its type a
// setting or made by the run.
func TestDescriptions(t *testing.T) {
	names := map[string]bool{}
	for _, m := range Methods() {
		d := m.Describe()
		typ := TypeName(m)
		if d.Name == "" || names[d.Name] || d.Title == "" || d.Summary == "" {
			t.Errorf("%s: name %q (seen %v), title %q, summary %q", typ, d.Name, names[d.Name], d.Title, d.Summary)
		}
		names[d.Name] = true
		if d.Loss != LossLog && d.Loss != LossHinge || (d.Loss != LossLog) != (d.Twin != "") {
			t.Errorf("%s: loss %q, twin %q", typ, d.Loss, d.Twin)
		}
		if got, ok := Describe(m); !ok || got.Name != d.Name {
			t.Errorf("%s: Describe(m) = %v, %v", typ, got.Name, ok)
		}
		if NewMethod(d.Name) == nil || reflect.TypeOf(NewMethod(d.Name)) != reflect.TypeOf(m) {
			t.Errorf("%s: NewMethod(%q) = %T", typ, d.Name, NewMethod(d.Name))
		}
		for _, r := range d.Reads {
			if !slices.Contains(RunOptions(), r) {
				t.Errorf("%s reads %q, not a RunOptions option", typ, r)
			}
		}
		declared := map[string]bool{}
		for _, s := range d.Settings {
			f, ok := reflect.TypeOf(m).Elem().FieldByName(s.Field)
			if !ok || !f.IsExported() || declared[s.Field] {
				t.Errorf("%s.%s: not an exported field, or declared twice", typ, s.Field)
				continue
			}
			declared[s.Field] = true
			if s.Default != nil && reflect.TypeOf(s.Default) != f.Type {
				t.Errorf("%s.%s: Default %v of type %T, the field is %s", typ, s.Field, s.Default, s.Default, f.Type)
			}
			if s.Default != nil && s.Valid != nil && !s.Valid(s.Default) {
				t.Errorf("%s.%s: Default %v is out of its own range (%s)", typ, s.Field, s.Default, s.Want)
			}
			if s.Valid != nil && s.Want == "" {
				t.Errorf("%s.%s: a range with no words for it", typ, s.Field)
			}
			if s.Name != "" && s.Help == "" {
				t.Errorf("%s.%s: named %q with no help", typ, s.Field, s.Name)
			}
		}
		for f := range d.Made {
			declared[f] = true
		}
		for i := range reflect.TypeOf(m).Elem().NumField() {
			if f := reflect.TypeOf(m).Elem().Field(i); f.IsExported() && !declared[f.Name] {
				t.Errorf("%s.%s: an exported field that is neither a setting nor made by the run", typ, f.Name)
			}
		}
	}
}

// TestFreshCopiesEverySetting: Fresh returns a new value with every
// setting of the one given, and none of what the run makes.
func TestFreshCopiesEverySetting(t *testing.T) {
	for _, m := range Methods() {
		v := reflect.ValueOf(m).Elem()
		for i, s := range m.Describe().Settings {
			f := v.FieldByName(s.Field)
			switch f.Kind() {
			case reflect.Float64:
				f.SetFloat(0.25 + float64(i))
			case reflect.Int, reflect.Int64:
				f.SetInt(int64(3 + i))
			case reflect.Uint64, reflect.Uint32:
				f.SetUint(uint64(7 + i))
			case reflect.String:
				f.SetString("setting")
			case reflect.Bool:
				f.SetBool(true)
			default:
				t.Fatalf("%s.%s: a setting of kind %s: teach this test to set it", TypeName(m), s.Field, f.Kind())
			}
		}
		if sd, ok := m.(*SDCA); ok {
			sd.Sampler, _ = NewSampler(SamplerUniform, 3, SamplerOptions{})
		}
		got := Fresh(m)
		if got == m {
			t.Errorf("%s: Fresh returned the value given", TypeName(m))
		}
		for _, s := range m.Describe().Settings {
			if !reflect.DeepEqual(s.Get(got), s.Get(m)) {
				t.Errorf("%s.%s: Fresh gives %v, the method had %v", TypeName(m), s.Field, s.Get(got), s.Get(m))
			}
		}
		for f := range m.Describe().Made {
			if !reflect.ValueOf(got).Elem().FieldByName(f).IsZero() {
				t.Errorf("%s.%s: Fresh copied what the run makes", TypeName(m), f)
			}
		}
	}
}

// TestForLoss: the hinge loss runs SDCA's twin BCFW; a method of the log
// loss other than SDCA is refused for it, BCFW for the log loss, an
// unknown loss or method by name.
func TestForLoss(t *testing.T) {
	for _, c := range []struct {
		name, loss, want, field string
	}{
		{"sdca", "", "sdca", ""},
		{"sdca", LossLog, "sdca", ""},
		{"sdca", LossHinge, "bcfw", ""},
		{"bcfw", LossHinge, "bcfw", ""},
		{"bcfw", "", "bcfw", ""},
		{"lbfgs", LossLog, "lbfgs", ""},
		{"lbfgs", LossHinge, "", "Method"},
		{"oeg", LossHinge, "", "Method"},
		{"bcfw", LossLog, "", "Method"},
		{"sdca", "squared", "", "Loss"},
		{"newton", "", "", "Method"},
	} {
		got, err := ForLoss(c.name, c.loss)
		var oe *option.Error
		if got != c.want || (c.field == "") != (err == nil) || err != nil && (!errors.As(err, &oe) || oe.Field != c.field) {
			t.Errorf("ForLoss(%q, %q) = %q, %v; want %q, an error about %q", c.name, c.loss, got, err, c.want, c.field)
		}
	}
}

// TestShareSettings: a twin takes the settings it shares by name (the
// seed) and reports those set that it lacks.
func TestShareSettings(t *testing.T) {
	b := &BCFW{}
	if un := ShareSettings(b, &SDCA{Seed: 9, Epsilon: 0.1}); b.Seed != 9 || !slices.Equal(un, []string{"Epsilon"}) {
		t.Errorf("BCFW from SDCA: seed %d, unshared %v", b.Seed, un)
	}
}

// TestResumeSettingCoversTheRunSettings: every run setting a resume
// compares is set by an option (resumeSetting), except those that follow
// from the data or the memory budget, and the schedule, which the workers,
// the round size and the asynchronous option set together (said in words).
func TestResumeSettingCoversTheRunSettings(t *testing.T) {
	for _, s := range (RunSettings{}).list() {
		switch s.field {
		case "Sentences", "Bias", "DualsBlocks", "Schedule":
			continue
		}
		if resumeSetting(s.field) == "" {
			t.Errorf("run setting %s: no option sets it", s.field)
		}
	}
}

// TestLabel: a method's label names it with its sampler or variant.
func TestLabel(t *testing.T) {
	for _, c := range []struct {
		m    Method
		want string
	}{
		{&SDCA{}, "SDCA, gap sampler"},
		{&LBFGS{}, "L-BFGS"},
		{&SAG{Variant: SAGUniform}, "SAG (uniform)"},
		{&SAG{}, "SAG (nus)"},
		{&BCFW{}, "BCFW (hinge loss), gap sampler"},
	} {
		if got := Label(c.m); got != c.want {
			t.Errorf("Label(%T) = %q, want %q", c.m, got, c.want)
		}
	}
}
