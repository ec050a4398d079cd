package plots

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"image/png"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotutil"

	"github.com/dualcrf/dualcrf/tables"
)

// testRuns are two runs whose gaps fall by a decade an epoch, with an
// uncertified epoch in between.
func testRuns() []Run {
	var runs []Run
	for k, name := range []string{"sdca", "lbfgs"} {
		var rows []tables.LogRow
		for e := 0; e <= 4; e++ {
			gap := math.Pow(10, -float64(e+k))
			r := tables.LogRow{Epoch: e, TotalSeconds: float64(e) * 0.5, Primal: 1 + gap, Dual: 1, Gap: gap}
			if e == 2 {
				r.Primal, r.Gap = math.NaN(), math.NaN()
			}
			rows = append(rows, r)
		}
		runs = append(runs, Run{Name: name, Rows: rows})
	}
	return runs
}

// svgPaths returns the stroke colours of the path elements of an SVG
// document, failing the test when it is not well-formed XML.
func svgPaths(t *testing.T, doc []byte) []string {
	t.Helper()
	d := xml.NewDecoder(bytes.NewReader(doc))
	var strokes []string
	root := ""
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("SVG is not XML: %v", err)
		}
		se, ok := tok.(xml.StartElement)
		if !ok {
			continue
		}
		if root == "" {
			root = se.Name.Local
		}
		if se.Name.Local != "path" {
			continue
		}
		for _, a := range se.Attr {
			if a.Name.Local != "style" {
				continue
			}
			for _, decl := range strings.Split(a.Value, ";") {
				if v, ok := strings.CutPrefix(decl, "stroke:"); ok {
					strokes = append(strokes, v)
				}
			}
		}
	}
	if root != "svg" {
		t.Fatalf("root element %q, want svg", root)
	}
	return strokes
}

// hexColor is the SVG spelling of plotutil's colour k.
func hexColor(k int) string {
	r, g, b, _ := plotutil.Color(k).RGBA()
	return fmt.Sprintf("#%02X%02X%02X", r>>8, g>>8, b>>8)
}

// TestLogFigureSVG: the SVG parses as XML and draws each run in its
// colour.
func TestLogFigureSVG(t *testing.T) {
	var buf bytes.Buffer
	if err := LogFigure(testRuns(), LogOptions{Title: "test", Ref: math.NaN(), GapTol: 1e-3}).Write(&buf, SVG); err != nil {
		t.Fatal(err)
	}
	strokes := svgPaths(t, buf.Bytes())
	for k := range 2 {
		n := 0
		for _, s := range strokes {
			if strings.EqualFold(s, hexColor(k)) {
				n++
			}
		}
		if n == 0 {
			t.Errorf("series %d (%s) not drawn; strokes %v", k, hexColor(k), strokes)
		}
	}
}

// yLabels returns the labels of pl's Y ticks.
func yLabels(pl *plot.Plot) []string {
	var labels []string
	for _, tk := range pl.Y.Tick.Marker.Ticks(pl.Y.Min, pl.Y.Max) {
		if tk.Label != "" {
			labels = append(labels, tk.Label)
		}
	}
	return labels
}

// TestLogFigureStructure: every panel has log Y ticks labelled at the
// powers of ten, a marker at each certified epoch of each run, solid
// lines between consecutive certified epochs and a dotted one across the
// uncertified epoch 2; the gap panels draw the target, the X axes start
// at 0 and the epochs axis ticks whole numbers.
func TestLogFigureStructure(t *testing.T) {
	fig := LogFigure(testRuns(), LogOptions{Title: "test", Ref: math.NaN(), GapTol: 1e-3})
	for i, row := range fig.Rows {
		for j, p := range row {
			pl, ly, err := p.build()
			if err != nil {
				t.Fatal(err)
			}
			name := fmt.Sprintf("panel %d,%d (%s)", i, j, p.Title)
			if !p.LogY {
				t.Errorf("%s: not a log axis", name)
			}
			if _, ok := pl.Y.Tick.Marker.(powerTicks); !ok {
				t.Errorf("%s: Y ticker %T", name, pl.Y.Tick.Marker)
			}
			labels := strings.Join(yLabels(pl), " ")
			// Gaps of 1 … 1e-5 (lbfgs starts a decade lower: 1e-1 … 1e-5).
			if i == 0 && !strings.Contains(labels, "1e-3 0.01 0.1 1") {
				t.Errorf("%s: Y labels %q", name, labels)
			}
			if len(ly.markers) != 2 {
				t.Fatalf("%s: %d marker sets, want one per run", name, len(ly.markers))
			}
			for k, m := range ly.markers {
				if len(m.XYs) != 4 {
					t.Errorf("%s run %d: %d markers, want 4 (the certified epochs 0, 1, 3, 4)", name, k, len(m.XYs))
				}
			}
			if i == 0 {
				if len(ly.solid) != 4 || len(ly.dotted) != 2 {
					t.Errorf("%s: %d solid and %d dotted lines, want 4 (0–1, 3–4 per run) and 2 (1–3)", name, len(ly.solid), len(ly.dotted))
				}
				if len(ly.level) != 1 || ly.level[0].XYs[0].Y != -3 {
					t.Errorf("%s: levels %v, want the target 1e-3", name, ly.level)
				}
			} else if len(ly.level) != 0 {
				t.Errorf("%s: a gap target in the suboptimality panel", name)
			}
			if pl.X.Min != 0 {
				t.Errorf("%s: X starts at %g", name, pl.X.Min)
			}
			if j == 1 {
				for _, tk := range pl.X.Tick.Marker.Ticks(pl.X.Min, pl.X.Max) {
					if tk.Value != math.Round(tk.Value) {
						t.Errorf("%s: epoch tick at %g", name, tk.Value)
					}
				}
			}
		}
	}
}

// TestLogFigureSuboptimality: with a reference the bottom panels draw
// P − P* (a point at P = P* has none); without, P − the best dual.
func TestLogFigureSuboptimality(t *testing.T) {
	runs := testRuns()
	fig := LogFigure(runs, LogOptions{Ref: 1})
	p := fig.Rows[1][1]
	if !strings.Contains(p.Title, "P − P*, P* = 1") || !strings.Contains(p.YLabel, "P − P*") {
		t.Errorf("title %q, label %q", p.Title, p.YLabel)
	}
	s := p.Series[0] // sdca: P = 1 + 10^-e
	if want := "[1 0.1 0.001 0.0001]"; fmt.Sprint(roundAll(s.Y)) != want {
		t.Errorf("P − P* = %v, want %s", s.Y, want)
	}
	if best := BestDual(runs); best != 1 {
		t.Errorf("best dual %g, want 1 (every row has D = 1 + gap − gap)", best)
	}
	fig = LogFigure(runs, LogOptions{Ref: math.NaN()})
	if p := fig.Rows[1][0]; !strings.Contains(p.Title, "best dual") || !strings.Contains(p.YLabel, "D_best") {
		t.Errorf("without a reference: title %q, label %q", p.Title, p.YLabel)
	}
	if got := AboveRef(runs, 1.5); !strings.Contains(got, "sdca epoch 1") {
		t.Errorf("AboveRef(1.5) = %q, want sdca's epoch 1 (P = 1.1)", got)
	}
	if got := AboveRef(runs, 0.5); got != "" {
		t.Errorf("AboveRef(0.5) = %q", got)
	}
}

// roundAll rounds to 12 significant digits, for printing.
func roundAll(v []float64) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i], _ = strconv.ParseFloat(strconv.FormatFloat(x, 'g', 12, 64), 64)
	}
	return out
}

// TestPowerTicks: powers of ten labelled as values, decimals from 0.01
// to 1000 and e-notation beyond; 2 and 5 × 10ᵏ labelled on short ranges;
// at most about 10 labels on long ones.
func TestPowerTicks(t *testing.T) {
	labels := func(lo, hi float64) string {
		var l []string
		for _, tk := range (powerTicks{}).Ticks(lo, hi) {
			if tk.Label != "" {
				l = append(l, tk.Label)
			}
		}
		return strings.Join(l, " ")
	}
	if got, want := labels(-5, 4), "1e-5 1e-4 1e-3 0.01 0.1 1 10 100 1000 1e4"; got != want {
		t.Errorf("labels %q, want %q", got, want)
	}
	if got, want := labels(-3, -1), "1e-3 2e-3 5e-3 0.01 0.02 0.05 0.1"; got != want {
		t.Errorf("short range: %q, want %q", got, want)
	}
	if got, want := labels(-20, 0), "1e-20 1e-18 1e-16 1e-14 1e-12 1e-10 1e-8 1e-6 1e-4 0.01 1"; got != want {
		t.Errorf("long range: %q, want %q", got, want)
	}
}

// TestNiceTicks: time ticks at 1, 2 or 5 × 10ᵏ.
func TestNiceTicks(t *testing.T) {
	for _, c := range []struct {
		lo, hi  float64
		integer bool
		want    string
	}{
		{0, 27.85, false, "0 5 10 15 20 25"},
		{0, 13, true, "0 2 4 6 8 10 12"},
		{0, 3, true, "0 1 2 3"},
		{0, 0.37, false, "0 0.05 0.1 0.15 0.2 0.25 0.3 0.35"},
		{0, 230, true, "0 50 100 150 200"},
	} {
		var l []string
		for _, tk := range (niceTicks{integer: c.integer}).Ticks(c.lo, c.hi) {
			if tk.Label != "" {
				l = append(l, tk.Label)
			}
		}
		if got := strings.Join(l, " "); got != c.want {
			t.Errorf("[%g, %g]: %q, want %q", c.lo, c.hi, got, c.want)
		}
	}
}

func TestLogFigurePNG(t *testing.T) {
	p := filepath.Join(t.TempDir(), "fig.PNG")
	if err := WriteFile(p, LogFigure(testRuns(), LogOptions{Ref: math.NaN()})); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("PNG does not decode: %v", err)
	}
	if b := img.Bounds(); b.Dx() < 1000 || b.Dy() < 700 {
		t.Errorf("PNG %v, want about 1535×1063 at %d dpi", b, PNGDPI)
	}
}

func TestFormatOfRefusesUnknownExtensions(t *testing.T) {
	for _, p := range []string{"fig.pdf", "fig", "fig.svg.gz", "fig.jpeg"} {
		if _, err := FormatOf(p); err == nil || !strings.Contains(err.Error(), p) {
			t.Errorf("FormatOf(%q): %v, want an error naming it", p, err)
		}
	}
	dir := t.TempDir()
	if err := WriteFile(filepath.Join(dir, "fig.pdf"), LogFigure(testRuns(), LogOptions{Ref: math.NaN()})); err == nil {
		t.Fatal("WriteFile wrote a .pdf")
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("refused write left %d files", len(ents))
	}
}

func TestFigureRefusesNoPanels(t *testing.T) {
	if err := (Figure{}).Write(io.Discard, SVG); err == nil {
		t.Error("empty figure written")
	}
	if err := (Figure{Rows: [][]Panel{{{}}, {{}, {}}}}).Write(io.Discard, SVG); err == nil {
		t.Error("ragged figure written")
	}
}

// TestCurveSkipsUncertifiedRows: epoch 2 has no certificate, so the
// segment 1–3 is dotted.
func TestCurveSkipsUncertifiedRows(t *testing.T) {
	s := Curve(testRuns()[0], 0, Epochs, Gap)
	if fmt.Sprint(s.X) != "[0 1 3 4]" || fmt.Sprint(s.Dotted) != "[false false true false]" {
		t.Errorf("x = %v, dotted %v", s.X, s.Dotted)
	}
}

func TestLog10Ticks(t *testing.T) {
	var labels []string
	for _, tk := range (log10Ticks{}).Ticks(-10.3, 6.2) {
		if tk.Label != "" {
			labels = append(labels, tk.Label)
		}
	}
	// 16 decades from −10 to 6: labels every 2, on even powers.
	if want := []string{"-10", "-8", "-6", "-4", "-2", "0", "2", "4", "6"}; fmt.Sprint(labels) != fmt.Sprint(want) {
		t.Errorf("labels %q, want %q", labels, want)
	}
	if n := len((log10Ticks{}).Ticks(-10.3, 6.2)); n != 17 {
		t.Errorf("%d ticks, want one per power of ten (17)", n)
	}
}

// TestSeriesDropsUnplottable: on a log axis, y ≤ 0 and NaN have no point.
func TestSeriesDropsUnplottable(t *testing.T) {
	s := Series{X: []float64{0, 1, 2, 3, math.NaN()}, Y: []float64{1, math.NaN(), 0.01, 0, 5}}
	xys := s.points(true, true)
	if len(xys) != 2 || xys[0].X != 0 || xys[1].X != 2 || math.Abs(xys[0].Y) > 1e-12 || math.Abs(xys[1].Y+2) > 1e-12 {
		t.Errorf("points = %v, want x 0 and 2 with log10 values 0 and −2", xys)
	}
	if !xys[1].dotted {
		t.Error("the segment across the dropped point is not dotted")
	}
	if n := len(s.points(false, false)); n != 3 {
		t.Errorf("%d linear points, want 3 (the NaNs dropped)", n)
	}
}
