// Command bench runs the side-by-side benchmark: on each data set
// it featurizes once, trains SDCA-GAP, SDCA-uniform and L-BFGS one after the
// other as child processes of a dualcrf binary (so they never compete for
// cores), and reports per solver the median seconds per epoch, the training
// time to a certified gap ≤ 1e-2, 1e-3, 1e-4 and to a primal suboptimality
// ≤ 1e-3 against the best primal found by any solver (P*), the child's peak
// resident set size and the final test metrics. It writes
//
//	OUT/bench.md              one Markdown table per set
//	OUT/bench.arrow           the same rows as one Arrow IPC file, with a set column
//	OUT/conv_SET.png, .svg    log10 gap and suboptimality vs seconds and vs epochs
//	OUT/SET/…                 cached feature tables, and per solver the log, model, predictions
//
// The time axis is the log's total_seconds: training time, certificate
// passes and validation excluded; the child's wall time is reported too.
//
// -certify default runs train as a user does (its own certificates, no
// --valid), so the wall time is what a user waits; -workers 1,2 runs each
// SDCA solver with each worker count; -duals memory,stream:1GiB runs each
// SDCA solver with its duals in memory and streamed from disk within a
// 1 GiB --memory-budget, and adds a table of the certified gap against the
// sampler's gap estimate per epoch. The set ewt-xpos (EWT's 49 XPOS tags,
// 3.44 GiB of duals) is the large-label case for it.
//
// Run it from experiments/ (or through experiments/bench.sh); it builds the
// repository's ./cmd/dualcrf unless -bin names a binary:
//
//	go run ./bench -sets conll2000 -solvers gap,lbfgs -max-epochs 3
//	go run ./bench -sets conll2000 -solvers gap,uniform -workers 1,2 -certify default -gap-tol 1e-3
//	go run ./bench -sets ewt-xpos -solvers gap -duals memory,stream:1GiB,stream:512MiB -gap-tol 1e-3 -max-epochs 40
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"gonum.org/v1/plot/vg"

	"github.com/dualcrf/dualcrf/arrowio"
	"github.com/dualcrf/dualcrf/internal/datatest"
	"github.com/dualcrf/dualcrf/pipeline"
	"github.com/dualcrf/dualcrf/plots"
	"github.com/dualcrf/dualcrf/tables"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

// config holds the command-line settings.
type config struct {
	Data       string        // data directory
	Out        string        // output directory (absolute)
	Sets       []string      // data-set names
	Solvers    []string      // solver names
	MaxEpochs  int           // SDCA epochs
	LBFGSIters int           // L-BFGS iterations
	MaxTime    time.Duration // training-time limit per run
	GapTol     float64       // stopping gap passed to every solver
	MinCount   int           // featurize --min-count
	Bin        string        // dualcrf binary; built into Out when empty
	GapLevels  []float64     // report the time to these certified gaps
	SuboptTol  float64       // report the time to this primal suboptimality
	// EveryEpoch certifies and validates every epoch (convergence curves);
	// false runs train as a user does (its default certificates, no
	// --valid), so that the wall time is what a user waits.
	EveryEpoch bool
}

// dataset describes one benchmark corpus under the data directory.
type dataset struct {
	Name, Title    string
	Train, Test    string   // paths relative to the data directory
	FeaturizeFlags []string // template and format flags for the training table
	EvalFlags      []string // flags for dualcrf eval
}

// datasets returns the known corpora.
func datasets() []dataset {
	return []dataset{
		{Name: "conll2000", Title: "CoNLL-2000 chunking",
			Train: "conll2000/train.txt.gz", Test: "conll2000/test.txt.gz",
			FeaturizeFlags: []string{"--template", "chunking"}},
		{Name: "conll2002", Title: "CoNLL-2002 Dutch NER",
			Train: "conll2002/ned.train.gz", Test: "conll2002/ned.testb.gz",
			FeaturizeFlags: []string{"--template", "ner"}},
		{Name: "ewt", Title: "UD English EWT POS",
			Train: "ud_english_ewt/en_ewt-ud-train.conllu.gz", Test: "ud_english_ewt/en_ewt-ud-test.conllu.gz",
			FeaturizeFlags: []string{"--input-format", "conllu", "--template", "pos"},
			EvalFlags:      []string{"--no-chunks"}},
		// The large-label case: the 49 Penn Treebank tags of EWT's XPOS
		// column, 3.44 GiB of duals at λ = 1/n (Σ(T_i−1)K² floats), so
		// that it is run in memory and streamed side by side (-duals).
		{Name: "ewt-xpos", Title: "UD English EWT XPOS",
			Train: "ud_english_ewt/en_ewt-ud-train.conllu.gz", Test: "ud_english_ewt/en_ewt-ud-test.conllu.gz",
			FeaturizeFlags: []string{"--input-format", "conllu", "--xpos", "--template", "pos"},
			EvalFlags:      []string{"--no-chunks"}},
	}
}

// setNames lists the known data sets for messages.
func setNames() string {
	var names []string
	for _, d := range datasets() {
		names = append(names, d.Name)
	}
	return strings.Join(names, ", ")
}

// solverFlags returns the dualcrf train flags selecting a solver: gap,
// uniform or lbfgs, an SDCA one optionally with "@P" for P workers (gap@2;
// @0 is train's default, one per core; without it, one worker)
// and with "+STORE" for where its duals are kept (gap+stream:1GiB, see
// dualsFlags).
func solverFlags(name string) ([]string, bool) {
	name, store, stored := strings.Cut(name, "+")
	base, workers, parallel := strings.Cut(name, "@")
	var flags []string
	switch base {
	case "gap":
		flags = []string{"--solver", "sdca", "--sampler", "gap"}
	case "uniform":
		flags = []string{"--solver", "sdca", "--sampler", "uniform"}
	case "lbfgs":
		flags = []string{"--solver", "lbfgs"}
	default:
		return nil, false
	}
	switch {
	case parallel:
		if p, err := strconv.Atoi(workers); err != nil || p < 0 || base == "lbfgs" {
			return nil, false
		}
		flags = append(flags, "--workers", workers)
	case base != "lbfgs":
		flags = append(flags, "--workers", "1")
	}
	if stored {
		df, ok := dualsFlags(store)
		if !ok || base == "lbfgs" {
			return nil, false
		}
		flags = append(flags, df...)
	}
	return flags, true
}

// dualsFlags returns the dualcrf train flags of a dual store: memory, auto,
// or stream:SIZE (streamed from a temporary file with --memory-budget SIZE,
// which train parses, e.g. 1GiB).
func dualsFlags(store string) ([]string, bool) {
	switch {
	case store == "memory" || store == "auto":
		return []string{"--duals", store}, true
	case strings.HasPrefix(store, "stream:") && len(store) > len("stream:"):
		return []string{"--duals", "stream", "--memory-budget", strings.TrimPrefix(store, "stream:")}, true
	}
	return nil, false
}

// dualsTitle names a dual store in tables.
func dualsTitle(store string) string {
	if budget, ok := strings.CutPrefix(store, "stream:"); ok {
		return "streamed " + budget
	}
	return store
}

// runDir is the directory name of a run: its name with the characters
// that some file systems refuse replaced.
func runDir(name string) string {
	return strings.NewReplacer(":", "-", "+", "_").Replace(name)
}

// solverTitle names a solver in tables and legends.
func solverTitle(name string) string {
	solver, store, stored := strings.Cut(name, "+")
	base, workers, parallel := strings.Cut(solver, "@")
	title := map[string]string{"gap": "SDCA-GAP", "uniform": "SDCA-uniform", "lbfgs": "L-BFGS"}[base]
	if title == "" {
		return name
	}
	if parallel {
		title += " ×" + workers
	}
	if stored {
		title += ", " + dualsTitle(store)
	}
	return title
}

// withWorkers expands each SDCA solver into one run per worker count (1
// keeps the plain name); L-BFGS runs once.
func withWorkers(solvers, workers []string) []string {
	var out []string
	for _, s := range solvers {
		if strings.HasPrefix(s, "lbfgs") || strings.Contains(s, "@") {
			out = append(out, s)
			continue
		}
		for _, w := range workers {
			if w == "1" {
				out = append(out, s)
			} else {
				out = append(out, s+"@"+w)
			}
		}
	}
	return out
}

// withDuals expands each SDCA solver into one run per dual store (gap becomes
// gap+memory, gap+stream:1GiB, …); L-BFGS runs once. No stores leaves the
// solvers as they are (train's default store).
func withDuals(solvers, stores []string) []string {
	if len(stores) == 0 {
		return solvers
	}
	var out []string
	for _, s := range solvers {
		if strings.HasPrefix(s, "lbfgs") {
			out = append(out, s)
			continue
		}
		for _, d := range stores {
			out = append(out, s+"+"+d)
		}
	}
	return out
}

// run is the whole command: parse args, benchmark every set, write outputs.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cfg, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}
	sets, err := selectSets(cfg.Sets)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(cfg.Out, 0o755); err != nil {
		return fmt.Errorf("create output directory: %w", err)
	}
	if cfg.Bin == "" {
		if cfg.Bin, err = buildBinary(ctx, cfg.Out, stderr); err != nil {
			return err
		}
	}
	var (
		tables   []setTable
		failures []error
	)
	for _, ds := range sets {
		t, err := benchSet(ctx, cfg, ds, stderr)
		if err != nil {
			return err
		}
		tables = append(tables, t)
		for _, r := range t.Runs {
			if r.Err != nil {
				failures = append(failures, fmt.Errorf("%s/%s: %w", ds.Name, r.Solver, r.Err))
			}
		}
		if err := writeReports(cfg, tables); err != nil {
			return err
		}
	}
	if err := renderMarkdown(stdout, cfg, tables); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "bench: wrote %s, %s and the convergence plots in %s\n",
		filepath.Join(cfg.Out, "bench.md"), filepath.Join(cfg.Out, "bench.arrow"), cfg.Out)
	return errors.Join(failures...)
}

// parseFlags reads the command line into a config.
func parseFlags(args []string, stderr io.Writer) (config, error) {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var cfg config
	var sets, solvers, levels string
	fs.StringVar(&cfg.Data, "data", "", "data directory (default $DUALCRF_DATA, else data/ under the repository root)")
	fs.StringVar(&cfg.Out, "out", "bench-out", "output directory (feature tables are cached here)")
	fs.StringVar(&sets, "sets", "conll2000,conll2002,ewt", "comma-separated data sets: "+setNames())
	fs.StringVar(&solvers, "solvers", "gap,uniform,lbfgs", "comma-separated solvers: gap, uniform, lbfgs")
	fs.IntVar(&cfg.MaxEpochs, "max-epochs", 40, "SDCA epochs per run")
	fs.IntVar(&cfg.LBFGSIters, "lbfgs-iters", 0, "L-BFGS iterations per run (0: -max-epochs)")
	fs.DurationVar(&cfg.MaxTime, "max-time", 10*time.Minute, "training-time limit per run")
	fs.Float64Var(&cfg.GapTol, "gap-tol", 1e-4, "stop a run when its certified gap is at most this")
	fs.IntVar(&cfg.MinCount, "min-count", 3, "featurize --min-count")
	fs.StringVar(&cfg.Bin, "bin", "", "prebuilt dualcrf binary (default: build ./cmd/dualcrf into the output directory)")
	fs.StringVar(&levels, "gap-levels", "1e-2,1e-3,1e-4", "report the training time to these certified gaps")
	fs.Float64Var(&cfg.SuboptTol, "subopt-tol", 1e-3, "report the training time to this primal suboptimality P − P*")
	var workers, certify, stores string
	fs.StringVar(&stores, "duals", "", "comma-separated dual stores, each SDCA solver running with each: memory, auto, stream:SIZE (streamed with --memory-budget SIZE, e.g. stream:1GiB); empty: train's default")
	fs.StringVar(&workers, "workers", "1", "comma-separated SDCA worker counts: each SDCA solver runs with each (gap@2 names one run; 0: train's default, one per core)")
	fs.StringVar(&certify, "certify", "every", "every: certify and score the test set every epoch (the curves); default: train's own certificates and no --valid (the wall time a user waits)")
	if err := fs.Parse(args); err != nil {
		return config{}, err
	}
	if fs.NArg() > 0 {
		return config{}, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	switch certify {
	case "every", "default":
		cfg.EveryEpoch = certify == "every"
	default:
		return config{}, fmt.Errorf("-certify %q: want every or default", certify)
	}
	for _, d := range splitList(stores) {
		if _, ok := dualsFlags(d); !ok {
			return config{}, fmt.Errorf("-duals: unknown store %q (want memory, auto or stream:SIZE)", d)
		}
	}
	cfg.Sets = splitList(sets)
	cfg.Solvers = withDuals(withWorkers(splitList(solvers), splitList(workers)), splitList(stores))
	for _, s := range cfg.Solvers {
		if _, ok := solverFlags(s); !ok {
			return config{}, fmt.Errorf("unknown solver %q (want gap, uniform or lbfgs; an SDCA one with @P for P ≥ 1 workers)", s)
		}
	}
	if len(cfg.Sets) == 0 || len(cfg.Solvers) == 0 {
		return config{}, errors.New("-sets and -solvers must name at least one each")
	}
	var err error
	if cfg.GapLevels, err = parseLevels(levels); err != nil {
		return config{}, err
	}
	if cfg.LBFGSIters <= 0 {
		cfg.LBFGSIters = cfg.MaxEpochs
	}
	return finishPaths(cfg)
}

// finishPaths resolves the data directory and makes paths absolute.
func finishPaths(cfg config) (config, error) {
	var err error
	if cfg.Data == "" {
		if cfg.Data, err = defaultDataDir(); err != nil {
			return config{}, err
		}
	}
	if cfg.Out, err = filepath.Abs(cfg.Out); err != nil {
		return config{}, fmt.Errorf("output directory: %w", err)
	}
	if cfg.Data, err = filepath.Abs(cfg.Data); err != nil {
		return config{}, fmt.Errorf("data directory: %w", err)
	}
	if cfg.Bin != "" {
		if cfg.Bin, err = filepath.Abs(cfg.Bin); err != nil {
			return config{}, fmt.Errorf("binary: %w", err)
		}
	}
	return cfg, nil
}

// splitList splits a comma-separated list, dropping empty items.
func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// parseLevels parses a comma-separated list of positive thresholds.
func parseLevels(s string) ([]float64, error) {
	var out []float64
	for _, f := range splitList(s) {
		v, err := strconv.ParseFloat(f, 64)
		if err != nil || !(v > 0) {
			return nil, fmt.Errorf("-gap-levels: %q is not a positive number", f)
		}
		out = append(out, v)
	}
	return out, nil
}

// selectSets looks up the named data sets.
func selectSets(names []string) ([]dataset, error) {
	all := datasets()
	var out []dataset
	for _, n := range names {
		i := slices.IndexFunc(all, func(d dataset) bool { return d.Name == n })
		if i < 0 {
			return nil, fmt.Errorf("unknown data set %q (want one of %s)", n, setNames())
		}
		out = append(out, all[i])
	}
	return out, nil
}

// repoRoot is the repository's root, where ./cmd/dualcrf and data/ are:
// the nearest go.mod from the working directory up that is not one of the
// repository's nested modules (this one, experiments/, is passed over).
func repoRoot() (string, error) {
	root, err := datatest.RepoRoot()
	if err != nil {
		return "", fmt.Errorf("%w: run from the repository or pass -bin and -data", err)
	}
	return root, nil
}

// defaultDataDir is $DUALCRF_DATA, else data/ under the repository root
// (go run ./scripts/getdata -o data).
func defaultDataDir() (string, error) {
	if d := os.Getenv("DUALCRF_DATA"); d != "" {
		return d, nil
	}
	root, err := repoRoot()
	if err != nil {
		return "", err
	}
	return filepath.Join(root, "data"), nil
}

// buildBinary compiles ./cmd/dualcrf into dir and returns its path.
func buildBinary(ctx context.Context, dir string, stderr io.Writer) (string, error) {
	root, err := repoRoot()
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "dualcrf")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/dualcrf")
	cmd.Dir, cmd.Stdout, cmd.Stderr = root, stderr, stderr
	fmt.Fprintf(stderr, "$ go build -o %s ./cmd/dualcrf\n", bin)
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("build dualcrf: %w", err)
	}
	return bin, nil
}

// logRow is one epoch of a training log; NaN stands for null.
type logRow struct {
	Epoch        int
	Seconds      float64 // training time of the epoch
	TotalSeconds float64 // cumulative training time
	Primal       float64
	Gap          float64 // certified gap, NaN when not certified
	GapEstimate  float64 // the sampler's estimate of the gap (mean of its per-sentence gaps), NaN when none
}

// certified reports whether the row carries a certificate.
func (r logRow) certified() bool { return !math.IsNaN(r.Gap) && !math.IsNaN(r.Primal) }

// solverRun is the outcome of one training run.
type solverRun struct {
	Solver  string
	Rows    []logRow
	PeakRSS int64   // bytes, of the training process
	Wall    float64 // wall seconds of the training process
	TestAcc float64 // token accuracy in [0,1], NaN when unknown
	TestF1  float64 // conlleval chunk F1 in [0,1], NaN when unknown
	Blocks  int     // blocks of a streamed run's dual store, 0 when not streamed
	Err     error
}

// setTable is one data set's runs and their summaries.
type setTable struct {
	Set   dataset
	PStar float64 // best primal found over all runs' certified rows
	Runs  []solverRun
	Rows  []summary
}

// summary is one line of the report.
type summary struct {
	Set, Solver string
	SecPerEpoch float64   // median training seconds of epochs ≥ 1
	Epochs      int       // last epoch in the log
	TGap        []float64 // training seconds to gap ≤ each level (NaN: never)
	TSubopt     float64   // training seconds to P − P* ≤ tol (NaN: never)
	PeakRSS     int64     // bytes
	TestAcc     float64
	TestF1      float64
	FinalGap    float64 // last certified gap
	FinalPrimal float64 // primal of the last certified row
	PStar       float64
	Wall        float64
	Blocks      int // streamed dual store's blocks, 0 when not streamed
	Err         string
}

// benchSet featurizes one corpus and runs every solver on it in turn.
func benchSet(ctx context.Context, cfg config, ds dataset, stderr io.Writer) (setTable, error) {
	dir := filepath.Join(cfg.Out, ds.Name)
	train, test, err := featurize(ctx, cfg, ds, dir, stderr)
	if err != nil {
		return setTable{}, err
	}
	t := setTable{Set: ds}
	for _, s := range cfg.Solvers {
		if err := ctx.Err(); err != nil {
			return setTable{}, err
		}
		r := runSolver(ctx, cfg, ds, s, train, test, filepath.Join(dir, runDir(s)), stderr)
		if r.Err != nil {
			fmt.Fprintf(stderr, "bench: %s/%s failed: %v\n", ds.Name, s, r.Err)
		}
		t.Runs = append(t.Runs, r)
	}
	t.PStar = bestPrimal(t.Runs)
	for _, r := range t.Runs {
		t.Rows = append(t.Rows, summarize(ds.Name, r, t.PStar, cfg.GapLevels, cfg.SuboptTol))
	}
	if err := writePlots(cfg.Out, t, cfg.Solvers); err != nil {
		return setTable{}, err
	}
	return t, nil
}

// featurize writes (or reuses) the training and test feature tables of ds.
// The cache is the pair of files: delete the directory to refresh it.
func featurize(ctx context.Context, cfg config, ds dataset, dir string, stderr io.Writer) (train, test string, err error) {
	train, test = filepath.Join(dir, "train.arrow"), filepath.Join(dir, "test.arrow")
	if fileExists(train) && fileExists(test) {
		fmt.Fprintf(stderr, "bench: %s: using cached %s and %s\n", ds.Name, train, test)
		return train, test, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", "", fmt.Errorf("create %s: %w", dir, err)
	}
	args := append([]string{"featurize"}, ds.FeaturizeFlags...)
	args = append(args, "--min-count", strconv.Itoa(cfg.MinCount), "-o", train, filepath.Join(cfg.Data, ds.Train))
	if _, err := runChild(ctx, cfg.Bin, args, filepath.Join(dir, "featurize.stderr"), stderr); err != nil {
		return "", "", fmt.Errorf("featurize %s: %w", ds.Name, err)
	}
	args = []string{"featurize", "--vocab", train, "-o", test, filepath.Join(cfg.Data, ds.Test)}
	if _, err := runChild(ctx, cfg.Bin, args, filepath.Join(dir, "featurize-test.stderr"), stderr); err != nil {
		return "", "", fmt.Errorf("featurize %s test: %w", ds.Name, err)
	}
	return train, test, nil
}

// fileExists reports whether path is an existing regular file.
func fileExists(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.Mode().IsRegular()
}

// childResult is what the benchmark keeps of a finished child process.
type childResult struct {
	Wall    time.Duration
	PeakRSS int64 // bytes
}

// runChild runs bin with args, its standard error going to errPath, and
// returns its wall time and peak RSS. On failure the tail of its standard
// error is part of the error.
func runChild(ctx context.Context, bin string, args []string, errPath string, progress io.Writer) (childResult, error) {
	fmt.Fprintf(progress, "$ %s %s\n", filepath.Base(bin), strings.Join(args, " "))
	ef, err := os.Create(errPath)
	if err != nil {
		return childResult{}, fmt.Errorf("create %s: %w", errPath, err)
	}
	defer ef.Close()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Stdout, cmd.Stderr = io.Discard, ef
	start := time.Now()
	runErr := cmd.Run()
	res := childResult{Wall: time.Since(start), PeakRSS: peakRSS(cmd.ProcessState)}
	if runErr != nil {
		return res, fmt.Errorf("%s %s: %w%s", filepath.Base(bin), args[0], runErr, tail(errPath))
	}
	return res, nil
}

// tail returns the last lines of a file as an error suffix.
func tail(path string) string {
	b, err := os.ReadFile(path)
	if err != nil || len(b) == 0 {
		return ""
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) > 5 {
		lines = lines[len(lines)-5:]
	}
	return ": " + strings.Join(lines, " | ")
}

// runSolver trains one solver, reads its log and scores its model on test.
func runSolver(ctx context.Context, cfg config, ds dataset, solver, train, test, dir string, stderr io.Writer) solverRun {
	r := solverRun{Solver: solver, TestAcc: math.NaN(), TestF1: math.NaN()}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		r.Err = fmt.Errorf("create %s: %w", dir, err)
		return r
	}
	logPath, model := filepath.Join(dir, "log.arrow"), filepath.Join(dir, "model.arrow")
	res, err := runChild(ctx, cfg.Bin, trainArgs(cfg, solver, train, test, logPath, model),
		filepath.Join(dir, "train.stderr"), stderr)
	r.PeakRSS, r.Wall = res.PeakRSS, res.Wall.Seconds()
	if err != nil {
		r.Err = err
		return r
	}
	if r.Blocks, err = streamBlocks(filepath.Join(dir, "train.stderr")); err != nil {
		r.Err = err
		return r
	}
	if r.Rows, err = readLog(logPath); err != nil {
		r.Err = err
		return r
	}
	r.TestAcc, r.TestF1, r.Err = score(ctx, cfg.Bin, ds, model, test, dir, stderr)
	return r
}

// streamBlocks reads the number of blocks of a streamed dual store from
// train's standard error ("train: duals … streamed from … in N blocks"),
// 0 when the run did not stream its duals.
func streamBlocks(errPath string) (int, error) {
	b, err := os.ReadFile(errPath)
	if err != nil {
		return 0, fmt.Errorf("read %s: %w", errPath, err)
	}
	blocks := regexp.MustCompile(` in ([0-9]+) blocks \(`)
	for line := range strings.Lines(string(b)) {
		if !strings.HasPrefix(line, "train: duals ") || !strings.Contains(line, " streamed from ") {
			continue
		}
		m := blocks.FindAllStringSubmatch(line, -1)
		if len(m) == 0 {
			return 0, fmt.Errorf("%s: no block count in %q", errPath, strings.TrimSpace(line))
		}
		n, err := strconv.Atoi(m[len(m)-1][1])
		if err != nil || n < 1 {
			return 0, fmt.Errorf("%s: bad block count in %q", errPath, strings.TrimSpace(line))
		}
		return n, nil
	}
	return 0, nil
}

// trainArgs is the dualcrf train command line of one run.
func trainArgs(cfg config, solver, train, test, logPath, model string) []string {
	flags, _ := solverFlags(solver)
	epochs := cfg.MaxEpochs
	if solver == "lbfgs" {
		epochs = cfg.LBFGSIters
	}
	args := append([]string{"train"}, flags...)
	if cfg.EveryEpoch {
		args = append(args, "--gap-every", "1", "--valid", test)
	}
	return append(args,
		"--gap-tol", strconv.FormatFloat(cfg.GapTol, 'g', -1, 64),
		"--max-epochs", strconv.Itoa(epochs),
		"--max-time", cfg.MaxTime.String(),
		"--log", logPath, "-q", "-o", model, train)
}

// evalReport is the part of dualcrf eval --json the benchmark reads.
type evalReport struct {
	Accuracy float64 `json:"accuracy"`
	Chunks   *struct {
		F1 float64 `json:"f1"`
	} `json:"chunks"`
}

// score decodes test with model and evaluates the predictions.
func score(ctx context.Context, bin string, ds dataset, model, test, dir string, stderr io.Writer) (acc, f1 float64, err error) {
	acc, f1 = math.NaN(), math.NaN()
	pred := filepath.Join(dir, "pred.arrow")
	args := []string{"decode", "-m", model, "-o", pred, test}
	if _, err := runChild(ctx, bin, args, filepath.Join(dir, "decode.stderr"), stderr); err != nil {
		return acc, f1, err
	}
	args = append(append([]string{"eval", "--json"}, ds.EvalFlags...), pred)
	fmt.Fprintf(stderr, "$ %s %s\n", filepath.Base(bin), strings.Join(args, " "))
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Stderr = stderr
	out, err := cmd.Output()
	if err != nil {
		return acc, f1, fmt.Errorf("dualcrf eval %s: %w", pred, err)
	}
	var rep evalReport
	if err := json.Unmarshal(out, &rep); err != nil {
		return acc, f1, fmt.Errorf("dualcrf eval %s: parse JSON: %w", pred, err)
	}
	acc = rep.Accuracy
	if rep.Chunks != nil {
		f1 = rep.Chunks.F1
	}
	return acc, f1, nil
}

// readLog reads a training log written by dualcrf train --log.
func readLog(path string) ([]logRow, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read log: %w", err)
	}
	defer f.Close()
	rr, err := tables.OpenRecordReader(f, path, arrowio.ReaderOptions{})
	if err != nil {
		return nil, fmt.Errorf("read log: %w", err)
	}
	defer rr.Release()
	log, err := tables.ReadLog(rr, path)
	if err != nil {
		return nil, fmt.Errorf("read log: %w", err)
	}
	rows := make([]logRow, len(log.Rows))
	for i, r := range log.Rows {
		rows[i] = logRow{Epoch: r.Epoch, Seconds: r.Seconds, TotalSeconds: r.TotalSeconds, Primal: r.Primal, Gap: r.Gap,
			GapEstimate: r.GapEstimate}
	}
	return rows, nil
}

// column returns the named column of rec as type A.
func column[A arrow.Array](rec arrow.RecordBatch, name string) (A, error) {
	var zero A
	idx := rec.Schema().FieldIndices(name)
	if len(idx) != 1 {
		return zero, fmt.Errorf("no column %q", name)
	}
	a, ok := rec.Column(idx[0]).(A)
	if !ok {
		return zero, fmt.Errorf("column %q has type %s", name, rec.Column(idx[0]).DataType())
	}
	return a, nil
}

// floatAt returns a[i], NaN when null.
func floatAt(a *array.Float64, i int) float64 {
	if a.IsNull(i) {
		return math.NaN()
	}
	return a.Value(i)
}

// bestPrimal is P*, the least primal over the certified rows of all runs
// (NaN when there is none): the best found, not the true optimum.
func bestPrimal(runs []solverRun) float64 {
	best := math.NaN()
	for _, r := range runs {
		for _, row := range r.Rows {
			if row.certified() && !(row.Primal >= best) {
				best = row.Primal
			}
		}
	}
	return best
}

// timeTo returns the total_seconds of the first certified row whose value
// is at most tol, NaN when none is.
func timeTo(rows []logRow, value func(logRow) float64, tol float64) float64 {
	for _, r := range rows {
		if r.certified() && value(r) <= tol {
			return r.TotalSeconds
		}
	}
	return math.NaN()
}

// gapOf is a row's certified gap.
func gapOf(r logRow) float64 { return r.Gap }

// suboptOf returns a row's primal suboptimality against pStar.
func suboptOf(pStar float64) func(logRow) float64 {
	return func(r logRow) float64 { return r.Primal - pStar }
}

// median returns the median of xs (NaN when empty); xs is not modified.
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	m := len(s) / 2
	if len(s)%2 == 1 {
		return s[m]
	}
	return (s[m-1] + s[m]) / 2
}

// summarize computes the report line of one run.
func summarize(set string, r solverRun, pStar float64, levels []float64, suboptTol float64) summary {
	s := summary{Set: set, Solver: r.Solver, PeakRSS: r.PeakRSS, Wall: r.Wall, Blocks: r.Blocks,
		TestAcc: r.TestAcc, TestF1: r.TestF1, PStar: pStar,
		FinalGap: math.NaN(), FinalPrimal: math.NaN(), SecPerEpoch: math.NaN(), TSubopt: math.NaN()}
	if r.Err != nil {
		s.Err = r.Err.Error()
	}
	var secs []float64
	for _, row := range r.Rows {
		s.Epochs = max(s.Epochs, row.Epoch)
		if row.Epoch >= 1 {
			secs = append(secs, row.Seconds)
		}
		if row.certified() {
			s.FinalGap, s.FinalPrimal = row.Gap, row.Primal
		}
	}
	s.SecPerEpoch = median(secs)
	for _, tol := range levels {
		s.TGap = append(s.TGap, timeTo(r.Rows, gapOf, tol))
	}
	if !math.IsNaN(pStar) {
		s.TSubopt = timeTo(r.Rows, suboptOf(pStar), suboptTol)
	}
	return s
}

// writeReports writes bench.md and bench.arrow for the tables so far.
func writeReports(cfg config, tables []setTable) error {
	md, err := pipeline.CreateOutput(filepath.Join(cfg.Out, "bench.md"))
	if err != nil {
		return err
	}
	defer md.Close()
	if err := renderMarkdown(md, cfg, tables); err != nil {
		return fmt.Errorf("write %s: %w", md.Name(), err)
	}
	if err := md.Commit(); err != nil {
		return err
	}
	return writeArrow(filepath.Join(cfg.Out, "bench.arrow"), cfg, tables)
}

// renderMarkdown writes the report: a settings line and one table per set.
func renderMarkdown(w io.Writer, cfg config, tables []setTable) error {
	var b strings.Builder
	b.WriteString("# dualcrf benchmark: SDCA-GAP, SDCA-uniform and L-BFGS side by side\n\n")
	fmt.Fprintf(&b, "Settings: λ = 1/n, gap tolerance %s, at most %d SDCA epochs / %d L-BFGS iterations and %s of training per run, featurize --min-count %d; %d CPUs, %s/%s.\n",
		fmtG(cfg.GapTol), cfg.MaxEpochs, cfg.LBFGSIters, cfg.MaxTime, cfg.MinCount, runtime.NumCPU(), runtime.GOOS, runtime.GOARCH)
	b.WriteString("Times are training seconds (the log's total_seconds: certificate passes and validation excluded); ")
	if cfg.EveryEpoch {
		b.WriteString("wall is the training process's wall clock, everything included (loading, a certificate and a test-set score every epoch, writing the model). ")
	} else {
		b.WriteString("wall is the training process's wall clock, everything included (loading, initialisation, train's own certificates, writing the model): what a user waits. ")
	}
	b.WriteString("P* is the best primal found by any solver on the set, not the true optimum. ")
	b.WriteString("L-BFGS's gap is the certified bound ‖∇P‖²/(2λ) ≥ P − P*; its epochs are iterations. Test accuracy is token accuracy; F1 is conlleval's chunk F1.\n")
	for _, t := range tables {
		writeSetTable(&b, cfg, t)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// writeSetTable renders one set's table.
func writeSetTable(b *strings.Builder, cfg config, t setTable) {
	fmt.Fprintf(b, "\n## %s (%s)\n\nP* (best found) = %s\n\n", t.Set.Title, t.Set.Name, fmtPrimal(t.PStar))
	b.WriteString("| solver | s/epoch (median) | epochs |")
	for _, l := range cfg.GapLevels {
		fmt.Fprintf(b, " t(gap≤%s) |", fmtG(l))
	}
	fmt.Fprintf(b, " t(subopt≤%s) | peak RSS | test acc | test F1 | final gap | wall |\n", fmtG(cfg.SuboptTol))
	b.WriteString("|---|---:|---:|" + strings.Repeat("---:|", len(cfg.GapLevels)) + "---:|---:|---:|---:|---:|---:|\n")
	for _, s := range t.Rows {
		name := solverTitle(s.Solver)
		switch {
		case s.Blocks == 1:
			name += " (1 block)"
		case s.Blocks > 1:
			name += fmt.Sprintf(" (%d blocks)", s.Blocks)
		}
		if s.Err != "" {
			name += " (failed)"
		}
		fmt.Fprintf(b, "| %s | %s | %d |", name, fmtSeconds(s.SecPerEpoch), s.Epochs)
		for _, v := range s.TGap {
			fmt.Fprintf(b, " %s |", fmtSeconds(v))
		}
		fmt.Fprintf(b, " %s | %s | %s | %s | %s | %s |\n", fmtSeconds(s.TSubopt), fmtRSS(s.PeakRSS),
			fmtPercent(s.TestAcc*100), fmtPercent(s.TestF1*100), fmtSci(s.FinalGap), fmtSeconds(s.Wall))
	}
	for _, s := range t.Rows {
		if s.Err != "" {
			fmt.Fprintf(b, "\n%s failed: %s\n", solverTitle(s.Solver), s.Err)
		}
	}
	writeEstimateTable(b, t)
}

// writeEstimateTable renders, for the runs given a dual store (-duals), the
// certified gap and the sampler's gap estimate at the end of every epoch:
// how far the estimate that steers sampling and certificates is from the
// truth. Nothing is written when no run has a store.
func writeEstimateTable(b *strings.Builder, t setTable) {
	var runs []solverRun
	epochs := -1
	for _, r := range t.Runs {
		if strings.Contains(r.Solver, "+") && len(r.Rows) > 0 {
			runs = append(runs, r)
			epochs = max(epochs, r.Rows[len(r.Rows)-1].Epoch)
		}
	}
	if len(runs) == 0 {
		return
	}
	b.WriteString("\nCertified gap and the sampler's gap estimate at the end of each epoch (— : no certificate that epoch, or the run had stopped):\n\n| epoch |")
	for _, r := range runs {
		fmt.Fprintf(b, " %s: certified | estimate |", solverTitle(r.Solver))
	}
	b.WriteString("\n|---:|" + strings.Repeat("---:|---:|", len(runs)) + "\n")
	for e := 0; e <= epochs; e++ {
		fmt.Fprintf(b, "| %d |", e)
		for _, r := range runs {
			gap, est := math.NaN(), math.NaN()
			if i := slices.IndexFunc(r.Rows, func(row logRow) bool { return row.Epoch == e }); i >= 0 {
				gap, est = r.Rows[i].Gap, r.Rows[i].GapEstimate
			}
			fmt.Fprintf(b, " %s | %s |", fmtSci(gap), fmtSci(est))
		}
		b.WriteString("\n")
	}
}

// dash stands for a missing value.
const dash = "—"

// fmtG formats a threshold compactly: 1e-3, 2.5e-4.
func fmtG(v float64) string {
	s := strconv.FormatFloat(v, 'e', -1, 64)
	mant, exp, ok := strings.Cut(s, "e")
	if !ok {
		return s
	}
	sign := exp[:1]
	if sign == "+" {
		sign = ""
	}
	digits := strings.TrimLeft(exp[1:], "0")
	if digits == "" {
		return mant
	}
	return mant + "e" + sign + digits
}

// fmtSeconds formats a duration in seconds.
func fmtSeconds(v float64) string {
	switch {
	case math.IsNaN(v):
		return dash
	case v < 10:
		return fmt.Sprintf("%.2f s", v)
	}
	return fmt.Sprintf("%.1f s", v)
}

// fmtSci formats a small positive quantity such as a gap.
func fmtSci(v float64) string {
	if math.IsNaN(v) {
		return dash
	}
	return fmt.Sprintf("%.2e", v)
}

// fmtPrimal formats an objective value.
func fmtPrimal(v float64) string {
	if math.IsNaN(v) {
		return dash
	}
	return fmt.Sprintf("%.10g", v)
}

// fmtPercent formats a percentage.
func fmtPercent(v float64) string {
	if math.IsNaN(v) {
		return dash
	}
	return fmt.Sprintf("%.2f", v)
}

// fmtRSS formats a byte count in MiB.
func fmtRSS(v int64) string {
	if v <= 0 {
		return dash
	}
	return fmt.Sprintf("%.0f MiB", float64(v)/(1<<20))
}

// benchSchema returns the schema of bench.arrow.
func benchSchema(cfg config) *arrow.Schema {
	f64 := arrow.PrimitiveTypes.Float64
	fields := []arrow.Field{
		{Name: "set", Type: arrow.BinaryTypes.String},
		{Name: "solver", Type: arrow.BinaryTypes.String},
		{Name: "seconds_per_epoch", Type: f64, Nullable: true},
		{Name: "epochs", Type: arrow.PrimitiveTypes.Int32},
	}
	for _, l := range cfg.GapLevels {
		fields = append(fields, arrow.Field{Name: "t_gap_" + fmtG(l), Type: f64, Nullable: true})
	}
	fields = append(fields,
		arrow.Field{Name: "t_subopt_" + fmtG(cfg.SuboptTol), Type: f64, Nullable: true},
		arrow.Field{Name: "peak_rss_bytes", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		arrow.Field{Name: "test_accuracy", Type: f64, Nullable: true},
		arrow.Field{Name: "test_f1", Type: f64, Nullable: true},
		arrow.Field{Name: "final_gap", Type: f64, Nullable: true},
		arrow.Field{Name: "final_primal", Type: f64, Nullable: true},
		arrow.Field{Name: "p_star_best_found", Type: f64, Nullable: true},
		arrow.Field{Name: "wall_seconds", Type: f64, Nullable: true},
		arrow.Field{Name: "stream_blocks", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
		arrow.Field{Name: "error", Type: arrow.BinaryTypes.String, Nullable: true},
	)
	md := arrow.NewMetadata(
		[]string{"dualcrf.bench.time_axis", "dualcrf.bench.test_accuracy", "dualcrf.bench.test_f1"},
		[]string{"training seconds (total_seconds; certificates excluded)", "token accuracy in [0,1]", "conlleval chunk F1 in [0,1]"})
	return arrow.NewSchema(fields, &md)
}

// writeArrow writes every summary row as one Arrow IPC file.
func writeArrow(path string, cfg config, tables []setTable) error {
	rec := buildRecord(memory.DefaultAllocator, benchSchema(cfg), tables)
	defer rec.Release()
	out, err := pipeline.CreateOutput(path)
	if err != nil {
		return err
	}
	defer out.Close()
	w, err := arrowio.NewRecordWriter(out, rec.Schema(), arrowio.WriterOptions{Format: arrowio.FormatFile})
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer w.Abort()
	if err := w.Write(rec); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := w.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return out.Commit()
}

// buildRecord builds the summary rows of all tables into one record batch.
func buildRecord(mem memory.Allocator, schema *arrow.Schema, tables []setTable) arrow.RecordBatch {
	b := array.NewRecordBuilder(mem, schema)
	defer b.Release()
	for _, t := range tables {
		for _, s := range t.Rows {
			appendSummary(b, s)
		}
	}
	return b.NewRecordBatch()
}

// appendSummary appends one row in schema order.
func appendSummary(b *array.RecordBuilder, s summary) {
	i := 0
	next := func() array.Builder { i++; return b.Field(i - 1) }
	next().(*array.StringBuilder).Append(s.Set)
	next().(*array.StringBuilder).Append(solverTitle(s.Solver))
	appendFloat(next(), s.SecPerEpoch)
	next().(*array.Int32Builder).Append(int32(s.Epochs))
	for _, v := range s.TGap {
		appendFloat(next(), v)
	}
	appendFloat(next(), s.TSubopt)
	if rb := next().(*array.Int64Builder); s.PeakRSS > 0 {
		rb.Append(s.PeakRSS)
	} else {
		rb.AppendNull()
	}
	for _, v := range []float64{s.TestAcc, s.TestF1, s.FinalGap, s.FinalPrimal, s.PStar, s.Wall} {
		appendFloat(next(), v)
	}
	if bb := next().(*array.Int32Builder); s.Blocks > 0 {
		bb.Append(int32(s.Blocks))
	} else {
		bb.AppendNull()
	}
	if eb := next().(*array.StringBuilder); s.Err != "" {
		eb.Append(s.Err)
	} else {
		eb.AppendNull()
	}
}

// appendFloat appends v, or null when it is NaN.
func appendFloat(b array.Builder, v float64) {
	fb := b.(*array.Float64Builder)
	if math.IsNaN(v) {
		fb.AppendNull()
		return
	}
	fb.Append(v)
}

// Plot layout: 2×2 panels of panelW × panelH.
const (
	panelW = 13 * vg.Centimeter
	panelH = 9 * vg.Centimeter
)

// panel is one convergence panel: y (gap or suboptimality) against x.
type panel struct {
	Title, XLabel, YLabel string
	X                     func(logRow) float64
	Y                     func(logRow) float64
}

// panels returns the four panels for a set whose best primal is pStar.
func panels(pStar float64) [2][2]panel {
	secs := func(r logRow) float64 { return r.TotalSeconds }
	epochs := func(r logRow) float64 { return float64(r.Epoch) }
	const (
		xs, xe = "training seconds (certificates excluded)", "epochs (L-BFGS: iterations)"
		yg, ys = "log10 certified gap", "log10 (P − P*), P* best found"
	)
	return [2][2]panel{
		{{"certified gap vs time", xs, yg, secs, gapOf}, {"certified gap vs epochs", xe, yg, epochs, gapOf}},
		{{"suboptimality vs time", xs, ys, secs, suboptOf(pStar)}, {"suboptimality vs epochs", xe, ys, epochs, suboptOf(pStar)}},
	}
}

// convergenceFigure is the 2×2 figure for one set; solvers fixes each
// solver's colour and dashes so they match across sets.
func convergenceFigure(t setTable, solvers []string) plots.Figure {
	spec := panels(t.PStar)
	fig := plots.Figure{PanelWidth: panelW, PanelHeight: panelH}
	for i := range spec {
		var row []plots.Panel
		for _, pn := range spec[i] {
			p := plots.Panel{Title: t.Set.Title + ": " + pn.Title, XLabel: pn.XLabel, YLabel: pn.YLabel, Log10Y: true}
			for _, r := range t.Runs {
				s := plots.Series{Name: solverTitle(r.Solver), Style: max(slices.Index(solvers, r.Solver), 0)}
				for _, lr := range r.Rows {
					if lr.certified() {
						s.X, s.Y = append(s.X, pn.X(lr)), append(s.Y, pn.Y(lr))
					}
				}
				p.Series = append(p.Series, s)
			}
			row = append(row, p)
		}
		fig.Rows = append(fig.Rows, row)
	}
	return fig
}

// writePlots writes conv_SET.png and conv_SET.svg into dir.
func writePlots(dir string, t setTable, solvers []string) error {
	fig := convergenceFigure(t, solvers)
	base := filepath.Join(dir, "conv_"+t.Set.Name)
	if err := plots.WriteFile(base+".png", fig); err != nil {
		return err
	}
	return plots.WriteFile(base+".svg", fig)
}
