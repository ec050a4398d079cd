package job

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/dualcrf/dualcrf/internal/platform"
	"github.com/dualcrf/dualcrf/pipeline"
	"github.com/dualcrf/dualcrf/progress"
	"github.com/dualcrf/dualcrf/schemas"
	"github.com/dualcrf/dualcrf/stage"
)

// Exec runs the command's stages: the job hands it a stage's command line
// (the command name, then flags, "--" and the inputs).
type Exec interface {
	// Check parses args and refuses bad options as the command would,
	// reading and writing nothing.
	Check(args []string) error
	// Run runs the stage; its standard output goes to stdout and its
	// messages to stderr.
	Run(ctx context.Context, args []string, stdout, stderr io.Writer) error
	// Files declares the files the options of command name, by option
	// name (aliases too): their roles, whether "-" is a standard stream,
	// where the path is in a value. Options not in it name no file.
	Files(command string) map[string]pipeline.FileSpec
}

// Options configure Run.
type Options struct {
	// DryRun prints the plan (what would run, what would be skipped and
	// why) to Log and touches nothing.
	DryRun bool
	// Log receives the job's lines and the stages' messages; nil: discarded.
	Log io.Writer
	// Stdout receives the report of an eval stage without an output.
	Stdout io.Writer
	// Progress, when set, counts the stages (the stages' own bars nest
	// under it).
	Progress *progress.Reporter
}

// The statuses of a stage in the manifest.
const (
	StatusRan     = "ran"
	StatusSkipped = "skipped"
	StatusFailed  = "failed"
	StatusNotRun  = "not run"
	StatusPlanned = "would run"
)

// StageReport is a stage's entry in the manifest.
type StageReport struct {
	Name    string         `json:"name"`
	Run     string         `json:"run"`
	Status  string         `json:"status"`
	Reason  string         `json:"reason,omitempty"` // why it ran, or why it failed
	Args    []string       `json:"args"`
	Options map[string]any `json:"options,omitempty"`
	Inputs  []FileHash     `json:"inputs,omitempty"`
	Outputs []FileHash     `json:"outputs,omitempty"`
	Resumed bool           `json:"resumed,omitempty"` // train continued from its checkpoint
	// WarmStart says how a train stage started: from the duals its last
	// run kept, or cold and why.
	WarmStart *WarmReport    `json:"warm_start,omitempty"`
	Seconds   float64        `json:"seconds"`
	Metrics   map[string]any `json:"metrics,omitempty"`
	Error     string         `json:"error,omitempty"`
}

// Manifest is the record of one run of a job.
type Manifest struct {
	Job      string        `json:"job"`
	File     string        `json:"file"`
	Status   string        `json:"status"` // ok, failed, interrupted
	Started  time.Time     `json:"started"`
	Seconds  float64       `json:"seconds"`
	PID      int           `json:"pid"`
	Stages   []StageReport `json:"stages"`
	FailedAt string        `json:"failed_stage,omitempty"`
	Error    string        `json:"error,omitempty"`
}

// state is the job's memory: each stage's last successful run.
type state struct {
	Stages map[string]*Record `json:"stages"`
}

// WarmReport is how a train stage started, in the manifest.
type WarmReport struct {
	// Start is "warm" (from the duals the stage's last run kept) or
	// "cold"; Reason says why a run with kept duals started cold.
	Start  string `json:"start"`
	Reason string `json:"reason,omitempty"`
	// From is the kept-duals file; Kept, Added and Dropped count the
	// sentences found again, new and gone; NewLabels are labels the kept
	// duals did not have.
	From      string   `json:"from,omitempty"`
	Kept      int      `json:"kept,omitempty"`
	Added     int      `json:"added,omitempty"`
	Dropped   int      `json:"dropped,omitempty"`
	NewLabels []string `json:"new_labels,omitempty"`
}

// runner is one run of a job.
type runner struct {
	f     *File
	x     Exec
	o     Options
	steps []*step
	st    state
	made  map[string]string // output path → the stage planned to make it (dry run)
	man   Manifest
	// panicked is the panic of a stage and its stack, which Run raises
	// again once the failed manifest is written.
	panicked string
}

// Run runs the job f: every stage whose inputs, options or outputs changed
// since its last successful run, in order, under the job's lock. It
// returns the run's manifest, also written (atomically) to
// f.ManifestPath() on success and to f.FailedManifestPath() on failure,
// which leaves the previous run's manifest and the failed stage's
// outputs as they were. The error names the stage that failed.
func Run(ctx context.Context, f *File, x Exec, o Options) (*Manifest, error) {
	if o.Log == nil {
		o.Log = io.Discard
	}
	if o.Stdout == nil {
		o.Stdout = io.Discard
	}
	steps, err := f.steps(x)
	if err != nil {
		return nil, err
	}
	if err := f.checkFiles(steps); err != nil {
		return nil, err
	}
	for _, s := range steps {
		if err := x.Check(s.args); err != nil {
			return nil, fmt.Errorf("%s: stage %s (%s): %w", f.path, s.Name, s.Run, err)
		}
		// Train checkpoints where it accepts the flags the job would give.
		s.ckpt = s.Run == "train" && x.Check(s.withFlags("--checkpoint-interval="+CheckpointInterval.String())) == nil
	}
	r := &runner{f: f, x: x, o: o, steps: steps, made: map[string]string{},
		man: Manifest{Job: f.Name, File: f.path, Started: time.Now().UTC(), PID: os.Getpid()}}
	if !o.DryRun {
		unlock, err := lockJob(f)
		if err != nil {
			return nil, err
		}
		defer unlock()
	}
	if err := r.readState(); err != nil {
		return nil, err
	}
	t0 := time.Now()
	err = r.runSteps(ctx)
	r.man.Seconds = time.Since(t0).Seconds()
	if o.DryRun {
		return &r.man, err
	}
	path := f.ManifestPath()
	r.man.Status = "ok"
	if err != nil {
		path = f.FailedManifestPath()
		r.man.Status, r.man.Error = "failed", err.Error()
		if ctx.Err() != nil {
			r.man.Status = "interrupted"
		}
	}
	if werr := writeJSON(path, &r.man); werr != nil && err == nil {
		err = werr
	}
	if r.panicked != "" {
		panic(r.panicked) // a defect: the process ends as it would have, the manifest written
	}
	return &r.man, err
}

// runSteps runs (or plans) the stages in order; after a failure the rest
// are marked not run.
func (r *runner) runSteps(ctx context.Context) error {
	n := len(r.steps)
	task := r.o.Progress.Start("run", "stages", int64(n))
	defer task.End()
	var failed error
	for i, s := range r.steps {
		rep := StageReport{Name: s.Name, Run: s.Run, Args: s.args, Options: s.Options}
		if failed != nil {
			rep.Status = StatusNotRun
			r.man.Stages = append(r.man.Stages, rep)
			continue
		}
		task.Set(int64(i + 1)) // the stage in progress: "run 2/5"
		task.Note(fmt.Sprintf("%s (%s)", s.Name, s.Run))
		prefix := fmt.Sprintf("run: [%d/%d] %s (%s)", i+1, n, s.Name, s.Run)
		if err := r.runStepSafely(ctx, s, &rep, prefix); err != nil {
			rep.Status, rep.Error = StatusFailed, err.Error()
			r.man.FailedAt = s.Name
			failed = fmt.Errorf("stage %s (%s) failed: %w", s.Name, s.Run, err)
			if s.Run == "train" && ctx.Err() != nil {
				failed = fmt.Errorf("%w\nrun: run the job again to resume the training from its checkpoint", failed)
			}
		}
		r.man.Stages = append(r.man.Stages, rep)
	}
	return failed
}

// runStepSafely is runStep, with a panic of the stage turned into its
// failure: the run's failed manifest says so before Run panics again
// (r.panicked).
func (r *runner) runStepSafely(ctx context.Context, s *step, rep *StageReport, prefix string) (err error) {
	defer func() {
		if p := recover(); p != nil {
			r.panicked = fmt.Sprintf("%v\n\n%s", p, debug.Stack())
			err = fmt.Errorf("panic: %v", p)
		}
	}()
	return r.runStep(ctx, s, rep, prefix)
}

// runStep runs one stage, or skips it, filling in its report.
func (r *runner) runStep(ctx context.Context, s *step, rep *StageReport, prefix string) error {
	t0 := time.Now()
	rec := r.st.Stages[s.Name]
	inputs, why, err := r.inputsAndReason(s, rec)
	if err != nil {
		return err
	}
	rep.Inputs = inputs
	if why == "" {
		rep.Status, rep.Reason, rep.Outputs, rep.Metrics = StatusSkipped, "unchanged", rec.Outputs, rec.Metrics
		rep.Seconds = time.Since(t0).Seconds() // hashing the files
		fmt.Fprintf(r.o.Log, "%s: skipped in %.2fs: its inputs, options and outputs are as recorded\n", prefix, rep.Seconds)
		return nil
	}
	rep.Reason = why
	if r.o.DryRun {
		rep.Status = StatusPlanned
		for _, o := range s.outputs {
			r.made[o] = s.Name
		}
		fmt.Fprintf(r.o.Log, "%s: would run: %s\n", prefix, why)
		if s.Run == "train" {
			r.planTrain(ctx, s, prefix)
		}
		return nil
	}
	fmt.Fprintf(r.o.Log, "%s: running: %s\n", prefix, why)
	t0 = time.Now()
	if err := r.exec(ctx, s, inputs, rep); err != nil {
		rep.Seconds = time.Since(t0).Seconds()
		return err
	}
	rep.Seconds = time.Since(t0).Seconds()
	outs, err := hashFiles(s.outputs)
	if err != nil {
		return fmt.Errorf("its output: %w", err)
	}
	rep.Status, rep.Outputs = StatusRan, outs
	rep.Metrics = metrics(s)
	fmt.Fprintf(r.o.Log, "%s: done in %.2fs%s\n", prefix, rep.Seconds, describeMetrics(rep.Metrics))
	r.st.Stages[s.Name] = &Record{Args: s.args, Inputs: inputs, Outputs: outs, Seconds: rep.Seconds, Metrics: rep.Metrics}
	return writeJSON(r.statePath(), &r.st)
}

// inputsAndReason hashes s's inputs and says why it must run ("": it need
// not). In a dry run an input an earlier stage would make is not hashed.
func (r *runner) inputsAndReason(s *step, rec *Record) ([]FileHash, string, error) {
	if r.o.DryRun {
		for _, in := range s.inputs {
			if by, ok := r.made[in]; ok {
				return nil, fmt.Sprintf("its input %s is made by stage %s, which would run (it runs if that output changes)", in, by), nil
			}
		}
	}
	inputs, err := hashFiles(s.inputs)
	if err != nil {
		return nil, "", fmt.Errorf("input: %w%s", err, r.f.relativeHint(s, err))
	}
	return inputs, whyRun(s, rec, inputs), nil
}

// exec runs the stage's command; train gets a checkpoint directory of its
// own, resumed from when an earlier run of the same stage (same command
// line and inputs) was interrupted.
func (r *runner) exec(ctx context.Context, s *step, inputs []FileHash, rep *StageReport) error {
	for _, o := range s.outputs {
		if err := os.MkdirAll(filepath.Dir(o), 0o755); err != nil {
			return err
		}
	}
	args := s.args
	var ckpt string
	if s.Run == "train" && s.checkpoints() {
		var resume bool
		var err error
		ckpt, resume, err = r.checkpoint(s, inputs)
		if err != nil {
			return err
		}
		flag := "--checkpoint="
		if resume {
			flag = "--resume="
			rep.Resumed = true
		}
		ckArgs := []string{flag + ckpt}
		if _, set := s.Options["checkpoint-every"]; !set {
			if _, set := s.Options["checkpoint-interval"]; !set {
				ckArgs = append(ckArgs, "--checkpoint-every=0", "--checkpoint-interval="+CheckpointInterval.String())
			}
		}
		ckArgs = append(ckArgs, r.warmArgs(s, s.withFlags(ckArgs...), inputs, resume, rep)...)
		args = append(append([]string{args[0]}, ckArgs...), args[1:]...)
	}
	if s.stdout == "" {
		if err := r.x.Run(ctx, args, r.o.Stdout, r.o.Log); err != nil {
			return err
		}
	} else {
		out, err := pipeline.CreateOutput(s.stdout)
		if err != nil {
			return err
		}
		defer out.Close()
		if err := r.x.Run(ctx, args, out, r.o.Log); err != nil {
			return err
		}
		if err := out.Commit(); err != nil {
			return err
		}
	}
	if ckpt != "" {
		os.RemoveAll(ckpt) // the model is written: the snapshots are spent
		os.Remove(ckpt + ".key")
	}
	if rep.WarmStart != nil {
		r.warmFacts(s, rep)
	}
	return nil
}

// planTrain prints the plan of train stage s (train --dry-run: the memory
// by part, where the duals go, the disk, a rough time per epoch) as it
// would run: with the job's checkpoint directory and kept duals. An input
// an earlier stage would make first has no plan yet; a plan that fails
// (the run would be refused) says why, and the dry run goes on.
func (r *runner) planTrain(ctx context.Context, s *step, prefix string) {
	for _, in := range s.inputs {
		if by, ok := r.made[in]; ok && by != s.Name {
			fmt.Fprintf(r.o.Log, "%s: its plan needs %s, which stage %s would make first\n", prefix, in, by)
			return
		}
	}
	extra := []string{"--dry-run"}
	if s.checkpoints() {
		extra = append(extra, "--checkpoint="+r.f.checkpointDir(s))
		_, keep := s.Options["keep-duals"]
		_, warm := s.Options["warm-start"]
		if !keep && !warm {
			extra = append(extra, "--keep-duals="+r.f.keptDuals(s))
		}
	}
	args := append(append([]string{s.args[0]}, extra...), s.args[1:]...)
	if err := r.x.Run(ctx, args, r.o.Log, r.o.Log); err != nil {
		fmt.Fprintf(r.o.Log, "%s: %v\n", prefix, err)
	}
}

// keptDuals is the file where train stage s keeps its final duals for the
// next run's warm start.
func (f *File) keptDuals(s *step) string {
	return filepath.Join(f.StateDir(), "duals", s.Name+".duals")
}

// warmArgs are the flags that make a train stage keep its final duals in
// the job's state and start from those of its last run: when it runs
// again with the same options on changed inputs (a grown corpus).
// Unchanged inputs (a lost output) train from the start: the same model.
// With other options (λ, …) it starts cold; a resumed run goes on as it
// started; the stage itself starts cold when the table's templates or
// labels do not fit the kept duals. Only where train accepts both flags
// for the stage's options, args (its command line with the checkpoint
// flags): not for the hinge loss or another solver (no kept duals), nor
// with streamed duals (no warm start, so nothing worth keeping). A stage
// whose options name keep-duals or warm-start is left as it is.
func (r *runner) warmArgs(s *step, args []string, inputs []FileHash, resume bool, rep *StageReport) []string {
	if !s.keepsDuals() {
		return nil
	}
	kept := r.f.keptDuals(s)
	with := func(flags ...string) []string {
		return append(append([]string{args[0]}, flags...), args[1:]...)
	}
	if err := r.x.Check(with("--keep-duals="+kept, "--warm-start="+kept)); err != nil {
		if r.x.Check(with("--keep-duals="+kept)) == nil {
			// It could keep its duals but never start from them.
			rep.WarmStart = &WarmReport{Start: "cold", Reason: "train cannot start warm with its options: " + err.Error()}
		}
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(kept), 0o755); err != nil {
		return nil // train reports the unwritable path
	}
	keep := []string{"--keep-duals=" + kept}
	rep.WarmStart = &WarmReport{Start: "cold"}
	rec := r.st.Stages[s.Name]
	_, err := os.Stat(kept)
	switch {
	case err != nil:
		rep.WarmStart.Reason = "no kept duals (first run)"
	case resume:
		// The snapshot says how the run started (the model's facts).
		rep.WarmStart.Reason = "resumed from its checkpoint"
	case rec == nil || !slices.Equal(rec.Args, s.args):
		rep.WarmStart.Reason = "its options changed since the kept duals were made"
	case slices.Equal(rec.Inputs, inputs):
		// An output lost or changed: the same inputs make the same model
		// from the start, bit for bit.
		rep.WarmStart.Reason = "its inputs did not change"
	default:
		rep.WarmStart.Start, rep.WarmStart.From = "warm", kept
		return append(keep, "--warm-start="+kept)
	}
	if err == nil && !resume {
		fmt.Fprintf(r.o.Log, "run: %s: starting cold, not from %s: %s\n", s.Name, kept, rep.WarmStart.Reason)
	}
	return keep
}

// warmFacts completes a warm start's report from the model's training
// facts: the counts, or why the stage started cold after all; for a
// resumed run, how the run it continued started.
func (r *runner) warmFacts(s *step, rep *StageReport) {
	if rep.WarmStart.Start != "warm" && !rep.Resumed {
		return
	}
	m, err := stage.ReadModel(context.Background(), stage.File(s.outputs[len(s.outputs)-1]))
	if err != nil {
		return
	}
	var facts struct {
		Warm *stage.WarmFacts `json:"warm_start"`
	}
	if json.Unmarshal([]byte(m.Meta[schemas.KeyTraining]), &facts) != nil || facts.Warm == nil {
		return
	}
	w := rep.WarmStart
	if facts.Warm.Cold != "" {
		w.Start, w.Reason, w.From = "cold", facts.Warm.Cold, ""
		return
	}
	w.Start, w.Reason, w.From = "warm", "", facts.Warm.From
	w.Kept, w.Added, w.Dropped, w.NewLabels = facts.Warm.Kept, facts.Warm.Added, facts.Warm.Dropped, facts.Warm.NewLabels
}

// keepsDuals reports whether the job keeps train stage s's final duals for
// its next run's warm start: unless its options name keep-duals or
// warm-start.
func (s *step) keepsDuals() bool {
	_, keep := s.Options["keep-duals"]
	_, warm := s.Options["warm-start"]
	return !keep && !warm
}

// CheckpointInterval is the training time between two snapshots of a
// job's train stage unless its options set checkpoint-every or
// checkpoint-interval. A snapshot of in-memory duals copies them to disk
// (about 1.6 s for CoNLL-2000's 750 MiB, as long as two epochs), so a
// snapshot every epoch would double the training's wall time; one every
// 5 minutes costs at most a tenth of it while a snapshot takes under 30 s.
// SIGINT and SIGTERM always save the point reached.
const CheckpointInterval = 5 * time.Minute

// checkpoints reports whether train checkpoints with the stage's options
// (s.ckpt, from train's own check: SDCA and BCFW do; L-BFGS, OEG and SAG
// cannot resume and refuse the flags).
func (s *step) checkpoints() bool { return s.ckpt }

// withFlags returns the stage's command line with flags after the command.
func (s *step) withFlags(flags ...string) []string {
	return append(append([]string{s.args[0]}, flags...), s.args[1:]...)
}

// checkpoint returns train's checkpoint directory and whether it holds a
// snapshot of an interrupted run of this very stage to resume; a directory
// left by other inputs or options is cleared.
func (r *runner) checkpoint(s *step, inputs []FileHash) (string, bool, error) {
	dir := r.f.checkpointDir(s)
	h := sha256.New()
	json.NewEncoder(h).Encode(struct {
		Args   []string
		Inputs []FileHash
	}{s.args, inputs})
	key := hex.EncodeToString(h.Sum(nil))
	old, _ := os.ReadFile(dir + ".key")
	if strings.TrimSpace(string(old)) == key {
		if _, err := os.Stat(filepath.Join(dir, "CURRENT")); err == nil {
			return dir, true, nil
		}
	}
	if err := os.RemoveAll(dir); err != nil {
		return "", false, err
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return "", false, err
	}
	return dir, false, os.WriteFile(dir+".key", []byte(key+"\n"), 0o644)
}

// statePath is the file of the job's records.
func (r *runner) statePath() string { return r.f.statePath() }

// statePath is the file of the job's records.
func (f *File) statePath() string { return filepath.Join(f.StateDir(), "state.json") }

// lockPath is the job's lock file.
func (f *File) lockPath() string { return filepath.Join(f.StateDir(), "lock") }

// checkpointDir is train stage s's checkpoint directory.
func (f *File) checkpointDir(s *step) string {
	return filepath.Join(f.StateDir(), "checkpoints", s.Name)
}

// readState reads the records of the last runs (none on a first run).
func (r *runner) readState() error {
	r.st.Stages = map[string]*Record{}
	b, err := os.ReadFile(r.statePath())
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, &r.st); err != nil {
		return fmt.Errorf("%s: %w (remove it to run every stage again)", r.statePath(), err)
	}
	if r.st.Stages == nil {
		r.st.Stages = map[string]*Record{}
	}
	return nil
}

// writeJSON writes v as indented JSON to path atomically.
func writeJSON(path string, v any) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	out, err := pipeline.CreateOutput(path)
	if err != nil {
		return err
	}
	defer out.Close()
	if _, err := out.Write(append(b, '\n')); err != nil {
		return err
	}
	return out.Commit()
}

// LockedError is the refusal of a second run of a job.
type LockedError struct {
	Job  string
	Lock string
	PID  int // 0: unknown
}

func (e *LockedError) Error() string {
	who := "another run"
	if e.PID > 0 {
		who = "pid " + strconv.Itoa(e.PID)
	}
	return fmt.Sprintf("job %s is running already (%s holds %s); not starting a second run", e.Job, who, e.Lock)
}

// lockJob takes the job's lock (platform.LockDir on STATE/lock, which
// names the holder's pid) or refuses at once.
func lockJob(f *File) (func(), error) {
	if err := os.MkdirAll(f.StateDir(), 0o755); err != nil {
		return nil, err
	}
	l, err := platform.LockDir(f.StateDir(), filepath.Base(f.lockPath()))
	var locked *platform.LockedError
	if errors.As(err, &locked) {
		return nil, &LockedError{Job: f.Name, Lock: f.lockPath(), PID: locked.PID}
	}
	if err != nil {
		return nil, err
	}
	return func() { l.Unlock() }, nil
}

// metrics reads what a finished stage measured: train's epochs, certified
// gap and stop reason from the model; eval's scores from its report.
func metrics(s *step) map[string]any {
	switch {
	case s.Run == "train":
		m, err := stage.ReadModel(context.Background(), stage.File(s.outputs[len(s.outputs)-1]))
		if err != nil {
			return nil
		}
		var facts map[string]any
		if json.Unmarshal([]byte(m.Meta[schemas.KeyTraining]), &facts) != nil {
			return nil
		}
		out := map[string]any{}
		for _, k := range []string{"epochs", "gap", "gap_tol", "stopped", "target_met", "primal"} {
			if v, ok := facts[k]; ok {
				out[k] = v
			}
		}
		return out
	case s.Run == "eval" && s.stdout != "":
		b, err := os.ReadFile(s.stdout)
		if err != nil {
			return nil
		}
		var sc struct {
			Accuracy float64 `json:"accuracy"`
			Chunks   *struct {
				Precision float64 `json:"precision"`
				Recall    float64 `json:"recall"`
				F1        float64 `json:"f1"`
			} `json:"chunks"`
		}
		if json.NewDecoder(bytes.NewReader(b)).Decode(&sc) != nil {
			return nil
		}
		out := map[string]any{"accuracy": sc.Accuracy}
		if sc.Chunks != nil {
			out["precision"], out["recall"], out["f1"] = sc.Chunks.Precision, sc.Chunks.Recall, sc.Chunks.F1
		}
		return out
	}
	return nil
}

// describeMetrics writes the metrics shown on a stage's "done" line.
func describeMetrics(m map[string]any) string {
	var parts []string
	for _, k := range []string{"epochs", "gap", "stopped", "accuracy", "f1"} {
		if v, ok := m[k]; ok {
			if f, isF := v.(float64); isF && k != "epochs" {
				parts = append(parts, fmt.Sprintf("%s %.4g", k, f))
			} else {
				parts = append(parts, fmt.Sprintf("%s %v", k, v))
			}
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, ", ") + ")"
}
