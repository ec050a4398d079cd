package job

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRefusesLosingFiles: a job whose run would overwrite one of its
// inputs, its own job file, or one output by another — through the
// manifest, a stage's output or option file, a later stage, a directory
// input or a glob — is refused before any stage runs and before the state
// directory is made, naming both files; the files stay as they were.
func TestRefusesLosingFiles(t *testing.T) {
	const head = "name: t\n"
	for _, c := range []struct {
		name, job, want string
	}{
		{"manifest is an input", head + "manifest: in/a.txt\nstages:\n  - {run: featurize, inputs: [in/a.txt], output: f.arrow}\n",
			"output {dir}/in/a.txt (the manifest) is the same file as input {dir}/in/a.txt (stage featurize): refusing to overwrite an input"},
		{"manifest is an output", head + "manifest: f.arrow\nstages:\n  - {run: featurize, inputs: [in/a.txt], output: f.arrow}\n",
			"outputs {dir}/f.arrow (the manifest) and {dir}/f.arrow (stage featurize) are the same file"},
		{"manifest is the job file", head + "manifest: job.yaml\nstages:\n  - {run: featurize, inputs: [in/a.txt], output: f.arrow}\n",
			"output {dir}/job.yaml (the manifest) is the same file as input {dir}/job.yaml (the job file)"},
		{"failed manifest is an input", head + "manifest: in/a.json\nstages:\n  - {run: featurize, inputs: [in/a.failed.json], output: f.arrow}\n",
			"output {dir}/in/a.failed.json (the failed run's manifest) is the same file as input {dir}/in/a.failed.json (stage featurize)"},
		{"output is the job file", head + "stages:\n  - {run: featurize, inputs: [in/a.txt], output: job.yaml}\n",
			"output {dir}/job.yaml (stage featurize) is the same file as input {dir}/job.yaml (the job file)"},
		{"a later stage writes an input", head + "stages:\n  - {run: featurize, inputs: [in/a.txt], output: f.arrow}\n  - {run: train, inputs: [f.arrow], output: m.arrow}\n  - {run: decode, inputs: [f.arrow], options: {model: m.arrow}, output: in/a.txt}\n",
			"output {dir}/in/a.txt (stage decode) is the same file as input {dir}/in/a.txt (stage featurize)"},
		{"a later stage writes an input made earlier", head + "stages:\n  - {run: featurize, inputs: [in/a.txt], output: f.arrow}\n  - {run: train, inputs: [f.arrow], output: m.arrow}\n  - {run: decode, inputs: [in/b.txt], options: {model: m.arrow}, output: f.arrow}\n",
			"output {dir}/f.arrow (stage decode) is the same file as input {dir}/f.arrow (stage train)"},
		{"a later stage writes what an earlier reads, not made yet", head + "stages:\n  - {run: featurize, inputs: [in/a.txt], options: {model: m.arrow}, output: f.arrow}\n  - {run: train, inputs: [f.arrow], output: m.arrow}\n",
			"output {dir}/m.arrow (stage train) is the same file as input --model {dir}/m.arrow (stage featurize)"},
		{"two stages, one output", head + "stages:\n  - {name: a, run: featurize, inputs: [in/a.txt], output: f.arrow}\n  - {name: b, run: featurize, inputs: [in/b.txt], output: ./f.arrow}\n",
			"outputs {dir}/f.arrow (stage a) and {dir}/f.arrow (stage b) are the same file"},
		{"an option's output is an input", head + "stages:\n  - {run: train, inputs: [in/a.txt], options: {log: in/a.txt}, output: m.arrow}\n",
			"output --log {dir}/in/a.txt (stage train) is the same file as input {dir}/in/a.txt (stage train)"},
		{"an alias's input", head + "stages:\n  - {run: train, inputs: [in/a.txt], output: m.arrow}\n  - {run: decode, inputs: [in/a.txt], options: {m: in/b.txt}, output: in/b.txt}\n",
			"output {dir}/in/b.txt (stage decode) is the same file as input --m {dir}/in/b.txt (stage decode)"},
		{"streamed duals on an input", head + "stages:\n  - {run: train, inputs: [in/a.txt], options: {duals: \"stream:in/a.txt\"}, output: m.arrow}\n",
			"output --duals {dir}/in/a.txt (stage train) is the same file as input {dir}/in/a.txt (stage train)"},
		{"inside a directory input", head + "stages:\n  - {run: featurize, inputs: [in], output: in/features.parquet}\n",
			"output {dir}/in/features.parquet (stage featurize) is inside input directory {dir}/in (stage featurize)"},
		{"a glob would read it", head + "stages:\n  - {run: featurize, inputs: [\"in/*\"], output: in/out.arrow}\n",
			"output {dir}/in/out.arrow (stage featurize) matches input pattern {dir}/in/* (stage featurize)"},
		{"state in a directory input", head + "state: in/st\nstages:\n  - {run: featurize, inputs: [in], output: f.arrow}\n",
			"output {dir}/in/st/manifest.json (the manifest) is inside input directory {dir}/in (stage featurize)"},
		{"output in the checkpoints", head + "stages:\n  - {run: train, inputs: [in/a.txt], output: .dualcrf-job/t/checkpoints/train/m.arrow}\n",
			"output {dir}/.dualcrf-job/t/checkpoints/train/m.arrow (stage train) is inside {dir}/.dualcrf-job/t/checkpoints/train (stage train's checkpoints), a directory the run writes and clears"},
		{"output is the state", head + "stages:\n  - {run: featurize, inputs: [in/a.txt], output: .dualcrf-job/t/state.json}\n",
			"outputs {dir}/.dualcrf-job/t/state.json (the job's state) and {dir}/.dualcrf-job/t/state.json (stage featurize) are the same file"},
		{"two stages keep their duals in one file", head + "stages:\n  - {name: a, run: train, inputs: [in/a.txt], options: {keep-duals: k.duals}, output: a.arrow}\n  - {name: b, run: train, inputs: [in/b.txt], options: {keep-duals: ./k.duals}, output: b.arrow}\n",
			"outputs --keep-duals {dir}/k.duals (stage a) and --keep-duals {dir}/k.duals (stage b) are the same file"},
		{"an output is another stage's kept duals", head + "stages:\n  - {name: a, run: train, inputs: [in/a.txt], options: {keep-duals: k.duals}, output: a.arrow}\n  - {name: b, run: featurize, inputs: [in/b.txt], output: k.duals}\n",
			"outputs --keep-duals {dir}/k.duals (stage a) and {dir}/k.duals (stage b) are the same file"},
		{"an output is the duals the job keeps", head + "stages:\n  - {name: a, run: train, inputs: [in/a.txt], output: a.arrow}\n  - {name: b, run: featurize, inputs: [in/b.txt], output: .dualcrf-job/t/duals/a.duals}\n",
			"outputs {dir}/.dualcrf-job/t/duals/a.duals (stage a's kept duals) and {dir}/.dualcrf-job/t/duals/a.duals (stage b) are the same file"},
		{"kept duals over another stage's output", head + "stages:\n  - {name: a, run: featurize, inputs: [in/a.txt], output: f.arrow}\n  - {name: b, run: train, inputs: [in/b.txt], options: {keep-duals: f.arrow}, output: m.arrow}\n",
			"outputs {dir}/f.arrow (stage a) and --keep-duals {dir}/f.arrow (stage b) are the same file"},
		{"a model over the duals it starts from", head + "stages:\n  - {run: train, inputs: [in/a.txt], options: {warm-start: in/b.txt}, output: in/b.txt}\n",
			"output {dir}/in/b.txt (stage train) is the same file as input --warm-start {dir}/in/b.txt (stage train)"},
		{"an output in another stage's checkpoints", head + "stages:\n  - {name: a, run: train, inputs: [in/a.txt], output: a.arrow}\n  - {name: b, run: featurize, inputs: [in/b.txt], output: .dualcrf-job/t/checkpoints/a/x.arrow}\n",
			"output {dir}/.dualcrf-job/t/checkpoints/a/x.arrow (stage b) is inside {dir}/.dualcrf-job/t/checkpoints/a (stage a's checkpoints), a directory the run writes and clears"},
		{"an option reading standard input", head + "stages:\n  - {run: train, inputs: [in/a.txt], options: {valid: \"-\"}, output: m.arrow}\n",
			`option valid "-": a job's stages read and write files, not standard input or output`},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir, path := setup(t, c.job)
			want := strings.ReplaceAll(c.want, "{dir}", dir)
			before := snapshot(t, dir)
			for _, dry := range []bool{true, false} {
				x := &fakeExec{}
				f, err := Parse(path, nil, day)
				if err != nil {
					t.Fatal(err)
				}
				_, err = Run(t.Context(), f, x, Options{DryRun: dry})
				if err == nil || !strings.Contains(err.Error(), want) || !strings.HasPrefix(err.Error(), path+": ") {
					t.Fatalf("dry run %v: %v\nwant %q", dry, err, want)
				}
				if len(x.runs) > 0 {
					t.Errorf("ran %q", x.runs)
				}
				if after := snapshot(t, dir); after != before {
					t.Errorf("the refused job changed its directory:\n%s\nwas\n%s", after, before)
				}
			}
		})
	}
}

// snapshot lists dir's files with their contents.
func snapshot(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(dir, p)
		b.WriteString(rel)
		if d.Type().IsRegular() {
			data, _ := os.ReadFile(p)
			b.WriteString(" " + string(data))
		}
		b.WriteString("\n")
		return nil
	})
	return b.String()
}

// TestGlobOutputRunsAgain: an output that a stage's own glob does not
// match (beside it) lets the job run, and run again with every stage
// skipped — the job the refusal of an output inside the glob points to.
func TestGlobOutputRunsAgain(t *testing.T) {
	dir, path := setup(t, "name: t\nstages:\n  - {run: featurize, inputs: [\"in/*.txt\"], output: in/out.arrow}\n")
	for i, want := range []string{"featurize=ran", "featurize=skipped"} {
		m, err := runJob(t, path, &fakeExec{}, Options{})
		if err != nil || statuses(m) != want {
			t.Fatalf("run %d: %v %s", i+1, err, statuses(m))
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "in/out.arrow")); err != nil {
		t.Fatal(err)
	}
}

// TestEmptyOrStdoutOutput: an output that a variable leaves empty, or
// "-", is refused: the stage would write its table to the run's standard
// output.
func TestEmptyOrStdoutOutput(t *testing.T) {
	_, path := setup(t, "name: t\nvars: {out: x.arrow}\nstages:\n  - {run: featurize, inputs: [in/a.txt], output: \"${out}\"}\n")
	if _, err := Parse(path, map[string]string{"out": ""}, day); err == nil || !strings.Contains(err.Error(), "stage featurize: output: empty once its variables are substituted") {
		t.Errorf("--var out=: %v", err)
	}
	for _, job := range []string{
		"name: t\nstages:\n  - {run: featurize, inputs: [in/a.txt], output: \"-\"}\n",
		"name: t\nstages:\n  - {run: eval, inputs: [in/a.txt], output: \"-\"}\n",
	} {
		_, path := setup(t, job)
		f, err := Parse(path, nil, day)
		if err != nil {
			t.Fatal(err)
		}
		x := &fakeExec{}
		if _, err := Run(t.Context(), f, x, Options{}); err == nil || !strings.Contains(err.Error(), `output "-": a job's stages write files, not standard output`) || len(x.runs) > 0 {
			t.Errorf("%s: %v, ran %q", job, err, x.runs)
		}
	}
}

// TestRecordWithoutOutputs: a record (state.json) that lists other
// outputs than the stage has — none, say — does not skip the stage: a
// deleted output is made again.
func TestRecordWithoutOutputs(t *testing.T) {
	dir, path := setup(t, testJob)
	if _, err := runJob(t, path, &fakeExec{}, Options{}); err != nil {
		t.Fatal(err)
	}
	statePath := filepath.Join(dir, ".dualcrf-job/t/state.json")
	b, err := os.ReadFile(statePath)
	if err != nil {
		t.Fatal(err)
	}
	var st state
	if err := json.Unmarshal(b, &st); err != nil {
		t.Fatal(err)
	}
	st.Stages["train"].Outputs = []FileHash{}
	if b, err = json.Marshal(&st); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(statePath, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, "out/model.arrow")); err != nil {
		t.Fatal(err)
	}
	m, err := runJob(t, path, &fakeExec{}, Options{})
	if err != nil || !strings.HasPrefix(statuses(m), "feat=skipped train=ran") || m.Stages[1].Reason != "outputs changed" {
		t.Fatalf("%v: %s (%s)", err, statuses(m), m.Stages[1].Reason)
	}
	if _, err := os.Stat(filepath.Join(dir, "out/model.arrow")); errors.Is(err, os.ErrNotExist) {
		t.Fatal("the deleted output was not made again")
	}
}

// TestMissingRelativeInputSaysWhere: a relative input the job names that
// is missing (an argument, a file option, a glob matching nothing) is an
// error that says relative paths are read from the job file's directory,
// and names it; an absolute one is not.
func TestMissingRelativeInputSaysWhere(t *testing.T) {
	dir := t.TempDir()
	sub := filepath.Join(dir, "jobs")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "train.txt"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	hint := "a job's relative paths are relative to the job file's directory, " + sub
	for _, c := range []struct{ job, want string }{
		{"inputs: [train.txt]\n    output: train.arrow", `("train.txt" in the job file; ` + hint + ")"},
		{"inputs: [" + filepath.Join(dir, "train.txt") + "]\n    options: {vocab: v.arrow}\n    output: train.arrow", `("v.arrow" in the job file; ` + hint + ")"},
		{"inputs: [\"tr*.txt\"]\n    output: train.arrow", `input "tr*.txt" matches no file: ` + hint},
	} {
		path := filepath.Join(sub, "job.yaml")
		job := "name: t\nstages:\n  - run: featurize\n    " + c.job + "\n"
		if err := os.WriteFile(path, []byte(job), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := runJob(t, path, &fakeExec{}, Options{})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("job\n%s\nerror %v, want it to contain %q", job, err, c.want)
		}
	}
	path := filepath.Join(sub, "job.yaml")
	abs := filepath.Join(dir, "nosuch.txt")
	if err := os.WriteFile(path, []byte("name: t\nstages:\n  - run: featurize\n    inputs: ["+abs+"]\n    output: o.arrow\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := runJob(t, path, &fakeExec{}, Options{}); err == nil || strings.Contains(err.Error(), "relative") {
		t.Errorf("an absolute missing input: %v", err)
	}
}
