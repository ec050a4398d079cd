package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	iofs "io/fs"
	"math"
	"os"
	"runtime/pprof"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/dualcrf/dualcrf/crf"
	"github.com/dualcrf/dualcrf/decode"
	"github.com/dualcrf/dualcrf/pipeline"
	"github.com/dualcrf/dualcrf/schemas"
	"github.com/dualcrf/dualcrf/tables"
	"github.com/dualcrf/dualcrf/train"
)

func trainCommand() *cli.Command {
	return &cli.Command{
		Name:      "train",
		Usage:     "fit a CRF to a feature table with SDCA-GAP (or L-BFGS), certifying the duality gap",
		ArgsUsage: "FEATURES|-",
		Description: `Minimises λ/2‖w‖² + mean negative log-likelihood. SDCA certifies the duality gap P − D ≥ P − P*
with a full pass every --gap-every epochs and stops when it is ≤ --gap-tol. One line per epoch
goes to standard error; --log writes the per-epoch table. The model holds the weights the final
certificate is about.

   dualcrf train --lambda 1/n --sampler gap --gap-tol 1e-3 -o model.arrow train.arrow
   dualcrf featurize --template chunking --min-count 3 train.txt.gz | dualcrf train -o model.arrow -

With --checkpoint DIR, SIGINT or SIGTERM at any moment saves the exact point reached (exit 130 or
143), and --resume DIR continues to the same model bytes as an uninterrupted run.`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Required: true, Usage: "model file to write"},
			&cli.StringFlag{Name: "lambda", Value: "1/n", Usage: "regularisation λ > 0: a number or \"c/n\""},
			&cli.StringFlag{Name: "solver", Value: "sdca", Usage: "sdca or lbfgs"},
			&cli.StringFlag{Name: "sampler", Value: train.DefaultSampler, Usage: "SDCA sampler: " + strings.Join(train.SamplerKinds(), ", ")},
			&cli.Float64Flag{Name: "nonuniform", Value: train.DefaultNonUniform, Usage: "probability in (0,1] of a non-uniform draw (gap, importance samplers)"},
			&cli.Float64Flag{Name: "epsilon", Value: train.DefaultEpsilon, Usage: "weight in (0,1] of the uniform distribution in the initial duals (eq. 21)"},
			&cli.Float64Flag{Name: "subprecision", Value: train.DefaultSubPrecision, Usage: "line-search stopping step length, in (0,1)"},
			&cli.IntFlag{Name: "refresh-every", Usage: "recompute every gap estimate exactly every k ≥ 1 epochs (0: never)"},
			&cli.Uint64Flag{Name: "seed", Value: 1, Usage: "random seed; the same seed gives the same model"},
			&cli.Float64Flag{Name: "gap-tol", Value: train.DefaultGapTol, Usage: "stop when the certified duality gap is at most this (> 0)"},
			&cli.IntFlag{Name: "gap-every", Value: train.DefaultGapEvery, Usage: "epochs between certificate passes (0: only when the gap estimate falls below --gap-tol; the last epoch is always certified)"},
			&cli.IntFlag{Name: "max-epochs", Value: train.DefaultMaxEpochs, Usage: "stop after this many epochs, ≥ 1 (L-BFGS: iterations)"},
			&cli.DurationFlag{Name: "max-time", Usage: "stop after this much training time (e.g. 10m; 0: no limit)"},
			&cli.StringFlag{Name: "feature-space", Value: "full", Usage: "full (every attribute × label) or observed (pairs seen in training, CRFsuite's)"},
			&cli.StringFlag{Name: "transitions", Value: "all", Usage: "all (every label pair) or observed (pairs seen in training, CRFsuite's default)"},
			&cli.BoolFlag{Name: "no-bias", Usage: "leave out the bias, start and end weights (CRFsuite's model)"},
			&cli.IntFlag{Name: "lbfgs-store", Value: train.DefaultLBFGSStore, Usage: "L-BFGS correction pairs, ≥ 1"},
			&cli.StringFlag{Name: "valid", Usage: "held-out feature table (featurized with the training table's templates) scored after each certificate"},
			&cli.StringFlag{Name: "log", Usage: "write the per-epoch training log (Arrow IPC file) here"},
			&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "no per-epoch lines on standard error"},
			&cli.StringFlag{Name: "duals", Value: "auto", Usage: "where SDCA keeps its dual variables: memory, a file PATH (memory-mapped), or auto (a file in the checkpoint directory or the system temp directory when they exceed --memory-budget)"},
			&cli.StringFlag{Name: "memory-budget", Usage: "largest dual size kept in memory with --duals auto, e.g. 8GiB (default: half of physical memory); a run estimated to need more memory than this (default: physical memory) is refused"},
			&cli.StringFlag{Name: "checkpoint", Usage: "directory for checkpoints (locked; written atomically; also on SIGINT/SIGTERM)"},
			&cli.IntFlag{Name: "checkpoint-every", Value: 1, Usage: "epochs between checkpoints (0: only by --checkpoint-interval and on interrupt)"},
			&cli.DurationFlag{Name: "checkpoint-interval", Usage: "training time between checkpoints, e.g. 10m (0: none)"},
			&cli.StringFlag{Name: "resume", Usage: "continue from the newest valid snapshot in this directory (same data and settings); checkpoints go on there unless --checkpoint says otherwise"},
			&cli.StringFlag{Name: "cpuprofile", Usage: "write a Go CPU profile of the training loop here", Hidden: true},
		},
		Action: runTrain,
	}
}

// trainFlags are train's flags, checked.
type trainFlags struct {
	in, output, logPath, valid string
	lambda                     string
	solver                     string
	featureSpace, transitions  string
	sdca                       train.SDCA // its Sampler is made once the table is read
	sampler                    string
	nonUniform                 float64
	lbfgsStore                 int
	set                        train.Settings
	duals                      string
	budget                     int64 // 0: physical memory
	checkpoint, resume         string
	quiet                      bool
	cpuprofile                 string
}

// parseTrainFlags checks every flag before anything is read or created.
func parseTrainFlags(c *cli.Context) (*trainFlags, error) {
	if c.NArg() != 1 {
		return nil, fmt.Errorf("train: want one feature table (or -), got %d arguments", c.NArg())
	}
	f := &trainFlags{in: c.Args().First(), output: c.String("output"), logPath: c.String("log"), valid: c.String("valid"),
		lambda: c.String("lambda"), solver: c.String("solver"), featureSpace: c.String("feature-space"),
		transitions: c.String("transitions"), lbfgsStore: c.Int("lbfgs-store"), duals: c.String("duals"),
		checkpoint: c.String("checkpoint"), resume: c.String("resume"), quiet: c.Bool("quiet"), cpuprofile: c.String("cpuprofile")}
	if _, err := parseLambda(f.lambda, 1); err != nil {
		return nil, err
	}
	f.sampler, f.nonUniform = c.String("sampler"), c.Float64("nonuniform")
	f.sdca = train.SDCA{Epsilon: c.Float64("epsilon"), SubPrecision: c.Float64("subprecision"), Seed: c.Uint64("seed")}
	f.set = train.Settings{MaxEpochs: c.Int("max-epochs"), MaxTime: c.Duration("max-time"), GapTol: c.Float64("gap-tol"),
		GapEvery: c.Int("gap-every"), RefreshEvery: c.Int("refresh-every"),
		CheckpointEvery: c.Int("checkpoint-every"), CheckpointInterval: c.Duration("checkpoint-interval")}
	checks := []struct {
		bad bool
		msg string
	}{
		{f.solver != "sdca" && f.solver != "lbfgs", fmt.Sprintf("--solver %q: want sdca or lbfgs", f.solver)},
		{!isSampler(f.sampler), fmt.Sprintf("--sampler %q: want one of %s", f.sampler, strings.Join(train.SamplerKinds(), ", "))},
		{!(f.nonUniform > 0 && f.nonUniform <= 1), fmt.Sprintf("--nonuniform %g: want a probability in (0,1]", f.nonUniform)},
		{!(f.sdca.Epsilon > 0 && f.sdca.Epsilon <= 1), fmt.Sprintf("--epsilon %g: want a weight in (0,1]", f.sdca.Epsilon)},
		{!(f.sdca.SubPrecision > 0 && f.sdca.SubPrecision < 1), fmt.Sprintf("--subprecision %g: want a step length in (0,1)", f.sdca.SubPrecision)},
		{f.set.RefreshEvery < 0, fmt.Sprintf("--refresh-every %d: want 0 (never) or a number of epochs ≥ 1", f.set.RefreshEvery)},
		{!(f.set.GapTol > 0) || math.IsInf(f.set.GapTol, 0), fmt.Sprintf("--gap-tol %g: want a positive tolerance", f.set.GapTol)},
		{f.set.GapEvery < 0, fmt.Sprintf("--gap-every %d: want 0 (only when the estimate says so) or a number of epochs ≥ 1", f.set.GapEvery)},
		{f.set.MaxEpochs < 1, fmt.Sprintf("--max-epochs %d: want at least 1", f.set.MaxEpochs)},
		{f.set.MaxTime < 0, fmt.Sprintf("--max-time %v: want a duration ≥ 0 (0: no limit)", f.set.MaxTime)},
		{f.set.CheckpointEvery < 0, fmt.Sprintf("--checkpoint-every %d: want 0 or a number of epochs ≥ 1", f.set.CheckpointEvery)},
		{f.set.CheckpointInterval < 0, fmt.Sprintf("--checkpoint-interval %v: want a duration ≥ 0", f.set.CheckpointInterval)},
		{f.lbfgsStore < 1, fmt.Sprintf("--lbfgs-store %d: want at least 1 correction pair", f.lbfgsStore)},
		{f.featureSpace != "full" && f.featureSpace != "observed", fmt.Sprintf("--feature-space %q: want full or observed", f.featureSpace)},
		{f.transitions != "all" && f.transitions != "observed", fmt.Sprintf("--transitions %q: want all or observed", f.transitions)},
		{f.duals == "", "--duals \"\": want memory, auto or a file path"},
	}
	for _, ch := range checks {
		if ch.bad {
			return nil, errors.New(ch.msg)
		}
	}
	if f.set.GapEvery == 0 {
		f.set.GapEvery = -1 // the library's "only by the estimate"
	}
	if f.solver != "sdca" {
		f.set.RefreshEvery = 0 // L-BFGS has no gap estimates: the flag has never applied to it
	}
	if b := c.String("memory-budget"); b != "" {
		v, err := parseBytes(b)
		if err != nil || v <= 0 {
			return nil, fmt.Errorf("--memory-budget %q: want a positive size such as 8GiB", b)
		}
		f.budget = v
	}
	if f.resume != "" && f.checkpoint == "" {
		f.checkpoint = f.resume
	}
	if f.solver != "sdca" && (f.checkpoint != "" || c.IsSet("duals")) {
		return nil, fmt.Errorf("--checkpoint, --resume and --duals apply to --solver sdca only")
	}
	return f, nil
}

// isSampler reports whether kind is a sampler kind.
func isSampler(kind string) bool {
	for _, k := range train.SamplerKinds() {
		if k == kind {
			return true
		}
	}
	return false
}

// parseLambda reads "0.001", "1/n" or "c/n".
func parseLambda(s string, n int) (float64, error) {
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
	if fs.minCount < 0 {
		return fs, fmt.Errorf("%s: metadata %s=%d is negative; re-featurize it with dualcrf featurize", name, schemas.KeyMinCount, fs.minCount)
	}
	return fs, nil
}

// templateText is the templates a table records, "" when none.
func templateText(fs featureSettings) string {
	if fs.templates == nil {
		return ""
	}
	return fs.templates.String()
}

func runTrain(c *cli.Context) error {
	f, err := parseTrainFlags(c)
	if err != nil {
		return err
	}
	if err := trainFiles(c, f.in); err != nil {
		return err
	}
	t, err := readTable(f.in, true)
	if err != nil {
		return err
	}
	d := t.Data
	if !hasGold(d) {
		return fmt.Errorf("%s: no token has a gold label (featurized with --no-labels?); train needs a labelled feature table", f.in)
	}
	feat, err := checkFeaturization(t.Metadata, f.in)
	if err != nil {
		return err
	}
	lambda, err := parseLambda(f.lambda, d.Len())
	if err != nil {
		return err
	}
	p, err := train.NewProblem(d, lambda, c.Bool("no-bias"))
	if err != nil {
		return fmt.Errorf("%s: %w", f.in, err)
	}
	if f.featureSpace == "observed" {
		p.Mask = train.ObservedMask(d)
	}
	if f.transitions == "observed" {
		p.TransMask = train.ObservedTransitions(d)
	}
	if f.valid != "" {
		if f.set.Validate, err = validator(f.valid, d, feat); err != nil {
			return err
		}
	}
	dualBytes := int64(0)
	if f.solver == "sdca" {
		dualBytes = train.DualBytes(d)
	}
	logf("train: %d sentences, %d tokens, %d attributes, %d labels; %d free weights (d = %d), λ = %.6g; duals %s (μ, float64)",
		d.Len(), d.NumTokens(), d.NumAttrs, d.NumLabels, p.FreeWeights(), p.Layout.Dim(), lambda, byteSize(dualBytes))
	inMemory, err := checkMemory(f, p, dualBytes)
	if err != nil {
		return err
	}
	return trainAndWrite(c.Context, f, t, p, inMemory)
}

// checkMemory estimates what the run needs in memory and refuses it, with
// the figure and the flags that help, when that exceeds --memory-budget
// (default: physical memory). It returns whether the duals stay in memory:
// with --duals auto, when they take at most --memory-budget (default: half
// of physical memory).
func checkMemory(f *trainFlags, p *train.Problem, dualBytes int64) (bool, error) {
	limit, what, dualLimit := f.budget, "--memory-budget", f.budget
	if limit == 0 {
		phys, err := train.PhysicalMemory()
		if err != nil {
			return f.duals == "memory" || f.duals == "auto", nil // no figure to compare with
		}
		limit, what, dualLimit = phys, "physical memory", phys/2
	}
	inMemory := f.solver == "sdca" && (f.duals == "memory" || (f.duals == "auto" && dualBytes <= dualLimit))
	est := train.EstimateMemory(p, train.MemoryOptions{Solver: f.solver, DualsInMemory: inMemory, LBFGSStore: f.lbfgsStore})
	if est.Total() <= limit {
		return inMemory, nil
	}
	var help []string
	switch {
	case f.solver == "lbfgs":
		help = append(help, fmt.Sprintf("a smaller --lbfgs-store (its history takes %s)", byteSize(est.LBFGS)))
	case inMemory:
		help = append(help, fmt.Sprintf("--duals PATH or --duals auto (the duals take %s)", byteSize(est.Duals)))
	}
	if f.featureSpace == "full" {
		help = append(help, "--feature-space observed")
	}
	help = append(help, "--memory-budget SIZE if more memory is available (e.g. swap)")
	return false, fmt.Errorf("train: this run needs about %s in memory (%s), more than the %s %s; try %s",
		byteSize(est.Total()), est, what, byteSize(limit), strings.Join(help, ", or "))
}

// trainAndWrite takes the checkpoint locks, resumes, opens the outputs,
// places the duals — in that order, after every check — trains, and
// writes the model and the log.
func trainAndWrite(ctx context.Context, f *trainFlags, t *tables.FeatureTable, p *train.Problem, dualsInMemory bool) error {
	d := t.Data
	unlock, err := lockDirs(f)
	if err != nil {
		return err
	}
	defer unlock()
	var method train.Method
	var sd *train.SDCA
	var resume *train.Checkpoint
	if f.solver == "sdca" {
		sd = &f.sdca
		method = sd
		if sd.Sampler, err = train.NewSampler(f.sampler, p.N(), train.SamplerOptions{NonUniform: f.nonUniform, Smoothness: p.Smoothness()}); err != nil {
			return err
		}
		if f.resume != "" {
			if resume, err = train.LoadCheckpoint(f.resume, p, func(msg string) { logf("train: warning: %s", msg) }); err != nil {
				return err
			}
			defer resume.Duals.Close()
			if err := resume.CheckSettings(train.RunSettings(p, f.set, sd)); err != nil {
				return err
			}
			f.set.Resume = resume
			logf("train: resuming from %s (%s)", resume.Dir, describe(resume.Progress().Position))
		}
	} else {
		method = &train.LBFGS{Store: f.lbfgsStore}
	}
	// Open the outputs before training, so a path that cannot be written
	// fails now rather than after hours of work; nothing is committed
	// unless everything succeeds.
	out, err := pipeline.CreateOutput(f.output)
	if err != nil {
		return err
	}
	defer out.Close()
	var logOut *pipeline.Output
	if f.logPath != "" {
		if logOut, err = pipeline.CreateOutput(f.logPath); err != nil {
			return err
		}
		defer logOut.Close()
	}
	if sd != nil && !dualsInMemory {
		store, cleanup, err := dualStore(f, d, train.DualBytes(d))
		if err != nil {
			return err
		}
		defer cleanup()
		sd.Duals = store
	}
	if f.checkpoint != "" {
		dir := f.checkpoint
		f.set.Checkpoint = func(pr train.Progress) (string, error) {
			t0 := time.Now()
			path, err := train.SaveCheckpoint(dir, sd, pr)
			if err == nil && !f.quiet {
				logf("checkpoint: %s (%.2fs)", path, time.Since(t0).Seconds())
			}
			return path, err
		}
	}
	if !f.quiet {
		f.set.Record = func(r train.EpochRecord) error {
			logf("%s", train.FormatRecord(r))
			return nil
		}
	}
	installTestHook(&ctx, &f.set)
	if f.cpuprofile != "" {
		pf, err := os.Create(f.cpuprofile)
		if err != nil {
			return err
		}
		defer pf.Close()
		if err := pprof.StartCPUProfile(pf); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	t0 := time.Now()
	res, err := train.Train(ctx, p, f.set, method)
	if err != nil {
		return trainError(err, f, resume)
	}
	logf("train: stopped (%s) after %d epochs, %.2fs training (%.2fs wall): primal %.10g, certified gap %.4g",
		res.Stopped, res.Epochs, res.Training.Seconds(), time.Since(t0).Seconds(), res.Last.Primal, res.Last.Gap)
	if !res.TargetMet() {
		logf("train: warning: stopped by %s with a certified gap of %.4g, above --gap-tol %g: the target was not reached",
			stopFlag(res.Stopped), res.Last.Gap, res.GapTol)
	}
	m := &crf.Model{Layout: p.Layout, Weights: res.Weights, AttrNames: d.AttrNames, LabelNames: d.LabelNames,
		Meta: modelMetadata(t.Metadata, f, p, res)}
	if err := tables.WriteModel(out, m, pipeline.WriterOptions{Format: pipeline.FormatFile}); err != nil {
		return fmt.Errorf("write model %s: %w", out.Name(), err)
	}
	if logOut != nil {
		if err := writeLog(logOut, res.Records, f.solver); err != nil {
			return fmt.Errorf("write training log %s: %w", logOut.Name(), err)
		}
	}
	if err := out.Commit(); err != nil {
		return err
	}
	if logOut != nil {
		return logOut.Commit()
	}
	return nil
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
func trainError(err error, f *trainFlags, resume *train.Checkpoint) error {
	var ie *train.InterruptedError
	if !errors.As(err, &ie) {
		return err
	}
	switch {
	case f.checkpoint == "":
		return fmt.Errorf("train: %w; without --checkpoint DIR the progress is lost", err)
	case ie.Snapshot == "" && resume != nil && ie.At == resume.Progress().Position:
		return fmt.Errorf("train: %w; nothing changed since %s: continue with the same command (it has --resume %s)", err, resume.Dir, f.resume)
	case ie.Snapshot == "":
		return fmt.Errorf("train: %w; nothing was saved yet: run the same command again", err)
	}
	return fmt.Errorf("train: %w; continue with the same command and --resume %s", err, f.checkpoint)
}

// modelMetadata is the model's metadata: the table's featurization, λ, n,
// the solver and feature spaces, and the training facts with the final
// certificate (of exactly the weights written).
func modelMetadata(tableMD map[string]string, f *trainFlags, p *train.Problem, res *train.Result) map[string]string {
	facts := map[string]any{"epochs": res.Epochs, "stopped": res.Stopped.String(), "primal": jsonNumber(res.Last.Primal),
		"dual": jsonNumber(res.Last.Dual), "gap": jsonNumber(res.Last.Gap), "gap_tol": res.GapTol,
		"target_met": res.TargetMet(), "source": f.in, "transitions": p.TransitionSpace()}
	if f.solver == "sdca" {
		facts["sampler"], facts["seed"] = f.sampler, f.sdca.Seed
	}
	factsJSON, err := json.Marshal(facts)
	if err != nil {
		panic(err) // every value above is JSON-safe
	}
	md := map[string]string{}
	for k, v := range tableMD {
		if k != schemas.KeyFormat && k != schemas.KeyVersion {
			md[k] = v
		}
	}
	md[schemas.KeyLambda] = strconv.FormatFloat(p.Lambda, 'g', -1, 64)
	md[schemas.KeyN] = strconv.Itoa(p.N())
	md[schemas.KeySolver] = f.solver
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

// lockDirs takes the lock of the checkpoint directory (creating it: an
// unusable path fails here, before any work) and of the resume directory
// when that is another one (it must exist).
func lockDirs(f *trainFlags) (func(), error) {
	var locks []*train.DirLock
	unlock := func() {
		for _, l := range locks {
			l.Unlock()
		}
	}
	if f.resume != "" {
		st, err := os.Stat(f.resume)
		if err != nil {
			return unlock, fmt.Errorf("--resume: %w", err)
		}
		if !st.IsDir() {
			return unlock, fmt.Errorf("--resume %s: not a directory", f.resume)
		}
	}
	if f.checkpoint != "" {
		l, err := train.LockDir(f.checkpoint)
		if err != nil {
			return unlock, err
		}
		locks = append(locks, l)
	}
	if f.resume != "" && !sameDir(f.resume, f.checkpoint) {
		l, err := train.LockDir(f.resume)
		if err != nil {
			unlock()
			return func() {}, err
		}
		locks = append(locks, l)
	}
	return unlock, nil
}

// sameDir reports whether a and b are the same existing directory.
func sameDir(a, b string) bool {
	if b == "" {
		return false
	}
	sa, err1 := os.Stat(a)
	sb, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(sa, sb)
}

// writeLog writes the per-epoch training log as an Arrow IPC file.
func writeLog(w io.Writer, recs []train.EpochRecord, solver string) error {
	return tables.WriteLog(w, logRows(recs), map[string]string{schemas.KeySolver: solver}, pipeline.WriterOptions{})
}

// logRows turns epoch records into training-log rows: the certificate's
// values only for certified epochs, the held-out metrics when measured.
func logRows(recs []train.EpochRecord) []tables.LogRow {
	rows := make([]tables.LogRow, len(recs))
	for i, r := range recs {
		nan := math.NaN()
		row := tables.LogRow{Epoch: r.Epoch, Steps: r.Steps, Seconds: r.Seconds, TotalSeconds: r.Total,
			CertSeconds: r.CertSeconds, Primal: nan, Dual: nan, Gap: nan, IdentityResidual: nan,
			GapEstimate: r.GapEstimate, LineSearch: r.LineSearch, ValidAccuracy: nan, ValidF1: nan}
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

// validator reads a held-out table and returns a function scoring weights
// on it (token accuracy, and chunk F1 when its labels look like chunks). The
// table must have been featurized with the training table's templates.
func validator(path string, trainData *crf.Dataset, feat featureSettings) (func([]float64) (map[string]float64, error), error) {
	vt, err := readTable(path, true)
	if err != nil {
		return nil, err
	}
	vfeat, err := checkFeaturization(vt.Metadata, path)
	if err != nil {
		return nil, fmt.Errorf("--valid %w", err)
	}
	if a, b := templateText(vfeat), templateText(feat); a != b {
		return nil, fmt.Errorf("--valid %s was featurized with templates %.60q, the training table with %.60q: "+
			"featurize it with the training table's --template (and --format), or with --model from a model of this data", path, a, b)
	}
	lay := crf.Layout{NumAttrs: trainData.NumAttrs, NumLabels: trainData.NumLabels}
	probe := &crf.Model{Layout: lay, AttrNames: trainData.AttrNames, LabelNames: trainData.LabelNames}
	vd := decode.Apply(vt.Data, decode.Remap(probe, vt.Data), lay.NumAttrs, trainData.AttrNames)
	if len(vd.Attrs) == 0 && len(vt.Data.Attrs) > 0 {
		return nil, fmt.Errorf("--valid %s shares no attribute with the training table", path)
	}
	return func(w []float64) (map[string]float64, error) {
		m := &crf.Model{Layout: crf.Layout{NumAttrs: lay.NumAttrs, NumLabels: lay.NumLabels, NoBias: len(w) != lay.Dim()},
			Weights: w, AttrNames: trainData.AttrNames, LabelNames: trainData.LabelNames}
		p, err := decode.Decode(context.Background(), m, vd, decode.Options{})
		if err != nil {
			return nil, err
		}
		ev := decode.NewEvaluator(decode.EvalOptions{})
		if err := decode.Score(vd, m.LabelNames, p, ev); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		s := ev.Result()
		out := map[string]float64{train.MetricAccuracy: s.Accuracy}
		if s.Chunks != nil && !math.IsNaN(s.Chunks.F1) {
			out[train.MetricF1] = s.Chunks.F1
		}
		return out, nil
	}, nil
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

// byteSize renders a byte count.
func byteSize(b int64) string {
	switch {
	case b >= 1<<30:
		return fmt.Sprintf("%.2f GiB", float64(b)/(1<<30))
	case b >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20))
	}
	return fmt.Sprintf("%d B", b)
}

// dualStore places SDCA's duals in a memory-mapped file (--duals PATH, or
// auto beyond the memory budget: a temporary file, unlinked once mapped),
// announcing the choice; cleanup closes it.
func dualStore(f *trainFlags, d *crf.Dataset, size int64) (train.DualStore, func(), error) {
	nop := func() {}
	path, temporary := f.duals, false
	if f.duals == "auto" {
		dir := f.checkpoint
		if dir == "" {
			dir = os.TempDir()
		}
		tf, err := os.CreateTemp(dir, ".duals-*.tmp")
		if err != nil {
			return nil, nop, err
		}
		path, temporary = tf.Name(), true
		tf.Close()
		os.Remove(path)
		logf("train: duals %s exceed the memory budget: memory-mapping %s", byteSize(size), path)
	}
	fs, err := train.CreateFileStore(path, d)
	if err != nil && !temporary && errors.Is(err, iofs.ErrExist) {
		fs, err = train.OpenFileStore(path, d) // reuse a file of this dataset
	}
	if err != nil {
		return nil, nop, err
	}
	if temporary {
		// The mapping keeps the file alive: unlinked now, it leaves nothing
		// behind whatever ends the process, even kill -9.
		os.Remove(path)
	}
	return fs, func() { fs.Close() }, nil
}

// parseBytes reads sizes such as 512MiB, 8GiB, 2G or 1000000.
func parseBytes(s string) (int64, error) {
	mult := int64(1)
	for _, u := range []struct {
		suffix string
		m      int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}, {"G", 1e9}, {"M", 1e6}, {"K", 1e3}} {
		if v, ok := strings.CutSuffix(s, u.suffix); ok {
			s, mult = v, u.m
			break
		}
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || v < 0 {
		return 0, fmt.Errorf("%q is not a size (e.g. 8GiB)", s)
	}
	return int64(v * float64(mult)), nil
}
