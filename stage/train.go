package stage

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/dualcrf/dualcrf/arrowio"
	"github.com/dualcrf/dualcrf/crf"
	"github.com/dualcrf/dualcrf/duals"
	"github.com/dualcrf/dualcrf/featurize"
	"github.com/dualcrf/dualcrf/progress"
	"github.com/dualcrf/dualcrf/schemas"
	"github.com/dualcrf/dualcrf/tables"
	"github.com/dualcrf/dualcrf/train"
)

// TrainOptions configure Train. A zero field is its default, except where
// a zero means zero: RefreshEvery, MaxTime, CheckpointEvery and
// CheckpointInterval. The solver's own settings are the exported fields of
// Method's value.
type TrainOptions struct {
	Lambda Lambda // the regularisation λ; zero: 1/n
	// L1 is the elastic net's λ₁ ≥ 0, the weight of λ₁‖w‖₁ (CRFsuite's c1,
	// c2 are L1 = c1/n and Lambda = 2·c2/n); zero (or 0 given): none, the
	// ℓ2-regularised objective. SDCA trains it by proximal SDCA, LBFGS by
	// OWL-QN; the other methods and the hinge loss refuse it.
	L1 Lambda
	// Method is the solver and its settings, a method train.Methods lists:
	// *train.SDCA (SDCA-GAP, whose sampler is Sampler's), *train.LBFGS,
	// *train.OEG, *train.SAG or *train.BCFW; nil: &train.SDCA{}. Train
	// reads its settings (train.Description.Settings) and runs a fresh
	// value of that type (train.Fresh), so one TrainOptions trains any
	// number of times. The fields a run makes (train.Description.Made:
	// SDCA's Sampler, Duals and Warm) must be nil: Train makes them from
	// Sampler, Duals and WarmStart.
	Method train.Method
	// Loss is the training loss: LossLog (the CRF's negative
	// log-likelihood) or LossHinge (the structural SVM's Hamming hinge
	// loss, trained by *train.BCFW, SDCA-GAP's structured twin); "": the
	// method's. A Method of the log loss with a twin of the loss asked for
	// (nil or *train.SDCA: train.ForLoss) runs as the twin with the
	// settings they share (its Seed); the other methods minimise their
	// own loss only.
	Loss         string
	Sampler      Sampler // SDCA's (BCFW's) sampler
	NoBias       bool    // leave out the bias, start and end weights (CRFsuite's model)
	FeatureSpace Pairs   // the (attribute, label) pairs weighed
	Transitions  Pairs   // the (label, label) pairs weighed

	RefreshEvery int           // SDCA: recompute every gap estimate every k epochs; 0: never
	GapTol       float64       // stop when the certified gap is at most this; 0: train.DefaultGapTol
	GapEvery     int           // epochs between certificates; 0 (the default): the initial point, an epoch whose gap estimate is ≤ train.EstimateSlack·GapTol, and the last epoch
	MaxEpochs    int           // at most this many epochs (L-BFGS: iterations); 0: train.DefaultMaxEpochs
	MaxTime      time.Duration // at most this much training time; 0: no limit

	// Valid, when set, is a held-out table (featurized with the training
	// table's templates) scored after each certificate; ValidName names it
	// in messages.
	Valid     *tables.FeatureTable
	ValidName string

	// Duals is where SDCA keeps its dual variables (see Placement); the
	// zero value is DualsAuto: in memory when the run's whole memory
	// estimate fits MemoryBudget (default: half of physical memory), else
	// streamed.
	Duals Duals
	// MemoryBudget, in bytes, is the most memory a run may be estimated to
	// need; 0: physical memory. A run that needs more is refused. Streamed
	// duals take what the rest of the run leaves of it (default: half of
	// physical memory), in duals.StreamBuffers blocks and, with more than
	// one block, duals.StreamHeldSlots blocks' worth of SDCA's working set.
	MemoryBudget int64

	// Checkpoint is a directory (locked while training) where snapshots are
	// written atomically every CheckpointEvery epochs (0: none by epoch),
	// every CheckpointInterval of training time (0: none by time), and when
	// ctx is cancelled; "": Resume's, or no checkpoints. SDCA and BCFW only.
	Checkpoint         string
	CheckpointEvery    int
	CheckpointInterval time.Duration
	// Resume continues from the newest valid snapshot in this directory.
	// Without it, a Checkpoint directory that holds snapshots is refused
	// (train.ErrCheckpointExists) before any work. SDCA and BCFW only.
	Resume string
	// KeepCheckpoints keeps the snapshots of a run that ends well; by
	// default they are removed (with the streamed duals file in the
	// checkpoint directory) once AfterTraining has succeeded. A failed or
	// interrupted run always keeps them, for Resume.
	KeepCheckpoints bool

	// KeepDuals, when set, is a file where a run that ends well keeps its
	// final duals with a key per sentence — a hash of its tokens (the
	// table's text columns, read with it; else its attribute names) and
	// gold label names — for a later WarmStart. Written to a temporary
	// file and renamed. SDCA only.
	KeepDuals string
	// WarmStart, when set, is a KeepDuals file of an earlier run whose
	// duals this one starts from: sentences found again by key keep their
	// duals (relabelled by label name), new ones start at eq. 21's μ⁰,
	// and the initial certificate's block gaps seed the sampler. Kept
	// duals of other feature templates, another λ setting, or a label
	// this table lacks give a cold start, which the log and the model's
	// training facts say. Duals in memory or memory-mapped; SDCA only.
	WarmStart string

	// Given lists the options the caller's user gave, each as the fields
	// it sets, named as OptionError.Field names them (one option of a
	// program may set several: the command's --seed sets SDCA.Seed,
	// OEG.Seed, SAG.Seed and BCFW.Seed). Check refuses one that the
	// method does not read — none of its fields is the method's own or in
	// its train.Description.Reads — even at its default value: it would
	// have no effect. An option of train.RunOptions set to a value other
	// than its zero counts as given too (CheckpointEvery only through
	// Given).
	Given [][]string

	// Log receives the summary lines and warnings (and, unless Quiet, one
	// line per epoch and per checkpoint); nil: discarded.
	Log   io.Writer
	Quiet bool
	// OptionName, when set, names an option (by its field, as
	// OptionError.Field does) in the log's lines and in the advice of an
	// interrupted run's error; nil: its Go name. The command passes its
	// flags' names.
	OptionName func(field string) string
	// BeforeTraining, when set, is called once every check has passed and
	// the checkpoint to resume is loaded, before the duals are placed and
	// training starts: the command opens its outputs there, so that a path
	// it cannot write fails before any work.
	BeforeTraining func() error
	// AfterTraining, when set, is called with the result of a run that
	// ended well, while the checkpoint directory is still locked: the
	// command writes and commits its outputs there. If it fails, Train
	// returns its error and the snapshots stay.
	AfterTraining func(*TrainResult) error
	// Phase, when set, is train.Settings.Phase.
	Phase func(phase string, epoch int)
	// Progress, when set, shows the steps of each epoch with their rate
	// and ETA, the certified gap against the target and the certificate
	// passes; nil: nothing (the per-epoch lines go to Log as always).
	Progress *progress.Reporter
}

// The losses TrainOptions.Loss names (train.Description.Loss).
const (
	LossLog   = train.LossLog
	LossHinge = train.LossHinge
)

// ErrUnlabelled refuses a training table in which no token has a gold
// label (featurized without labels?).
var ErrUnlabelled = errors.New("no token has a gold label; train needs a labelled feature table")

// TrainResult is what Train returns.
type TrainResult struct {
	// Model is the complete model: weights, names and metadata (the
	// table's featurization, λ, n, the solver, the feature spaces and the
	// training facts with the final certificate).
	Model *crf.Model
	// Train is the driver's result: stop reason, epochs, the last
	// certificate and the per-epoch records.
	Train *train.Result
	// Solver is the method's name (train.Description.Name), Label its
	// name in a figure's legend (train.Label: "SDCA, gap sampler").
	Solver, Label string
}

// WriteLog writes the per-epoch training log as an Arrow IPC file.
func (r *TrainResult) WriteLog(w io.Writer) error { return r.WriteLogAs(w, arrowio.WriterOptions{}) }

// WriteLogAs writes the per-epoch training log with opts: the IPC file
// format when opts.Format is empty, Parquet with arrowio.FormatParquet.
func (r *TrainResult) WriteLogAs(w io.Writer, opts arrowio.WriterOptions) error {
	return tables.WriteLog(w, logRows(r.Train.Records), map[string]string{schemas.KeySolver: r.Solver}, opts)
}

// LogRows returns the per-epoch training-log rows, as WriteLog writes them.
func (r *TrainResult) LogRows() []tables.LogRow { return logRows(r.Train.Records) }

// Solver names a method as a model's metadata records it (its
// train.Description's Name): sdca, lbfgs, oeg, sag or bcfw for nil (the
// default, SDCA) and the methods train.Methods lists; "" for another.
func Solver(m train.Method) string {
	if m == nil {
		return train.MethodNames()[0]
	}
	d, _ := train.Describe(m)
	return d.Name
}

// descriptionOf returns m's description (nil: the default method's).
func descriptionOf(m train.Method) train.Description {
	if m == nil {
		return train.Methods()[0].Describe()
	}
	d, _ := train.Describe(m)
	return d
}

// withDefaults returns o with its defaults filled in: the method (the
// twin of Loss, ForLoss, with the settings they share) and its loss.
func (o TrainOptions) withDefaults() TrainOptions {
	if o.Method == nil {
		o.Method = train.Methods()[0]
	}
	if d, ok := train.Describe(o.Method); ok {
		if name, err := train.ForLoss(d.Name, o.Loss); err == nil && name != d.Name {
			twin := train.NewMethod(name)
			train.ShareSettings(twin, o.Method)
			o.Method = twin
		}
		o.Loss = descriptionOf(o.Method).Loss
	}
	if sd, ok := o.Method.(*train.SDCA); ok && o.L1.c != 0 && sd.DualPrecision == 0 {
		// The elastic net's step moves ŵ(μ) by its exact direction: its
		// duals are float64 unless given otherwise (and then refused).
		f := train.Fresh(sd).(*train.SDCA)
		f.DualPrecision = duals.Float64
		o.Method = f
	}
	if sd, ok := o.Method.(*train.SDCA); ok && o.L1.c != 0 && sd.Workers == 0 && sd.RoundSize == 0 && sd.Async == "" {
		// Its steps are sequential (one worker) unless given otherwise
		// (and then refused).
		f := train.Fresh(sd).(*train.SDCA)
		f.Workers = 1
		o.Method = f
	}
	if o.Sampler.Kind == "" {
		o.Sampler.Kind = train.DefaultSampler
	}
	if o.Resume != "" && o.Checkpoint == "" {
		o.Checkpoint = o.Resume
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
	if o.OptionName == nil {
		o.OptionName = func(field string) string { return field }
	}
	return o
}

// Check refuses options out of range with an *OptionError; a zero that
// stands for a default passes, unless Given says the user gave it.
func (o TrainOptions) Check() error {
	type check struct {
		bad   bool
		field string
		value any
		msg   string
	}
	d, known := train.Describe(o.Method)
	if o.Method == nil {
		d, known = descriptionOf(nil), true
	}
	if !known {
		var types []string
		for _, m := range train.Methods() {
			types = append(types, fmt.Sprintf("%T", m))
		}
		return optionError("Method", fmt.Sprintf("%T", o.Method), "want "+joinOr(types))
	}
	if o.Loss == "" && o.given("Loss") {
		return optionError("Loss", "", "want "+joinOr([]string{LossLog, LossHinge}))
	}
	if o.Loss != "" {
		if _, err := train.ForLoss(d.Name, o.Loss); err != nil {
			var oe *OptionError
			if errors.As(err, &oe) && oe.Field == "Loss" {
				return err
			}
		}
	}
	if err := o.checkReads(); err != nil {
		return err
	}
	if _, err := train.ForLoss(d.Name, o.Loss); err != nil {
		return err
	}
	run := o.withDefaults().Method
	rd := descriptionOf(run)
	checks := []check{
		// A zero stands for the default unless given (Given).
		{(o.Sampler.Kind != "" || o.given(train.RunSampler)) && !slices.Contains(train.SamplerKinds(), o.Sampler.Kind), "Sampler.Kind", o.Sampler.Kind, "want one of " + strings.Join(train.SamplerKinds(), ", ")},
		{(o.Sampler.NonUniform != 0 || o.given(train.RunNonUniform)) && !(o.Sampler.NonUniform > 0 && o.Sampler.NonUniform <= 1), "Sampler.NonUniform", o.Sampler.NonUniform, "want a probability in (0,1]"},
		{o.RefreshEvery < 0, "RefreshEvery", o.RefreshEvery, "want 0 (never) or a number of epochs ≥ 1"},
		{(o.GapTol != 0 || o.given("GapTol")) && !(o.GapTol > 0 && !math.IsInf(o.GapTol, 0)), "GapTol", o.GapTol, "want a positive tolerance"},
		{o.GapEvery < 0, "GapEvery", o.GapEvery, "want 0 (only when the estimate says so) or a number of epochs ≥ 1"},
		{o.MaxEpochs < 0 || o.MaxEpochs == 0 && o.given("MaxEpochs"), "MaxEpochs", o.MaxEpochs, "want at least 1"},
		{o.MaxTime < 0, "MaxTime", o.MaxTime, "want a duration ≥ 0 (0: no limit)"},
		{o.CheckpointEvery < 0, "CheckpointEvery", o.CheckpointEvery, "want 0 or a number of epochs ≥ 1"},
		{o.CheckpointInterval < 0, "CheckpointInterval", o.CheckpointInterval, "want a duration ≥ 0"},
		{o.FeatureSpace != AllPairs && o.FeatureSpace != ObservedPairs, "FeatureSpace", int(o.FeatureSpace), "want AllPairs or ObservedPairs"},
		{o.Transitions != AllPairs && o.Transitions != ObservedPairs, "Transitions", int(o.Transitions), "want AllPairs or ObservedPairs"},
		{o.Duals.Place < DualsAuto || o.Duals.Place > DualsFile, "Duals", int(o.Duals.Place), "want DualsAuto, DualsMemory, DualsStream or DualsFile"},
		{o.Duals.Place == DualsFile && o.Duals.Path == "", "Duals", nil, "want a file path with DualsFile"},
		{(o.Duals.Place == DualsAuto || o.Duals.Place == DualsMemory) && o.Duals.Path != "", "Duals", o.Duals.Path, "a path applies to DualsStream and DualsFile only"},
		{o.MemoryBudget < 0, "MemoryBudget", o.MemoryBudget, "want a positive size"},
		{o.WarmStart != "" && o.Duals.Place == DualsStream, "WarmStart", o.WarmStart, "needs the duals in memory or in a memory-mapped file, not {Duals} stream"},
		{o.L1.set && !(o.L1.c >= 0 && !math.IsInf(o.L1.c, 0)), "L1", o.L1.String(), "want a finite λ₁ ≥ 0: a number, or c/n"},
		{o.L1.c != 0 && parallelSDCA(o.Method), "SDCA.Workers", nil,
			"the elastic net ({L1}) is trained by one worker: want 1, or leave {SDCA.Workers}, {SDCA.RoundSize} and {SDCA.Async} unset"},
		{o.L1.c != 0 && dualPrecision(o.Method) != 0 && dualPrecision(o.Method) != duals.Float64, "SDCA.DualPrecision", dualPrecision(o.Method).String(),
			"the elastic net ({L1}) keeps its duals in float64 (its step moves the weights by the exact direction): want float64, or leave it unset"},
		// A method that reads where its duals go but keeps them in memory
		// (BCFW) takes memory or auto only.
		{train.Reads(run, train.RunDuals) && !rd.DualsOnDisk && o.Duals != Duals{} && o.Duals.Place != DualsMemory && o.Duals.Place != DualsAuto,
			"Duals", dualsText(o.Duals), o.methodWords(run, run) + " (" + rd.Title + ") keeps its duals in memory: want memory or auto"},
		// Asynchronous steps need their duals in memory or in a mapped file.
		{asyncSteps(o.Method) && o.Duals.Place == DualsStream, "SDCA.Async", asyncKind(o.Method),
			"needs the duals in memory or in a memory-mapped file, not {Duals} stream (the rounds, the default, run on streamed duals)"},
	}
	for _, ch := range checks {
		if ch.bad {
			return optionError(ch.field, ch.value, ch.msg)
		}
	}
	// The fields a run makes, which its user leaves nil.
	made := train.Made(o.Method)
	for _, f := range slices.Sorted(maps.Keys(made)) {
		return optionError(f, nil, "want nil: Train makes it from {"+made[f]+"}")
	}
	// A method taking another's place for the loss (BCFW for SDCA) takes
	// the settings they share; a setting it lacks would have no effect.
	if o.Method != nil && Solver(run) != Solver(o.Method) {
		for _, f := range train.ShareSettings(train.NewMethod(Solver(run)), o.Method) {
			field := train.TypeName(o.Method) + "." + f
			return optionError(field, nil, fmt.Sprintf("applies to the %s loss only: {Loss} %s is trained by %s", d.Loss, rd.Loss, rd.Title))
		}
	}
	if o.Method != nil {
		if err := train.CheckSettings(o.Method, o.given); err != nil {
			return err
		}
	}
	return o.checkUnread()
}

// checkReads refuses an option the method does not read (Given), named
// with the methods that do.
func (o TrainOptions) checkReads() error {
	run := o.withDefaults().Method
	reads := func(m train.Method) func(field string) bool {
		own, desc := train.TypeName(m), descriptionOf(m)
		return func(field string) bool {
			if typ, _, ok := strings.Cut(field, "."); ok && isMethodType(typ) {
				return typ == own
			}
			return !slices.Contains(train.RunOptions(), field) || slices.Contains(desc.Reads, field)
		}
	}
	read := reads(run)
	// refuse names the option (its fields) with the methods that read it.
	refuse := func(fields ...string) error {
		var users []string
		for _, m := range train.Methods() {
			if slices.ContainsFunc(fields, reads(m)) {
				users = append(users, o.methodWords(m, run))
			}
		}
		return optionError(fields[0], o.runOptionValue(fields[0]), fmt.Sprintf("not used by %s (only by %s)", o.methodWords(run, run), joinWords(users)))
	}
	for _, g := range o.Given {
		if len(g) > 0 && !slices.ContainsFunc(g, read) {
			return refuse(g...)
		}
	}
	for _, f := range o.setRunOptions() {
		if !read(f) {
			return refuse(f)
		}
	}
	// The sampler's own options: the share of non-uniform draws is read
	// by the samplers that mix.
	kind := cmp.Or(o.Sampler.Kind, train.DefaultSampler)
	if o.given("Sampler.NonUniform") && read("Sampler.NonUniform") && slices.Contains(train.SamplerKinds(), kind) && !train.MixesUniform(kind) {
		var mix []string
		for _, k := range train.SamplerKinds() {
			if train.MixesUniform(k) {
				mix = append(mix, k)
			}
		}
		return optionError("Sampler.NonUniform", nil, fmt.Sprintf("not used by {Sampler.Kind} %s (only by the %s samplers)", kind, joinWords(mix)))
	}
	return nil
}

// checkUnread refuses a setting of the method given that its other
// settings leave unread (train.Setting.Unread: SDCA's RoundSize with
// asynchronous steps).
func (o TrainOptions) checkUnread() error {
	m := o.withDefaults().Method
	typ := train.TypeName(m)
	for _, s := range descriptionOf(m).Settings {
		if s.Unread == nil || !o.given(typ+"."+s.Field) {
			continue
		}
		if why := s.Unread(m); why != "" {
			return optionError(typ+"."+s.Field, nil, why)
		}
	}
	return nil
}

// given reports whether the option field was given: in Given, or set
// to other than its zero value.
func (o TrainOptions) given(field string) bool {
	for _, g := range o.Given {
		if slices.Contains(g, field) {
			return true
		}
	}
	return slices.Contains(o.setRunOptions(), field)
}

// setRunOptions returns the options of train.RunOptions set to other
// than their zero value (CheckpointEvery, whose zero is no default of a
// program's, counts only through Given).
func (o TrainOptions) setRunOptions() []string {
	var set []string
	for _, c := range []struct {
		field string
		set   bool
	}{
		{train.RunSampler, o.Sampler.Kind != ""},
		{train.RunNonUniform, o.Sampler.NonUniform != 0},
		{train.RunRefresh, o.RefreshEvery != 0},
		{train.RunDuals, o.Duals != Duals{}},
		{train.RunCheckpoint, o.Checkpoint != ""},
		{train.RunCheckpointInterval, o.CheckpointInterval != 0},
		{train.RunKeepCheckpoints, o.KeepCheckpoints},
		{train.RunResume, o.Resume != ""},
		{train.RunKeepDuals, o.KeepDuals != ""},
		{train.RunWarmStart, o.WarmStart != ""},
		{train.RunL1, o.L1.c != 0},
	} {
		if c.set {
			set = append(set, c.field)
		}
	}
	return set
}

// runOptionValue is the value of the option field of train.RunOptions, as
// an OptionError shows it; nil for another field.
func (o TrainOptions) runOptionValue(field string) any {
	switch field {
	case train.RunSampler:
		return o.Sampler.Kind
	case train.RunNonUniform:
		return o.Sampler.NonUniform
	case train.RunRefresh:
		return o.RefreshEvery
	case train.RunDuals:
		return dualsText(o.Duals)
	case train.RunCheckpoint:
		return o.Checkpoint
	case train.RunCheckpointEvery:
		return o.CheckpointEvery
	case train.RunCheckpointInterval:
		return o.CheckpointInterval
	case train.RunResume:
		return o.Resume
	case train.RunKeepDuals:
		return o.KeepDuals
	case train.RunWarmStart:
		return o.WarmStart
	case train.RunL1:
		return o.L1.String()
	}
	return nil
}

// methodWords names method m as the options choose it ({Method} sag,
// {Loss} hinge: a method of another loss than the log loss by its loss),
// for a message about a run of method run.
func (o TrainOptions) methodWords(m, run train.Method) string {
	d, rd := descriptionOf(m), descriptionOf(run)
	switch {
	case d.Loss != LossLog:
		return "{Loss} " + d.Loss
	case rd.Loss != d.Loss:
		return "{Method} " + d.Name + " with {Loss} " + d.Loss
	default:
		return "{Method} " + d.Name
	}
}

// isMethodType reports whether typ names a method's type ("SDCA").
func isMethodType(typ string) bool {
	for _, m := range train.Methods() {
		if train.TypeName(m) == typ {
			return true
		}
	}
	return false
}

// joinOr joins words as a list of choices: "a", "a or b", "a, b or c".
func joinOr(words []string) string {
	if len(words) < 2 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " or " + words[len(words)-1]
}

// joinWords joins words as a list in prose: "a", "a and b", "a, b and c".
func joinWords(words []string) string {
	if len(words) < 2 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " and " + words[len(words)-1]
}

// dualsText is d as the option is written: memory, auto, stream,
// stream:PATH or PATH.
func dualsText(d Duals) string {
	switch d.Place {
	case DualsMemory:
		return "memory"
	case DualsAuto:
		return "auto"
	case DualsStream:
		if d.Path != "" {
			return "stream:" + d.Path
		}
		return "stream"
	}
	return d.Path
}

// asyncSteps reports whether m is SDCA with asynchronous steps.
func asyncSteps(m train.Method) bool { return asyncKind(m) != "" }

// asyncKind is SDCA's Async of m ("" for the rounds, or another method).
func asyncKind(m train.Method) string {
	if sd, ok := m.(*train.SDCA); ok {
		return sd.Async
	}
	return ""
}

// trainer is one run of Train: the options with defaults, the problem and
// what the run holds open.
type trainer struct {
	o      TrainOptions
	solver string // Solver(o.Method)
	name   string
	t      *tables.FeatureTable
	p      *train.Problem
	set    train.Settings
	// m is the method the run trains with: a fresh value of o.Method's
	// type (train.Fresh), given what the run makes (train.SetMade).
	m        train.Method
	resume   *train.Checkpoint
	progress *trainProgress
	// Where the duals go (checkMemory) and, when streamed, the store's
	// options, block count and the store.
	place        Placement
	streamOpts   duals.StreamOptions
	streamBlocks int
	stream       *duals.Stream
	plan         *TrainPlan // what the run costs (checkMemory)
	// The warm start's kept duals and facts (WarmStart).
	kept *duals.Kept
	warm *WarmFacts
}

// logf writes a line to the log.
func (r *trainer) logf(format string, args ...any) { fmt.Fprintf(r.o.Log, format+"\n", args...) }

// Train fits a CRF to the labelled feature table t (read from name, which
// messages and the model's training facts give) and returns the complete
// model. It checks o, places the duals (in memory or memory-mapped), takes
// the checkpoint directories' locks, resumes, validates, and certifies the
// duality gap. Cancelling ctx stops the run at a safe point: with a
// checkpoint directory, the point reached is saved and the error says how
// to continue.
func Train(ctx context.Context, t *tables.FeatureTable, name string, o TrainOptions) (*TrainResult, error) {
	if err := o.Check(); err != nil {
		return nil, err
	}
	if err := o.checkFiles(name); err != nil {
		return nil, err
	}
	r := &trainer{o: o.withDefaults(), name: name, t: t}
	r.solver = Solver(r.o.Method)
	if err := r.setup(); err != nil {
		return nil, err
	}
	defer memoryPolicy(r.plan)()
	unlock, err := lockDirs(r.o.Checkpoint, r.o.Resume)
	if err != nil {
		return nil, err
	}
	defer unlock()
	if r.o.Checkpoint != "" && !sameDir(r.o.Checkpoint, r.o.Resume) {
		if err := train.CheckFresh(r.o.Checkpoint); err != nil {
			return nil, fmt.Errorf("train: %w", err)
		}
	}
	method, err := r.method()
	if r.stream != nil {
		defer r.stream.Close() // closing twice does nothing
	}
	defer r.kept.Close()
	if err != nil {
		return nil, err
	}
	if c, ok := method.(io.Closer); ok {
		defer c.Close() // OEG's potentials
	}
	if r.resume != nil {
		defer r.resume.Duals.Close()
	}
	if r.o.BeforeTraining != nil {
		if err := r.o.BeforeTraining(); err != nil {
			return nil, err
		}
	}
	var store *duals.File
	if r.place == DualsFile && descriptionOf(r.m).DualsOnDisk {
		if store, err = r.dualStore(); err != nil {
			return nil, err
		}
		defer store.Close()
		train.SetMade(r.m, train.RunDuals, store)
	}
	res, err := r.run(ctx, method)
	r.kept.Close() // read by Init; closed before KeepDuals may replace it
	if err != nil {
		return nil, err
	}
	if r.o.KeepDuals != "" {
		if err := r.keepDuals(res); err != nil {
			return nil, err
		}
	}
	// The duals are not needed any more: their memory goes before the
	// model's dense weights are made (the deferred closes do nothing then).
	if err := closeAll(method, store, r.stream, r.resume); err != nil {
		r.logf("train: warning: %v", err) // as the deferred closes ignored it: the model is sound
	}
	res.Model.Layout, res.Model.Weights = r.p.Layout.Dense(), r.p.Layout.Expand(res.Model.Weights)
	if r.o.AfterTraining != nil {
		if err := r.o.AfterTraining(res); err != nil {
			return nil, err
		}
	}
	r.removeSnapshots()
	return res, nil
}

// closeAll closes the method's duals (or OEG's potentials), the duals file,
// the streamed store and the resumed checkpoint's duals, those that are
// set.
func closeAll(method train.Method, store *duals.File, stream *duals.Stream, resume *train.Checkpoint) error {
	var errs []error
	if c, ok := method.(io.Closer); ok {
		errs = append(errs, c.Close())
	}
	errs = append(errs, store.Close())
	if stream != nil {
		errs = append(errs, stream.Close())
	}
	if resume != nil && resume.Duals != nil {
		errs = append(errs, resume.Duals.Close())
	}
	return errors.Join(errs...)
}

// removeSnapshots removes the snapshots of a run that ended well, unless
// KeepCheckpoints: with the model made, they only take disk (a copy of the
// duals each). The streamed duals file goes too when it lives in the
// checkpoint directory (duals.stream, not a stream:PATH the user named).
func (r *trainer) removeSnapshots() {
	dir := r.o.Checkpoint
	if dir == "" || r.o.KeepCheckpoints || !train.Reads(r.m, train.RunCheckpoint) {
		return
	}
	streamed := ""
	if r.stream != nil {
		if p := r.stream.Path(); p == filepath.Join(dir, "duals.stream") {
			streamed = p
		}
		r.stream.Close() // before its file is removed (Windows cannot remove an open file)
	}
	if err := train.RemoveSnapshots(dir, streamed); err != nil {
		r.logf("train: warning: %v", err)
		return
	}
	r.logf("train: removed the snapshots in %s (%s keeps them)", dir, r.o.OptionName("KeepCheckpoints"))
}

// setup checks the table, makes the problem, reads the held-out table and
// checks the memory the run needs, deciding where the duals go.
func (r *trainer) setup() error {
	d := r.t.Data
	if !hasGold(d) {
		return fmt.Errorf("%s: %w", r.name, ErrUnlabelled)
	}
	feat, err := checkFeaturization(r.t.Metadata, r.name)
	if err != nil {
		return err
	}
	lambda := r.o.Lambda.For(d.Len())
	if r.p, err = train.NewProblem(d, lambda, r.o.NoBias); err != nil {
		return fmt.Errorf("%s: %w", r.name, err)
	}
	r.p.L1 = r.o.l1(d.Len())
	if r.o.FeatureSpace == ObservedPairs {
		r.p.ObserveFeatures() // sparse weights where they are fewer than half the pairs
	}
	if r.o.Transitions == ObservedPairs {
		r.p.TransMask = train.ObservedTransitions(d)
	}
	r.set = r.settings()
	if r.o.Valid != nil {
		if r.set.Validate, err = r.validator(feat); err != nil {
			return err
		}
	}
	state := ""
	if ss, ok := r.o.Method.(train.StateSizer); ok {
		b, what, form := ss.StateBytes(d)
		state = fmt.Sprintf("; %s %s (%s)", what, byteSize(b), form)
	}
	l1, held := "", ""
	if r.p.L1 > 0 {
		l1 = fmt.Sprintf(", λ₁ = %.6g (elastic net)", r.p.L1)
	}
	if r.p.Layout.Free != nil {
		held = ", held sparse"
	}
	r.logf("train: %d sentences, %d tokens, %d attributes, %d labels; %d free weights (d = %d%s), λ = %.6g%s%s",
		d.Len(), d.NumTokens(), d.NumAttrs, d.NumLabels, r.p.FreeWeights(), r.p.Layout.Dense().Dim(), held, lambda, l1, state)
	return r.checkMemory(r.p.Shape())
}

// settings are the driver's settings for the options.
func (r *trainer) settings() train.Settings {
	o := r.o
	s := train.Settings{MaxEpochs: o.MaxEpochs, MaxTime: o.MaxTime, GapTol: o.GapTol, GapEvery: o.GapEvery,
		RefreshEvery: o.RefreshEvery, CheckpointEvery: o.CheckpointEvery, CheckpointInterval: o.CheckpointInterval, Phase: o.Phase}
	if !train.Reads(o.Method, train.RunRefresh) {
		s.RefreshEvery = 0 // only a method with gap estimates refreshes them: the option never applied to the others
	}
	if !o.Quiet {
		s.Record = func(rec train.EpochRecord) error {
			r.logf("%s", train.FormatRecord(rec))
			return nil
		}
	}
	return s
}

// method makes the method the run trains with: a fresh value with the
// options' settings, and what the run makes for the options it reads —
// its sampler, its duals' store, its warm start — resuming when asked.
func (r *trainer) method() (train.Method, error) {
	o := r.o
	m := train.Fresh(o.Method)
	r.m = m
	if train.Reads(m, train.RunSampler) {
		sampler, err := train.NewSampler(o.Sampler.Kind, r.p.N(), train.SamplerOptions{NonUniform: o.Sampler.NonUniform, Smoothness: r.p.Smoothness()})
		if err != nil {
			return nil, err
		}
		train.SetMade(m, train.RunSampler, sampler)
	}
	if sd, ok := m.(*train.SDCA); ok {
		switch kind, w, R := sd.Schedule(r.p.N()); kind {
		case train.ScheduleRounds:
			r.logf("train: parallel SDCA in pipelined rounds of %d steps on %d workers (the model depends on the seed and the round size, not on the workers)", R, w)
		case train.ScheduleAsyncAtomic, train.ScheduleAsyncWild:
			r.logf("train: asynchronous SDCA on %d workers (%s): not reproducible, the model differs from run to run", w, kind)
		}
	} else if wm, ok := m.(train.Workers); ok {
		if w := wm.NumWorkers(r.p.N()); w > 1 {
			r.logf("train: %d %s workers (parallel oracles, ordered commits)", w, descriptionOf(m).Title)
		}
	}
	if r.place == DualsStream {
		// Placed before the resume check: the block count is a run setting.
		var err error
		if r.stream, err = r.streamStore(); err != nil {
			return nil, err
		}
		train.SetMade(m, train.RunDuals, r.stream)
	}
	if o.Checkpoint != "" && train.Reads(m, train.RunCheckpoint) {
		r.set.Checkpoint = r.saveCheckpoint
	}
	switch {
	case o.WarmStart == "" || o.Resume != "":
		// A resumed run continues from its own duals; its snapshot says
		// how it started (resumeFrom).
	case r.place == DualsStream:
		// Duals auto chose to stream them (Check refuses Duals stream):
		// the kept duals are checked, and the run starts cold.
		k, err := duals.OpenKept(o.WarmStart)
		if err != nil {
			return nil, err
		}
		k.Close()
		r.warm = &WarmFacts{From: o.WarmStart, Added: r.p.N(),
			Cold: "the duals are streamed (the run does not fit in memory), and a warm start needs them in memory or in a memory-mapped file"}
		r.logf("train: warning: starting cold, not from %s: %s; give %s PATH (memory-mapped) or a larger %s to start warm",
			o.WarmStart, r.warm.Cold, o.OptionName("Duals"), o.OptionName("MemoryBudget"))
	default:
		if err := r.openWarm(); err != nil {
			return nil, err
		}
	}
	if err := r.resumeFrom(m); err != nil {
		return nil, err
	}
	return m, r.recordFacts()
}

// recordFacts makes the run's facts that its snapshots keep (the warm
// start's), so that a resumed run's model says what the uninterrupted
// one's would.
func (r *trainer) recordFacts() error {
	if r.warm == nil {
		return nil
	}
	b, err := json.Marshal(struct {
		Warm *WarmFacts `json:"warm_start"`
	}{r.warm})
	r.set.Facts = b
	return err
}

// resumeFacts takes back the facts a snapshot kept (recordFacts): how the
// run started. A WarmStart given to the resume must name the kept duals
// the run started from.
func (r *trainer) resumeFacts() error {
	var facts struct {
		Warm *WarmFacts `json:"warm_start"`
	}
	if b := r.resume.Facts(); len(b) > 0 {
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&facts); err != nil {
			return fmt.Errorf("resume %s: state.json: the run's facts: %w", r.resume.Dir, err)
		}
	}
	r.warm = facts.Warm
	switch ws := r.o.WarmStart; {
	case ws == "":
	case r.warm == nil:
		return optionError("WarmStart", ws, "the run in {Resume} started without kept duals: resume it without {WarmStart}")
	case filepath.Clean(ws) != filepath.Clean(r.warm.From):
		return optionError("WarmStart", ws, fmt.Sprintf("the run in {Resume} started from %s: resume it with that {WarmStart}, or without one", r.warm.From))
	}
	return nil
}

// resumeFrom loads the checkpoint to resume, if any, checks it against m's
// settings and hands it to the run.
func (r *trainer) resumeFrom(m train.Method) error {
	o := r.o
	if o.Resume == "" {
		return nil
	}
	var err error
	if r.resume, err = train.LoadCheckpoint(o.Resume, r.p, func(msg string) { r.logf("train: warning: %s", msg) }); err != nil {
		return err
	}
	if err := r.resume.CheckSettings(r.p, r.set, m); err != nil {
		r.resume.Duals.Close()
		r.resume = nil
		return err
	}
	if err := r.resumeFacts(); err != nil {
		r.resume.Duals.Close()
		r.resume = nil
		return err
	}
	r.set.Resume = r.resume
	r.logf("train: resuming from %s (%s)", r.resume.Dir, describe(r.resume.Progress().Position))
	return nil
}

// saveCheckpoint writes a snapshot of the run to the checkpoint directory.
func (r *trainer) saveCheckpoint(pr train.Progress) (string, error) {
	t0 := time.Now()
	path, err := train.SaveCheckpoint(r.o.Checkpoint, r.m, pr)
	if err == nil && !r.o.Quiet {
		r.logf("checkpoint: %s (%.2fs)", path, time.Since(t0).Seconds())
	}
	return path, err
}

// scheduleStats returns where the time of a parallel SDCA's steps went.
func (r *trainer) scheduleStats() (train.ScheduleStats, bool) {
	sd, ok := r.m.(*train.SDCA)
	if !ok {
		return train.ScheduleStats{}, false
	}
	st, ok := sd.ScheduleStats()
	return st, ok && st.Wall > 0
}

// run trains and makes the model.
func (r *trainer) run(ctx context.Context, method train.Method) (*TrainResult, error) {
	t0 := time.Now()
	r.startProgress()
	res, err := train.Train(ctx, r.p, r.set, method)
	r.progress.end()
	if err != nil {
		return nil, r.trainError(err)
	}
	r.logf("train: stopped (%s) after %d epochs, %.2fs training (%.2fs wall): primal %.10g, certified gap %.4g",
		res.Stopped, res.Epochs, res.Training.Seconds(), time.Since(t0).Seconds(), res.Last.Primal, res.Last.Gap)
	if st, ok := r.scheduleStats(); ok && !r.o.Quiet {
		busy := st.Oracles + st.Commits + st.Moves
		r.logf("train: %d workers busy %.0f%% of the steps' %.2fs wall: oracles %.2fs, commits %.2fs (one at a time), moves of the duals %.2fs; waiting %.2fs",
			st.Workers, 100*busy.Seconds()/(float64(st.Workers)*st.Wall.Seconds()), st.Wall.Seconds(), st.Oracles.Seconds(), st.Commits.Seconds(), st.Moves.Seconds(), st.Waited.Seconds())
	}
	if !res.TargetMet() {
		r.logf("train: warning: stopped by %s with a certified gap of %.4g, above %s %g: the target was not reached",
			r.stopReason(res.Stopped), res.Last.Gap, r.o.OptionName("GapTol"), res.GapTol)
	}
	d := r.t.Data
	m := &crf.Model{Layout: r.p.Layout, Weights: res.Weights, AttrNames: d.AttrNames, LabelNames: d.LabelNames,
		Meta: r.modelMetadata(res)}
	return &TrainResult{Model: m, Train: res, Solver: r.solver, Label: train.Label(r.m)}, nil
}

// describe says where a position is.
func describe(p train.Position) string {
	switch {
	case p.Pending:
		return fmt.Sprintf("epoch %d, before its certificate", p.Epoch)
	case p.Step > 0:
		return fmt.Sprintf("epoch %d, after step %d", p.Epoch+1, p.Step)
	}
	return fmt.Sprintf("after epoch %d", p.Epoch)
}

// stopReason names the option behind a stop reason.
func (r *trainer) stopReason(reason train.Status) string {
	switch reason {
	case train.EpochLimit:
		return r.o.OptionName("MaxEpochs")
	case train.TimeLimit:
		return r.o.OptionName("MaxTime")
	case train.NoProgress:
		return "lack of progress"
	}
	return reason.String()
}

// trainError explains an interrupted run: where it stopped and how to
// continue (the snapshot written, or the one resumed from if nothing was
// done since).
func (r *trainer) trainError(err error) error {
	var ie *train.InterruptedError
	if !errors.As(err, &ie) {
		return err
	}
	switch {
	case r.o.Checkpoint == "":
		return fmt.Errorf("train: %w; without %s DIR the progress is lost", err, r.o.OptionName("Checkpoint"))
	case ie.Snapshot == "" && r.resume != nil && ie.At == r.resume.Progress().Position:
		return fmt.Errorf("train: %w; nothing changed since %s: continue with the same command (it has %s %s)", err, r.resume.Dir, r.o.OptionName("Resume"), r.o.Resume)
	case ie.Snapshot == "":
		return fmt.Errorf("train: %w; nothing was saved yet: run the same command again", err)
	}
	return fmt.Errorf("train: %w; continue with the same command and %s %s", err, r.o.OptionName("Resume"), r.o.Checkpoint)
}

// modelMetadata is the model's metadata: the table's featurization, λ, n,
// the solver and feature spaces, and the training facts with the final
// certificate (of exactly the weights returned).
func (r *trainer) modelMetadata(res *train.Result) map[string]string {
	p := r.p
	facts := map[string]any{"epochs": res.Epochs, "stopped": res.Stopped.String(), "primal": jsonNumber(res.Last.Primal),
		"dual": jsonNumber(res.Last.Dual), "gap": jsonNumber(res.Last.Gap), "gap_tol": res.GapTol,
		"target_met": res.TargetMet(), "source": r.name, "transitions": p.TransitionSpace(),
		// The weights trained (the feature spaces' free ones): a model file
		// stores the non-zero ones only.
		"free_weights": p.FreeWeights()}
	// The method's own facts (the log loss's models record no loss: their
	// bytes stay as they were).
	for k, v := range r.m.(train.Describer).Facts(p) {
		facts[k] = v
	}
	if r.warm != nil {
		facts["warm_start"] = r.warm
	}
	factsJSON, err := json.Marshal(facts)
	if err != nil {
		panic(err) // every value above is JSON-safe
	}
	md := map[string]string{}
	for k, v := range r.t.Metadata {
		if k != schemas.KeyFormat && k != schemas.KeyVersion {
			md[k] = v
		}
	}
	md[schemas.KeyLambda] = strconv.FormatFloat(p.Lambda, 'g', -1, 64)
	if p.L1 > 0 {
		// Only the elastic net's models record λ₁: the others' bytes stay.
		md[schemas.KeyL1] = strconv.FormatFloat(p.L1, 'g', -1, 64)
	}
	md[schemas.KeyN] = strconv.Itoa(p.N())
	md[schemas.KeySolver] = r.solver
	md[schemas.KeyFeatureSpace] = p.FeatureSpace()
	md[schemas.KeyTransitions] = p.TransitionSpace()
	md[schemas.KeyTraining] = string(factsJSON)
	return md
}

// jsonNumber returns x, or nil (JSON null) when it is not finite.
func jsonNumber(x float64) any {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return nil
	}
	return x
}

// logRows turns epoch records into training-log rows: the certificate's
// values only for certified epochs, the held-out metrics when measured.
func logRows(recs []train.EpochRecord) []tables.LogRow {
	rows := make([]tables.LogRow, len(recs))
	for i, r := range recs {
		nan := math.NaN()
		row := tables.LogRow{Epoch: r.Epoch, Steps: r.Steps, Seconds: r.Seconds, TotalSeconds: r.Total,
			CertSeconds: r.CertSeconds, Primal: nan, Dual: nan, Gap: nan, IdentityResidual: nan,
			GapEstimate: r.GapEstimate, LineSearch: r.LineSearch, ValidAccuracy: nan, ValidF1: nan,
			OracleCalls: r.OracleCalls, CertOracleCalls: r.CertOracleCalls, Updates: r.Updates}
		if r.Certified {
			row.Primal, row.Dual, row.Gap, row.IdentityResidual = r.Primal, r.Dual, r.Gap, r.Residual
		}
		if v, ok := r.Metrics[train.MetricAccuracy]; ok {
			row.ValidAccuracy = v
		}
		if v, ok := r.Metrics[train.MetricF1]; ok {
			row.ValidF1 = v
		}
		rows[i] = row
	}
	return rows
}

// hasGold reports whether any token of d has a gold label.
func hasGold(d *crf.Dataset) bool {
	for _, y := range d.Labels {
		if y >= 0 {
			return true
		}
	}
	return false
}

// checkFeaturization refuses a table whose featurization metadata later
// stages would reject (models copy it): templates that do not parse, a
// bad min-count or input description. A table that records no templates
// at all (dualcrf synth's, made without text) is accepted: its model has
// none either, and decodes feature tables only.
func checkFeaturization(md map[string]string, name string) (*featurize.TemplateSet, error) {
	set, err := featurize.RecordedTemplates(md, name)
	if err != nil {
		return nil, fmt.Errorf("%w; re-featurize it with dualcrf featurize", err)
	}
	return set, nil
}

// dualPrecision returns the DualPrecision of m when it is SDCA; 0 (unset)
// otherwise.
func dualPrecision(m train.Method) duals.Precision {
	if sd, ok := m.(*train.SDCA); ok {
		return sd.DualPrecision
	}
	return 0
}

// parallelSDCA reports whether m is SDCA asked for more than one worker,
// rounds or asynchronous steps.
func parallelSDCA(m train.Method) bool {
	sd, ok := m.(*train.SDCA)
	return ok && (sd.Workers > 1 || sd.Workers == train.AllWorkers || sd.RoundSize != 0 || sd.Async != "")
}
