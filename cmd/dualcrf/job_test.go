package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dualcrf/dualcrf/internal/platform"
	"github.com/dualcrf/dualcrf/job"
	"github.com/dualcrf/dualcrf/progress"
)

// jobFile is a job of the four stages on the small corpora; train runs
// three epochs, certifying every second one.
const jobFile = `name: small
vars:
  text: ""
stages:
  - name: features
    run: featurize
    inputs: ["${text}/train150.txt"]
    options: {template: chunking}
    output: out/train.arrow
  - run: train
    inputs: [out/train.arrow]
    options: {max-epochs: 3, gap-every: 2, gap-tol: 1e-9, quiet: true}
    output: out/model.arrow
  - name: test-features
    run: featurize
    inputs: ["${text}/test50.txt"]
    options: {model: out/model.arrow}
    output: out/test.arrow
  - run: decode
    inputs: [out/test.arrow]
    options: {model: out/model.arrow}
    output: out/pred.arrow
  - run: eval
    inputs: [out/pred.arrow]
    output: out/scores.json
`

// readManifest reads a job's manifest.
func readManifest(t *testing.T, path string) job.Manifest {
	t.Helper()
	var m job.Manifest
	b, err := os.ReadFile(path)
	if err != nil || json.Unmarshal(b, &m) != nil {
		t.Fatalf("manifest %s: %v\n%s", path, err, b)
	}
	return m
}

// stageStatuses lists a manifest's stage statuses.
func stageStatuses(m job.Manifest) string {
	var s []string
	for _, st := range m.Stages {
		s = append(s, st.Status)
	}
	return strings.Join(s, " ")
}

// TestJobRun: `dualcrf run` on the four stages: a first run runs them all
// and records eval's scores; a second skips them all; a run interrupted by
// SIGTERM in training exits 143 naming the stage, and the next run
// resumes it to the model bytes of the uninterrupted run; a run while
// another holds the job's lock is refused with exit 1, naming its pid.
func TestJobRun(t *testing.T) {
	fixtures(t)
	text, err := filepath.Abs("testdata")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	jobPath := filepath.Join(dir, "job.yaml")
	if err := os.WriteFile(jobPath, []byte(jobFile), 0o644); err != nil {
		t.Fatal(err)
	}
	manifest := filepath.Join(dir, ".dualcrf-job/small/manifest.json")
	runJob := func(hook ...string) result {
		cmd := command(dir, "run", "--var", "text="+text, "job.yaml")
		for _, spec := range hook {
			withTestHook(t, cmd, spec)
		}
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		r := result{args: cmd.Args}
		finish(&r, cmd, cmd.Run())
		r.stdout, r.stderr = stdout.Bytes(), stderr.Bytes()
		return r
	}

	if r := runJob(); r.code != 0 {
		t.Fatalf("first run: %v", r)
	}
	m := readManifest(t, manifest)
	if got := stageStatuses(m); got != "ran ran ran ran ran" || m.Stages[4].Metrics["f1"] == nil || m.Stages[1].Metrics["epochs"] != 3.0 {
		t.Fatalf("first run: %s %v %v", got, m.Stages[4].Metrics, m.Stages[1].Metrics)
	}
	full, err := os.ReadFile(filepath.Join(dir, "out/model.arrow"))
	if err != nil {
		t.Fatal(err)
	}
	if r := runJob(); r.code != 0 || stageStatuses(readManifest(t, manifest)) != "skipped skipped skipped skipped skipped" {
		t.Fatalf("second run: %v %s", r, stageStatuses(readManifest(t, manifest)))
	}

	os.Remove(filepath.Join(dir, "out/model.arrow"))
	r := runJob("epoch:2:2:TERM")
	if r.code != 143 || !strings.Contains(string(r.stderr), "stage train (train) failed: train: interrupted during the certificate pass of epoch 2") ||
		!strings.Contains(string(r.stderr), "run the job again to resume") {
		t.Fatalf("interrupted run: %v", r)
	}
	if failed := readManifest(t, filepath.Join(dir, ".dualcrf-job/small/manifest.failed.json")); failed.Status != "interrupted" || failed.FailedAt != "train" {
		t.Errorf("failed manifest: %+v", failed)
	}
	if r := runJob(); r.code != 0 || !strings.Contains(string(r.stderr), "train: resuming from") {
		t.Fatalf("resumed run: %v", r)
	}
	m = readManifest(t, manifest)
	if got := stageStatuses(m); got != "skipped ran skipped skipped skipped" || !m.Stages[1].Resumed {
		t.Errorf("resumed run: %s, resumed %v", got, m.Stages[1].Resumed)
	}
	if resumed, _ := os.ReadFile(filepath.Join(dir, "out/model.arrow")); !bytes.Equal(resumed, full) {
		t.Error("the resumed training made other model bytes")
	}

	lock, err := platform.OpenFile(filepath.Join(dir, ".dualcrf-job/small/lock"), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close()
	if err := platform.TryLock(lock); err != nil {
		t.Fatal(err)
	}
	lock.WriteAt([]byte(fmt.Sprintf("%d\n", os.Getpid())), 0)
	r = runJob()
	if want := fmt.Sprintf("dualcrf: job small is running already (pid %d holds .dualcrf-job/small/lock); not starting a second run\n", os.Getpid()); r.code != 1 || string(r.stderr) != want {
		t.Errorf("concurrent run: %v\nwant %q", r, want)
	}
}

// TestProgressJSON: train --progress json writes only JSON objects on
// standard error, numbered in order: the train task's start, its phases
// (each event naming its phase: init, the epochs, the certificates) and
// end, and every message as a log event.
func TestProgressJSON(t *testing.T) {
	f := fixtures(t)
	r := runBinary(t, t.TempDir(), "", "train", "--progress", "json", "--max-epochs", "3", "--gap-tol", "1e-9", "-o", "m.arrow", f.train)
	if r.code != 0 {
		t.Fatal(r)
	}
	var kinds, phases []string
	var logs int
	sc := bufio.NewScanner(bytes.NewReader(r.stderr))
	for i := int64(1); sc.Scan(); i++ {
		var e progress.Event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("line %d %q: %v", i, sc.Text(), err)
		}
		if e.Seq != i {
			t.Errorf("line %d has seq %d", i, e.Seq)
		}
		if e.Event == "log" {
			logs++
		} else if e.Task == "train" && (len(kinds) == 0 || kinds[len(kinds)-1] != e.Event) {
			kinds = append(kinds, e.Event)
		}
		if e.Task == "train" && e.Event == "phase" {
			phases = append(phases, e.Phase)
		}
		if e.Task == "train" && e.Event != "start" && e.Phase == "" {
			t.Errorf("line %d: a train event without its phase: %q", i, sc.Text())
		}
	}
	if k := strings.Join(kinds, " "); !strings.HasPrefix(k, "start") || !strings.HasSuffix(k, "end") || !strings.Contains(k, "phase") {
		t.Errorf("train events %s", k)
	}
	if got, want := strings.Join(phases, "|"), "init|certify epoch 0|epoch 1/3|epoch 2/3|epoch 3/3|certify epoch 3"; got != want {
		t.Errorf("train phases %q, want %q", got, want)
	}
	if logs < 5 { // the summary, 4 epoch lines (0–3), the stop line
		t.Errorf("%d log events:\n%s", logs, r.stderr)
	}
	if len(r.stdout) != 0 {
		t.Errorf("progress on standard output: %q", r.stdout)
	}
}

// TestDecodeProgressJSON: decode --progress json counts the sentences
// decoded: its end event has all of them (test50.txt has 50) and the
// tokens in its note.
func TestDecodeProgressJSON(t *testing.T) {
	f := fixtures(t)
	r := runBinary(t, t.TempDir(), "", "decode", "--progress", "json", "-m", f.model, "-o", "p.arrow", f.test)
	if r.code != 0 {
		t.Fatal(r)
	}
	last := lastEvent(t, r.stderr, "decode")
	if last.Event != "end" || last.Done != 50 || last.Unit != "sentences" || !strings.HasSuffix(last.Note, " tokens") {
		t.Errorf("last decode event %+v\n%s", last, r.stderr)
	}
}

// TestFeaturizeProgressJSON: featurize --progress json counts the input
// file's bytes over both passes: its end event has read the file twice,
// out of a total of twice its size; the table is the same bytes as
// without progress.
func TestFeaturizeProgressJSON(t *testing.T) {
	f := fixtures(t)
	st, err := os.Stat(f.trainText)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	r := runBinary(t, dir, "", "featurize", "--progress", "json", "-o", "p.arrow", f.trainText)
	if r.code != 0 {
		t.Fatal(r)
	}
	last := lastEvent(t, r.stderr, "featurize")
	if last.Event != "end" || last.Done != 2*st.Size() || last.Total != 2*st.Size() || last.Unit != "bytes" {
		t.Errorf("last featurize event %+v, want 2×%d bytes\n%s", last, st.Size(), r.stderr)
	}
	if r := runBinary(t, dir, "", "featurize", "--progress", "none", "-o", "n.arrow", f.trainText); r.code != 0 {
		t.Fatal(r)
	}
	sameFile(t, filepath.Join(dir, "p.arrow"), filepath.Join(dir, "n.arrow"))
}

// lastEvent parses every line of a --progress json stderr as an event and
// returns the last one of task.
func lastEvent(t *testing.T, stderr []byte, task string) progress.Event {
	t.Helper()
	var last progress.Event
	sc := bufio.NewScanner(bytes.NewReader(stderr))
	for sc.Scan() {
		var e progress.Event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("%q: %v", sc.Text(), err)
		}
		if e.Task == task {
			last = e
		}
	}
	return last
}

// TestFeaturizeProgressTable: featurize --progress json reads a Parquet
// token table (decode's predictions) as a table, not as text — a file,
// counting its bytes over both passes, and a directory of them — and
// writes the same table as without progress.
func TestFeaturizeProgressTable(t *testing.T) {
	f := fixtures(t)
	dir := t.TempDir()
	if r := runBinary(t, dir, "", "decode", "-m", f.model, "-o", "pred.parquet", f.test); r.code != 0 {
		t.Fatal(r)
	}
	lake := filepath.Join(dir, "lake", "part=1")
	if err := os.MkdirAll(lake, 0o755); err != nil {
		t.Fatal(err)
	}
	pred := filepath.Join(dir, "pred.parquet")
	data, err := os.ReadFile(pred)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(lake, "x.parquet"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, in := range []string{"pred.parquet", "lake"} {
		r := runBinary(t, dir, "", "featurize", "--progress", "json", "--template", "chunking", "-o", in+".p.arrow", in)
		if r.code != 0 {
			t.Fatal(r)
		}
		last := lastEvent(t, r.stderr, "featurize")
		if last.Event != "end" {
			t.Errorf("%s: last featurize event %+v\n%s", in, last, r.stderr)
		}
		if in == "pred.parquet" && (last.Done != 2*int64(len(data)) || last.Total != 2*int64(len(data))) {
			t.Errorf("%s: last featurize event %+v, want 2×%d bytes", in, last, len(data))
		}
		if r := runBinary(t, dir, "", "featurize", "--progress", "none", "--template", "chunking", "-o", in+".n.arrow", in); r.code != 0 {
			t.Fatal(r)
		}
		sameFile(t, filepath.Join(dir, in+".p.arrow"), filepath.Join(dir, in+".n.arrow"))
	}
}
