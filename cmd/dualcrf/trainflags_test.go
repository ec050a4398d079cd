package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"

	"github.com/dualcrf/dualcrf/crf"
	"github.com/dualcrf/dualcrf/schemas"
	"github.com/dualcrf/dualcrf/tables"
	"github.com/dualcrf/dualcrf/train"
)

// TestTrainFlagRefusals gives every numeric train flag a value it must
// refuse: each run exits 1 naming the flag, trains nothing, and leaves
// nothing behind — not even the --duals file it was given (defects 5, 19).
func TestTrainFlagRefusals(t *testing.T) {
	f := fixtures(t)
	cases := []struct {
		args []string
		flag string
	}{
		{[]string{"--max-epochs", "0"}, "--max-epochs 0"},
		{[]string{"--max-epochs", "-1"}, "--max-epochs -1"},
		{[]string{"--max-time", "-1s"}, "--max-time"},
		{[]string{"--refresh-every", "-1"}, "--refresh-every -1"},
		{[]string{"--subprecision", "0"}, "--subprecision 0"},
		{[]string{"--subprecision", "-1"}, "--subprecision -1"},
		{[]string{"--subprecision", "1"}, "--subprecision 1"},
		{[]string{"--epsilon", "0"}, "--epsilon 0"},
		{[]string{"--epsilon", "2"}, "--epsilon 2"},
		{[]string{"--gap-tol", "0"}, "--gap-tol 0"},
		{[]string{"--gap-tol", "-1"}, "--gap-tol -1"},
		{[]string{"--gap-tol", "NaN"}, "--gap-tol NaN"},
		{[]string{"--gap-every", "-1"}, "--gap-every -1"},
		{[]string{"--checkpoint-every", "-1"}, "--checkpoint-every -1"},
		{[]string{"--checkpoint-interval", "-1s"}, "--checkpoint-interval"},
		{[]string{"--nonuniform", "0"}, "--nonuniform 0"},
		{[]string{"--nonuniform", "1.5"}, "--nonuniform 1.5"},
		{[]string{"--sampler", "best"}, "--sampler \"best\""},
		{[]string{"--transitions", "some"}, "--transitions \"some\""},
		{[]string{"--feature-space", "some"}, "--feature-space \"some\""},
		{[]string{"--memory-budget", "-1"}, "--memory-budget"},
		{[]string{"--lambda", "1e-300"}, "λ = 1e-300 is below the floor"},
		{[]string{"--solver", "lbfgs", "--lbfgs-store", "0"}, "--lbfgs-store 0"},
		{[]string{"--solver", "lbfgs", "--lbfgs-store", "-5"}, "--lbfgs-store -5"},
		// A zero or an empty value given is a value, not the default its
		// option's zero stands for (TrainOptions.Given).
		{[]string{"--loss", ""}, `--loss "": want log or hinge`},
		{[]string{"--sampler", ""}, `--sampler ""`},
		{[]string{"--solver", "sag", "--sag-variant", ""}, `--sag-variant ""`},
		{[]string{"--solver", "sag", "--sag-initial-l", "0"}, "--sag-initial-l 0"},
		{[]string{"--solver", "oeg", "--oeg-eta", "0"}, "--oeg-eta 0"},
		{[]string{"--loss", "hinge", "--hamming", ""}, `--hamming ""`},
		{[]string{"--workers", "2", "--round-size", "0"}, "--round-size 0"},
		{[]string{"--solver", "bcfw", "--loss", "log"}, `--solver "bcfw": BCFW minimises the hinge loss: want --loss hinge`},
	}
	for _, c := range cases {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			dir := t.TempDir()
			args := append([]string{"train"}, c.args...)
			if j := strings.Join(c.args, " "); !strings.Contains(j, "lbfgs") && !strings.Contains(j, "sag") && !strings.Contains(j, "oeg") &&
				!strings.Contains(j, "hinge") && !strings.Contains(j, "bcfw") {
				args = append(args, "--duals", "duals.bin")
			}
			r := runBinary(t, dir, "", append(args, "-o", "m.arrow", f.train)...)
			noPanic(t, r)
			if r.code != 1 || !strings.Contains(string(r.stderr), c.flag) || strings.Contains(string(r.stderr), "epoch ") {
				t.Fatalf("want exit 1 naming %q before any epoch; got %v", c.flag, r)
			}
			if left := dirEntries(t, dir); len(left) > 0 {
				t.Fatalf("left behind: %v", left)
			}
		})
	}
}

// TestTrainRefusesAbsurdData: attribute values beyond the bound (here
// 1e308) are refused up front naming the row (defect 10); a table whose
// featurization metadata is corrupt, and a --valid table featurized with
// other templates, are refused with the reason (defect 11).
func TestTrainRefusesAbsurdData(t *testing.T) {
	f := fixtures(t)
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "huge.crfsuite"), []byte("B\ta:1e308\tb\nI\tc:2\n\nO\ta\n"), 0o644)
	mustRun(t, dir, "featurize", "--input-format", "crfsuite", "-o", "huge.arrow", "huge.crfsuite")
	r := runBinary(t, dir, "", "train", "-o", "m.arrow", "huge.arrow")
	if r.code != 1 || !strings.Contains(string(r.stderr), "huge.arrow") || !strings.Contains(string(r.stderr), "token row 0") ||
		!strings.Contains(string(r.stderr), "1e+308") {
		t.Fatalf("value 1e308: %v", r)
	}
	for _, bad := range []struct {
		key, value, want string
	}{
		{schemas.KeyTemplates, "%x[oops", "its templates"},
		{schemas.KeyMinCount, "three", schemas.KeyMinCount},
		{"dualcrf.input", "{not json", "dualcrf.input"},
	} {
		path := filepath.Join(dir, "bad-"+strings.TrimPrefix(bad.key, "dualcrf.")+".arrow")
		if err := rewriteStream(f.train, path, func(md map[string]string) { md[bad.key] = bad.value }, nil); err != nil {
			t.Fatal(err)
		}
		r := runBinary(t, dir, "", "train", "-o", "m.arrow", path)
		if r.code != 1 || !strings.Contains(string(r.stderr), bad.want) || strings.Contains(string(r.stderr), "epoch ") {
			t.Errorf("metadata %s=%q: %v", bad.key, bad.value, r)
		}
	}
	mustRun(t, dir, "featurize", "--template", "ner", "-o", "valid.arrow", f.testText)
	r = runBinary(t, dir, "", "train", "--valid", "valid.arrow", "-o", "m.arrow", f.train)
	if r.code != 1 || !strings.Contains(string(r.stderr), "--valid") || !strings.Contains(string(r.stderr), "templates") {
		t.Fatalf("--valid with other templates: %v", r)
	}
	if _, err := os.Stat(filepath.Join(dir, "m.arrow")); err == nil {
		t.Fatal("a refused run wrote a model")
	}
}

// TestTrainMemoryEstimate: a run estimated to need more than
// --memory-budget is refused up front with the figure and the flags that
// help (defect 18).
func TestTrainMemoryEstimate(t *testing.T) {
	f := fixtures(t)
	dir := t.TempDir()
	r := runBinary(t, dir, "", "train", "--duals", "memory", "--memory-budget", "64K", "-o", "m.arrow", f.train)
	if r.code != 1 || !strings.Contains(string(r.stderr), "needs about") || !strings.Contains(string(r.stderr), "--duals PATH") ||
		!strings.Contains(string(r.stderr), "--feature-space observed") || strings.Contains(string(r.stderr), "epoch ") {
		t.Fatalf("SDCA over budget: %v", r)
	}
	r = runBinary(t, dir, "", "train", "--solver", "lbfgs", "--memory-budget", "64K", "-o", "m.arrow", f.train)
	if r.code != 1 || !strings.Contains(string(r.stderr), "--lbfgs-store") {
		t.Fatalf("L-BFGS over budget: %v", r)
	}
}

// TestTrainReportsAndRecords: the header gives the free weights beside d
// (defect 24); --transitions observed zeroes the unseen transitions and is
// recorded (defect 25); stopping short of --gap-tol is said on stderr and
// recorded in the model (defect 23); L-BFGS logs a null identity residual
// (defect 23).
func TestTrainReportsAndRecords(t *testing.T) {
	f := fixtures(t)
	dir := t.TempDir()
	r := mustRun(t, dir, "train", "--max-epochs", "2", "--feature-space", "observed", "--transitions", "observed", "-o", "m.arrow", f.train)
	m := regexp.MustCompile(`(\d+) free weights \(d = (\d+)(, held sparse)?\)`).FindStringSubmatch(string(r.stderr))
	if m == nil {
		t.Fatalf("no free weights in the header: %s", r.stderr)
	}
	free, _ := strconv.Atoi(m[1])
	d, _ := strconv.Atoi(m[2])
	if !(free < d) {
		t.Fatalf("free %d, d %d", free, d)
	}
	if !strings.Contains(string(r.stderr), "warning: stopped by --max-epochs") || !strings.Contains(string(r.stderr), "not reached") {
		t.Fatalf("no warning for the missed target: %s", r.stderr)
	}
	model, facts := modelTraining(t, filepath.Join(dir, "m.arrow"))
	if facts["target_met"] != false || facts["stopped"] != "epochs" || model.Meta[schemas.KeyTransitions] != "observed" {
		t.Fatalf("model facts %v, transitions %q", facts, model.Meta[schemas.KeyTransitions])
	}
	// Every transition between labels never adjacent in the gold data is 0.
	K := model.Layout.NumLabels
	seen := map[[2]int32]bool{}
	tab := readTrainTable(t, f.train)
	for i := 0; i < tab.Len(); i++ {
		for tok := tab.SentStart[i] + 1; tok < tab.SentStart[i+1]; tok++ {
			seen[[2]int32{tab.Labels[tok-1], tab.Labels[tok]}] = true
		}
	}
	names := map[string]int32{}
	for y, n := range tab.LabelNames {
		names[n] = int32(y)
	}
	zero, nonzero := 0, 0
	B := model.Weights[model.Layout.Trans() : model.Layout.Trans()+K*K]
	for y := 0; y < K; y++ {
		for y2 := 0; y2 < K; y2++ {
			pair := [2]int32{names[model.LabelNames[y]], names[model.LabelNames[y2]]}
			switch {
			case !seen[pair] && B[y*K+y2] != 0:
				t.Fatalf("unseen transition %s→%s has weight %g", model.LabelNames[y], model.LabelNames[y2], B[y*K+y2])
			case !seen[pair]:
				zero++
			default:
				nonzero++
			}
		}
	}
	if zero == 0 || nonzero == 0 {
		t.Fatalf("%d masked and %d free transitions", zero, nonzero)
	}

	mustRun(t, dir, "train", "-q", "--solver", "lbfgs", "--max-epochs", "3", "--log", "log.arrow", "-o", "l.arrow", f.train)
	lf, err := os.Open(filepath.Join(dir, "log.arrow"))
	if err != nil {
		t.Fatal(err)
	}
	defer lf.Close()
	rd, err := ipc.NewFileReader(lf)
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	rec, err := rd.RecordBatch(0)
	if err != nil {
		t.Fatal(err)
	}
	idx := rec.Schema().FieldIndices("identity_residual")
	if len(idx) != 1 {
		t.Fatal("no identity_residual column")
	}
	col := rec.Column(idx[0]).(*array.Float64)
	if col.NullN() != col.Len() {
		t.Fatalf("L-BFGS identity_residual %v, want all null", col)
	}
}

// readTrainTable reads a feature table's dataset.
func readTrainTable(t *testing.T, path string) *crf.Dataset {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tab, err := tables.ReadFeatureTable(f, path, tables.FeatureReadOptions{SkipText: true})
	if err != nil {
		t.Fatal(err)
	}
	return tab.Data
}

// TestTrainSynthTable: a table made by synth records no templates; train
// takes it (its model has none), with --valid of the same kind, and the
// model decodes it. (The featurization-metadata check refused it once, and
// the README's long-jobs example with it.)
func TestTrainSynthTable(t *testing.T) {
	dir := t.TempDir()
	for _, args := range [][]string{
		{"synth", "--sentences", "200", "--labels", "5", "-o", "s.arrow"},
		{"synth", "--sentences", "50", "--labels", "5", "--seed", "2", "-o", "v.arrow"},
		{"train", "-q", "--max-epochs", "2", "--valid", "v.arrow", "-o", "m.arrow", "s.arrow"},
		{"decode", "-m", "m.arrow", "-o", "p.arrow", "v.arrow"},
	} {
		if r := runBinary(t, dir, "", args...); r.code != 0 {
			t.Fatalf("%v", r)
		}
	}
}

// TestTrainModelToStdout: without -o, train writes the model to standard
// output, as the other stages write their tables: the same bytes as -o
// FILE, and nothing else there.
func TestTrainModelToStdout(t *testing.T) {
	f := fixtures(t)
	dir := t.TempDir()
	if r := runBinary(t, dir, "", "train", "-q", "--max-epochs", "2", "-o", "a.arrow", f.train); r.code != 0 {
		t.Fatal(r)
	}
	r := runBinary(t, dir, "", "train", "-q", "--max-epochs", "2", f.train)
	if r.code != 0 {
		t.Fatal(r)
	}
	want, err := os.ReadFile(filepath.Join(dir, "a.arrow"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(r.stdout, want) {
		t.Errorf("train without -o wrote %d bytes to standard output, -o a.arrow %d bytes; want the same bytes", len(r.stdout), len(want))
	}
	if left := dirEntries(t, dir); len(left) != 1 {
		t.Errorf("train without -o left %v", left)
	}
}

// TestSettingOptionsHaveFlags: every named setting of every method is a
// flag of train's one flag table, under its name, and so is every option of
// the run a resume must repeat, so that a refused resume says which flag to
// repeat.
func TestSettingOptionsHaveFlags(t *testing.T) {
	flags := trainFlags()
	for _, option := range []string{"Method", "Lambda", "FeatureSpace", "Transitions", train.RunSampler, train.RunNonUniform, train.RunRefresh} {
		if flags.flagOf(option) == nil {
			t.Errorf("option %s has no train flag", option)
		}
	}
	for _, m := range train.Methods() {
		for _, st := range m.Describe().Settings {
			if f := flags.flagOf(train.TypeName(m) + "." + st.Field); st.Name != "" && (f == nil || f.Names()[0] != st.Name) {
				t.Errorf("%s.%s: setting %q has no flag of its name", train.TypeName(m), st.Field, st.Name)
			}
		}
	}
}
