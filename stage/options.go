package stage

// The typed values of TrainOptions and the error that refuses one.

import (
	"fmt"
	"path/filepath"
	"strconv"

	"github.com/dualcrf/dualcrf/option"
)

// Lambda is the regularisation λ: a value, or a constant c divided by the
// number of sentences n (c/n). The zero Lambda is 1/n.
type Lambda struct {
	c    float64
	perN bool
	set  bool
}

// LambdaValue is λ = v.
func LambdaValue(v float64) Lambda { return Lambda{c: v, set: true} }

// LambdaPerSentence is λ = c/n for a training table of n sentences.
func LambdaPerSentence(c float64) Lambda { return Lambda{c: c, perN: true, set: true} }

// For returns λ for a training table of n sentences.
func (l Lambda) For(n int) float64 {
	if !l.set {
		return 1 / float64(n)
	}
	if l.perN {
		return l.c / float64(n)
	}
	return l.c
}

// l1 returns the elastic net's λ₁ for a training table of n sentences:
// L1's value, 0 when not given.
func (o TrainOptions) l1(n int) float64 {
	if !o.L1.set {
		return 0
	}
	return o.L1.For(n)
}

// l1Setting returns L1 as given ("c/n" or a number), "" when not given
// or zero: what kept duals record.
func (o TrainOptions) l1Setting() string {
	if !o.L1.set || o.L1.c == 0 {
		return ""
	}
	return o.L1.String()
}

// String writes λ as a number or c/n.
func (l Lambda) String() string {
	switch {
	case !l.set:
		return "1/n"
	case l.perN:
		return strconv.FormatFloat(l.c, 'g', -1, 64) + "/n"
	}
	return strconv.FormatFloat(l.c, 'g', -1, 64)
}

// Pairs says which pairs get a weight: the feature space's (attribute,
// label) pairs or the transitions' (label, label) pairs.
type Pairs int

const (
	// AllPairs weighs every pair (the zero value).
	AllPairs Pairs = iota
	// ObservedPairs weighs the pairs seen in the training table only
	// (CRFsuite's model).
	ObservedPairs
)

// Placement is where SDCA keeps its dual variables.
type Placement int

const (
	// DualsAuto keeps the duals in memory when the run's whole memory
	// estimate fits the budget, else streams them (the zero value).
	DualsAuto Placement = iota
	// DualsMemory keeps the duals in memory.
	DualsMemory
	// DualsStream streams the duals from a file in blocks of consecutive
	// sentences.
	DualsStream
	// DualsFile keeps the duals in a memory-mapped file, paged by the
	// kernel.
	DualsFile
)

// Duals says where SDCA keeps its dual variables. Path is the file of
// DualsFile (required) and of DualsStream (optional: without it, streamed
// duals go to duals.stream in the checkpoint directory, else to an
// unlinked temporary file); the other placements take none.
type Duals struct {
	Place Placement
	Path  string
}

// File is the file the duals are written to, given the checkpoint
// directory (TrainOptions' Checkpoint, else its Resume): Path of DualsFile
// or DualsStream, and for DualsStream or DualsAuto without a Path the
// checkpoint directory's duals.stream; "" when the duals stay in memory or
// in an unlinked temporary file. A program compares it with its inputs
// and other outputs before anything is written.
func (d Duals) File(checkpoint string) string {
	switch {
	case d.Place == DualsMemory:
		return ""
	case d.Path != "":
		return d.Path
	case d.Place != DualsFile && checkpoint != "":
		return filepath.Join(checkpoint, "duals.stream")
	}
	return ""
}

// Sampler chooses SDCA's sampler, made with train.NewSampler once the
// table's size is known.
type Sampler struct {
	// Kind is a train.SamplerKinds kind; "": train.DefaultSampler.
	Kind string
	// NonUniform is the probability in (0,1] of a non-uniform draw; 0:
	// train.DefaultNonUniform.
	NonUniform float64
}

// OptionError refuses an option of TrainOptions, or options together.
// Field names the option as a Go selector from TrainOptions ("GapTol",
// "Sampler.Kind") or from the method's type ("SDCA.Epsilon",
// "SAG.Variant"), "" when the run as a whole is refused (it needs more
// memory than the budget); Value is the value as text ("" when the
// message shows none); Msg says what is wrong, and names options as
// {Field}. A program with its own names for the options (the dualcrf
// command's flags) renders it with Format. The packages below stage
// (train, duals, featurize, tables, decode) name their options in the
// same way.
type OptionError = option.Error

// optionError is an *OptionError; value is shown quoted when a string.
func optionError(field string, value any, msg string) *OptionError {
	v := ""
	switch value := value.(type) {
	case nil:
	case string:
		v = strconv.Quote(value)
	case float64:
		v = strconv.FormatFloat(value, 'g', -1, 64)
	default:
		v = fmt.Sprint(value)
	}
	return &OptionError{Field: field, Value: v, Msg: msg}
}
