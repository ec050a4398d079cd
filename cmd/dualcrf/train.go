package main

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime/pprof"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/dualcrf/dualcrf/arrowio"
	"github.com/dualcrf/dualcrf/pipeline"
	"github.com/dualcrf/dualcrf/plots"
	"github.com/dualcrf/dualcrf/stage"
	"github.com/dualcrf/dualcrf/tables"
	"github.com/dualcrf/dualcrf/train"
)

func trainCommand() *cli.Command {
	return &cli.Command{
		Name:      "train",
		Usage:     "fit a CRF to a feature table with SDCA-GAP (or L-BFGS, OEG, SAG), certifying the duality gap",
		ArgsUsage: "FEATURES|-",
		Description: `Minimises λ/2‖w‖² + mean negative log-likelihood. SDCA certifies the duality gap P − D ≥ P − P*
with a full pass every --gap-every epochs and stops when it is ≤ --gap-tol. One line per epoch
goes to standard error; --log writes the per-epoch table. The model holds the weights the final
certificate is about.

   dualcrf train --lambda 1/n --sampler gap --gap-tol 1e-3 -o model.arrow train.arrow
   dualcrf featurize --template chunking --min-count 3 train.txt.gz | dualcrf train - > model.arrow

With --checkpoint DIR, SIGINT or SIGTERM at any moment saves the exact point reached (exit 130 or
143), and --resume DIR continues to the same model bytes as an uninterrupted run (SDCA only).
A run that ends well removes its snapshots (--keep-checkpoints keeps them).

The paper's peers: --solver oeg (online exponentiated gradient, Collins et al. 2008; SDCA's dual
certificate) and --solver sag (stochastic average gradient, Schmidt et al. 2015: --sag-variant
nus, nus-star or uniform; certificate ‖∇P‖²/(2λ) from a full pass, as L-BFGS's). The log counts
oracle calls (forward–backward passes over one sentence, certificates apart) and parameter updates.`,
		Flags: flagGroups(
			category(catInput,
				&cli.StringFlag{Name: "valid", Usage: "held-out feature table (featurized with the training table's templates), scored after each certificate"},
				&cli.StringFlag{Name: "memory-budget", DefaultText: "physical memory", Usage: "memory the run may use, e.g. 8GiB; a run estimated to need more is refused. " +
					"--duals auto keeps the duals in memory when the whole run fits in it (unset: in half of physical memory); streamed duals get what the rest of the run leaves, in 3 block buffers"},
				&cli.StringFlag{Name: "duals", Value: stage.DefaultDuals, Usage: "where SDCA keeps its dual variables: memory; auto (memory when the run fits --memory-budget, else stream); " +
					"stream or stream:PATH (streamed from disk in blocks sized by --memory-budget: PATH, else duals.stream in the checkpoint directory, else a temporary file); or a file PATH (memory-mapped)"},
			),
			category(catFeatures,
				&cli.StringFlag{Name: "feature-space", Value: stage.DefaultFeatureSpace, Usage: "full (every attribute × label) or observed (pairs seen in training, CRFsuite's)"},
				&cli.StringFlag{Name: "transitions", Value: stage.DefaultTransitions, Usage: "all (every label pair) or observed (pairs seen in training, CRFsuite's default)"},
				&cli.BoolFlag{Name: "no-bias", Usage: "leave out the bias, start and end weights (CRFsuite's model)"},
			),
			category(catSolver,
				&cli.StringFlag{Name: "lambda", Value: stage.DefaultLambda, Usage: "regularisation λ > 0: a number, or c/n for c divided by the number of sentences"},
				&cli.StringFlag{Name: "solver", Value: stage.DefaultSolver, Usage: strings.Join(stage.Solvers, ", ")},
				&cli.StringFlag{Name: "sampler", Value: train.DefaultSampler, Usage: "SDCA's choice of the next sentence: " + strings.Join(train.SamplerKinds(), ", ")},
				&cli.Float64Flag{Name: "nonuniform", Value: train.DefaultNonUniform, Usage: "probability in (0,1] that a draw follows the gap or importance sampler rather than the uniform one"},
				&cli.Float64Flag{Name: "epsilon", Value: train.DefaultEpsilon, Usage: "share in (0,1] of the uniform distribution in the initial duals, the rest on each sentence's gold labelling"},
				&cli.Float64Flag{Name: "subprecision", Value: train.DefaultSubPrecision, Usage: "SDCA's line search stops when its step is shorter than this, in (0,1)"},
				&cli.IntFlag{Name: "refresh-every", DefaultText: "never", Usage: "recompute every sentence's gap estimate exactly every k ≥ 1 epochs (0: never)"},
				&cli.Uint64Flag{Name: "seed", Value: stage.DefaultSeed, Usage: "random seed; the same seed gives the same model"},
				intIn(&cli.IntFlag{Name: "workers", Value: train.DefaultWorkers, Usage: "SDCA workers (deterministic parallel SDCA: the same seed and workers give the same model); 0: one per core"}, 0, math.MaxInt, ""),
				&cli.IntFlag{Name: "round-steps", Value: train.DefaultRoundSteps, Usage: "steps each SDCA worker makes between two aggregations, ≥ 1 (with --workers ≠ 1)"},
				&cli.IntFlag{Name: "lbfgs-store", Value: train.DefaultLBFGSStore, Usage: "L-BFGS: correction pairs kept, ≥ 1"},
				&cli.StringFlag{Name: "sag-variant", Value: train.DefaultSAGVariant, Usage: "SAG: nus (SAG-NUS: draws ∝ L_i half of the time), nus-star (SAG-NUS*: skips the Lipschitz test of tiny gradients) or uniform"},
				&cli.Float64Flag{Name: "sag-initial-l", Value: train.DefaultSAGInitialL, Usage: "SAG: every sentence's Lipschitz estimate L_i before its first test, > 0"},
				&cli.Float64Flag{Name: "oeg-eta", Value: train.DefaultOEGEta, Usage: "OEG: every sentence's initial step size η_i, in (0,1] (halved while the dual does not increase, ×1.05 after a kept step)"},
			),
			category(catStopping,
				&cli.Float64Flag{Name: "gap-tol", Value: train.DefaultGapTol, Usage: "stop when the certified duality gap is at most this (> 0)"},
				&cli.IntFlag{Name: "gap-every", Value: stage.DefaultGapEvery, Usage: "epochs between certificate passes: 0 certifies the initial point, each epoch whose gap estimate is ≤ 2·--gap-tol and the last epoch; N ≥ 1 also every N epochs"},
				&cli.IntFlag{Name: "max-epochs", Value: train.DefaultMaxEpochs, Usage: "stop after this many epochs, ≥ 1 (L-BFGS: iterations)"},
				&cli.DurationFlag{Name: "max-time", DefaultText: "no limit", Usage: "stop after this much training time, e.g. 10m or 1h30m"},
			),
			category(catOutput,
				&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Value: "-", Usage: "model file (Arrow IPC file; Parquet when the name ends .parquet); - = standard output"},
				&cli.StringFlag{Name: "log", Usage: "write the per-epoch training log here (Arrow IPC file; Parquet when the name ends .parquet)"},
				&cli.StringFlag{Name: "plot", Usage: "draw the certified gap and P − best dual against seconds and epochs here (.svg or .png); certifies every epoch unless --gap-every is given (a full pass each: on CoNLL-2000 about +50% CPU time)"},
				&cli.StringFlag{Name: "cpuprofile", Usage: "write a Go CPU profile of the training loop here", Hidden: true},
			),
			category(catCheckpoints,
				&cli.StringFlag{Name: "checkpoint", Usage: "directory for snapshots (locked; written atomically; also on SIGINT/SIGTERM); refused when it holds an earlier run's snapshots, unless --resume"},
				&cli.IntFlag{Name: "checkpoint-every", Value: stage.DefaultCheckpointEvery, Usage: "epochs between snapshots (0: only by --checkpoint-interval and on interrupt)"},
				&cli.DurationFlag{Name: "checkpoint-interval", DefaultText: "none", Usage: "training time between snapshots, e.g. 10m"},
				&cli.StringFlag{Name: "resume", Usage: "continue from the newest valid snapshot in this directory (same data and settings); snapshots go on there unless --checkpoint says otherwise"},
				&cli.BoolFlag{Name: "keep-checkpoints", Usage: "keep the snapshots when the run ends well (by default they are removed once the model is written)"},
			),
			category(catProgress,
				&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "no per-epoch lines on standard error"},
				progressFlag(),
			),
		),
		Action: runTrain,
	}
}

// trainOptions maps train's flags to the stage's options and checks them
// before anything is read or created.
func trainOptions(c *cli.Context) (stage.TrainOptions, error) {
	o := stage.TrainOptions{Lambda: c.String("lambda"), Solver: c.String("solver"), NoBias: c.Bool("no-bias"),
		FeatureSpace: c.String("feature-space"), Transitions: c.String("transitions"), Sampler: c.String("sampler"),
		NonUniform: c.Float64("nonuniform"), Epsilon: c.Float64("epsilon"), SubPrecision: c.Float64("subprecision"),
		Seed: c.Uint64("seed"), RefreshEvery: c.Int("refresh-every"), LBFGSStore: c.Int("lbfgs-store"),
		SAGVariant: c.String("sag-variant"), SAGInitialL: c.Float64("sag-initial-l"), OEGEta: c.Float64("oeg-eta"),
		Workers: workers(c.Int("workers")), RoundSteps: c.Int("round-steps"),
		GapTol: c.Float64("gap-tol"), GapEvery: c.Int("gap-every"), MaxEpochs: c.Int("max-epochs"), MaxTime: c.Duration("max-time"),
		ValidPath: c.String("valid"), Duals: c.String("duals"), Checkpoint: c.String("checkpoint"),
		CheckpointEvery: c.Int("checkpoint-every"), CheckpointInterval: c.Duration("checkpoint-interval"), Resume: c.String("resume"),
		KeepCheckpoints: c.Bool("keep-checkpoints"), Stdin: c.App.Reader, Log: c.App.ErrWriter, Quiet: c.Bool("quiet")}
	if err := o.CheckGiven(); err != nil {
		return o, err
	}
	if b := c.String("memory-budget"); b != "" {
		v, err := stage.ParseBytes(b)
		if err != nil || v <= 0 {
			return o, fmt.Errorf("--memory-budget %q: want a positive size such as 8GiB", b)
		}
		o.MemoryBudget = v
	}
	if path := c.String("plot"); path != "" {
		if _, err := plots.FormatOf(path); err != nil {
			return o, fmt.Errorf("train: --plot %w", err)
		}
		if !c.IsSet("gap-every") {
			o.GapEvery = 1 // a figure of every epoch, not of the few the default policy certifies
		}
	}
	if o.Solver != "sdca" && c.IsSet("duals") {
		return o, stage.ErrSDCAOnly
	}
	if o.Checkpoint != "" && o.Resume == "" {
		// Before the table is read; Train checks again, holding the lock.
		if err := train.CheckFresh(o.Checkpoint); err != nil {
			return o, fmt.Errorf("train: %w", err)
		}
	}
	return o, nil
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
	modelFormat, logFormat, err := trainFiles(c, in)
	if err != nil {
		return err
	}
	t, err := stage.ReadFeatureTable(std(c).Source(in), true)
	if err != nil {
		return err
	}
	outs := &trainOutputs{c: c, modelFormat: modelFormat, logFormat: logFormat}
	defer outs.close()
	var done func()
	o.Progress, o.Log, done = stageProgress(c)
	defer done()
	o.BeforeTraining, o.AfterTraining = outs.open, outs.write
	ctx := installTestHook(c, &o)
	_, err = stage.Train(ctx, t, in, o)
	return settingsFlagError(err)
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
		pf, err := os.Create(path)
		if err != nil {
			return err
		}
		if err := pprof.StartCPUProfile(pf); err != nil {
			pf.Close()
			return err
		}
		t.stopProfile = func() {
			pprof.StopCPUProfile()
			pf.Close()
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
		fig := plots.LogFigure([]plots.Run{{Name: runName(t.c, res.Solver), Rows: res.LogRows()}},
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

// workers maps --workers (0: one per core) to the stage's Workers.
func workers(n int) int {
	if n == 0 {
		return train.AllWorkers
	}
	return n
}

// runName names a run in train --plot's legend: the solver, with SDCA's
// sampler.
func runName(c *cli.Context, solver string) string {
	switch solver {
	case "sdca":
		return "SDCA, " + c.String("sampler") + " sampler"
	case "lbfgs":
		return "L-BFGS"
	case "sag":
		return "SAG (" + c.String("sag-variant") + ")"
	}
	return strings.ToUpper(solver)
}
