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
	"strings"
	"testing"

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
			r := tables.LogRow{Epoch: e, TotalSeconds: float64(e) * 0.5, Primal: 1 + gap, Gap: gap}
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

// TestLogFigureSVG: the SVG parses as XML and each panel has one path per
// run in that run's colour.
func TestLogFigureSVG(t *testing.T) {
	var buf bytes.Buffer
	if err := LogFigure("test", testRuns()).Write(&buf, SVG); err != nil {
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
		// 4 panels, one curve each; the legend draws one more sample line.
		if n != 4*2 {
			t.Errorf("series %d (%s): %d paths, want 8 (4 curves, 4 legend samples); strokes %v", k, hexColor(k), n, strokes)
		}
	}
}

func TestLogFigurePNG(t *testing.T) {
	p := filepath.Join(t.TempDir(), "fig.PNG")
	if err := WriteFile(p, LogFigure("", testRuns())); err != nil {
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
	if err := WriteFile(filepath.Join(dir, "fig.pdf"), LogFigure("", testRuns())); err == nil {
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

// TestCurveSkipsUncertifiedRows: epoch 2 has no certificate.
func TestCurveSkipsUncertifiedRows(t *testing.T) {
	s := Curve(testRuns()[0], 0, Epochs, Gap)
	if fmt.Sprint(s.X) != "[0 1 3 4]" {
		t.Errorf("x = %v", s.X)
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
	xys := s.points(true)
	if len(xys) != 2 || xys[0].X != 0 || xys[1].X != 2 || math.Abs(xys[0].Y) > 1e-12 || math.Abs(xys[1].Y+2) > 1e-12 {
		t.Errorf("points = %v, want x 0 and 2 with log10 values 0 and −2", xys)
	}
	if n := len(s.points(false)); n != 3 {
		t.Errorf("%d linear points, want 3 (the NaNs dropped)", n)
	}
}
