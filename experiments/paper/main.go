// Command paper reproduces the experiments of Le Priol et al., "Adaptive
// Stochastic Dual Coordinate Ascent for Conditional Random Fields" (UAI
// 2018), Section 6 and Appendix E, with dualcrf's library (package stage):
//
//   - Figure 2: the samplers on OCR (uniform, gap, importance,
//     gap×importance, max), log10 certified gap against epochs;
//   - Figure 3: the fraction of non-uniform draws on CoNLL-2002 Dutch NER;
//   - Figure 4: log10(P − P*) against oracle calls, parameter updates and
//     seconds, for SDCA (uniform), SDCA-GAP and L-BFGS (and the peers
//     named by -solvers) on OCR, CoNLL-2000, NER and UD EWT POS;
//   - Figure 7: test error after each epoch of the Figure 4 runs;
//   - Figure 9: the gap estimate against the certified gap;
//   - §6.2 (-figures sub): SDCA-GAP with its line search solved to several
//     sub-precisions.
//
// It writes the figures (SVG), the training logs (logs/*.arrow, readable by
// `dualcrf plot` and `dualcrf inspect`) and results.md into -out. Every
// point plotted is certified: each epoch runs a certificate pass.
//
// Run it from experiments/, the module's root:
//
//	nice go run ./paper -out paper
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/dualcrf/dualcrf/featurize"
	"github.com/dualcrf/dualcrf/internal/datatest"
	"github.com/dualcrf/dualcrf/pipeline"
	"github.com/dualcrf/dualcrf/plots"
	"github.com/dualcrf/dualcrf/stage"
	"github.com/dualcrf/dualcrf/tables"
	"github.com/dualcrf/dualcrf/train"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stderr)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "paper:", err)
		os.Exit(1)
	}
}

// config is the command line.
type config struct {
	Data, Out string
	Figures   []string // 2, 3, 4 (4 also draws 7 and 9), sub (§6.2)
	Sets      []string // Figure 4's data sets
	Solvers   []string // Figure 4's solvers
	Scale     float64  // multiplies every epoch cap
	Ext       string   // figure format: svg or png
	Seed      uint64
	Reuse     bool // read a run's log back from logs/ when it is there
}

// dataset is one of the paper's four tasks.
type dataset struct {
	Name, Title string
	Train, Test string // paths under the data directory
	Input       featurize.InputOptions
	TrainFolds  string // OCR: folds of the training and test tables
	TestFolds   string
	Template    string // built-in template set ("" for OCR's pixels)
	MinCount    int
	Epochs      int // SDCA epochs at scale 1
	Iters       int // L-BFGS iterations at scale 1
	// RefEpochs and RefTol bound the reference run that certifies P*
	// (SDCA-GAP to a certified gap ≤ RefTol, at most RefEpochs epochs).
	RefEpochs int
	RefTol    float64
}

// datasets are the paper's four tasks as dualcrf has them.
func datasets() []dataset {
	return []dataset{
		{Name: "ocr", Title: "OCR", Train: "ocr/letter.data.gz", Test: "ocr/letter.data.gz",
			Input: featurize.InputOptions{Format: "ocr"}, TrainFolds: "0-8", TestFolds: "9", Epochs: 25, Iters: 60, RefEpochs: 90, RefTol: 1e-6},
		{Name: "conll2000", Title: "CoNLL-2000", Train: "conll2000/train.txt.gz", Test: "conll2000/test.txt.gz",
			Template: "chunking", MinCount: 3, Epochs: 8, Iters: 50, RefEpochs: 40, RefTol: 1e-7},
		{Name: "ner", Title: "NER (CoNLL-2002 Dutch)", Train: "conll2002/ned.train.gz", Test: "conll2002/ned.testb.gz",
			Template: "ner", Epochs: 8, Iters: 50, RefEpochs: 40, RefTol: 1e-8},
		{Name: "pos", Title: "POS (UD English EWT)", Train: "ud_english_ewt/en_ewt-ud-train.conllu.gz",
			Test: "ud_english_ewt/en_ewt-ud-test.conllu.gz", Input: featurize.InputOptions{Format: "conllu"},
			Template: "pos", Epochs: 8, Iters: 50, RefEpochs: 40, RefTol: 1e-7},
	}
}

// solver is one curve of Figure 4: how dualcrf trains it.
type solver struct {
	Name, Title string
	Opts        stage.TrainOptions
	Iterative   bool // epochs are iterations over the whole set (L-BFGS): one update each
}

// solvers maps the -solvers names to training options.
func solvers() map[string]solver {
	return map[string]solver{
		"sdca":     {Name: "sdca", Title: "SDCA", Opts: stage.TrainOptions{Sampler: stage.Sampler{Kind: "uniform"}}},
		"sdca-gap": {Name: "sdca-gap", Title: "SDCA-GAP", Opts: stage.TrainOptions{Sampler: stage.Sampler{Kind: "gap", NonUniform: 0.8}}},
		"lbfgs":    {Name: "lbfgs", Title: "L-BFGS", Opts: stage.TrainOptions{Method: &train.LBFGS{}}, Iterative: true},
		"oeg":      {Name: "oeg", Title: "OEG", Opts: stage.TrainOptions{Method: &train.OEG{}}},
		"sag":      {Name: "sag", Title: "SAG-NUS", Opts: stage.TrainOptions{Method: &train.SAG{Variant: train.SAGNUS}}},
		"sag-star": {Name: "sag-star", Title: "SAG-NUS*", Opts: stage.TrainOptions{Method: &train.SAG{Variant: train.SAGNUSStar}}},
	}
}

func parseFlags(args []string, stderr io.Writer) (config, error) {
	fs := flag.NewFlagSet("paper", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var cfg config
	var figs, sets, solv string
	fs.StringVar(&cfg.Data, "data", "", "data directory (default $DUALCRF_DATA, else data/ under the repository's root)")
	fs.StringVar(&cfg.Out, "out", "paper", "output directory: figures, logs/, results.md (the default is this harness's directory, run from experiments/)")
	fs.StringVar(&figs, "figures", "2,3,4", "figures to draw: 2, 3, 4 (4 also draws 7 and 9); sub: §6.2's sub-precisions on -sets")
	fs.StringVar(&sets, "sets", defaultSets, "Figure 4's data sets (a subset names the outputs after them: fig4-solvers-ocr-ner.svg, …)")
	fs.StringVar(&solv, "solvers", "sdca,sdca-gap,lbfgs", "Figure 4's solvers: sdca, sdca-gap, lbfgs (and oeg, sag, sag-star with the peers' solvers)")
	fs.Float64Var(&cfg.Scale, "scale", 1, "multiply every epoch and iteration cap by this (> 0)")
	fs.Uint64Var(&cfg.Seed, "seed", 1, "random seed of every SDCA run")
	fs.StringVar(&cfg.Ext, "format", "svg", "figure format: svg or png")
	fs.BoolVar(&cfg.Reuse, "reuse", false, "read a run's log back from logs/ when it is there instead of training again (the runs are deterministic: same code, same seed, same log but for the seconds)")
	if err := fs.Parse(args); err != nil {
		return cfg, err
	}
	if fs.NArg() > 0 {
		return cfg, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if _, err := plots.FormatOf("x." + cfg.Ext); err != nil {
		return cfg, fmt.Errorf("-format %q: svg or png", cfg.Ext)
	}
	if !(cfg.Scale > 0) {
		return cfg, fmt.Errorf("-scale %g: want > 0", cfg.Scale)
	}
	cfg.Figures, cfg.Sets, cfg.Solvers = split(figs), split(sets), split(solv)
	for _, f := range cfg.Figures {
		if !slices.Contains([]string{"2", "3", "4", "sub"}, f) {
			return cfg, fmt.Errorf("-figures: unknown figure %q (2, 3, 4 or sub)", f)
		}
	}
	for _, s := range cfg.Sets {
		if _, err := findSet(s); err != nil {
			return cfg, err
		}
	}
	for _, s := range cfg.Solvers {
		if _, ok := solvers()[s]; !ok {
			return cfg, fmt.Errorf("-solvers: unknown solver %q", s)
		}
	}
	if cfg.Data == "" {
		dir, err := datatest.Find()
		if err != nil {
			return cfg, fmt.Errorf("no -data: %w", err)
		}
		cfg.Data = dir
	}
	return cfg, nil
}

func split(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

func findSet(name string) (dataset, error) {
	for _, d := range datasets() {
		if d.Name == name {
			return d, nil
		}
	}
	return dataset{}, fmt.Errorf("unknown data set %q (ocr, conll2000, ner, pos)", name)
}

// suffix tells apart the outputs of Figure 4 on a subset of the sets:
// "" for the default sets, else "-" and the sets' names.
func (cfg config) suffix() string {
	if slices.Equal(cfg.Sets, split(defaultSets)) {
		return ""
	}
	return "-" + strings.Join(cfg.Sets, "-")
}

// defaultSets are Figure 4's data sets.
const defaultSets = "ocr,conll2000,ner,pos"

// epochs scales an epoch cap, at least 1.
func (cfg config) epochs(n int) int { return max(1, int(math.Round(float64(n)*cfg.Scale))) }

func run(ctx context.Context, args []string, stderr io.Writer) error {
	cfg, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Join(cfg.Out, "logs"), 0o755); err != nil {
		return err
	}
	h := &harness{cfg: cfg, log: stderr, tables: map[string]*loaded{}}
	start := time.Now()
	if slices.Contains(cfg.Figures, "2") {
		if err := h.figure2(ctx); err != nil {
			return err
		}
	}
	if slices.Contains(cfg.Figures, "3") {
		if err := h.figure3(ctx); err != nil {
			return err
		}
	}
	if slices.Contains(cfg.Figures, "4") {
		if err := h.figure4(ctx); err != nil {
			return err
		}
	}
	if slices.Contains(cfg.Figures, "sub") {
		if err := h.subPrecision(ctx); err != nil {
			return err
		}
	}
	h.notef("\nThese runs: %.0f s of wall time.", time.Since(start).Seconds())
	return h.flush("results-fig" + strings.Join(cfg.Figures, "-") + cfg.suffix() + ".md")
}

// flush writes the notes to name under the output directory and starts
// afresh.
func (h *harness) flush(name string) error {
	err := writeAtomic(filepath.Join(h.cfg.Out, name), []byte(h.notes.String()))
	h.notes.Reset()
	return err
}

// harness runs the experiments and collects their notes.
type harness struct {
	cfg    config
	log    io.Writer
	tables map[string]*loaded
	notes  strings.Builder
}

// loaded is a data set's training and test tables.
type loaded struct {
	train, test *tables.FeatureTable
}

func (h *harness) notef(format string, args ...any) {
	fmt.Fprintf(&h.notes, format+"\n", args...)
	fmt.Fprintf(h.log, format+"\n", args...)
}

// load featurizes a data set (once per process; the last one only is kept).
func (h *harness) load(ctx context.Context, ds dataset) (*loaded, error) {
	if l, ok := h.tables[ds.Name]; ok {
		return l, nil
	}
	clear(h.tables) // one data set in memory at a time
	o := stage.FeaturizeOptions{MinCount: ds.MinCount}
	in := ds.Input
	in.Folds = ds.TrainFolds
	o.Input = &in
	if ds.Template != "" {
		t, err := featurize.Builtin(ds.Template)
		if err != nil {
			return nil, err
		}
		o.Templates = t
	}
	t0 := time.Now()
	train, sum, err := stage.FeaturizeTable(ctx, stage.File(filepath.Join(h.cfg.Data, ds.Train)), o)
	if err != nil {
		return nil, err
	}
	like, err := featurize.FromTable(train, ds.Name+" training table")
	if err != nil {
		return nil, err
	}
	tin := ds.Input
	tin.Folds = ds.TestFolds
	test, _, err := stage.FeaturizeTable(ctx, stage.File(filepath.Join(h.cfg.Data, ds.Test)),
		stage.FeaturizeOptions{Like: like, Input: &tin})
	if err != nil {
		return nil, err
	}
	d := train.Data
	k := d.NumLabels
	h.notef("- %s: n = %d sequences, N = %d tokens, A = %d attributes, K = %d labels, d = A·K + K² + 3K = %d; test: %d sequences, %d tokens (featurized in %.1f s)",
		ds.Title, d.Len(), d.NumTokens(), d.NumAttrs, k, d.NumAttrs*k+k*k+3*k, test.Data.Len(), test.Data.NumTokens(), time.Since(t0).Seconds())
	_ = sum
	l := &loaded{train: train, test: test}
	h.tables[ds.Name] = l
	return l, nil
}

// result is one training run.
type result struct {
	Name, Title string
	Rows        []tables.LogRow
	Iterative   bool
	N           int // sequences of the training set
	Wall        float64
	Reused      bool // read back from its log (-reuse)
}

// seeded returns a method of m's kind and settings (nil: SDCA) with the
// seed given.
func seeded(m train.Method, seed uint64) train.Method {
	switch m := m.(type) {
	case *train.LBFGS:
		return &train.LBFGS{Store: m.Store}
	case *train.OEG:
		return &train.OEG{Eta: m.Eta, Seed: seed}
	case *train.SAG:
		return &train.SAG{Variant: m.Variant, InitialL: m.InitialL, Seed: seed}
	case *train.SDCA:
		return &train.SDCA{Epsilon: m.Epsilon, SubPrecision: m.SubPrecision, Workers: m.Workers, RoundSize: m.RoundSize, Async: m.Async, Seed: seed}
	}
	return &train.SDCA{Seed: seed, Workers: 1} // the paper's sequential SDCA
}

// train runs one configuration on ds for at most epochs epochs, certifying
// (and, with test, scoring the test set) after every epoch, and keeps its
// log under logs/.
func (h *harness) train(ctx context.Context, ds dataset, l *loaded, name string, o stage.TrainOptions, epochs int, test bool) (result, error) {
	path := filepath.Join(h.cfg.Out, "logs", ds.Name+"-"+name+".arrow")
	if h.cfg.Reuse {
		if _, err := os.Stat(path); err == nil {
			run, err := plots.ReadRun(path, name)
			if err != nil {
				return result{}, err
			}
			last := run.Rows[len(run.Rows)-1]
			fmt.Fprintf(h.log, "paper: %s %s: read back from %s: %d epochs, certified gap %.3g\n", ds.Name, name, path, last.Epoch, last.Gap)
			return result{Name: name, Rows: run.Rows, N: l.train.Data.Len(), Reused: true}, nil
		}
	}
	o.Method = seeded(o.Method, h.cfg.Seed)
	if o.GapTol == 0 { // every epoch certified, none stopping the run
		o.GapEvery, o.GapTol = 1, 1e-12
	}
	o.MaxEpochs = epochs
	o.Quiet, o.Log = true, io.Discard
	if stage.Solver(o.Method) == "sdca" {
		o.Duals = stage.Duals{Place: stage.DualsMemory}
	}
	if test {
		o.Valid, o.ValidName = l.test, ds.Name+" test table"
	}
	t0 := time.Now()
	res, err := stage.Train(ctx, l.train, ds.Name, o)
	if err != nil {
		return result{}, fmt.Errorf("%s %s: %w", ds.Name, name, err)
	}
	wall := time.Since(t0).Seconds()
	rows := res.LogRows()
	last := rows[len(rows)-1]
	fmt.Fprintf(h.log, "paper: %s %s: %d epochs, certified gap %.3g, primal %.10g, %.1f s training, %.1f s wall\n",
		ds.Name, name, last.Epoch, last.Gap, last.Primal, last.TotalSeconds, wall)
	var buf strings.Builder
	if err := res.WriteLog(&buf); err != nil {
		return result{}, err
	}
	if err := writeAtomic(path, []byte(buf.String())); err != nil {
		return result{}, err
	}
	return result{Name: name, Rows: rows, N: l.train.Data.Len(), Wall: wall}, nil
}

// figure2 compares the samplers on OCR.
func (h *harness) figure2(ctx context.Context) error {
	ds, _ := findSet("ocr")
	l, err := h.load(ctx, ds)
	if err != nil {
		return err
	}
	h.notef("\n## Figure 2: samplers on OCR (80%% non-uniform draws, %d epochs)\n", h.cfg.epochs(ds.Epochs))
	h.notef("| sampler | certified gap after epochs 1, 5, 10, last | last epoch |\n|---|---|---:|")
	var runs []plots.Run
	for _, s := range []string{"uniform", "gap", "importance", "gap-importance", "max"} {
		o := stage.TrainOptions{Sampler: stage.Sampler{Kind: s}}
		if train.MixesUniform(s) { // uniform and max make no non-uniform share of draws
			o.Sampler.NonUniform = 0.8
		}
		r, err := h.train(ctx, ds, l, "sampler-"+s, o, h.cfg.epochs(ds.Epochs), false)
		if err != nil {
			return err
		}
		runs = append(runs, plots.Run{Name: s, Rows: r.Rows})
		h.notef("| %s | %s | %d |", s, gapsAt(r.Rows, 1, 5, 10, -1), r.Rows[len(r.Rows)-1].Epoch)
	}
	fig := plots.Figure{Rows: [][]plots.Panel{{{
		Title: "Figure 2 — OCR: samplers", XLabel: "epochs", YLabel: plots.LabelGap, LogY: true,
		Series: curves(runs, plots.Epochs, plots.Gap),
	}}}}
	return plots.WriteFile(filepath.Join(h.cfg.Out, "fig2-ocr-samplers."+h.cfg.Ext), fig)
}

// figure3 varies the fraction of non-uniform draws on NER.
func (h *harness) figure3(ctx context.Context) error {
	ds, _ := findSet("ner")
	l, err := h.load(ctx, ds)
	if err != nil {
		return err
	}
	h.notef("\n## Figure 3: fraction of non-uniform (gap) draws on NER (%d epochs)\n", h.cfg.epochs(ds.Epochs))
	h.notef("| fraction | certified gap after epochs 1, 5, 10, last | last epoch |\n|---|---|---:|")
	var runs []plots.Run
	for _, f := range []float64{0, 0.2, 0.5, 0.8, 1} {
		o := stage.TrainOptions{Sampler: stage.Sampler{Kind: "gap", NonUniform: f}}
		if f == 0 {
			o = stage.TrainOptions{Sampler: stage.Sampler{Kind: "uniform"}}
		}
		name := strconv.FormatFloat(f, 'g', -1, 64)
		r, err := h.train(ctx, ds, l, "fraction-"+name, o, h.cfg.epochs(ds.Epochs), false)
		if err != nil {
			return err
		}
		runs = append(runs, plots.Run{Name: name, Rows: r.Rows})
		h.notef("| %s | %s | %d |", name, gapsAt(r.Rows, 1, 5, 10, -1), r.Rows[len(r.Rows)-1].Epoch)
	}
	fig := plots.Figure{Rows: [][]plots.Panel{{{
		Title: "Figure 3 — NER: fraction of gap sampling", XLabel: "epochs", YLabel: plots.LabelGap, LogY: true,
		Series: curves(runs, plots.Epochs, plots.Gap),
	}}}}
	return plots.WriteFile(filepath.Join(h.cfg.Out, "fig3-ner-fraction."+h.cfg.Ext), fig)
}

// gapsAt formats the certified gaps at the given epochs (-1: the last).
func gapsAt(rows []tables.LogRow, epochs ...int) string {
	var parts []string
	for _, e := range epochs {
		v := math.NaN()
		for _, r := range rows {
			if r.Epoch == e || (e < 0 && r.Epoch == rows[len(rows)-1].Epoch) {
				v = r.Gap
			}
		}
		parts = append(parts, strconv.FormatFloat(v, 'g', 3, 64))
	}
	return strings.Join(parts, ", ")
}

func curves(runs []plots.Run, x, y func(tables.LogRow) float64) []plots.Series {
	var s []plots.Series
	for k, r := range runs {
		s = append(s, plots.Curve(r, k, x, y))
	}
	return s
}

// figure4 runs the solvers on every set and draws Figures 4, 7 and 9.
func (h *harness) figure4(ctx context.Context) error {
	all := solvers()
	var fig4, fig7, fig9 [][]plots.Panel
	h.notef("\n## Figure 4: solvers (every epoch certified; test error after each epoch)\n")
	for _, name := range h.cfg.Sets {
		ds, _ := findSet(name)
		l, err := h.load(ctx, ds)
		if err != nil {
			return err
		}
		ref, err := h.train(ctx, ds, l, "reference", stage.TrainOptions{Sampler: stage.Sampler{Kind: "gap", NonUniform: 0.8}, GapTol: ds.RefTol}, h.cfg.epochs(ds.RefEpochs), false)
		if err != nil {
			return err
		}
		refLast := ref.Rows[len(ref.Rows)-1]
		var res []result
		for _, sn := range h.cfg.Solvers {
			s := all[sn]
			epochs := h.cfg.epochs(ds.Epochs)
			if s.Iterative {
				epochs = h.cfg.epochs(ds.Iters)
			}
			r, err := h.train(ctx, ds, l, s.Name, s.Opts, epochs, true)
			if errors.Is(err, context.Canceled) {
				return err
			}
			if err != nil {
				h.notef("- %s %s: not run: %v", ds.Title, s.Title, err)
				continue
			}
			r.Title, r.Iterative = s.Title, s.Iterative
			res = append(res, r)
		}
		if len(res) == 0 {
			continue
		}
		lo, hi := bracket(append([]result{ref}, res...))
		h.notef("\n### %s\n\nP* ∈ [%.12g, %.12g] (width %.2g). A reference SDCA-GAP run (%d epochs) certified the gap %.2g; the lower end is the best certified lower bound of all runs (SDCA: the dual D; L-BFGS: P − ‖∇P‖²/(2λ)), the upper end the least primal. The curves plot P − (lower end), an upper bound on P − P* exact to within the width.\n",
			ds.Title, lo, hi, hi-lo, refLast.Epoch, refLast.Gap)
		h.notef("| solver | epochs | oracle calls / n | updates / n | training s | final gap | final P − P*(lower) | test error (last) | first epoch with gap ≤ 1e-3: test error |\n|---|---:|---:|---:|---:|---:|---:|---:|---|")
		for _, r := range res {
			last := r.Rows[len(r.Rows)-1]
			h.notef("| %s | %d | %.1f | %.1f | %.1f | %.3g | %.3g | %s | %s |", r.Title, last.Epoch,
				oracleCalls(last)/float64(r.N), updates(r, last)/float64(r.N), last.TotalSeconds, last.Gap, last.Primal-lo,
				pct(1-last.ValidAccuracy), at1e3(r.Rows))
		}
		for _, r := range res {
			if r.Name == "sag" || r.Name == "sag-star" {
				h.notef("\n%s", sagSearches(r))
			}
		}
		sub := func(r tables.LogRow) float64 { return r.Primal - lo }
		panel := func(title, xl string, x func(result, tables.LogRow) float64) plots.Panel {
			p := plots.Panel{Title: ds.Title + ": " + title, XLabel: xl, YLabel: "log10 (P − P*), P* certified (see results.md)", Log10Y: true}
			for k, r := range res {
				if r.Iterative && title == "vs parameter updates" {
					continue // one update per iteration: its curve would sit on x = 0
				}
				p.Series = append(p.Series, plots.Curve(plots.Run{Name: r.Title, Rows: r.Rows}, styleOf(h.cfg.Solvers, r.Name, k),
					func(row tables.LogRow) float64 { return x(r, row) }, sub))
			}
			return p
		}
		fig4 = append(fig4, []plots.Panel{
			panel("vs oracle calls", "oracle calls / n (certificates excluded)", func(r result, row tables.LogRow) float64 { return oracleCalls(row) / float64(r.N) }),
			panel("vs parameter updates", "parameter updates / n", func(r result, row tables.LogRow) float64 { return updates(r, row) / float64(r.N) }),
			panel("vs time", plots.LabelSeconds, func(_ result, row tables.LogRow) float64 { return row.TotalSeconds }),
		})
		p7 := plots.Panel{Title: ds.Title + ": test error", XLabel: "epochs (L-BFGS: iterations)", YLabel: "test error (1 − token accuracy)"}
		p9 := plots.Panel{Title: ds.Title + ": gap estimate vs certified gap", XLabel: "epochs", YLabel: plots.LabelGap, LogY: true}
		for k, r := range res {
			run := plots.Run{Name: r.Title, Rows: r.Rows}
			st := styleOf(h.cfg.Solvers, r.Name, k)
			p7.Series = append(p7.Series, plots.Curve(run, st, plots.Epochs, func(row tables.LogRow) float64 { return 1 - row.ValidAccuracy }))
			if r.Name == "sdca-gap" {
				p9.Series = append(p9.Series, plots.Curve(plots.Run{Name: "certified gap", Rows: r.Rows}, 0, plots.Epochs, plots.Gap),
					plots.Curve(plots.Run{Name: "SDCA-GAP's estimate", Rows: r.Rows}, 1, plots.Epochs, func(row tables.LogRow) float64 { return row.GapEstimate }))
				h.notef("\nFigure 9 (%s, SDCA-GAP): estimate / certified gap over epochs ≥ 1 in [%s].\n", ds.Title, ratioRange(r.Rows))
			}
		}
		fig7 = append(fig7, []plots.Panel{p7})
		fig9 = append(fig9, []plots.Panel{p9})
	}
	if len(fig4) == 0 {
		return nil
	}
	for _, f := range []struct {
		name string
		rows [][]plots.Panel
	}{{"fig4-solvers", fig4}, {"fig7-test-error", grid2(fig7)}, {"fig9-gap-estimate", grid2(fig9)}} {
		if err := plots.WriteFile(filepath.Join(h.cfg.Out, f.name+h.cfg.suffix()+"."+h.cfg.Ext), plots.Figure{Rows: f.rows}); err != nil {
			return err
		}
	}
	return nil
}

// sagSearches describes a SAG run's line searches from its log: its steps
// count the line searches made, its updates the iterations, its
// line-search column the Lipschitz evaluations; the share not made is
// SAG-NUS*'s skipped ones (and those of gradients too small to test).
func sagSearches(r result) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s line searches (made / iterations, evaluations per search made), epoch by epoch:", r.Title)
	var prev tables.LogRow
	for k, row := range r.Rows {
		if k > 0 && row.Updates > prev.Updates {
			made, it := row.Steps-prev.Steps, row.Updates-prev.Updates
			fmt.Fprintf(&b, " %d: %.0f%% (%.2f)", row.Epoch, 100*float64(made)/float64(it), float64(row.LineSearch)/float64(max(made, 1)))
		}
		prev = row
	}
	if last := r.Rows[len(r.Rows)-1]; last.Updates > 0 {
		fmt.Fprintf(&b, "; in all %.1f%% of the iterations skipped their line search.", 100*(1-float64(last.Steps)/float64(last.Updates)))
	}
	return b.String()
}

// subPrecisions are the sub-precisions of §6.2's claim (the paper: "if we
// ask 0.01 sub-precision or less, SDCA converges with the same rate"; its
// runs use 0.001).
var subPrecisions = []float64{0.5, 0.1, 0.01, 0.001, 1e-4}

// subPrecision runs SDCA-GAP on every -sets set with its line search
// solved to each of subPrecisions and tabulates the certified gaps.
func (h *harness) subPrecision(ctx context.Context) error {
	h.notef("\n## §6.2: SDCA-GAP's line-search sub-precision (80%% gap draws, every epoch certified)\n")
	for _, name := range h.cfg.Sets {
		ds, _ := findSet(name)
		l, err := h.load(ctx, ds)
		if err != nil {
			return err
		}
		epochs := h.cfg.epochs(ds.Epochs)
		h.notef("\n### %s (%d epochs)\n", ds.Title, epochs)
		h.notef("| sub-precision | certified gap after epochs 1, %d, %d | first epoch with gap ≤ 1e-2 | line-search evaluations per step | training s |\n|---:|---|---:|---:|---:|", (epochs+1)/2, epochs)
		for _, sp := range subPrecisions {
			o := stage.TrainOptions{Sampler: stage.Sampler{Kind: "gap", NonUniform: 0.8}, Method: &train.SDCA{SubPrecision: sp, Workers: 1}}
			r, err := h.train(ctx, ds, l, "subprecision-"+strconv.FormatFloat(sp, 'g', -1, 64), o, epochs, false)
			if err != nil {
				return err
			}
			last := r.Rows[len(r.Rows)-1]
			first := "not reached"
			for _, row := range r.Rows {
				if row.Gap <= 1e-2 {
					first = strconv.Itoa(row.Epoch)
					break
				}
			}
			var evals int64 // the log's line-search column counts each epoch's
			for _, row := range r.Rows {
				evals += max(row.LineSearch, 0)
			}
			h.notef("| %g | %s | %s | %.2f | %.1f |", sp, gapsAt(r.Rows, 1, (epochs+1)/2, -1), first,
				float64(evals)/float64(max(last.Steps, 1)), last.TotalSeconds)
		}
	}
	return nil
}

// updates is the number of parameter updates after row, from the log's
// counter (SDCA, OEG, SAG: sentence steps that move w; L-BFGS: one per
// iteration), or, in a log without it, SDCA's steps or L-BFGS's
// iterations.
func updates(r result, row tables.LogRow) float64 {
	switch {
	case row.Updates >= 0:
		return float64(row.Updates)
	case r.Iterative:
		return float64(row.Epoch)
	}
	return float64(row.Steps)
}

// oracleCalls is the number of oracle calls (forward–backward passes over
// one sentence, certificates excluded) after row, from the log's counter,
// or its steps in a log without it.
func oracleCalls(row tables.LogRow) float64 {
	if row.OracleCalls >= 0 {
		return float64(row.OracleCalls)
	}
	return float64(row.Steps)
}

// styleOf keeps a solver's colour across panels.
func styleOf(names []string, name string, k int) int {
	if i := slices.Index(names, name); i >= 0 {
		return i
	}
	return k
}

// bracket returns the interval P* is certified to lie in: the largest
// certified lower bound (P − gap) and the least primal of all runs.
func bracket(res []result) (lo, hi float64) {
	lo, hi = math.Inf(-1), math.Inf(1)
	for _, r := range res {
		for _, row := range r.Rows {
			if math.IsNaN(row.Gap) {
				continue
			}
			lo, hi = max(lo, row.Primal-row.Gap), min(hi, row.Primal)
		}
	}
	return lo, hi
}

// ratioRange is the range of GapEstimate/Gap over the certified epochs ≥ 1.
func ratioRange(rows []tables.LogRow) string {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, r := range rows {
		if r.Epoch < 1 || !(r.Gap > 0) || math.IsNaN(r.GapEstimate) {
			continue
		}
		q := r.GapEstimate / r.Gap
		lo, hi = min(lo, q), max(hi, q)
	}
	return fmt.Sprintf("%.2f, %.2f", lo, hi)
}

// at1e3 is the test error at the first certificate with gap ≤ 1e-3.
func at1e3(rows []tables.LogRow) string {
	for _, r := range rows {
		if r.Gap <= 1e-3 {
			return fmt.Sprintf("epoch %d: %s", r.Epoch, pct(1-r.ValidAccuracy))
		}
	}
	return "not reached"
}

func pct(v float64) string {
	if math.IsNaN(v) {
		return "–"
	}
	return fmt.Sprintf("%.2f%%", 100*v)
}

// grid2 lays single panels out two per row.
func grid2(col [][]plots.Panel) [][]plots.Panel {
	var rows [][]plots.Panel
	for i := 0; i < len(col); i += 2 {
		if i+1 < len(col) {
			rows = append(rows, []plots.Panel{col[i][0], col[i+1][0]})
		} else {
			rows = append(rows, []plots.Panel{col[i][0], {Title: ""}})
		}
	}
	return rows
}

// writeAtomic writes b to path through an atomic output.
func writeAtomic(path string, b []byte) error {
	out, err := pipeline.CreateOutput(path)
	if err != nil {
		return err
	}
	defer out.Close()
	if _, err := out.Write(b); err != nil {
		return err
	}
	return out.Commit()
}
