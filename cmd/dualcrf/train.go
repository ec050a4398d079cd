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
	"github.com/dualcrf/dualcrf/train"
)

func trainCommand() *cli.Command {
	return &cli.Command{
		Name:      "train",
		Usage:     "fit a CRF to a feature table with SDCA-GAP (or L-BFGS), certifying the duality gap",
		ArgsUsage: "FEATURES|-",
		Description: `Minimises λ/2‖w‖² + mean negative log-likelihood. SDCA certifies the duality gap P − D ≥ P − P*
with a full pass every --gap-every epochs and stops when it is ≤ --gap-tol. One line per epoch
goes to standard error; --log writes the per-epoch table.

   dualcrf train --lambda 1/n --sampler gap --gap-tol 1e-3 -o model.arrow train.arrow
   dualcrf featurize --template chunking --min-count 3 train.txt.gz | dualcrf train -o model.arrow -`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Required: true, Usage: "model file to write"},
			&cli.StringFlag{Name: "lambda", Value: "1/n", Usage: "regularisation λ > 0: a number or \"c/n\""},
			&cli.StringFlag{Name: "solver", Value: "sdca", Usage: "sdca or lbfgs"},
			&cli.StringFlag{Name: "sampler", Value: "gap", Usage: "SDCA sampler: " + strings.Join(train.SamplerKinds(), ", ")},
			&cli.Float64Flag{Name: "nonuniform", Value: 0.8, Usage: "probability of a non-uniform draw (gap, importance samplers)"},
			&cli.Float64Flag{Name: "epsilon", Value: train.DefaultEpsilon, Usage: "weight of the uniform distribution in the initial duals (eq. 21)"},
			&cli.Float64Flag{Name: "subprecision", Value: 1e-3, Usage: "line-search stopping step length"},
			&cli.IntFlag{Name: "refresh-every", Usage: "recompute every gap estimate exactly every k epochs (0: never)"},
			&cli.Uint64Flag{Name: "seed", Value: 1, Usage: "random seed; the same seed gives the same model"},
			&cli.Float64Flag{Name: "gap-tol", Value: train.DefaultGapTol, Usage: "stop when the certified duality gap is at most this"},
			&cli.IntFlag{Name: "gap-every", Value: 1, Usage: "epochs between certificate passes (≤ 0: only when the gap estimate falls below --gap-tol)"},
			&cli.IntFlag{Name: "max-epochs", Value: 100, Usage: "stop after this many epochs (L-BFGS: iterations)"},
			&cli.DurationFlag{Name: "max-time", Usage: "stop after this much training time (e.g. 10m)"},
			&cli.StringFlag{Name: "feature-space", Value: "full", Usage: "full (every attribute × label) or observed (pairs seen in training, CRFsuite's)"},
			&cli.BoolFlag{Name: "no-bias", Usage: "leave out the bias, start and end weights (CRFsuite's model)"},
			&cli.IntFlag{Name: "lbfgs-store", Value: 10, Usage: "L-BFGS correction pairs"},
			&cli.StringFlag{Name: "valid", Usage: "held-out feature table scored after each certified epoch"},
			&cli.StringFlag{Name: "log", Usage: "write the per-epoch training log (Arrow IPC file) here"},
			&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "no per-epoch lines on standard error"},
			&cli.StringFlag{Name: "duals", Value: "auto", Usage: "where SDCA keeps its dual variables: memory, a file PATH (memory-mapped), or auto (a file in the checkpoint directory or the system temp directory when they exceed --memory-budget)"},
			&cli.StringFlag{Name: "memory-budget", Usage: "largest dual size kept in memory with --duals auto, e.g. 8GiB (default: half of physical memory)"},
			&cli.StringFlag{Name: "checkpoint", Usage: "directory for checkpoints (written atomically; also on SIGINT/SIGTERM)"},
			&cli.IntFlag{Name: "checkpoint-every", Value: 1, Usage: "epochs between checkpoints (0: only by --checkpoint-interval and on interrupt)"},
			&cli.DurationFlag{Name: "checkpoint-interval", Usage: "training time between checkpoints, e.g. 10m"},
			&cli.StringFlag{Name: "resume", Usage: "continue from the newest valid checkpoint in this directory (same data and settings)"},
			&cli.StringFlag{Name: "cpuprofile", Usage: "write a Go CPU profile of the training loop here", Hidden: true},
		},
		Action: runTrain,
	}
}

// parseLambda reads "0.001", "1/n" or "c/n".
func parseLambda(s string, n int) (float64, error) {
	if c, ok := strings.CutSuffix(s, "/n"); ok {
		v, err := strconv.ParseFloat(c, 64)
		if err != nil {
			return 0, fmt.Errorf("--lambda %q: want a number or c/n", s)
		}
		return v / float64(n), nil
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, fmt.Errorf("--lambda %q: want a number or c/n", s)
	}
	return v, nil
}

func runTrain(c *cli.Context) error {
	if c.NArg() != 1 {
		return fmt.Errorf("train: want one feature table (or -), got %d arguments", c.NArg())
	}
	in := c.Args().First()
	if err := trainFiles(c, in); err != nil {
		return err
	}
	t, err := readTable(in, true)
	if err != nil {
		return err
	}
	d := t.Data
	if !hasGold(d) {
		return fmt.Errorf("%s: no token has a gold label (featurized with --no-labels?); train needs a labelled feature table", in)
	}
	lambda, err := parseLambda(c.String("lambda"), d.Len())
	if err != nil {
		return err
	}
	p, err := train.NewProblem(d, lambda, c.Bool("no-bias"))
	if err != nil {
		return fmt.Errorf("%s: %w", in, err)
	}
	switch fs := c.String("feature-space"); fs {
	case "full":
	case "observed":
		p.Mask = train.ObservedMask(d)
	default:
		return fmt.Errorf("--feature-space %q: want full or observed", fs)
	}
	var method train.Method
	switch solver := c.String("solver"); solver {
	case "sdca":
		nu := c.Float64("nonuniform")
		if nu <= 0 || nu > 1 {
			return fmt.Errorf("--nonuniform %g: want a probability in (0,1]", nu)
		}
		method = &train.SDCA{Sampler: c.String("sampler"), NonUniform: nu, Epsilon: c.Float64("epsilon"),
			SubPrecision: c.Float64("subprecision"), Seed: c.Uint64("seed"), RefreshEvery: c.Int("refresh-every")}
	case "lbfgs":
		method = &train.LBFGS{Store: c.Int("lbfgs-store")}
	default:
		return fmt.Errorf("--solver %q: want sdca or lbfgs", solver)
	}
	duals := int64(0)
	if c.String("solver") == "sdca" {
		duals = train.DualBytes(d)
	}
	logf("train: %d sentences, %d tokens, %d attributes, %d labels; d = %d weights, λ = %.6g; duals %s (μ, float64)",
		d.Len(), d.NumTokens(), d.NumAttrs, d.NumLabels, p.Layout.Dim(), lambda, byteSize(duals))
	sd, isSDCA := method.(*train.SDCA)
	if !isSDCA && (c.IsSet("checkpoint") || c.IsSet("resume") || c.IsSet("duals")) {
		return fmt.Errorf("--checkpoint, --resume and --duals apply to --solver sdca only")
	}
	var resume *train.Checkpoint
	if isSDCA {
		store, cleanup, err := dualStore(c, d, duals)
		if err != nil {
			return err
		}
		defer cleanup()
		sd.Duals = store
		if dir := c.String("resume"); dir != "" {
			if resume, err = train.LoadCheckpoint(dir, p, func(msg string) { logf("%s", msg) }); err != nil {
				return err
			}
			defer resume.Duals.Close()
			sd.Resume = resume
			logf("train: resuming from %s at epoch %d", resume.Dir, resume.State.Epoch)
		}
	}

	set := train.Settings{MaxEpochs: c.Int("max-epochs"), MaxTime: c.Duration("max-time"),
		GapTol: c.Float64("gap-tol"), GapEvery: c.Int("gap-every")}
	if set.GapEvery <= 0 {
		set.GapEvery = -1
	}
	if set.GapTol <= 0 {
		return fmt.Errorf("--gap-tol %g: want a positive tolerance", set.GapTol)
	}
	if v := c.String("valid"); v != "" {
		if set.Validate, err = validator(v, d); err != nil {
			return err
		}
	}
	// Open the outputs before training, so a path that cannot be written
	// fails now rather than after hours of work; nothing is committed
	// unless everything succeeds.
	out, err := pipeline.CreateOutput(c.String("output"))
	if err != nil {
		return err
	}
	defer out.Close()
	var logOut *pipeline.Output
	if path := c.String("log"); path != "" {
		if logOut, err = pipeline.CreateOutput(path); err != nil {
			return err
		}
		defer logOut.Close()
	}
	var recs []train.EpochRecord
	if resume != nil {
		recs = append(recs, resume.State.Records...)
		set.Start = &train.Progress{Epoch: resume.State.Epoch, Training: resume.State.Training}
	}
	if dir := c.String("checkpoint"); dir != "" {
		set.CheckpointEvery = c.Int("checkpoint-every")
		set.CheckpointInterval = c.Duration("checkpoint-interval")
		set.Checkpoint = func(pr train.Progress) error {
			t0 := time.Now()
			if err := train.SaveCheckpoint(dir, sd, pr.Epoch, pr.Training, recs); err != nil {
				return err
			}
			if !c.Bool("quiet") {
				logf("checkpoint: epoch %d -> %s (%.2fs)", pr.Epoch, dir, time.Since(t0).Seconds())
			}
			return nil
		}
	}
	quiet := c.Bool("quiet")
	set.Record = func(r train.EpochRecord) error {
		recs = append(recs, r)
		if !quiet {
			logf("%s", train.FormatRecord(r))
		}
		return nil
	}
	if path := c.String("cpuprofile"); path != "" {
		f, err := os.Create(path)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	t0 := time.Now()
	res, err := train.Train(c.Context, p, set, method)
	if err != nil {
		return err
	}
	logf("train: stopped (%s) after %d epochs, %.2fs training (%.2fs wall): primal %.10g, certified gap %.4g",
		res.Stopped, res.Epochs, res.Training.Seconds(), time.Since(t0).Seconds(), res.Last.Primal, res.Last.Gap)

	facts := map[string]any{"epochs": res.Epochs, "stopped": res.Stopped, "primal": res.Last.Primal,
		"dual": res.Last.Dual, "gap": res.Last.Gap, "source": in}
	if sd, ok := method.(*train.SDCA); ok {
		facts["sampler"], facts["seed"] = sd.Sampler, sd.Seed
	}
	factsJSON, _ := json.Marshal(facts)
	md := map[string]string{}
	for k, v := range t.Metadata {
		if k != schemas.KeyFormat && k != schemas.KeyVersion {
			md[k] = v
		}
	}
	md[schemas.KeyLambda] = strconv.FormatFloat(lambda, 'g', -1, 64)
	md[schemas.KeyN] = strconv.Itoa(d.Len())
	md[schemas.KeySolver] = c.String("solver")
	md[schemas.KeyFeatureSpace] = c.String("feature-space")
	md[schemas.KeyTraining] = string(factsJSON)
	m := &crf.Model{Layout: p.Layout, Weights: res.Weights, AttrNames: d.AttrNames, LabelNames: d.LabelNames, Meta: md}
	if err := pipeline.WriteModel(out, m, pipeline.WriterOptions{Format: pipeline.FormatFile}); err != nil {
		return fmt.Errorf("write model %s: %w", out.Name(), err)
	}
	if logOut != nil {
		if err := writeLog(logOut, recs, c.String("solver")); err != nil {
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

// writeLog writes the per-epoch training log as an Arrow IPC file.
func writeLog(w io.Writer, recs []train.EpochRecord, solver string) error {
	rec, err := train.LogTable(recs, map[string]string{schemas.KeySolver: solver})
	if err != nil {
		return err
	}
	defer rec.Release()
	rw, err := pipeline.NewRecordWriter(w, rec.Schema(), pipeline.WriterOptions{Format: pipeline.FormatFile})
	if err != nil {
		return err
	}
	if err := rw.Write(rec); err != nil {
		rw.Abort()
		return err
	}
	return rw.Close()
}

// validator reads a held-out table and returns a function scoring weights
// on it (token accuracy, and chunk F1 when its labels look like chunks).
func validator(path string, trainData *crf.Dataset) (func([]float64) (map[string]float64, error), error) {
	vt, err := readTable(path, true)
	if err != nil {
		return nil, err
	}
	lay := crf.Layout{NumAttrs: trainData.NumAttrs, NumLabels: trainData.NumLabels}
	probe := &crf.Model{Layout: lay, AttrNames: trainData.AttrNames, LabelNames: trainData.LabelNames}
	vd := decode.Apply(vt.Data, decode.Remap(probe, vt.Data), lay.NumAttrs, trainData.AttrNames)
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

// dualStore picks where SDCA keeps its duals (--duals), announcing the
// choice; cleanup closes it and removes a temporary file.
func dualStore(c *cli.Context, d *crf.Dataset, size int64) (train.DualStore, func(), error) {
	nop := func() {}
	choice := c.String("duals")
	budget := int64(0)
	if b := c.String("memory-budget"); b != "" {
		v, err := parseBytes(b)
		if err != nil {
			return nil, nop, fmt.Errorf("--memory-budget: %w", err)
		}
		budget = v
	} else if phys, err := train.PhysicalMemory(); err == nil {
		budget = phys / 2
	}
	path, temporary := "", false
	switch choice {
	case "memory":
		return nil, nop, nil
	case "auto":
		if budget == 0 || size <= budget {
			return nil, nop, nil
		}
		dir := c.String("checkpoint")
		if dir == "" {
			dir = os.TempDir()
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, nop, err
		}
		f, err := os.CreateTemp(dir, "duals-*.bin")
		if err != nil {
			return nil, nop, err
		}
		path, temporary = f.Name(), true
		f.Close()
		os.Remove(path)
		logf("train: duals %s exceed the memory budget %s: memory-mapping %s", byteSize(size), byteSize(budget), path)
	default:
		path = choice
	}
	fs, err := train.CreateFileStore(path, d)
	if err != nil && !temporary && errors.Is(err, iofs.ErrExist) {
		fs, err = train.OpenFileStore(path, d) // reuse a file of this dataset
	}
	if err != nil {
		return nil, nop, err
	}
	return fs, func() {
		fs.Close()
		if temporary {
			os.Remove(path)
		}
	}, nil
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
