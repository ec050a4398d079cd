package stage

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/dualcrf/dualcrf/arrowio"
	"github.com/dualcrf/dualcrf/crf"
	"github.com/dualcrf/dualcrf/duals"
	"github.com/dualcrf/dualcrf/progress"
	"github.com/dualcrf/dualcrf/schemas"
	"github.com/dualcrf/dualcrf/tables"
	"github.com/dualcrf/dualcrf/train"
)

// The command's train defaults that are not a field's zero value, and the
// strings the zero values stand for. The command's flags take their
// defaults from here and from package train.
const (
	DefaultLambda          = "1/n"  // TrainOptions.Lambda ""
	DefaultSolver          = "sdca" // TrainOptions.Solver ""
	DefaultFeatureSpace    = "full" // TrainOptions.FeatureSpace ""
	DefaultTransitions     = "all"  // TrainOptions.Transitions ""
	DefaultDuals           = "auto" // TrainOptions.Duals ""
	DefaultSeed            = 1      // the command's --seed; TrainOptions.Seed 0 is seed 0
	DefaultGapEvery        = train.DefaultGapEvery
	DefaultCheckpointEvery = 1 // the command's --checkpoint-every
)

// ErrSDCAOnly refuses checkpoints and dual stores to the solvers other
// than SDCA (L-BFGS, OEG, SAG: none can resume from a checkpoint).
var ErrSDCAOnly = errors.New("--checkpoint, --resume and --duals apply to --solver sdca only")

// Solvers are the --solver values: SDCA, L-BFGS, and the paper's peers OEG
// (online exponentiated gradient) and SAG (stochastic average gradient,
// with --sag-variant).
var Solvers = []string{"sdca", "lbfgs", "oeg", "sag"}

// TrainOptions configure Train. A zero field is its default (the command's
// flag of the same name shows it), except where a zero means zero as the
// command's 0 does: Seed, CheckpointEvery, RefreshEvery, MaxTime and
// CheckpointInterval.
type TrainOptions struct {
	Lambda       string // λ > 0: a number or "c/n" (c divided by the number of sentences); "": 1/n
	Solver       string // sdca, lbfgs, oeg or sag (Solvers); "": sdca
	NoBias       bool   // leave out the bias, start and end weights (CRFsuite's model)
	FeatureSpace string // full or observed; "": full
	Transitions  string // all or observed; "": all

	Sampler      string  // SDCA sampler (train.SamplerKinds); "": train.DefaultSampler
	NonUniform   float64 // probability in (0,1] of a non-uniform draw; 0: train.DefaultNonUniform
	Epsilon      float64 // uniform weight in (0,1] in the initial duals; 0: train.DefaultEpsilon
	SubPrecision float64 // line-search stopping step length in (0,1); 0: train.DefaultSubPrecision
	Seed         uint64  // random seed; the command's default is DefaultSeed
	RefreshEvery int     // recompute every gap estimate every k epochs; 0: never
	LBFGSStore   int     // L-BFGS correction pairs; 0: train.DefaultLBFGSStore
	SAGVariant   string  // SAG's variant: nus, nus-star or uniform; "": train.DefaultSAGVariant
	SAGInitialL  float64 // SAG's initial Lipschitz estimate of every sentence, > 0; 0: train.DefaultSAGInitialL
	OEGEta       float64 // OEG's initial step size of every sentence, in (0,1]; 0: train.DefaultOEGEta
	// Workers is the number of SDCA workers (train.SDCA.Workers): 0:
	// train.DefaultWorkers, the sequential SDCA; train.AllWorkers (-1): one
	// per core. RoundSteps is the steps each worker makes between two
	// aggregations; 0: train.DefaultRoundSteps.
	Workers    int
	RoundSteps int

	GapTol    float64       // stop when the certified gap is at most this; 0: train.DefaultGapTol
	GapEvery  int           // epochs between certificates; 0 (the default): the initial point, an epoch whose gap estimate is ≤ train.EstimateSlack·GapTol, and the last epoch
	MaxEpochs int           // at most this many epochs (L-BFGS: iterations); 0: train.DefaultMaxEpochs
	MaxTime   time.Duration // at most this much training time; 0: no limit

	// Valid, or the table at ValidPath when Valid is nil, is a held-out
	// table (featurized with the training table's templates) scored after
	// each certificate; ValidName names Valid in messages. ValidPath "-"
	// reads Stdin (nil: os.Stdin).
	Valid     *tables.FeatureTable
	ValidName string
	ValidPath string
	Stdin     io.Reader

	// Duals is where SDCA keeps its dual variables: memory; a file path
	// (memory-mapped, paged by the kernel); stream or stream:PATH (streamed
	// in blocks of consecutive sentences sized from MemoryBudget, from PATH,
	// or duals.stream in the checkpoint directory, or an unlinked temporary
	// file); or auto (""): in memory when the run's whole memory estimate
	// fits MemoryBudget (default: half of physical memory), else streamed.
	Duals string
	// MemoryBudget, in bytes, is the most memory a run may be estimated to
	// need; 0: physical memory. A run that needs more is refused. Streamed
	// duals take what the rest of the run leaves of it (default: half of
	// physical memory), in StreamBuffers blocks.
	MemoryBudget int64

	// Checkpoint is a directory (locked while training) where snapshots are
	// written atomically every CheckpointEvery epochs (0: none by epoch),
	// every CheckpointInterval of training time (0: none by time), and when
	// ctx is cancelled; "": Resume's, or no checkpoints.
	Checkpoint         string
	CheckpointEvery    int
	CheckpointInterval time.Duration
	// Resume continues from the newest valid snapshot in this directory.
	// Without it, a Checkpoint directory that holds snapshots is refused
	// (train.ErrCheckpointExists) before any work.
	Resume string
	// KeepCheckpoints keeps the snapshots of a run that ends well; by
	// default they are removed (with the streamed duals file in the
	// checkpoint directory) once AfterTraining has succeeded. A failed or
	// interrupted run always keeps them, for Resume.
	KeepCheckpoints bool

	// Log receives the summary lines and warnings (and, unless Quiet, one
	// line per epoch and per checkpoint); nil: discarded.
	Log   io.Writer
	Quiet bool
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

// TrainResult is what Train returns.
type TrainResult struct {
	// Model is the complete model: weights, names and metadata (the
	// table's featurization, λ, n, the solver, the feature spaces and the
	// training facts with the final certificate).
	Model *crf.Model
	// Train is the driver's result: stop reason, epochs, the last
	// certificate and the per-epoch records.
	Train  *train.Result
	Solver string
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

// ParseLambda reads λ written as "0.001", "1/n" or "c/n" for n sentences.
func ParseLambda(s string, n int) (float64, error) {
	c, perN := strings.CutSuffix(s, "/n")
	v, err := strconv.ParseFloat(c, 64)
	if err != nil {
		return 0, fmt.Errorf("--lambda %q: want a number or c/n", s)
	}
	if perN {
		return v / float64(n), nil
	}
	return v, nil
}

// withDefaults returns o with its string defaults filled in.
func (o TrainOptions) withDefaults() TrainOptions {
	for _, f := range []struct {
		p   *string
		def string
	}{{&o.Lambda, DefaultLambda}, {&o.Solver, DefaultSolver}, {&o.SAGVariant, train.DefaultSAGVariant}, {&o.FeatureSpace, DefaultFeatureSpace},
		{&o.Transitions, DefaultTransitions}, {&o.Duals, DefaultDuals}, {&o.Sampler, train.DefaultSampler}} {
		if *f.p == "" {
			*f.p = f.def
		}
	}
	if o.Resume != "" && o.Checkpoint == "" {
		o.Checkpoint = o.Resume
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
	return o
}

// Check refuses options out of range, naming the command's flag; a zero
// that stands for a default passes.
func (o TrainOptions) Check() error { return o.check(false) }

// CheckGiven is Check for options whose every field was given, as the
// command's are: a zero that would stand for a default is refused too.
func (o TrainOptions) CheckGiven() error { return o.check(true) }

// check refuses options out of range; given says whether zeros were given.
func (o TrainOptions) check(given bool) error {
	if _, err := ParseLambda(o.Lambda, 1); err != nil && (given || o.Lambda != "") {
		return err
	}
	zero := func(isZero bool) bool { return isZero && !given } // a default
	checks := []struct {
		bad bool
		msg string
	}{
		{!zero(o.Solver == "") && !slices.Contains(Solvers, o.Solver), fmt.Sprintf("--solver %q: want one of %s", o.Solver, strings.Join(Solvers, ", "))},
		{!zero(o.SAGVariant == "") && !slices.Contains(sagVariants, o.SAGVariant), fmt.Sprintf("--sag-variant %q: want one of %s", o.SAGVariant, strings.Join(sagVariants, ", "))},
		{!zero(o.SAGInitialL == 0) && !(o.SAGInitialL > 0 && !math.IsInf(o.SAGInitialL, 0)), fmt.Sprintf("--sag-initial-l %g: want a finite L > 0", o.SAGInitialL)},
		{!zero(o.OEGEta == 0) && !(o.OEGEta > 0 && o.OEGEta <= 1), fmt.Sprintf("--oeg-eta %g: want a step size in (0,1]", o.OEGEta)},
		{o.Solver != "sag" && ((o.SAGVariant != "" && o.SAGVariant != train.DefaultSAGVariant) || (o.SAGInitialL != 0 && o.SAGInitialL != train.DefaultSAGInitialL)),
			"--sag-variant and --sag-initial-l apply to --solver sag only"},
		{o.Solver != "oeg" && o.OEGEta != 0 && o.OEGEta != train.DefaultOEGEta, "--oeg-eta applies to --solver oeg only"},
		{!zero(o.Sampler == "") && !isSampler(o.Sampler), fmt.Sprintf("--sampler %q: want one of %s", o.Sampler, strings.Join(train.SamplerKinds(), ", "))},
		{!zero(o.NonUniform == 0) && !(o.NonUniform > 0 && o.NonUniform <= 1), fmt.Sprintf("--nonuniform %g: want a probability in (0,1]", o.NonUniform)},
		{!zero(o.Epsilon == 0) && !(o.Epsilon > 0 && o.Epsilon <= 1), fmt.Sprintf("--epsilon %g: want a weight in (0,1]", o.Epsilon)},
		{!zero(o.SubPrecision == 0) && !(o.SubPrecision > 0 && o.SubPrecision < 1), fmt.Sprintf("--subprecision %g: want a step length in (0,1)", o.SubPrecision)},
		{o.RefreshEvery < 0, fmt.Sprintf("--refresh-every %d: want 0 (never) or a number of epochs ≥ 1", o.RefreshEvery)},
		{!zero(o.GapTol == 0) && (!(o.GapTol > 0) || math.IsInf(o.GapTol, 0)), fmt.Sprintf("--gap-tol %g: want a positive tolerance", o.GapTol)},
		{o.Workers < train.AllWorkers, fmt.Sprintf("--workers %d: want 0 (one per core) or a number of workers ≥ 1", o.Workers)},
		{o.RoundSteps < 0 || (given && o.RoundSteps == 0), fmt.Sprintf("--round-steps %d: want a number of steps ≥ 1", o.RoundSteps)},
		{o.GapEvery < 0, fmt.Sprintf("--gap-every %d: want 0 (only when the estimate says so) or a number of epochs ≥ 1", o.GapEvery)},
		{!zero(o.MaxEpochs == 0) && o.MaxEpochs < 1, fmt.Sprintf("--max-epochs %d: want at least 1", o.MaxEpochs)},
		{o.MaxTime < 0, fmt.Sprintf("--max-time %v: want a duration ≥ 0 (0: no limit)", o.MaxTime)},
		{o.CheckpointEvery < 0, fmt.Sprintf("--checkpoint-every %d: want 0 or a number of epochs ≥ 1", o.CheckpointEvery)},
		{o.CheckpointInterval < 0, fmt.Sprintf("--checkpoint-interval %v: want a duration ≥ 0", o.CheckpointInterval)},
		{!zero(o.LBFGSStore == 0) && o.LBFGSStore < 1, fmt.Sprintf("--lbfgs-store %d: want at least 1 correction pair", o.LBFGSStore)},
		{!zero(o.FeatureSpace == "") && o.FeatureSpace != "full" && o.FeatureSpace != "observed", fmt.Sprintf("--feature-space %q: want full or observed", o.FeatureSpace)},
		{!zero(o.Transitions == "") && o.Transitions != "all" && o.Transitions != "observed", fmt.Sprintf("--transitions %q: want all or observed", o.Transitions)},
		{given && o.Duals == "" || o.Duals == "stream:", fmt.Sprintf("--duals %q: want memory, auto, stream, stream:PATH or a file path", o.Duals)},
		{o.MemoryBudget < 0, fmt.Sprintf("--memory-budget %d: want a positive size", o.MemoryBudget)},
		{o.Solver != "" && o.Solver != "sdca" && ((o.Workers != 0 && o.Workers != 1) || (o.RoundSteps != 0 && o.RoundSteps != train.DefaultRoundSteps)),
			"--workers and --round-steps apply to --solver sdca only (L-BFGS's and the certificates' passes use every core; OEG and SAG are sequential)"},
		{o.Solver != "" && o.Solver != "sdca" && (o.Checkpoint != "" || o.Resume != "" || (o.Duals != "" && o.Duals != DefaultDuals)), ErrSDCAOnly.Error()},
	}
	for _, ch := range checks {
		if ch.bad {
			return errors.New(ch.msg)
		}
	}
	return nil
}

// sagVariants are the --sag-variant values.
var sagVariants = []string{train.SAGNUS, train.SAGNUSStar, train.SAGUniform}

// isSampler reports whether kind is a sampler kind.
func isSampler(kind string) bool {
	for _, k := range train.SamplerKinds() {
		if k == kind {
			return true
		}
	}
	return false
}

// trainer is one run of Train: the options with defaults, the problem and
// what the run holds open.
type trainer struct {
	o        TrainOptions
	name     string
	t        *tables.FeatureTable
	p        *train.Problem
	set      train.Settings
	sd       *train.SDCA
	resume   *train.Checkpoint
	progress *trainProgress
	// Where the duals go (checkMemory) and, when streamed, the store's
	// options, block count and the store.
	place        int
	streamOpts   duals.StreamOptions
	streamBlocks int
	stream       *duals.Stream
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
	r := &trainer{o: o.withDefaults(), name: name, t: t}
	if err := r.setup(); err != nil {
		return nil, err
	}
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
	if r.sd != nil && r.place == dualsFile {
		store, err := r.dualStore()
		if err != nil {
			return nil, err
		}
		defer store.Close()
		r.sd.Duals = store
	}
	res, err := r.run(ctx, method)
	if err != nil {
		return nil, err
	}
	if r.o.AfterTraining != nil {
		if err := r.o.AfterTraining(res); err != nil {
			return nil, err
		}
	}
	r.removeSnapshots()
	return res, nil
}

// removeSnapshots removes the snapshots of a run that ended well, unless
// KeepCheckpoints: with the model made, they only take disk (a copy of the
// duals each). The streamed duals file goes too when it lives in the
// checkpoint directory (duals.stream, not a stream:PATH the user named).
func (r *trainer) removeSnapshots() {
	dir := r.o.Checkpoint
	if dir == "" || r.o.KeepCheckpoints || r.sd == nil {
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
	r.logf("train: removed the snapshots in %s (--keep-checkpoints keeps them)", dir)
}

// setup checks the table, makes the problem, reads the held-out table and
// checks the memory the run needs, deciding where the duals go.
func (r *trainer) setup() error {
	d := r.t.Data
	if !hasGold(d) {
		return fmt.Errorf("%s: no token has a gold label (featurized with --no-labels?); train needs a labelled feature table", r.name)
	}
	feat, err := checkFeaturization(r.t.Metadata, r.name)
	if err != nil {
		return err
	}
	lambda, err := ParseLambda(r.o.Lambda, d.Len())
	if err != nil {
		return err
	}
	if r.p, err = train.NewProblem(d, lambda, r.o.NoBias); err != nil {
		return fmt.Errorf("%s: %w", r.name, err)
	}
	if r.o.FeatureSpace == "observed" {
		r.p.Mask = train.ObservedMask(d)
	}
	if r.o.Transitions == "observed" {
		r.p.TransMask = train.ObservedTransitions(d)
	}
	r.set = r.settings()
	if r.o.Valid != nil || r.o.ValidPath != "" {
		if r.set.Validate, err = r.validator(feat); err != nil {
			return err
		}
	}
	dualBytes, what := int64(0), "duals %s (μ, float64)"
	switch r.o.Solver {
	case "sdca":
		dualBytes = duals.Bytes(d)
	case "oeg":
		dualBytes, what = train.OEGBytes(d), "potentials θ̃ and marginal sums %s (float64)"
	case "sag":
		dualBytes, what = train.SAGBytes(d), "stored marginal sums %s (float64)"
	}
	r.logf("train: %d sentences, %d tokens, %d attributes, %d labels; %d free weights (d = %d), λ = %.6g; "+what,
		d.Len(), d.NumTokens(), d.NumAttrs, d.NumLabels, r.p.FreeWeights(), r.p.Layout.Dim(), lambda, ByteSize(dualBytes))
	return r.checkMemory(dualBytes)
}

// settings are the driver's settings for the options.
func (r *trainer) settings() train.Settings {
	o := r.o
	s := train.Settings{MaxEpochs: o.MaxEpochs, MaxTime: o.MaxTime, GapTol: o.GapTol, GapEvery: o.GapEvery,
		RefreshEvery: o.RefreshEvery, CheckpointEvery: o.CheckpointEvery, CheckpointInterval: o.CheckpointInterval, Phase: o.Phase}
	if o.Solver != "sdca" {
		s.RefreshEvery = 0 // only SDCA has gap estimates to refresh: the option has never applied to the others
	}
	if !o.Quiet {
		s.Record = func(rec train.EpochRecord) error {
			r.logf("%s", train.FormatRecord(rec))
			return nil
		}
	}
	return s
}

// method makes the solver: SDCA with its sampler, resuming when asked,
// L-BFGS, OEG or SAG.
func (r *trainer) method() (train.Method, error) {
	o := r.o
	switch o.Solver {
	case "lbfgs":
		return &train.LBFGS{Store: o.LBFGSStore}, nil
	case "oeg":
		return &train.OEG{Eta: o.OEGEta, Seed: o.Seed}, nil
	case "sag":
		return &train.SAG{Variant: o.SAGVariant, InitialL: o.SAGInitialL, Seed: o.Seed}, nil
	}
	sampler, err := train.NewSampler(o.Sampler, r.p.N(), train.SamplerOptions{NonUniform: o.NonUniform, Smoothness: r.p.Smoothness()})
	if err != nil {
		return nil, err
	}
	r.sd = &train.SDCA{Epsilon: o.Epsilon, SubPrecision: o.SubPrecision, Seed: o.Seed, Sampler: sampler,
		Workers: o.Workers, RoundSteps: o.RoundSteps}
	if r.place == dualsStream {
		// Placed before the resume check: the block count is a run setting.
		if r.stream, err = r.streamStore(); err != nil {
			return nil, err
		}
		r.sd.Duals = r.stream
	}
	if o.Checkpoint != "" {
		r.set.Checkpoint = r.saveCheckpoint
	}
	if o.Resume == "" {
		return r.sd, nil
	}
	if r.resume, err = train.LoadCheckpoint(o.Resume, r.p, func(msg string) { r.logf("train: warning: %s", msg) }); err != nil {
		return nil, err
	}
	if err := r.resume.CheckSettings(r.p, r.set, r.sd); err != nil {
		r.resume.Duals.Close()
		r.resume = nil
		return nil, err
	}
	r.set.Resume = r.resume
	r.logf("train: resuming from %s (%s)", r.resume.Dir, describe(r.resume.Progress().Position))
	return r.sd, nil
}

// saveCheckpoint writes a snapshot of the run to the checkpoint directory.
func (r *trainer) saveCheckpoint(pr train.Progress) (string, error) {
	t0 := time.Now()
	path, err := train.SaveCheckpoint(r.o.Checkpoint, r.sd, pr)
	if err == nil && !r.o.Quiet {
		r.logf("checkpoint: %s (%.2fs)", path, time.Since(t0).Seconds())
	}
	return path, err
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
	if !res.TargetMet() {
		r.logf("train: warning: stopped by %s with a certified gap of %.4g, above --gap-tol %g: the target was not reached",
			stopFlag(res.Stopped), res.Last.Gap, res.GapTol)
	}
	d := r.t.Data
	m := &crf.Model{Layout: r.p.Layout, Weights: res.Weights, AttrNames: d.AttrNames, LabelNames: d.LabelNames,
		Meta: r.modelMetadata(res)}
	return &TrainResult{Model: m, Train: res, Solver: r.o.Solver}, nil
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

// stopFlag names the flag behind a stop reason.
func stopFlag(reason train.Status) string {
	switch reason {
	case train.EpochLimit:
		return "--max-epochs"
	case train.TimeLimit:
		return "--max-time"
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
		return fmt.Errorf("train: %w; without --checkpoint DIR the progress is lost", err)
	case ie.Snapshot == "" && r.resume != nil && ie.At == r.resume.Progress().Position:
		return fmt.Errorf("train: %w; nothing changed since %s: continue with the same command (it has --resume %s)", err, r.resume.Dir, r.o.Resume)
	case ie.Snapshot == "":
		return fmt.Errorf("train: %w; nothing was saved yet: run the same command again", err)
	}
	return fmt.Errorf("train: %w; continue with the same command and --resume %s", err, r.o.Checkpoint)
}

// modelMetadata is the model's metadata: the table's featurization, λ, n,
// the solver and feature spaces, and the training facts with the final
// certificate (of exactly the weights returned).
func (r *trainer) modelMetadata(res *train.Result) map[string]string {
	p := r.p
	facts := map[string]any{"epochs": res.Epochs, "stopped": res.Stopped.String(), "primal": jsonNumber(res.Last.Primal),
		"dual": jsonNumber(res.Last.Dual), "gap": jsonNumber(res.Last.Gap), "gap_tol": res.GapTol,
		"target_met": res.TargetMet(), "source": r.name, "transitions": p.TransitionSpace()}
	switch r.o.Solver {
	case "oeg":
		facts["seed"] = r.o.Seed
	case "sag":
		facts["seed"], facts["sag_variant"] = r.o.Seed, r.o.SAGVariant
	}
	if r.sd != nil {
		facts["sampler"], facts["seed"] = r.o.Sampler, r.o.Seed
		if w := r.sd.NumWorkers(p.N()); w > 1 {
			facts["workers"] = w
		}
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
	md[schemas.KeyN] = strconv.Itoa(p.N())
	md[schemas.KeySolver] = r.o.Solver
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
func checkFeaturization(md map[string]string, name string) (featureSettings, error) {
	if _, ok := md[schemas.KeyTemplates]; !ok {
		return featureSettings{}, nil
	}
	fs, err := settingsFrom(md, name)
	if err != nil {
		return fs, fmt.Errorf("%w; re-featurize it with dualcrf featurize", err)
	}
	return fs, nil
}
