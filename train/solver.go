package train

// The methods' declarations. Each method says what it is in its own file
// (Describe): its name, the loss it minimises, its settings — field,
// name, default, range, help, the run setting a resume repeats — and the
// options of a run it reads; it reports the facts a model records of it
// (Facts). Methods lists them, and a program iterates over it instead of
// naming the methods: the command's flags, the checks of the options, the
// copy of a method's settings, the facts of a model and the choice of the
// method for a loss all come from here.

import (
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/dualcrf/dualcrf/option"
)

// The losses a method minimises (Description.Loss).
const (
	LossLog   = "log"   // the CRF's negative log-likelihood
	LossHinge = "hinge" // the structural SVM's Hamming hinge loss
)

// The options of a run that only some methods read (Description.Reads),
// as stage.TrainOptions names them.
const (
	RunSampler            = "Sampler.Kind"       // the sampler of the next sentence (NewSampler's kind)
	RunNonUniform         = "Sampler.NonUniform" // the sampler's non-uniform share
	RunRefresh            = "RefreshEvery"       // Settings.RefreshEvery: gap estimates recomputed
	RunDuals              = "Duals"              // where the duals are kept
	RunCheckpoint         = "Checkpoint"         // Settings.Checkpoint: snapshots
	RunCheckpointEvery    = "CheckpointEvery"    // Settings.CheckpointEvery
	RunCheckpointInterval = "CheckpointInterval" // Settings.CheckpointInterval
	RunKeepCheckpoints    = "KeepCheckpoints"    // the snapshots kept after a run that ends well
	RunResume             = "Resume"             // Settings.Resume
	RunKeepDuals          = "KeepDuals"          // the final duals kept for a warm start
	RunWarmStart          = "WarmStart"          // the initial duals from kept ones (SDCA.Warm)
	RunL1                 = "L1"                 // Problem.L1: the elastic net's λ₁ (SDCA, LBFGS)
)

// RunOptions returns every option Description.Reads may name.
func RunOptions() []string {
	return []string{RunSampler, RunNonUniform, RunRefresh, RunDuals, RunCheckpoint, RunCheckpointEvery,
		RunCheckpointInterval, RunKeepCheckpoints, RunResume, RunKeepDuals, RunWarmStart, RunL1}
}

// checkpointOptions are the options of a method that checkpoints and
// resumes (a Resumer).
var checkpointOptions = []string{RunCheckpoint, RunCheckpointEvery, RunCheckpointInterval, RunKeepCheckpoints, RunResume}

// Description is what a method says of itself to the programs that run
// it.
type Description struct {
	// Name is the method's name, as a model's metadata records it and a
	// program chooses it: sdca, lbfgs, oeg, sag or bcfw.
	Name string
	// Title names the method in prose and in a figure's legend ("L-BFGS").
	Title string
	// Summary says in a few words what the method is ("SDCA-GAP's
	// structured twin").
	Summary string
	// Loss is the loss the method minimises: LossLog or LossHinge.
	Loss string
	// Twin, for a method of another loss than LossLog, is the method of
	// the log loss whose place it takes when a program asks for its loss
	// (BCFW is SDCA-GAP's structured twin: "sdca" with the hinge loss runs
	// "bcfw", with the settings the two share).
	Twin string
	// Reads lists the options of a training run that only some methods
	// read and this one does, named as stage.TrainOptions names them (the
	// Field of an option.Error): RunSampler, RunNonUniform, RunRefresh,
	// RunDuals, the checkpoint options (RunCheckpoint, RunCheckpointEvery,
	// RunCheckpointInterval, RunKeepCheckpoints, RunResume), the warm
	// start's (RunKeepDuals, RunWarmStart) and the elastic net's λ₁ (RunL1:
	// the methods that take Problem.L1). A method reads its own fields
	// and the options every run has (λ, the stop rules, the feature
	// spaces); a program refuses the others when they are given.
	Reads []string
	// DualsOnDisk says that the method's duals may be memory-mapped from
	// a file or streamed from disk in blocks (RunDuals); a method that
	// reads RunDuals without it keeps them in memory.
	DualsOnDisk bool
	// Settings are the method's own settings: the exported fields of its
	// type that a user sets, in the order a help lists them.
	Settings []Setting
	// Made maps each exported field of the method's type that a run makes,
	// not its user, to the option of the run it is made from (SDCA's
	// Sampler from RunSampler); a program refuses a method given with one
	// set.
	Made map[string]string
}

// Setting is one of a method's settings: an exported field of its type,
// with what a program needs to offer it, check it and say it.
type Setting struct {
	// Field is the field of the method's type ("Eta"); an option.Error
	// names it with the type's name, "OEG.Eta".
	Field string
	// Name is what a program calls the setting (the command's flag,
	// "oeg-eta"). The settings of several methods with one Name are one
	// option of a program: "seed" sets every method's seed.
	Name string
	// Default is the value the field's zero stands for, of the field's
	// type; nil when the zero is a value of its own (a seed) or the default
	// is no constant (DefaultText says it).
	Default any
	// DefaultText says in words the default the field's zero stands for
	// where Default cannot.
	DefaultText string
	// Help says what the setting does, for a program's help.
	Help string
	// Want says the values the setting takes, as its refusal says it:
	// "want a step size in (0,1]".
	Want string
	// Valid reports whether a value is in range; nil: every value is. The
	// zero of a setting with a Default passes unless it is given
	// (CheckSettings).
	Valid func(v any) bool
	// Resume names the run setting a resumed run must repeat the setting
	// as (RunSettings' field, "Epsilon"); "" when a resume does not
	// compare it.
	Resume string
	// Label, when set, shows the setting's value in the method's Label
	// ("SAG (nus)").
	Label bool
	// Unread, when not nil, says why the method's other settings leave
	// this one unread ("" when they read it): a program refuses it when
	// its user gives it.
	Unread func(m Method) string
}

// Describer is a Method that describes itself; every method of this
// package does.
type Describer interface {
	Method
	// Describe says what the method is; it does not depend on the
	// method's settings.
	Describe() Description
	// Facts returns what a model trained by the method on p records of
	// it beyond the run's own facts: its settings that shape the model,
	// with their defaults applied (its seed, its sampler). Keys are
	// snake_case; the values are JSON-safe.
	Facts(p *Problem) map[string]any
}

// Methods returns a new value of each method of this package, in the
// order a help lists them: SDCA, L-BFGS, OEG, SAG and BCFW. It is the
// registry of the methods: a new method is its own files and one line
// here.
func Methods() []Describer {
	return []Describer{&SDCA{}, &LBFGS{}, &OEG{}, &SAG{}, &BCFW{}}
}

// NewMethod returns a new value of the method named name (Description.Name)
// with its default settings, or nil when no method has that name.
func NewMethod(name string) Describer {
	for _, m := range Methods() {
		if m.Describe().Name == name {
			return m
		}
	}
	return nil
}

// MethodNames returns the methods' names, in the order of Methods.
func MethodNames() []string {
	var names []string
	for _, m := range Methods() {
		names = append(names, m.Describe().Name)
	}
	return names
}

// Describe returns m's description, and false for a method of none of
// the types Methods lists (a description of its own is not enough: a
// program runs only what it knows).
func Describe(m Method) (Description, bool) {
	if m == nil {
		return Description{}, false
	}
	for _, known := range Methods() {
		if reflect.TypeOf(known) == reflect.TypeOf(m) {
			return known.Describe(), true
		}
	}
	return Description{}, false
}

// TypeName is the name of m's type, the prefix of its settings' fields as
// an option.Error names them ("SDCA" of SDCA.Epsilon).
func TypeName(m Method) string {
	t := reflect.TypeOf(m)
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t.Name()
}

// ForLoss returns the name of the method that minimises loss in the place
// of the method named name: name itself when its loss is loss (or loss is
// ""), its twin of that loss when it has one (sdca with the hinge loss:
// bcfw). It is the one place a loss chooses a method. A method of another
// loss, or a loss no method minimises, is refused with an *option.Error
// about Method or Loss.
func ForLoss(name, loss string) (string, error) {
	m := NewMethod(name)
	if m == nil {
		return "", &option.Error{Field: "Method", Value: strconv.Quote(name), Msg: "want one of " + strings.Join(MethodNames(), ", ")}
	}
	d := m.Describe()
	if loss == "" || loss == d.Loss {
		return name, nil
	}
	var losses []string
	for _, o := range Methods() {
		od := o.Describe()
		if od.Loss == loss && od.Twin == name {
			return od.Name, nil
		}
		if !slices.Contains(losses, od.Loss) {
			losses = append(losses, od.Loss)
		}
	}
	if !slices.Contains(losses, loss) {
		return "", &option.Error{Field: "Loss", Value: strconv.Quote(loss), Msg: "want " + joinOr(losses)}
	}
	if d.Twin != "" {
		// A method of another loss than the log loss.
		return "", &option.Error{Field: "Method", Value: strconv.Quote(name),
			Msg: fmt.Sprintf("%s minimises the %s loss: want {Loss} %s", d.Title, d.Loss, d.Loss)}
	}
	for _, o := range Methods() {
		if od := o.Describe(); od.Loss == loss && od.Twin != "" {
			return "", &option.Error{Field: "Method", Value: strconv.Quote(name),
				Msg: fmt.Sprintf("minimises the %s loss only: {Loss} %s is trained by %s (%s)", d.Loss, loss, od.Title, twinWords(od))}
		}
	}
	return "", &option.Error{Field: "Method", Value: strconv.Quote(name), Msg: fmt.Sprintf("minimises the %s loss only", d.Loss)}
}

// twinWords says which method d takes the place of.
func twinWords(d Description) string {
	twin := NewMethod(d.Twin)
	if twin == nil {
		return "its own method"
	}
	words := d.Summary
	if d.Twin == MethodNames()[0] {
		words += ": the default method"
	}
	return words
}

// joinOr joins words as "a", "a or b", "a, b or c".
func joinOr(words []string) string {
	if len(words) < 2 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " or " + words[len(words)-1]
}

// field returns the settable field f of m's value.
func field(m Method, f string) reflect.Value {
	v := reflect.ValueOf(m)
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		panic(fmt.Sprintf("train: %T is not a pointer to a struct", m))
	}
	fv := v.Elem().FieldByName(f)
	if !fv.IsValid() || !fv.CanSet() {
		panic(fmt.Sprintf("train: %T has no setting %s", m, f))
	}
	return fv
}

// Get returns the setting s of m.
func (s Setting) Get(m Method) any { return field(m, s.Field).Interface() }

// Set sets the setting s of m to v, a value of the field's type (or one
// that converts to it: an untyped constant's).
func (s Setting) Set(m Method, v any) {
	f := field(m, s.Field)
	f.Set(reflect.ValueOf(v).Convert(f.Type()))
}

// Kind is the Go kind of the setting's field on m.
func (s Setting) Kind(m Method) reflect.Kind { return field(m, s.Field).Kind() }

// Fresh returns a new value of m's type with m's settings (Description's
// Settings) and nothing else: what a program runs, so that the value it
// was given stays as it was. A method Methods does not list is returned
// as it is.
func Fresh(m Method) Method {
	d, ok := Describe(m)
	if !ok {
		return m
	}
	n := reflect.New(reflect.TypeOf(m).Elem()).Interface().(Method)
	for _, s := range d.Settings {
		s.Set(n, s.Get(m))
	}
	return n
}

// ShareSettings sets each setting of dst that src has under the same
// Name (the seed) to src's value, and returns the Names of src's settings
// set to other than their zero that dst lacks: a method taking another's
// place (ForLoss) takes what they share.
func ShareSettings(dst, src Method) (unshared []string) {
	dd, _ := Describe(dst)
	sd, _ := Describe(src)
	for _, s := range sd.Settings {
		i := slices.IndexFunc(dd.Settings, func(t Setting) bool { return t.Name == s.Name })
		if i >= 0 {
			dd.Settings[i].Set(dst, s.Get(src))
		} else if !reflect.ValueOf(s.Get(src)).IsZero() {
			unshared = append(unshared, s.Field)
		}
	}
	return unshared
}

// CheckSettings refuses a setting of m out of range with an *option.Error
// naming its field ("SDCA.Epsilon"), its value and the range: a zero that
// stands for a default passes unless given(field) says the user gave it
// (given may be nil: nothing given), then it must be in range itself. A
// method's Check is CheckSettings with nothing given, and its own checks
// of settings together.
func CheckSettings(m Method, given func(field string) bool) error {
	d, ok := Describe(m)
	if !ok {
		return nil
	}
	typ := TypeName(m)
	for _, s := range d.Settings {
		v := s.Get(m)
		name := typ + "." + s.Field
		if s.Valid == nil || s.Valid(v) {
			continue
		}
		if s.zeroIsDefault() && reflect.ValueOf(v).IsZero() && (given == nil || !given(name)) {
			continue
		}
		return &option.Error{Field: name, Value: valueText(v), Msg: s.Want, Err: ErrBadProblem}
	}
	return nil
}

// zeroIsDefault reports whether the setting's zero stands for its default
// (Default or DefaultText is set) rather than for a value of its own.
func (s Setting) zeroIsDefault() bool { return s.Default != nil || s.DefaultText != "" }

// valueText is a setting's value as an option.Error shows it: a string
// quoted.
func valueText(v any) string {
	switch v := v.(type) {
	case string:
		return strconv.Quote(v)
	case float64:
		return strconv.FormatFloat(v, 'g', -1, 64)
	}
	return fmt.Sprint(v)
}

// Label names m in a figure's legend: its Title, the values of its
// settings marked Label, and the sampler's kind of a method that reads
// one ("SDCA, gap sampler", "SAG (nus)").
func Label(m Method) string {
	d, ok := Describe(m)
	if !ok {
		return fmt.Sprintf("%T", m)
	}
	s := d.Title
	if d.Loss != LossLog {
		s += " (" + d.Loss + " loss)"
	}
	for _, st := range d.Settings {
		if st.Label {
			v := st.Get(m)
			if reflect.ValueOf(v).IsZero() && st.Default != nil {
				v = st.Default
			}
			s += fmt.Sprintf(" (%v)", v)
		}
	}
	if Reads(m, RunSampler) {
		kind, _ := samplerSettings(madeSampler(m))
		s += ", " + kind + " sampler"
	}
	return s
}

// resumeSetting returns the option, as an option.Error names it, that
// sets the run setting field a resume must repeat (the field of the run
// settings a checkpoint records):
// a method's setting ("SDCA.Epsilon", the first method's that records
// it), one of the run's (RunSampler, RunNonUniform, RunRefresh), the
// method itself ("Method") or the problem's ("Lambda", "FeatureSpace",
// "Transitions"); "" for a setting no option sets alone (Bias,
// Sentences, DualsBlocks).
func resumeSetting(field string) string {
	switch field {
	case "Solver":
		return "Method"
	case "Lambda", "L1", "FeatureSpace", "Transitions":
		return field
	case "Sampler":
		return RunSampler
	case "NonUniform":
		return RunNonUniform
	case "RefreshEvery":
		return RunRefresh
	}
	for _, m := range Methods() {
		for _, s := range m.Describe().Settings {
			if s.Resume == field {
				return TypeName(m) + "." + s.Field
			}
		}
	}
	return ""
}

// The checks of settings' values (Setting.Valid).

// floatIn accepts a float64 in the interval from lo to hi, each end open
// or closed.
func floatIn(lo, hi float64, loOpen, hiOpen bool) func(any) bool {
	return func(v any) bool {
		x := v.(float64)
		return (x > lo || !loOpen && x == lo) && (x < hi || !hiOpen && x == hi)
	}
}

// intAtLeast accepts an int ≥ lo.
func intAtLeast(lo int) func(any) bool { return func(v any) bool { return v.(int) >= lo } }

// oneOf accepts one of the strings.
func oneOf(values ...string) func(any) bool {
	return func(v any) bool { return slices.Contains(values, v.(string)) }
}

// seedSetting is the Seed of a method whose random numbers a seed fixes.
func seedSetting(what string) Setting {
	return Setting{Field: "Seed", Name: "seed", Help: "random seed of " + what + "; the same seed gives the same model",
		Resume: "Seed"}
}
