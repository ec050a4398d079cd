package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dualcrf/dualcrf/arrowio"
	"github.com/dualcrf/dualcrf/stage"
	"github.com/dualcrf/dualcrf/tables"
	"github.com/dualcrf/dualcrf/train"
)

// runCLI runs dualcrf-beam in process with args and returns its exit
// status, standard output and standard error.
func runCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(context.Background(), append([]string{"dualcrf-beam"}, args...), &out, &errb)
	return code, out.String(), errb.String()
}

// shardSlice writes the CI slice (150 CoNLL-2000 sentences) as three
// shards in dir and returns their glob and their concatenation.
func shardSlice(t *testing.T, dir string) (string, string) {
	t.Helper()
	data, err := os.ReadFile("../../../cmd/dualcrf/testdata/train150.txt")
	if err != nil {
		t.Fatal(err)
	}
	sents := strings.SplitAfter(strings.TrimSpace(string(data))+"\n\n", "\n\n")
	sents = sents[:len(sents)-1]
	var whole strings.Builder
	for i := range 3 {
		part := strings.Join(sents[i*len(sents)/3:(i+1)*len(sents)/3], "")
		whole.WriteString(part)
		if err := os.WriteFile(filepath.Join(dir, "shard"+string(rune('a'+i))+".txt"), []byte(part), 0o666); err != nil {
			t.Fatal(err)
		}
	}
	wholePath := filepath.Join(dir, "whole.txt")
	if err := os.WriteFile(wholePath, []byte(whole.String()), 0o666); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(dir, "shard*.txt"), wholePath
}

// TestStagesInProcess runs featurize, decode and eval through the command
// on three shards and wants eval's report to be dualcrf eval's of the
// single-machine run, in text and JSON.
func TestStagesInProcess(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	glob, whole := shardSlice(t, dir)
	feats := filepath.Join(dir, "feats")
	if code, _, errs := runCLI(t, "featurize", "-o", feats, glob, "--min-count", "1", "--workers", "1"); code != 0 {
		t.Fatalf("featurize: exit %d: %s", code, errs)
	}
	// The single-machine stages, as library calls.
	tab, _, err := stage.FeaturizeTable(ctx, stage.File(whole), stage.FeaturizeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	res, err := stage.Train(ctx, tab, "whole", stage.TrainOptions{Method: &train.SDCA{Seed: 1}})
	if err != nil {
		t.Fatal(err)
	}
	model := filepath.Join(dir, "model.arrow")
	writeModel(t, model, res)
	cliPred := filepath.Join(dir, "cli.arrow")
	f, err := os.Create(cliPred)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := stage.Decode(ctx, res.Model, stage.File(whole), f, stage.DecodeOptions{Text: true}); err != nil {
		t.Fatal(err)
	}
	f.Close()
	ev, err := stage.Eval(ctx, stage.File(cliPred), stage.EvalOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var wantText, wantJSON bytes.Buffer
	ev.WriteConlleval(&wantText)
	ev.WriteJSON(&wantJSON)

	pred := filepath.Join(dir, "pred")
	if code, _, errs := runCLI(t, "decode", "-m", model, "-o", pred, filepath.Join(feats, "part-*.arrow")); code != 0 {
		t.Fatalf("decode: exit %d: %s", code, errs)
	}
	code, out, errs := runCLI(t, "eval", filepath.Join(pred, "part-*.parquet"))
	if code != 0 || out != wantText.String() {
		t.Fatalf("eval: exit %d, report\n%s\nwant\n%s\nstderr: %s", code, out, wantText.String(), errs)
	}
	report := filepath.Join(dir, "report.json")
	if code, _, errs := runCLI(t, "eval", "--format", "json", "-o", report, filepath.Join(pred, "part-*.parquet")); code != 0 {
		t.Fatalf("eval --format json: exit %d: %s", code, errs)
	}
	if got, _ := os.ReadFile(report); string(got) != wantJSON.String() {
		t.Fatalf("eval --format json: %s, want %s", got, wantJSON.String())
	}
	// Raw text shards decoded with --text give the same report.
	predText := filepath.Join(dir, "pred-text")
	if code, _, errs := runCLI(t, "decode", "--text", "-m", model, "-o", predText, glob); code != 0 {
		t.Fatalf("decode --text: exit %d: %s", code, errs)
	}
	if code, out, _ := runCLI(t, "eval", filepath.Join(predText, "part-*.parquet")); code != 0 || out != wantText.String() {
		t.Fatalf("eval of decode --text: exit %d, report\n%s", code, out)
	}
}

// writeModel writes the trained model to path.
func writeModel(t *testing.T, path string, res *stage.TrainResult) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := tables.WriteModel(f, res.Model, arrowio.WriterOptions{}); err != nil {
		t.Fatal(err)
	}
}

// TestRefusals: bad flag values and inputs exit 1 with a message naming
// the problem, before any pipeline runs.
func TestRefusals(t *testing.T) {
	dir := t.TempDir()
	glob, _ := shardSlice(t, dir)
	if err := os.WriteFile(filepath.Join(dir, "part-00000.arrow"), []byte("x"), 0o666); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		args []string
		want string
	}{
		{nil, "no stage given"},
		{[]string{"train"}, `unknown stage "train"`},
		{[]string{"featurize", glob}, "-o DIR is required"},
		{[]string{"featurize", "-o", dir, "--min-count", "-1", glob}, "--min-count -1"},
		{[]string{"featurize", "-o", dir, "--min-count", "x", glob}, "invalid value"},
		{[]string{"featurize", "-o", dir, "--input-format", "xml", glob}, `--input-format "xml"`},
		{[]string{"featurize", "-o", dir, "--xpos", glob}, "--xpos applies to --input-format conllu"},
		{[]string{"featurize", "-o", dir, "--label-column", "-2", glob}, "--label-column -2"},
		{[]string{"featurize", "-o", dir, "--ipc", "zip", glob}, "--ipc"},
		{[]string{"featurize", "-o", dir, "--compression", "rar", glob}, "--compression"},
		{[]string{"featurize", "-o", dir, "--workers", "-1", glob}, "--workers -1"},
		{[]string{"featurize", "-o", dir, "--no-such-flag", glob}, "no-such-flag"},
		{[]string{"featurize", "-o", dir, filepath.Join(dir, "none*.txt")}, "no such file"},
		{[]string{"featurize", "-o", dir}, "no input shards"},
		{[]string{"featurize", "-o", dir, "--template", "nope", glob}, "nope"},
		{[]string{"decode", "-o", dir, glob}, "-m MODEL is required"},
		{[]string{"decode", "-m", filepath.Join(dir, "none.arrow"), "-o", dir, glob}, "none.arrow"},
		{[]string{"decode", "-m", glob, "-o", dir, "--chunk-tokens", "0", glob}, "--chunk-tokens 0"},
		{[]string{"decode", "-m", glob, "-o", dir, "--no-labels", glob}, "apply to --text"},
		{[]string{"eval", "--format", "xml", glob}, `--format "xml"`},
		{[]string{"eval", "--scheme", "bio9", glob}, "bio9"},
		{[]string{"eval", "--scheme", "iob2", "--no-chunks", glob}, "no-chunks"},
		{[]string{"eval", "--runner", "universal", "--endpoint", "localhost:1", glob}, "cannot write to this terminal"},
		{[]string{"eval", "-o", filepath.Join(dir, "sharda.txt"), glob}, "is the input"},
		{[]string{"featurize", "-o", dir, filepath.Join(dir, "part-00000.arrow")}, "is the input"},
	}
	for _, c := range cases {
		code, _, errs := runCLI(t, c.args...)
		if code != 1 || !strings.Contains(errs, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want 1 and %q", c.args, code, errs, c.want)
		}
	}
}

// TestCorruptShards: a damaged feature table or prediction table fails
// the job with an error naming the file, and exit status 1.
func TestCorruptShards(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.parquet")
	if err := os.WriteFile(bad, []byte("PAR1 this is not parquet PAR1"), 0o666); err != nil {
		t.Fatal(err)
	}
	code, _, errs := runCLI(t, "eval", bad)
	if code != 1 || !strings.Contains(errs, "bad.parquet") {
		t.Errorf("eval of a corrupt Parquet file: exit %d, stderr %q", code, errs)
	}
	badText := filepath.Join(dir, "bad.txt")
	if err := os.WriteFile(badText, []byte("a b\n\nc\n"), 0o666); err != nil {
		t.Fatal(err)
	}
	code, _, errs = runCLI(t, "featurize", "-o", filepath.Join(dir, "f"), badText)
	if code != 1 || !strings.Contains(errs, "bad.txt") {
		t.Errorf("featurize of ragged CoNLL: exit %d, stderr %q", code, errs)
	}
	empty := filepath.Join(dir, "empty.txt")
	if err := os.WriteFile(empty, nil, 0o666); err != nil {
		t.Fatal(err)
	}
	code, _, errs = runCLI(t, "featurize", "-o", filepath.Join(dir, "f"), empty)
	if code != 1 || errs != "dualcrf-beam: featurize: "+empty+": no sentences\n" {
		t.Errorf("featurize of an empty shard: exit %d, stderr %q", code, errs)
	}
}

// TestHelp: --help prints the usage and exits 0; every stage's help names
// its flags.
func TestHelp(t *testing.T) {
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"--help"}, []string{"featurize", "decode", "eval", "--runner", "--endpoint", "--workers"}},
		{[]string{"featurize", "--help"}, []string{"-o", "--template", "--min-count", "--input-format", "--ipc", "--runner", "--endpoint", "--workers", "--verbose"}},
		{[]string{"decode", "--help"}, []string{"-m", "-o", "--text", "--marginals", "--chunk-tokens", "--runner"}},
		{[]string{"eval", "--help"}, []string{"-o", "--format", "--scheme", "--no-chunks", "--runner"}},
	} {
		code, out, _ := runCLI(t, c.args...)
		if code != 0 {
			t.Errorf("%v: exit %d", c.args, code)
		}
		for _, w := range c.want {
			if !strings.Contains(out, w) {
				t.Errorf("%v: help lacks %q:\n%s", c.args, w, out)
			}
		}
	}
}

// TestWorkerMode: started as a Beam worker without the endpoints a worker
// needs, the binary fails rather than running a stage.
func TestWorkerMode(t *testing.T) {
	if os.Getenv("DUALCRF_BEAM_WORKER_TEST") == "1" {
		os.Args = []string{"dualcrf-beam", "--worker=true"}
		main()
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestWorkerMode$")
	cmd.Env = append(os.Environ(), "DUALCRF_BEAM_WORKER_TEST=1")
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("worker mode without endpoints succeeded: %s", out)
	}
}
