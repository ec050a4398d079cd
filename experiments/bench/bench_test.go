package main

import (
	"bytes"
	"errors"
	"image/png"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/dualcrf/dualcrf/arrowio"
	"github.com/dualcrf/dualcrf/plots"
	"github.com/dualcrf/dualcrf/tables"
)

// synthLog is a log whose answers are known by construction: epoch 0 takes
// init seconds, every later epoch step seconds; the gap is 10^(1−e) and the
// primal pStar + 10^(−e); epochs in skip carry no certificate.
func synthLog(epochs int, init, step, pStar float64, skip ...int) []logRow {
	var rows []logRow
	for e := 0; e <= epochs; e++ {
		r := logRow{Epoch: e, Seconds: step, TotalSeconds: init + step*float64(e),
			Primal: pStar + math.Pow(10, -float64(e)), Gap: math.Pow(10, 1-float64(e))}
		if e == 0 {
			r.Seconds = init
		}
		if slices.Contains(skip, e) {
			r.Primal, r.Gap = math.NaN(), math.NaN()
		}
		rows = append(rows, r)
	}
	return rows
}

func TestTimeToGap(t *testing.T) {
	const init, step = 0.5, 2.0
	rows := synthLog(6, init, step, 1, 3)
	cases := []struct {
		tol  float64
		want float64
	}{
		{10, init},                 // epoch 0 is certified and at the level
		{1e-1, init + 2*step},      // gap 10^(1−2)
		{1e-2, init + 4*step},      // epoch 3 (gap 1e-2) has no certificate
		{1e-3, init + 4*step},      // epoch 4: gap 1e-3
		{1e-5, init + 6*step},      // the last epoch
		{1e-6, math.NaN()},         // never reached
		{0.999e-5, math.NaN()},     // just below the last gap
		{1.0001e-2, init + 4*step}, // epoch 3 still skipped
	}
	for _, c := range cases {
		got := timeTo(rows, gapOf, c.tol)
		if !(got == c.want || math.IsNaN(got) && math.IsNaN(c.want)) {
			t.Errorf("timeTo(gap ≤ %g) = %v, want %v", c.tol, got, c.want)
		}
	}
}

func TestBestPrimalAndSubopt(t *testing.T) {
	a := solverRun{Solver: "gap", Rows: synthLog(5, 1, 1, 2.0)}   // best certified primal 2 + 1e-5
	b := solverRun{Solver: "lbfgs", Rows: synthLog(3, 1, 1, 1.5)} // best 1.5 + 1e-3
	b.Rows = append(b.Rows, logRow{Epoch: 4, Primal: 0.1, Gap: math.NaN()})
	pStar := bestPrimal([]solverRun{a, b, {Solver: "uniform", Err: errors.New("killed")}})
	if want := 1.5 + 1e-3; pStar != want {
		t.Fatalf("P* = %v, want %v (the uncertified 0.1 must not count)", pStar, want)
	}
	if got := bestPrimal(nil); !math.IsNaN(got) {
		t.Errorf("P* of no runs = %v, want NaN", got)
	}
	// b reaches P* at epoch 3 (total 1+3); a never comes within 1e-3 of it.
	if got := timeTo(b.Rows, suboptOf(pStar), 1e-3); got != 4 {
		t.Errorf("b: time to subopt ≤ 1e-3 = %v, want 4", got)
	}
	if got := timeTo(a.Rows, suboptOf(pStar), 1e-3); !math.IsNaN(got) {
		t.Errorf("a: time to subopt ≤ 1e-3 = %v, want never", got)
	}
}

func TestMedian(t *testing.T) {
	xs := []float64{5, 1, 4, 2}
	if got := median(xs); got != 3 {
		t.Errorf("median %v = %v, want 3", xs, got)
	}
	if !slices.Equal(xs, []float64{5, 1, 4, 2}) {
		t.Errorf("median reordered its input: %v", xs)
	}
	if got := median([]float64{7, 1, 3}); got != 3 {
		t.Errorf("median of 7,1,3 = %v, want 3", got)
	}
	if got := median(nil); !math.IsNaN(got) {
		t.Errorf("median of nothing = %v, want NaN", got)
	}
}

func TestSummarize(t *testing.T) {
	rows := synthLog(4, 9, 2, 1)
	rows[2].Seconds = 5 // epochs 1..4 take 2, 5, 2, 2 s: median 2; epoch 0's 9 s is not an epoch
	r := solverRun{Solver: "gap", Rows: rows, PeakRSS: 3 << 20, Wall: 20, TestAcc: 0.9, TestF1: 0.91}
	s := summarize("set", r, 1, []float64{1e-2, 1e-4}, 1e-3)
	if s.SecPerEpoch != 2 || s.Epochs != 4 {
		t.Errorf("s/epoch %v over %d epochs, want 2 over 4", s.SecPerEpoch, s.Epochs)
	}
	if s.TGap[0] != rows[3].TotalSeconds || !math.IsNaN(s.TGap[1]) {
		t.Errorf("t(gap) = %v, want [%v NaN]", s.TGap, rows[3].TotalSeconds)
	}
	if s.TSubopt != rows[3].TotalSeconds { // primal − P* = 10^−e ≤ 1e-3 at e = 3
		t.Errorf("t(subopt) = %v, want %v", s.TSubopt, rows[3].TotalSeconds)
	}
	if s.FinalGap != rows[4].Gap || s.FinalPrimal != rows[4].Primal {
		t.Errorf("final gap, primal = %v, %v; want %v, %v", s.FinalGap, s.FinalPrimal, rows[4].Gap, rows[4].Primal)
	}
}

// testConfig is a config for rendering tests.
func testConfig() config {
	return config{MaxEpochs: 3, LBFGSIters: 3, MaxTime: time.Minute, GapTol: 1e-4, MinCount: 3,
		Solvers: []string{"gap", "uniform", "lbfgs"}, GapLevels: []float64{1e-2, 1e-3, 1e-4}, SuboptTol: 1e-3}
}

// testTable is one set with a converging, a slower and a failed run.
func testTable(cfg config) setTable {
	fast := solverRun{Solver: "gap", Rows: synthLog(6, 1, 3, 2), PeakRSS: 800 << 20, Wall: 30, TestAcc: 0.955, TestF1: 0.9297}
	slow := solverRun{Solver: "lbfgs", Rows: synthLog(3, 1, 1.5, 2.5), PeakRSS: 400 << 20, Wall: 9, TestAcc: 0.9, TestF1: math.NaN()}
	failed := solverRun{Solver: "uniform", Err: errors.New("exit status 2"), TestAcc: math.NaN(), TestF1: math.NaN()}
	t := setTable{Set: datasets()[0], Runs: []solverRun{fast, failed, slow}}
	t.PStar = bestPrimal(t.Runs)
	for _, r := range t.Runs {
		t.Rows = append(t.Rows, summarize(t.Set.Name, r, t.PStar, cfg.GapLevels, cfg.SuboptTol))
	}
	return t
}

func TestRenderMarkdown(t *testing.T) {
	cfg := testConfig()
	tab := testTable(cfg)
	var b bytes.Buffer
	if err := renderMarkdown(&b, cfg, []setTable{tab}); err != nil {
		t.Fatal(err)
	}
	md := b.String()
	// SDCA-GAP: gap 10^(1−e) at total 1 + 3e; reaches 1e-2 at e=3 (10 s), 1e-3 at e=4 (13 s),
	// 1e-4 at e=5 (16 s); primal 2 + 10^−e ≤ P* + 1e-3 = 2 + 1e-6 + 1e-3 at e=3.
	wantRow := "| SDCA-GAP | 3.00 s | 6 | 10.0 s | 13.0 s | 16.0 s | 10.0 s | 800 MiB | 95.50 | 92.97 | 1.00e-05 | 30.0 s |"
	// L-BFGS: gap 10^(1−e) at 1 + 1.5e up to e=3: 1e-2 at 5.5 s, never lower; F1 unknown.
	wantLBFGS := "| L-BFGS | 1.50 s | 3 | 5.50 s | — | — | — | 400 MiB | 90.00 | — | 1.00e-02 | 9.00 s |"
	for _, want := range []string{
		"## CoNLL-2000 chunking (conll2000)",
		"P* (best found) = 2.000001",
		"| solver | s/epoch (median) | epochs | t(gap≤1e-2) | t(gap≤1e-3) | t(gap≤1e-4) | t(subopt≤1e-3) | peak RSS | test acc | test F1 | final gap | wall |",
		wantRow, wantLBFGS,
		"| SDCA-uniform (failed) |",
		"SDCA-uniform failed: exit status 2",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
	if n := strings.Count(md, "\n|"); n != 5 { // header, rule, three rows
		t.Errorf("markdown has %d table lines, want 5:\n%s", n, md)
	}
}

// writeSynthLog writes rows as a dualcrf training log.
func writeSynthLog(t *testing.T, path string, rows []logRow, mem memory.Allocator) {
	t.Helper()
	log := make([]tables.LogRow, len(rows))
	for i, r := range rows {
		log[i] = tables.LogRow{Epoch: r.Epoch, Steps: int64(100 * r.Epoch), Seconds: r.Seconds, TotalSeconds: r.TotalSeconds,
			CertSeconds: 0.1, Primal: r.Primal, Dual: r.Primal - r.Gap, Gap: r.Gap, IdentityResidual: 0, GapEstimate: 1,
			LineSearch: 3, ValidAccuracy: math.NaN(), ValidF1: math.NaN()}
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := tables.WriteLog(f, log, nil, arrowio.WriterOptions{Mem: mem}); err != nil {
		t.Fatal(err)
	}
}

func TestReadLog(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	want := synthLog(5, 0.7, 1.3, 4, 2)
	path := filepath.Join(t.TempDir(), "log.arrow")
	writeSynthLog(t, path, want, mem)
	got, err := readLog(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("read %d rows, want %d", len(got), len(want))
	}
	for i := range want {
		g, w := got[i], want[i]
		if g.Epoch != w.Epoch || g.Seconds != w.Seconds || g.TotalSeconds != w.TotalSeconds ||
			!sameFloat(g.Primal, w.Primal) || !sameFloat(g.Gap, w.Gap) {
			t.Errorf("row %d = %+v, want %+v", i, g, w)
		}
	}
	if got[2].certified() {
		t.Error("row 2 was written with a null gap but reads as certified")
	}
	if _, err := readLog(filepath.Join(t.TempDir(), "missing.arrow")); err == nil {
		t.Error("reading a missing log succeeded")
	}
}

// sameFloat is equality with NaN equal to NaN.
func sameFloat(a, b float64) bool { return a == b || math.IsNaN(a) && math.IsNaN(b) }

func TestWriteArrow(t *testing.T) {
	cfg := testConfig()
	tab := testTable(cfg)
	path := filepath.Join(t.TempDir(), "bench.arrow")
	if err := writeArrow(path, cfg, []setTable{tab, tab}); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rr, err := tables.OpenRecordReader(f, path, arrowio.ReaderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer rr.Release()
	n := 0
	for rr.Next() {
		rec := rr.RecordBatch()
		n += int(rec.NumRows())
		tGap, err := column[*array.Float64](rec, "t_gap_1e-3")
		if err != nil {
			t.Fatal(err)
		}
		solver, err := column[*array.String](rec, "solver")
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < int(rec.NumRows()); i++ {
			s := tab.Rows[i%3]
			if solver.Value(i) != solverTitle(s.Solver) || !sameFloat(floatAt(tGap, i), s.TGap[1]) {
				t.Errorf("row %d: %s t_gap_1e-3 %v, want %s %v", i, solver.Value(i), floatAt(tGap, i), solverTitle(s.Solver), s.TGap[1])
			}
		}
	}
	if err := rr.Err(); err != nil {
		t.Fatal(err)
	}
	if n != 6 {
		t.Errorf("bench.arrow has %d rows, want 6", n)
	}
	if got := rr.Schema().Field(0); got.Name != "set" || got.Type.ID() != arrow.STRING {
		t.Errorf("first column %v, want set: utf8", got)
	}
}

func TestWritePlots(t *testing.T) {
	cfg := testConfig()
	tab := testTable(cfg)
	dir := t.TempDir()
	if err := writePlots(dir, tab, cfg.Solvers); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join(dir, "conv_conll2000.png"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	wantW := int(math.Round(2 * panelW.Dots(plots.PNGDPI)))
	if w := img.Bounds().Dx(); w != wantW {
		t.Errorf("PNG is %d px wide, want %d", w, wantW)
	}
	svg, err := os.ReadFile(filepath.Join(dir, "conv_conll2000.svg"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"<svg", "SDCA-GAP", "L-BFGS", "log10 certified gap"} {
		if !bytes.Contains(svg, []byte(want)) {
			t.Errorf("SVG lacks %q", want)
		}
	}
	if bytes.Contains(svg, []byte("SDCA-uniform")) {
		t.Error("SVG has a legend entry for the failed run, which has no points")
	}
}

func TestParseFlags(t *testing.T) {
	cfg, err := parseFlags([]string{"-data", "/d", "-solvers", "gap, lbfgs", "-max-epochs", "7", "-sets", "ewt"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(cfg.Solvers, []string{"gap", "lbfgs"}) || cfg.LBFGSIters != 7 || cfg.MaxTime != 10*time.Minute {
		t.Errorf("config %+v", cfg)
	}
	args := trainArgs(cfg, "lbfgs", "tr", "te", "log", "m")
	if i := slices.Index(args, "--max-epochs"); i < 0 || args[i+1] != "7" || !slices.Contains(args, "lbfgs") {
		t.Errorf("train args %q", args)
	}
	cfg, err = parseFlags([]string{"-data", "/d", "-solvers", "gap,uniform,lbfgs", "-workers", "1,2", "-certify", "default"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"gap", "gap@2", "uniform", "uniform@2", "lbfgs"}; !slices.Equal(cfg.Solvers, want) || cfg.EveryEpoch {
		t.Errorf("solvers %q (want %q), every epoch %v", cfg.Solvers, want, cfg.EveryEpoch)
	}
	for name, want := range map[string]string{"gap": "1", "gap@0": "0"} {
		args := trainArgs(cfg, name, "tr", "te", "log", "m")
		if i := slices.Index(args, "--workers"); i < 0 || args[i+1] != want {
			t.Errorf("%s: train args %q: want --workers %s", name, args, want)
		}
	}
	args = trainArgs(cfg, "gap@2", "tr", "te", "log", "m")
	if i := slices.Index(args, "--workers"); i < 0 || args[i+1] != "2" || slices.Contains(args, "--valid") || slices.Contains(args, "--gap-every") {
		t.Errorf("train args %q: want --workers 2 and train's own certificates", args)
	}
	if got := solverTitle("gap@2"); got != "SDCA-GAP ×2" {
		t.Errorf("title %q", got)
	}
	for _, bad := range [][]string{{"-solvers", "newton"}, {"-gap-levels", "0"}, {"extra"}, {"-solvers", "lbfgs@2"},
		{"-solvers", "gap@-1"}, {"-certify", "never"}} {
		if _, err := parseFlags(append([]string{"-data", "/d"}, bad...), io.Discard); err == nil {
			t.Errorf("parseFlags(%q) succeeded", bad)
		}
	}
	if _, err := selectSets([]string{"ptb"}); err == nil {
		t.Error("unknown set accepted")
	}
}

func TestFmtG(t *testing.T) {
	for v, want := range map[float64]string{1e-2: "1e-2", 2.5e-4: "2.5e-4", 1: "1", 300: "3e2", 1e-10: "1e-10"} {
		if got := fmtG(v); got != want {
			t.Errorf("fmtG(%g) = %q, want %q", v, got, want)
		}
	}
}
