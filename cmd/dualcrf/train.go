package main

import (
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"reflect"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/dualcrf/dualcrf/arrowio"
	"github.com/dualcrf/dualcrf/duals"
	"github.com/dualcrf/dualcrf/pipeline"
	"github.com/dualcrf/dualcrf/plots"
	"github.com/dualcrf/dualcrf/stage"
	"github.com/dualcrf/dualcrf/tables"
	"github.com/dualcrf/dualcrf/train"
)

func trainCommand() *cli.Command {
	return &cli.Command{
		Name:      "train",
		Usage:     "fit a CRF to a feature table with SDCA-GAP (or L-BFGS, OEG, SAG; --loss hinge: a structural SVM by BCFW), certifying the duality gap",
		ArgsUsage: "FEATURES|-",
		Description: `Minimises λ/2‖w‖² (+ λ₁‖w‖₁ with --l1) + mean negative log-likelihood. SDCA certifies the duality gap P − D ≥ P − P*
with a full pass every --gap-every epochs and stops when it is ≤ --gap-tol. One line per epoch
goes to standard error; --log writes the per-epoch table. The model holds the weights the final
certificate is about.

   dualcrf train --lambda 1/n --sampler gap --gap-tol 1e-3 -o model.arrow train.arrow
   dualcrf featurize --template chunking --min-count 3 train.txt.gz | dualcrf train - > model.arrow

With --checkpoint DIR, SIGINT or SIGTERM at any moment saves the exact point reached (exit 130 or
143), and --resume DIR continues to the same model bytes as an uninterrupted run (SDCA, and BCFW
for --loss hinge).
A run that ends well removes its snapshots (--keep-checkpoints keeps them).

The paper's peers: --solver oeg (online exponentiated gradient, Collins et al. 2008; SDCA's dual
certificate) and --solver sag (stochastic average gradient, Schmidt et al. 2015: --sag-variant
nus, nus-star or uniform; certificate ‖∇P‖²/(2λ) from a full pass, as L-BFGS's). The log counts
oracle calls (forward–backward passes over one sentence, certificates apart) and parameter updates.

--l1 λ₁ adds λ₁‖w‖₁ (the elastic net, CRFsuite's and Wapiti's c1/ρ1): SDCA trains it by proximal SDCA
with the same certificate, --solver lbfgs by OWL-QN; the model stores its non-zero weights only.
CRFsuite's "-a lbfgs -p c1=0.1 -p c2=0.1" is --l1 0.1/n --lambda 0.2/n (its objective is n times ours).

--loss hinge trains the structural SVM (Hamming hinge loss: --hamming mean normalises a sentence's
count of wrong tokens by its length, --hamming count does not) instead, by block-coordinate Frank–Wolfe
with the same samplers and certified gap; the model decodes as any other.`,
		Flags:  trainFlags().cliFlags(),
		Action: trainFlags().checkedAction(runTrain),
	}
}

// The defaults of train's flags that are not the library's zero value.
const (
	defaultSeed            = 1 // TrainOptions' methods: seed 0
	defaultCheckpointEvery = 1 // TrainOptions.CheckpointEvery: 0, none by epoch
)

// trainSetup is what train's flags set: the stage's options and a value
// of each method (train.Methods, by name), of which --solver and --loss
// pick one.
type trainSetup struct {
	o       stage.TrainOptions
	methods map[string]train.Method
	solver  string
}

// trainFlags are train's flags: each flag's name, default and meaning,
// the library options it sets (as stage.OptionError names them) and how.
// This table is the one place that ties a flag to an option: the command
// maps the options' errors back to flags with it (optionFlags.render).
func trainFlags() optionFlags[trainSetup] {
	fs := optionFlags[trainSetup]{
		{catInput, argFiles("FEATURES", pipeline.RoleInput, true), nil, nil},
		{catInput, fileOf(pipeline.RoleInput, &cli.StringFlag{Name: "valid", Usage: "held-out feature table (featurized with the training table's templates), scored after each certificate"}).std(),
			[]string{"Valid"}, nil}, // read by runTrain
		{catInput, memoryBudgetFlag("a run estimated to need more is refused. " +
			"--duals auto keeps the duals in memory when the whole run fits in it (unset: in half of physical memory); streamed duals get what the rest of the run leaves, in 3 block buffers"),
			[]string{"MemoryBudget"}, func(c *cli.Context, n string, s *trainSetup) (err error) {
				s.o.MemoryBudget, err = memoryBudget(c)
				return err
			}},
		{catInput, fileOf(pipeline.RoleState, &cli.StringFlag{Name: "duals", Value: "auto", Usage: "where SDCA keeps its dual variables: memory; auto (memory when the run fits --memory-budget, else stream); " +
			"stream or stream:PATH (streamed from disk in blocks sized by --memory-budget: PATH, else duals.stream in the checkpoint directory, else a temporary file); or a file PATH (memory-mapped)"}).split(dualsPath),
			[]string{"Duals"}, func(c *cli.Context, n string, s *trainSetup) (err error) {
				s.o.Duals, err = parseDuals(c.String(n))
				return err
			}},
		{catFeatures, &cli.StringFlag{Name: "feature-space", Value: "full", Usage: "full (every attribute × label) or observed (pairs seen in training, CRFsuite's)"},
			[]string{"FeatureSpace"}, func(c *cli.Context, n string, s *trainSetup) (err error) {
				s.o.FeatureSpace, err = parsePairs(n, c.String(n), "full")
				return err
			}},
		{catFeatures, &cli.StringFlag{Name: "transitions", Value: "all", Usage: "all (every label pair) or observed (pairs seen in training, CRFsuite's default)"},
			[]string{"Transitions"}, func(c *cli.Context, n string, s *trainSetup) (err error) {
				s.o.Transitions, err = parsePairs(n, c.String(n), "all")
				return err
			}},
		{catInput, fileOf(pipeline.RoleStateRead, &cli.StringFlag{Name: "warm-start", Usage: "start SDCA from the duals an earlier run kept with --keep-duals: its sentences found again (by their tokens and labels) keep their duals, new ones start as usual; " +
			"other feature templates, another --lambda or a label this table lacks start cold (said in the log and the model). Not with streamed duals"}),
			[]string{"WarmStart"}, func(c *cli.Context, n string, s *trainSetup) error { s.o.WarmStart = c.String(n); return nil }},
		{catFeatures, &cli.BoolFlag{Name: "no-bias", Usage: "leave out the bias, start and end weights (CRFsuite's model)"},
			[]string{"NoBias"}, func(c *cli.Context, n string, s *trainSetup) error { s.o.NoBias = c.Bool(n); return nil }},
		{catSolver, &cli.StringFlag{Name: "lambda", Value: "1/n", Usage: "regularisation λ > 0: a number, or c/n for c divided by the number of sentences"},
			[]string{"Lambda"}, func(c *cli.Context, n string, s *trainSetup) (err error) {
				s.o.Lambda, err = parseLambda(n, c.String(n))
				return err
			}},
		{catSolver, &cli.StringFlag{Name: "l1", DefaultText: "0", Usage: "the elastic net's ℓ1 weight λ₁ ≥ 0, in the units of --lambda (a number, or c/n): minimises λ/2‖w‖² + λ₁‖w‖₁ + mean NLL, " +
			"whose zero weights the model does not store; CRFsuite's -p c1=C1 -p c2=C2 is --l1 C1/n --lambda 2·C2/n. SDCA (proximal SDCA) and --solver lbfgs (OWL-QN) only"},
			[]string{"L1"}, func(c *cli.Context, n string, s *trainSetup) (err error) {
				if c.IsSet(n) {
					s.o.L1, err = parseLambda(n, c.String(n))
				}
				return err
			}},
		{catSolver, &cli.StringFlag{Name: "solver", Value: train.MethodNames()[0], Usage: solverUsage()},
			[]string{"Method"}, func(c *cli.Context, n string, s *trainSetup) error {
				if s.methods[c.String(n)] == nil {
					return fmt.Errorf("--solver %q: want one of %s", c.String(n), strings.Join(train.MethodNames(), ", "))
				}
				s.solver = c.String(n)
				return nil
			}},
		{catSolver, &cli.StringFlag{Name: "loss", Value: stage.LossLog, Usage: "log (the CRF's negative log-likelihood) or hinge (the structural SVM's Hamming hinge loss, trained by BCFW with the sampler and seed: --solver sdca or bcfw)"},
			[]string{"Loss"}, func(c *cli.Context, n string, s *trainSetup) error {
				if c.IsSet(n) { // unset: the solver's own loss
					s.o.Loss = c.String(n)
				}
				return nil
			}},
		{catSolver, &cli.StringFlag{Name: "sampler", Value: train.DefaultSampler, Usage: "SDCA's choice of the next sentence: " + strings.Join(train.SamplerKinds(), ", ")},
			[]string{"Sampler.Kind"}, func(c *cli.Context, n string, s *trainSetup) error {
				if c.IsSet(n) { // unset: the library's default, which --solver sag does not read
					s.o.Sampler.Kind = c.String(n)
				}
				return nil
			}},
		{catSolver, &cli.Float64Flag{Name: "nonuniform", Value: train.DefaultNonUniform, Usage: "probability in (0,1] that a draw follows the gap or importance sampler rather than the uniform one"},
			[]string{"Sampler.NonUniform"}, func(c *cli.Context, n string, s *trainSetup) error {
				if c.IsSet(n) {
					s.o.Sampler.NonUniform = c.Float64(n)
				}
				return nil
			}},
		{catSolver, &cli.IntFlag{Name: "refresh-every", DefaultText: "never", Usage: "recompute every sentence's gap estimate exactly every k ≥ 1 epochs (0: never)"},
			[]string{"RefreshEvery"}, func(c *cli.Context, n string, s *trainSetup) error { s.o.RefreshEvery = c.Int(n); return nil }},
		// SDCA's DualPrecision, a setting its method declares, held in a
		// flag of text (the flags of methodFlags hold numbers and words).
		{catSolver, &cli.StringFlag{Name: "dual-precision", Value: duals.DefaultPrecision.String(), Usage: settingNamed("dual-precision").Help},
			settingFields("dual-precision"), func(c *cli.Context, n string, s *trainSetup) error {
				if !c.IsSet(n) {
					return nil // the method's default (the field's zero)
				}
				p, err := duals.ParsePrecision(c.String(n))
				if err != nil {
					return fmt.Errorf("--%s %q: %s", n, c.String(n), settingNamed(n).Want)
				}
				s.setAll(n, p)
				return nil
			}},
		{catSolver, &cli.Uint64Flag{Name: "seed", Value: defaultSeed, Usage: "random seed; the same seed gives the same model"},
			settingFields("seed"), func(c *cli.Context, n string, s *trainSetup) error { s.setAll(n, c.Uint64(n)); return nil }},
		{catSolver, intIn(&cli.IntFlag{Name: "workers", DefaultText: "one per core", Usage: "SDCA workers: 1 runs the sequential SDCA; more, or 0 (one per core), the parallel SDCA by pipelined rounds, whose model depends on the seed and --round-size only (the same bytes on any number of cores)"}, 0, math.MaxInt, ""),
			settingFields("workers"), func(c *cli.Context, n string, s *trainSetup) error { s.setAll(n, workers(c, n)); return nil }},
		{catStopping, &cli.Float64Flag{Name: "gap-tol", Value: train.DefaultGapTol, Usage: "stop when the certified duality gap is at most this (> 0)"},
			[]string{"GapTol"}, func(c *cli.Context, n string, s *trainSetup) error { s.o.GapTol = c.Float64(n); return nil }},
		{catStopping, &cli.IntFlag{Name: "gap-every", Value: train.DefaultGapEvery, Usage: "epochs between certificate passes: 0 certifies the initial point, each epoch whose gap estimate is ≤ 2·--gap-tol and the last epoch; N ≥ 1 also every N epochs"},
			[]string{"GapEvery"}, func(c *cli.Context, n string, s *trainSetup) error { s.o.GapEvery = c.Int(n); return nil }},
		{catStopping, &cli.IntFlag{Name: "max-epochs", Value: train.DefaultMaxEpochs, Usage: "stop after this many epochs, ≥ 1 (L-BFGS: iterations)"},
			[]string{"MaxEpochs"}, func(c *cli.Context, n string, s *trainSetup) error { s.o.MaxEpochs = c.Int(n); return nil }},
		{catStopping, &cli.DurationFlag{Name: "max-time", DefaultText: "no limit", Usage: "stop after this much training time, e.g. 10m or 1h30m"},
			[]string{"MaxTime"}, func(c *cli.Context, n string, s *trainSetup) error { s.o.MaxTime = c.Duration(n); return nil }},
		{catOutput, fileOf(pipeline.RoleOutput, &cli.StringFlag{Name: "output", Aliases: []string{"o"}, Value: "-", Usage: "model file (Arrow IPC file; Parquet when the name ends .parquet); - = standard output"}).std(), nil, nil},
		{catOutput, fileOf(pipeline.RoleStateWritten, &cli.StringFlag{Name: "keep-duals", Usage: "keep the final duals here, with a key per sentence, for a later --warm-start on a grown corpus (SDCA; about the size of the duals)"}),
			[]string{"KeepDuals"}, func(c *cli.Context, n string, s *trainSetup) error { s.o.KeepDuals = c.String(n); return nil }},
		{catOutput, fileOf(pipeline.RoleOutput, &cli.StringFlag{Name: "log", Usage: "write the per-epoch training log here (Arrow IPC file; Parquet when the name ends .parquet)"}), nil, nil},
		{catOutput, fileOf(pipeline.RoleOutput, &cli.StringFlag{Name: "plot", Usage: "draw the certified gap and P − best dual against seconds and epochs here (.svg or .png); certifies every epoch unless --gap-every is given (a full pass each: on CoNLL-2000 about +50% CPU time)"}), nil, nil},
		{catOutput, &cli.BoolFlag{Name: "dry-run", Usage: "print the plan — the memory the run needs by part, where the duals go (memory, file, or streamed in how many blocks), " +
			"the disk it writes, a rough time per epoch — and exit without training (or with the refusal a run would meet); reads the table's sizes, keeps none of its rows"}, nil, nil},
		{catOutput, fileOf(pipeline.RoleOutput, &cli.StringFlag{Name: "cpuprofile", Usage: "write a Go CPU profile of the training loop here", Hidden: true}), nil, nil},
		{catCheckpoints, fileOf(pipeline.RoleDir, &cli.StringFlag{Name: "checkpoint", Usage: "directory for snapshots (locked; written atomically; also on SIGINT/SIGTERM); refused when it holds an earlier run's snapshots, unless --resume"}),
			[]string{"Checkpoint"}, func(c *cli.Context, n string, s *trainSetup) error { s.o.Checkpoint = c.String(n); return nil }},
		{catCheckpoints, &cli.IntFlag{Name: "checkpoint-every", Value: defaultCheckpointEvery, Usage: "epochs between snapshots (0: only by --checkpoint-interval and on interrupt)"},
			[]string{"CheckpointEvery"}, func(c *cli.Context, n string, s *trainSetup) error { s.o.CheckpointEvery = c.Int(n); return nil }},
		{catCheckpoints, &cli.DurationFlag{Name: "checkpoint-interval", DefaultText: "none", Usage: "training time between snapshots, e.g. 10m"},
			[]string{"CheckpointInterval"}, func(c *cli.Context, n string, s *trainSetup) error {
				s.o.CheckpointInterval = c.Duration(n)
				return nil
			}},
		{catCheckpoints, fileOf(pipeline.RoleDir, &cli.StringFlag{Name: "resume", Usage: "continue from the newest valid snapshot in this directory (same data and settings); snapshots go on there unless --checkpoint says otherwise"}),
			[]string{"Resume"}, func(c *cli.Context, n string, s *trainSetup) error { s.o.Resume = c.String(n); return nil }},
		{catCheckpoints, &cli.BoolFlag{Name: "keep-checkpoints", Usage: "keep the snapshots when the run ends well (by default they are removed once the model is written)"},
			[]string{"KeepCheckpoints"}, func(c *cli.Context, n string, s *trainSetup) error { s.o.KeepCheckpoints = c.Bool(n); return nil }},
		{catProgress, &cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "no per-epoch lines on standard error"},
			[]string{"Quiet"}, func(c *cli.Context, n string, s *trainSetup) error { s.o.Quiet = c.Bool(n); return nil }},
		{catProgress, progressFlag(), nil, nil},
	}
	// The methods' own settings follow the run's solver options.
	at := slices.IndexFunc(fs, func(f optionFlag[trainSetup]) bool { return f.Names()[0] == "workers" }) + 1
	return slices.Insert(fs, at, methodFlags(fs)...)
}

// methodFlags are the flags of the methods' own settings, each declared by
// its method (train.Description.Settings: name, default, range, help),
// that the table owned does not define itself: one flag per setting's
// Name, setting that setting of every method that has it. A new method's
// settings become flags here without a line of the command.
func methodFlags(owned optionFlags[trainSetup]) optionFlags[trainSetup] {
	seen := map[string]bool{}
	for _, f := range owned {
		seen[f.Names()[0]] = true
	}
	var fs optionFlags[trainSetup]
	for _, m := range train.Methods() {
		for _, st := range m.Describe().Settings {
			if st.Name == "" || seen[st.Name] {
				continue // a library setting with no flag, or one flag for several methods
			}
			seen[st.Name] = true
			fs = append(fs, optionFlag[trainSetup]{catSolver, settingFlag(m, st), settingFields(st.Name),
				func(c *cli.Context, n string, s *trainSetup) error {
					if c.IsSet(n) { // unset: the method's default (the field's zero)
						s.setAll(n, c.Value(n))
					}
					return nil
				}})
		}
	}
	return fs
}

// settingFlag is the flag of the setting st of method m: its name,
// default and help, of the type of its field.
func settingFlag(m train.Method, st train.Setting) cli.Flag {
	switch st.Kind(m) {
	case reflect.Float64:
		f := &cli.Float64Flag{Name: st.Name, DefaultText: st.DefaultText, Usage: st.Help}
		f.Value, _ = st.Default.(float64)
		return f
	case reflect.Int:
		f := &cli.IntFlag{Name: st.Name, DefaultText: st.DefaultText, Usage: st.Help}
		f.Value, _ = st.Default.(int)
		return f
	case reflect.Uint64:
		f := &cli.Uint64Flag{Name: st.Name, DefaultText: st.DefaultText, Usage: st.Help}
		f.Value, _ = st.Default.(uint64)
		return f
	case reflect.String:
		f := &cli.StringFlag{Name: st.Name, DefaultText: st.DefaultText, Usage: st.Help}
		f.Value, _ = st.Default.(string)
		return f
	case reflect.Bool:
		return &cli.BoolFlag{Name: st.Name, Usage: st.Help}
	}
	panic(fmt.Sprintf("train flags: %s.%s is a %s, which no flag type holds", train.TypeName(m), st.Field, st.Kind(m)))
}

// settingFields returns the settings named name of every method, as the
// library's errors name them ("SDCA.Seed", "OEG.Seed", …).
func settingFields(name string) []string {
	var fields []string
	for _, m := range train.Methods() {
		for _, st := range m.Describe().Settings {
			if st.Name == name {
				fields = append(fields, train.TypeName(m)+"."+st.Field)
			}
		}
	}
	return fields
}

// settingNamed returns the setting called name of the first method that
// declares it.
func settingNamed(name string) train.Setting {
	for _, m := range train.Methods() {
		for _, st := range m.Describe().Settings {
			if st.Name == name {
				return st
			}
		}
	}
	panic("train flags: no method declares the setting " + name)
}

// setAll sets the settings named name of every method to v.
func (s *trainSetup) setAll(name string, v any) {
	for _, m := range s.methods {
		for _, st := range m.(train.Describer).Describe().Settings {
			if st.Name == name {
				st.Set(m, v)
			}
		}
	}
}

// solverUsage is --solver's help: the methods' names and what each is.
func solverUsage() string {
	var parts []string
	for _, m := range train.Methods() {
		d := m.Describe()
		parts = append(parts, d.Name+" ("+d.Summary+")")
	}
	return strings.Join(parts, ", ")
}

// trainOptions maps train's flags to the stage's options and checks them
// before anything is read or created.
func trainOptions(c *cli.Context) (stage.TrainOptions, error) {
	flags := trainFlags()
	s := &trainSetup{methods: map[string]train.Method{}, solver: train.MethodNames()[0]}
	for _, m := range train.Methods() {
		s.methods[m.Describe().Name] = m
	}
	s.o.Log, s.o.OptionName = c.App.ErrWriter, flags.optionName
	for _, f := range flags {
		if f.set != nil {
			if err := f.set(c, f.Names()[0], s); err != nil {
				return s.o, err
			}
		}
	}
	// The options given, for the library to refuse those the method does
	// not read (stage.TrainOptions.Given), each as the fields its flag sets.
	for _, f := range flags {
		if f.fields != nil && c.IsSet(f.Names()[0]) {
			s.o.Given = append(s.o.Given, f.fields)
		}
	}
	// --solver's method, or the one that takes its place for --loss
	// (train.ForLoss: --loss hinge with sdca trains by bcfw, with the
	// flags that set it); the library refuses a pair no method trains.
	s.o.Method = s.methods[s.solver]
	if name, err := train.ForLoss(s.solver, s.o.Loss); err == nil {
		s.o.Method = s.methods[name]
	}
	if err := s.o.Check(); err != nil {
		return s.o, flags.render(c, err)
	}
	if path := c.String("plot"); path != "" {
		if _, err := plots.FormatOf(path); err != nil {
			return s.o, fmt.Errorf("train: --plot %w", err)
		}
		if !c.IsSet("gap-every") {
			s.o.GapEvery = 1 // a figure of every epoch, not of the few the default policy certifies
		}
	}
	if s.o.Checkpoint != "" && s.o.Resume == "" {
		// Before the table is read; Train checks again, holding the lock.
		if err := train.CheckFresh(s.o.Checkpoint); err != nil {
			return s.o, flags.render(c, fmt.Errorf("train: %w", err))
		}
	}
	return s.o, nil
}

// parseLambda reads --lambda or --l1 (flag): a number, or c/n.
func parseLambda(flag, s string) (stage.Lambda, error) {
	c, perN := strings.CutSuffix(s, "/n")
	v, err := strconv.ParseFloat(c, 64)
	if err != nil {
		return stage.Lambda{}, fmt.Errorf("--%s %q: want a number or c/n", flag, s)
	}
	if perN {
		return stage.LambdaPerSentence(v), nil
	}
	return stage.LambdaValue(v), nil
}

// parsePairs reads --feature-space (all: "full") or --transitions (all:
// "all").
func parsePairs(flag, s, all string) (stage.Pairs, error) {
	switch s {
	case all:
		return stage.AllPairs, nil
	case "observed":
		return stage.ObservedPairs, nil
	}
	return 0, fmt.Errorf("--%s %q: want %s or observed", flag, s, all)
}

// parseDuals reads --duals: memory, auto, stream, stream:PATH or a file
// path.
func parseDuals(s string) (stage.Duals, error) {
	switch s {
	case "memory":
		return stage.Duals{Place: stage.DualsMemory}, nil
	case "auto":
		return stage.Duals{Place: stage.DualsAuto}, nil
	case "stream":
		return stage.Duals{Place: stage.DualsStream}, nil
	case "", "stream:":
		return stage.Duals{}, fmt.Errorf("--duals %q: want memory, auto, stream, stream:PATH or a file path", s)
	}
	if path, ok := strings.CutPrefix(s, "stream:"); ok {
		return stage.Duals{Place: stage.DualsStream, Path: path}, nil
	}
	return stage.Duals{Place: stage.DualsFile, Path: s}, nil
}

// runTrain reads the feature table, trains, and writes the model and the
// log; their files are created before training starts and committed only
// when everything succeeds, before the snapshots are removed.
func runTrain(c *cli.Context) error {
	if c.NArg() != 1 {
		return fmt.Errorf("train: want one feature table (or -), got %d arguments", c.NArg())
	}
	in := c.Args().First()
	o, err := trainOptions(c)
	if err != nil {
		return err
	}
	modelFormat, logFormat, err := trainFormats(c)
	if err != nil {
		return err
	}
	if c.Bool("dry-run") {
		return dryRunTrain(c, in, o)
	}
	// The kept duals' keys hash the tokens' text: read with the table.
	t, err := stage.ReadFeatureTable(c.Context, stageInput(c, in), o.KeepDuals == "" && o.WarmStart == "")
	if err != nil {
		return err
	}
	if path := c.String("valid"); path != "" {
		if o.Valid, err = readTableArg(c, path); err != nil {
			return err
		}
		o.ValidName = path
	}
	outs := &trainOutputs{c: c, modelFormat: modelFormat, logFormat: logFormat}
	defer outs.close()
	var done func()
	o.Progress, o.Log, done = stageProgress(c)
	defer done()
	o.BeforeTraining, o.AfterTraining = outs.open, outs.write
	ctx := installTestHook(c, &o)
	_, err = stage.Train(ctx, t, in, o)
	if errors.Is(err, stage.ErrUnlabelled) {
		return &renderedError{msg: strings.Replace(err.Error(), "no token has a gold label;", "no token has a gold label (featurized with --no-labels?);", 1), err: err}
	}
	return trainFlags().render(c, err)
}

// dryRunTrain prints the plan of the run (stage.PlanTrain) to standard
// output; a run that would be refused is refused after its plan (on
// standard error).
func dryRunTrain(c *cli.Context, in string, o stage.TrainOptions) error {
	if path := c.String("valid"); path != "" {
		var err error
		if o.Valid, err = readTableArg(c, path); err != nil {
			return err
		}
		o.ValidName = path
	}
	plan, err := stage.PlanTrain(c.Context, stageInput(c, in), o)
	if plan != nil {
		// A run that would be refused fails: its plan goes to standard
		// error with the refusal, nothing to standard output.
		w := c.App.Writer
		if err != nil {
			w = c.App.ErrWriter
		}
		if werr := plan.Write(w); werr != nil && err == nil {
			err = werr
		}
	}
	return trainFlags().render(c, err)
}

// readTableArg reads the feature table at path ("-": standard
// input), without its text columns.
func readTableArg(c *cli.Context, path string) (*tables.FeatureTable, error) {
	return stage.ReadFeatureTable(c.Context, stageInput(c, path), true)
}

// trainOutputs are train's output files: the model, the log and the
// hidden CPU profile.
type trainOutputs struct {
	c                      *cli.Context
	model, log             *pipeline.Output
	modelFormat, logFormat arrowio.Format // arrowio.FormatFile or FormatParquet
	plot                   *pipeline.Output
	stopProfile            func()
}

// open creates the outputs (and starts the CPU profile).
func (t *trainOutputs) open() error {
	c := t.c
	var err error
	if t.model, err = std(c).CreateOutput(c.String("output")); err != nil {
		return err
	}
	if path := c.String("log"); path != "" {
		if t.log, err = std(c).CreateOutput(path); err != nil {
			return err
		}
	}
	if path := c.String("plot"); path != "" {
		if t.plot, err = std(c).CreateOutput(path); err != nil {
			return err
		}
	}
	if path := c.String("cpuprofile"); path != "" {
		pf, err := std(c).CreateOutput(path)
		if err != nil {
			return err
		}
		if err := pprof.StartCPUProfile(pf); err != nil {
			pf.Close()
			return err
		}
		t.stopProfile = func() {
			pprof.StopCPUProfile()
			if err := pf.Commit(); err != nil {
				logf(c, "train: warning: %v", err)
			}
		}
	}
	return nil
}

// write writes the model and the log, then commits them.
func (t *trainOutputs) write(res *stage.TrainResult) error {
	t.closeProfile()
	if err := tables.WriteModel(t.model, res.Model, arrowio.WriterOptions{Format: t.modelFormat}); err != nil {
		return fmt.Errorf("write model %s: %w", t.model.Name(), err)
	}
	if t.log != nil {
		if err := res.WriteLogAs(t.log, arrowio.WriterOptions{Format: t.logFormat}); err != nil {
			return fmt.Errorf("write training log %s: %w", t.log.Name(), err)
		}
	}
	if t.plot != nil {
		format, _ := plots.FormatOf(t.c.String("plot")) // checked by trainOptions
		fig := plots.LogFigure([]plots.Run{{Name: res.Label, Rows: res.LogRows(), Solver: res.Solver}},
			plots.LogOptions{Title: filepath.Base(t.c.Args().First()), Ref: math.NaN(), GapTol: res.Train.GapTol})
		if err := fig.Write(t.plot, format); err != nil {
			return fmt.Errorf("write plot %s: %w", t.plot.Name(), err)
		}
	}
	if err := t.model.Commit(); err != nil {
		return err
	}
	for _, out := range []*pipeline.Output{t.log, t.plot} {
		if out != nil {
			if err := out.Commit(); err != nil {
				return err
			}
		}
	}
	return nil
}

// closeProfile stops the CPU profile, if one runs.
func (t *trainOutputs) closeProfile() {
	if t.stopProfile != nil {
		t.stopProfile()
		t.stopProfile = nil
	}
}

// close removes the outputs not committed.
func (t *trainOutputs) close() {
	t.closeProfile()
	for _, out := range []*pipeline.Output{t.model, t.log, t.plot} {
		if out != nil {
			out.Close()
		}
	}
}

// workers maps --workers to the stage's Workers: unset, the default (0);
// 0, one per core.
func workers(c *cli.Context, name string) int {
	switch n := c.Int(name); {
	case !c.IsSet(name):
		return 0
	case n == 0:
		return train.AllWorkers
	default:
		return n
	}
}

// parseBytes reads a size: a number and a unit, case aside — B, kB, MB,
// GB, TB (powers of 1000; K, M, G and T too) or KiB, MiB, GiB, TiB (powers
// of 1024) — such as 8GiB, 125MB or 1.5 G; a bare number counts bytes.
// A size of no whole byte, or beyond what an int64 holds, is refused.
func parseBytes(s string) (int64, error) {
	units := []struct {
		suffix string
		m      float64
	}{{"kib", 1 << 10}, {"mib", 1 << 20}, {"gib", 1 << 30}, {"tib", 1 << 40},
		{"kb", 1e3}, {"mb", 1e6}, {"gb", 1e9}, {"tb", 1e12},
		{"k", 1e3}, {"m", 1e6}, {"g", 1e9}, {"t", 1e12}, {"b", 1}}
	num, mult := strings.TrimSpace(s), 1.0
	for _, u := range units {
		if strings.HasSuffix(strings.ToLower(num), u.suffix) {
			num, mult = strings.TrimSpace(num[:len(num)-len(u.suffix)]), u.m
			break
		}
	}
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, errors.New("want a size such as 8GiB or 500MB: a number and a unit, B, kB, MB, GB, TB (powers of 1000; K, M, G, T too) or KiB, MiB, GiB, TiB (powers of 1024)")
	}
	switch b := v * mult; {
	case b >= math.MaxInt64:
		return 0, errors.New("too large: at most 8EiB (an int64 of bytes)")
	case b < 1:
		return 0, errors.New("want a positive size, at least one byte, such as 8GiB")
	default:
		return int64(b), nil
	}
}
