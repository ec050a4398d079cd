package job

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dualcrf/dualcrf/pipeline"
)

// fakeExec runs a stage by writing to its --output the concatenation of
// its name and its inputs' bytes (eval: to stdout); a stage listed in fail
// fails. It counts the runs of each stage command line.
type fakeExec struct {
	runs  []string
	fail  map[string]bool
	check func(args []string) error
}

func (x *fakeExec) Check(args []string) error {
	if x.check != nil {
		return x.check(args)
	}
	return nil
}

// Files declares the files of the command's options as dualcrf's flag
// tables do (a subset: the options these tests use).
func (x *fakeExec) Files(command string) map[string]pipeline.FileSpec {
	in := pipeline.FileSpec{Role: pipeline.RoleInput, Std: true}
	out := pipeline.FileSpec{Role: pipeline.RoleOutput}
	duals := pipeline.FileSpec{Role: pipeline.RoleState, Split: func(v string) (string, string) {
		switch v {
		case "memory", "auto", "stream":
			return "", ""
		}
		if p, ok := strings.CutPrefix(v, "stream:"); ok {
			return "stream:", p
		}
		return "", v
	}}
	return map[string]map[string]pipeline.FileSpec{
		"featurize": {"model": in, "m": in, "vocab": in},
		"train": {"valid": in, "log": out, "plot": out, "cpuprofile": out, "duals": duals,
			"keep-duals": {Role: pipeline.RoleStateWritten}, "warm-start": {Role: pipeline.RoleStateRead}},
		"decode": {"model": in, "m": in, "text": in},
		"eval":   {"arrow": out, "scores": out},
	}[command]
}

func (x *fakeExec) Run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	x.runs = append(x.runs, strings.Join(args, " "))
	var out string
	var inputs []string
	for i, a := range args {
		if v, ok := strings.CutPrefix(a, "--output="); ok {
			out = v
		}
		if a == "--" {
			inputs = args[i+1:]
		}
	}
	if x.fail[args[0]] {
		return errors.New("boom")
	}
	data := args[0] + ":"
	for _, in := range inputs {
		b, err := os.ReadFile(in)
		if err != nil {
			return err
		}
		data += string(b)
	}
	if out == "" {
		_, err := io.WriteString(stdout, `{"accuracy": 0.5, "chunks": {"f1": 0.25}}`)
		return err
	}
	return os.WriteFile(out, []byte(data), 0o644)
}

const testJob = `name: t
vars:
  in: ${env:JOBTEST_IN}
stages:
  - name: feat
    run: featurize
    inputs: ["${in}/*.txt"]
    options: {template: chunking, min-count: 2}
    output: out/${DATE}/train.arrow
  - run: train
    inputs: ["out/${DATE}/train.arrow"]
    options: {gap-tol: 0.01, no-bias: true}
    output: out/model.arrow
  - run: eval
    inputs: [out/model.arrow]
    output: out/scores.json
`

// setup writes the job and its inputs in a temporary directory.
func setup(t *testing.T, job string) (dir, path string) {
	t.Helper()
	dir = t.TempDir()
	in := filepath.Join(dir, "in")
	if err := os.Mkdir(in, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"b.txt", "a.txt"} {
		if err := os.WriteFile(filepath.Join(in, n), []byte(n), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("JOBTEST_IN", in)
	path = filepath.Join(dir, "job.yaml")
	if err := os.WriteFile(path, []byte(job), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir, path
}

var day = time.Date(2026, 11, 24, 3, 0, 0, 0, time.Local)

// runJob parses and runs the job at path.
func runJob(t *testing.T, path string, x Exec, o Options) (*Manifest, error) {
	t.Helper()
	f, err := Parse(path, nil, day)
	if err != nil {
		t.Fatal(err)
	}
	return Run(context.Background(), f, x, o)
}

// statuses lists the stages' statuses.
func statuses(m *Manifest) string {
	var s []string
	for _, st := range m.Stages {
		s = append(s, st.Name+"="+st.Status)
	}
	return strings.Join(s, " ")
}

// TestRunSkipsUnchanged: a first run runs every stage with the job's
// command lines (globs sorted, options in name order, ${DATE} and
// ${env:X} expanded); a second run skips them all; a changed input re-runs
// its stage and, when the output changes, the stages after it; a missing
// output re-runs its stage.
func TestRunSkipsUnchanged(t *testing.T) {
	dir, path := setup(t, testJob)
	x := &fakeExec{}
	m, err := runJob(t, path, x, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := statuses(m); got != "feat=ran train=ran eval=ran" {
		t.Fatalf("first run: %s", got)
	}
	want := fmt.Sprintf("featurize --min-count=2 --template=chunking --output=%[1]s/out/2026-11-24/train.arrow -- %[1]s/in/a.txt %[1]s/in/b.txt", dir)
	if x.runs[0] != want {
		t.Errorf("featurize ran\n%s\nwant\n%s", x.runs[0], want)
	}
	if !strings.Contains(x.runs[1], "train --checkpoint="+filepath.Join(dir, ".dualcrf-job/t/checkpoints/train")+
		" --checkpoint-every=0 --checkpoint-interval=5m0s --keep-duals="+filepath.Join(dir, ".dualcrf-job/t/duals/train.duals")+" --gap-tol=0.01 --no-bias=true") {
		t.Errorf("train ran %s", x.runs[1])
	}
	if f1 := m.Stages[2].Metrics["f1"]; f1 != 0.25 {
		t.Errorf("eval metrics %v", m.Stages[2].Metrics)
	}
	var onDisk Manifest
	b, err := os.ReadFile(filepath.Join(dir, ".dualcrf-job/t/manifest.json"))
	if err != nil || json.Unmarshal(b, &onDisk) != nil || statuses(&onDisk) != statuses(m) || onDisk.Status != "ok" {
		t.Fatalf("manifest on disk: %v %s", err, b)
	}

	x.runs = nil
	if m, err = runJob(t, path, x, Options{}); err != nil || statuses(m) != "feat=skipped train=skipped eval=skipped" || len(x.runs) != 0 {
		t.Fatalf("second run: %v %s %q", err, statuses(m), x.runs)
	}
	if m.Stages[2].Metrics["f1"] != 0.25 {
		t.Errorf("a skipped stage keeps its metrics: %v", m.Stages[2].Metrics)
	}

	// The same bytes again: featurize re-runs, its output is unchanged, so
	// train is skipped.
	os.WriteFile(filepath.Join(dir, "in/a.txt"), []byte("a.txt"), 0o644)
	os.Chtimes(filepath.Join(dir, "in/a.txt"), time.Now(), time.Now())
	if m, _ = runJob(t, path, x, Options{}); statuses(m) != "feat=skipped train=skipped eval=skipped" {
		t.Errorf("touched, same bytes: %s", statuses(m))
	}
	os.WriteFile(filepath.Join(dir, "in/a.txt"), []byte("A"), 0o644)
	if m, _ = runJob(t, path, x, Options{}); statuses(m) != "feat=ran train=ran eval=ran" || !strings.Contains(m.Stages[0].Reason, "a.txt changed") {
		t.Errorf("changed input: %s (%s)", statuses(m), m.Stages[0].Reason)
	}
	os.Remove(filepath.Join(dir, "out/scores.json"))
	if m, _ = runJob(t, path, x, Options{}); statuses(m) != "feat=skipped train=skipped eval=ran" || !strings.Contains(m.Stages[2].Reason, "missing") {
		t.Errorf("missing output: %s (%s)", statuses(m), m.Stages[2].Reason)
	}
}

// TestDryRun: --dry-run says what would run and why, runs nothing and
// creates nothing.
func TestDryRun(t *testing.T) {
	dir, path := setup(t, testJob)
	x := &fakeExec{}
	var log strings.Builder
	m, err := runJob(t, path, x, Options{DryRun: true, Log: &log})
	if err != nil || len(x.runs) != 0 {
		t.Fatal(err, x.runs)
	}
	if statuses(m) != "feat=would run train=would run eval=would run" {
		t.Errorf("plan: %s", statuses(m))
	}
	for _, want := range []string{"[1/3] feat (featurize): would run: no previous run", "is made by stage feat, which would run"} {
		if !strings.Contains(log.String(), want) {
			t.Errorf("plan lacks %q:\n%s", want, log.String())
		}
	}
	if _, err := os.Stat(filepath.Join(dir, ".dualcrf-job")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("dry run created the state directory: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "out")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("dry run created outputs: %v", err)
	}
	runJob(t, path, x, Options{})
	log.Reset()
	if m, _ = runJob(t, path, x, Options{DryRun: true, Log: &log}); statuses(m) != "feat=skipped train=skipped eval=skipped" {
		t.Errorf("plan after a run: %s", statuses(m))
	}
}

// TestFailureKeepsManifest: a failing stage is named in the error, the
// stages after it do not run, the last good manifest and the failed
// stage's output stay, and the failed run's manifest goes beside it.
func TestFailureKeepsManifest(t *testing.T) {
	dir, path := setup(t, testJob)
	if _, err := runJob(t, path, &fakeExec{}, Options{}); err != nil {
		t.Fatal(err)
	}
	good, _ := os.ReadFile(filepath.Join(dir, ".dualcrf-job/t/manifest.json"))
	model, _ := os.ReadFile(filepath.Join(dir, "out/model.arrow"))
	os.WriteFile(filepath.Join(dir, "in/a.txt"), []byte("changed"), 0o644)
	m, err := runJob(t, path, &fakeExec{fail: map[string]bool{"train": true}}, Options{})
	if err == nil || err.Error() != "stage train (train) failed: boom" {
		t.Fatalf("error %v", err)
	}
	if statuses(m) != "feat=ran train=failed eval=not run" || m.FailedAt != "train" {
		t.Errorf("failed run: %s", statuses(m))
	}
	if now, _ := os.ReadFile(filepath.Join(dir, ".dualcrf-job/t/manifest.json")); string(now) != string(good) {
		t.Error("the last good manifest changed")
	}
	if now, _ := os.ReadFile(filepath.Join(dir, "out/model.arrow")); string(now) != string(model) {
		t.Error("the failed stage's output changed")
	}
	var failed Manifest
	b, _ := os.ReadFile(filepath.Join(dir, ".dualcrf-job/t/manifest.failed.json"))
	if json.Unmarshal(b, &failed) != nil || failed.Status != "failed" || failed.FailedAt != "train" || failed.Stages[1].Error != "boom" {
		t.Errorf("failed manifest: %s", b)
	}
	// The next run starts where it failed: featurize is recorded.
	m, err = runJob(t, path, &fakeExec{}, Options{})
	if err != nil || statuses(m) != "feat=skipped train=ran eval=ran" {
		t.Errorf("after the failure: %v %s", err, statuses(m))
	}
}

// TestLockRefusesConcurrentRun: while a run holds the job's lock, another
// is refused at once, naming the holder's pid.
func TestLockRefusesConcurrentRun(t *testing.T) {
	_, path := setup(t, testJob)
	f, err := Parse(path, nil, day)
	if err != nil {
		t.Fatal(err)
	}
	unlock, err := lockJob(f)
	if err != nil {
		t.Fatal(err)
	}
	x := &fakeExec{}
	_, err = Run(context.Background(), f, x, Options{})
	var le *LockedError
	if !errors.As(err, &le) || le.PID != os.Getpid() || len(x.runs) != 0 {
		t.Fatalf("concurrent run: %v, ran %q", err, x.runs)
	}
	if want := fmt.Sprintf("job t is running already (pid %d holds", os.Getpid()); !strings.Contains(err.Error(), want) {
		t.Errorf("%v lacks %q", err, want)
	}
	unlock()
	if _, err := Run(context.Background(), f, x, Options{}); err != nil {
		t.Errorf("after unlock: %v", err)
	}
}

// TestCheckBeforeRunning: the stages' options are checked before any
// stage runs: a bad option in the last stage stops the job at once.
func TestCheckBeforeRunning(t *testing.T) {
	_, path := setup(t, testJob)
	x := &fakeExec{check: func(args []string) error {
		if args[0] == "eval" {
			return errors.New("eval: bad option")
		}
		return nil
	}}
	_, err := runJob(t, path, x, Options{})
	if err == nil || !strings.Contains(err.Error(), "stage eval (eval): eval: bad option") || len(x.runs) != 0 {
		t.Errorf("%v, ran %q", err, x.runs)
	}
}

// TestParseRefusals: what a job file may not say, with the file named.
func TestParseRefusals(t *testing.T) {
	for _, c := range []struct{ job, want string }{
		{"", "empty job file"},
		{"name: x\n", "no stages"},
		{"name: a b\nstages: []\n", `name "a b"`},
		{"name: x\nstagez: []\n", "field stagez not found"},
		{"name: x\nstages: [{run: fly, inputs: [a], output: b}]\n", `run "fly": want one of featurize, train, decode, eval`},
		{"name: x\nstages: [{run: train, inputs: [a], output: b}, {run: train, inputs: [b], output: c}]\n", `the name "train" is taken`},
		{"name: x\nstages: [{run: train, inputs: [a], output: b, options: {checkpoint: c}}]\n", "the job keeps train's checkpoints"},
		{"name: x\nstages: [{run: train, inputs: [a], output: b, options: {o: c}}]\n", "give the stage's output as output:"},
		{"name: x\nstages: [{run: train, inputs: [a], output: b, options: {lambda: [1, 2]}}]\n", "want a string, number or true/false"},
		{"name: x\nstages: [{run: train, inputs: [a]}]\n", "no output:"},
		{"name: x\nstages: [{run: train, output: b}]\n", "no inputs:"},
		{"name: x\nstages: [{run: train, inputs: [\"${nope}\"], output: b}]\n", "${nope}: no such variable"},
		{"name: x\nstages: [{run: train, inputs: [\"${env:JOBTEST_UNSET}\"], output: b}]\n", "the environment variable JOBTEST_UNSET is not set"},
		{"name: x\nstages: [{run: train, inputs: [a], output: b}\n", "yaml: line"},
		{"name: x\nstages: [{run: train, inputs: [${x}], output: b}]\n", `(quote a value holding ${…} inside [ ] or { }: "${x}")`},
	} {
		dir := t.TempDir()
		path := filepath.Join(dir, "job.yaml")
		os.WriteFile(path, []byte(c.job), 0o644)
		_, err := Parse(path, nil, day)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), path+": ") {
			t.Errorf("%q: %v, want %q", c.job, err, c.want)
		}
	}
	_, path := setup(t, testJob)
	if _, err := Parse(path, map[string]string{"nope": "1"}, day); err == nil || !strings.Contains(err.Error(), "--var nope: the job has no variable nope") {
		t.Errorf("unknown --var: %v", err)
	}
	f, err := Parse(path, map[string]string{"DATE": "2020-01-01", "in": "/elsewhere"}, day)
	if err != nil || f.Stages[0].Inputs[0] != "/elsewhere/*.txt" || f.Stages[0].Output != "out/2020-01-01/train.arrow" {
		t.Errorf("--var: %v %+v", err, f.Stages[0])
	}
	os.WriteFile(path, []byte("name: x\nstages: [{run: train, inputs: [\"nothing/*.arrow\"], output: b}]\n"), 0o644)
	f, _ = Parse(path, nil, day)
	if _, err := Run(context.Background(), f, &fakeExec{}, Options{}); err == nil || !strings.Contains(err.Error(), `input "nothing/*.arrow" matches no file`) {
		t.Errorf("empty glob: %v", err)
	}
}

// FuzzParse: no job file makes Parse panic.
func FuzzParse(f *testing.F) {
	f.Add([]byte(testJob))
	f.Add([]byte("name: x\nstages: [{run: train, inputs: [a], output: b, options: {lambda: 1/n}}]\n"))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(dir, "job.yaml")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		if jf, err := Parse(path, nil, day); err == nil {
			jf.steps(&fakeExec{})
		}
	})
}

// TestCorruptState: a damaged record of the last runs is an error naming
// the file and what to do, never a panic nor a silent full re-run.
func TestCorruptState(t *testing.T) {
	dir, path := setup(t, testJob)
	if _, err := runJob(t, path, &fakeExec{}, Options{}); err != nil {
		t.Fatal(err)
	}
	state := filepath.Join(dir, ".dualcrf-job/t/state.json")
	b, _ := os.ReadFile(state)
	os.WriteFile(state, b[:len(b)/2], 0o644)
	x := &fakeExec{}
	_, err := runJob(t, path, x, Options{})
	if err == nil || !strings.HasPrefix(err.Error(), state+": ") || !strings.Contains(err.Error(), "remove it to run every stage again") || len(x.runs) != 0 {
		t.Errorf("%v, ran %q", err, x.runs)
	}
}

// TestLBFGSNoCheckpoint: train with solver: lbfgs gets no checkpoint
// directory and no kept duals: train's check (here the fake's, as
// train's) refuses the checkpoint flags and --keep-duals with L-BFGS.
func TestLBFGSNoCheckpoint(t *testing.T) {
	_, path := setup(t, strings.Replace(testJob, "{gap-tol: 0.01, no-bias: true}", "{gap-tol: 0.01, solver: lbfgs}", 1))
	x := &fakeExec{check: func(args []string) error {
		if !slices.Contains(args, "--solver=lbfgs") {
			return nil
		}
		for _, a := range args {
			if strings.HasPrefix(a, "--checkpoint") || strings.HasPrefix(a, "--keep-duals") || strings.HasPrefix(a, "--warm-start") {
				return fmt.Errorf("%s: not used by --solver lbfgs", a)
			}
		}
		return nil
	}}
	if _, err := runJob(t, path, x, Options{}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(x.runs[1], "--checkpoint") || !strings.Contains(x.runs[1], "--solver=lbfgs") {
		t.Errorf("train ran %s", x.runs[1])
	}
}

// TestCheckpointCadence: train snapshots by time (CheckpointInterval), not
// every epoch, unless the stage's options set a cadence, which the job
// then passes on alone.
func TestCheckpointCadence(t *testing.T) {
	for _, c := range []struct{ options, want, not string }{
		{"{gap-tol: 0.01}", "--checkpoint-every=0 --checkpoint-interval=" + CheckpointInterval.String() + " ", ""},
		{"{gap-tol: 0.01, checkpoint-every: 1}", "--checkpoint-every=1", "--checkpoint-interval"},
		{"{gap-tol: 0.01, checkpoint-interval: 1m}", "--checkpoint-interval=1m", "--checkpoint-every"},
	} {
		_, path := setup(t, strings.Replace(testJob, "{gap-tol: 0.01, no-bias: true}", c.options, 1))
		x := &fakeExec{}
		if _, err := runJob(t, path, x, Options{}); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(x.runs[1], c.want) || (c.not != "" && strings.Contains(x.runs[1], c.not)) {
			t.Errorf("options %s: train ran %s; want %q and not %q", c.options, x.runs[1], c.want, c.not)
		}
	}
}

// TestPanicWritesFailedManifest: a stage that panics (a defect) still
// leaves the failed run's manifest, naming the stage and the panic, and
// the panic goes on.
func TestPanicWritesFailedManifest(t *testing.T) {
	dir, path := setup(t, testJob)
	x := &panicExec{fakeExec: fakeExec{}, at: "train"}
	func() {
		defer func() {
			if p := recover(); p == nil || !strings.Contains(fmt.Sprint(p), "no free slot") {
				t.Fatalf("recovered %v, want the stage's panic", p)
			}
		}()
		runJob(t, path, x, Options{})
		t.Fatal("the job did not panic")
	}()
	var m Manifest
	b, err := os.ReadFile(filepath.Join(dir, ".dualcrf-job/t/manifest.failed.json"))
	if err != nil || json.Unmarshal(b, &m) != nil {
		t.Fatalf("failed manifest: %v %s", err, b)
	}
	if m.Status != "failed" || m.FailedAt != "train" || statuses(&m) != "feat=ran train=failed eval=not run" ||
		!strings.Contains(m.Stages[1].Error, "panic: no free slot") {
		t.Fatalf("failed manifest: %s", b)
	}
}

// panicExec is fakeExec with a stage that panics.
type panicExec struct {
	fakeExec
	at string
}

func (x *panicExec) Run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if args[0] == x.at {
		panic("no free slot to write a block to")
	}
	return x.fakeExec.Run(ctx, args, stdout, stderr)
}

// TestWarmArgsOnlyWhereAccepted: the job adds --keep-duals and
// --warm-start to a train stage only where train accepts both for its
// options: not at all where it refuses --keep-duals (another solver, the
// hinge loss), and where it accepts the kept duals but no warm start
// (streamed duals) it says why the stage starts cold instead.
func TestWarmArgsOnlyWhereAccepted(t *testing.T) {
	for _, c := range []struct {
		name   string
		refuse string // the flag Check refuses
		keep   bool
		report string
	}{
		{"accepted", "", true, "no kept duals (first run)"},
		{"hinge", "--keep-duals=", false, ""},
		{"stream", "--warm-start=", false, "train cannot start warm with its options: refused --warm-start="},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, path := setup(t, testJob)
			x := &fakeExec{check: func(args []string) error {
				for _, a := range args {
					if c.refuse != "" && strings.HasPrefix(a, c.refuse) {
						return errors.New("refused " + c.refuse)
					}
				}
				return nil
			}}
			m, err := runJob(t, path, x, Options{})
			if err != nil {
				t.Fatal(err)
			}
			train := x.runs[1]
			if got := strings.Contains(train, "--keep-duals="); got != c.keep || strings.Contains(train, "--warm-start=") {
				t.Fatalf("train ran %s", train)
			}
			w := m.Stages[1].WarmStart
			switch {
			case c.report == "" && w != nil:
				t.Fatalf("warm report %+v, want none", w)
			case c.report != "" && (w == nil || w.Start != "cold" || w.Reason != c.report):
				t.Fatalf("warm report %+v, want cold: %s", w, c.report)
			}
		})
	}
}
