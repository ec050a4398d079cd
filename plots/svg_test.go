package plots

import (
	"bytes"
	"encoding/xml"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/vg"

	"github.com/dualcrf/dualcrf/arrowio"
	"github.com/dualcrf/dualcrf/schemas"
	"github.com/dualcrf/dualcrf/tables"
)

// svgTextElem is a text element of an SVG document.
type svgTextElem struct {
	text, anchor, family string
	length, size, x      float64
}

// svgTexts returns the text elements of an SVG document.
func svgTexts(t *testing.T, doc []byte) []svgTextElem {
	t.Helper()
	d := xml.NewDecoder(bytes.NewReader(doc))
	var out []svgTextElem
	var cur *svgTextElem
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("SVG is not XML: %v", err)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			if tok.Name.Local != "text" {
				continue
			}
			e := svgTextElem{anchor: "start", length: math.NaN()}
			for _, a := range tok.Attr {
				switch a.Name.Local {
				case "text-anchor":
					e.anchor = a.Value
				case "textLength":
					e.length, _ = strconv.ParseFloat(a.Value, 64)
				case "x":
					e.x, _ = strconv.ParseFloat(a.Value, 64)
				case "style":
					for _, decl := range strings.Split(a.Value, ";") {
						if v, ok := strings.CutPrefix(decl, "font-family:"); ok {
							e.family = v
						}
						if v, ok := strings.CutPrefix(decl, "font-size:"); ok {
							e.size, _ = strconv.ParseFloat(strings.TrimSuffix(v, "px"), 64)
						}
					}
				}
			}
			cur = &e
		case xml.CharData:
			if cur != nil {
				cur.text += string(tok)
			}
		case xml.EndElement:
			if tok.Name.Local == "text" && cur != nil {
				out = append(out, *cur)
				cur = nil
			}
		}
	}
	return out
}

// TestSVGTextFontIndependent: no text of an SVG figure depends on the
// viewer having the font the layout measured with. Every text element
// names a family list ending in a generic family, is as long as the layout
// measured it (textLength, glyphs stretched to fit: browsers and Inkscape
// then draw it in exactly that room), and is anchored where the layout
// aligned it, so that a viewer that ignores textLength (librsvg) keeps it
// in place: legend entries end at their thumbnails (anchor end), titles,
// axis labels and X ticks are centred, Y ticks end at the axis.
func TestSVGTextFontIndependent(t *testing.T) {
	var buf bytes.Buffer
	if err := LogFigure(testRuns(), LogOptions{Title: "test", Ref: math.NaN(), GapTol: 1e-3}).Write(&buf, SVG); err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(buf.Bytes(), []byte("@font-face")) {
		t.Error("the SVG embeds a font")
	}
	texts := svgTexts(t, buf.Bytes())
	if len(texts) < 40 {
		t.Fatalf("%d text elements", len(texts))
	}
	anchors := map[string]string{}
	for _, e := range texts {
		fams := strings.Split(e.family, ",")
		if g := fams[len(fams)-1]; g != "serif" && g != "sans-serif" && g != "monospace" {
			t.Errorf("text %q: font-family %q does not end in a generic family", e.text, e.family)
		}
		face := font.DefaultCache.Lookup(plot.DefaultFont, vg.Points(e.size))
		if want := face.Width(e.text).Points(); math.Abs(e.length-want) > 0.01*want+1e-3 {
			t.Errorf("text %q: textLength %g, measured %g", e.text, e.length, want)
		}
		anchors[e.text] = e.anchor
	}
	for text, want := range map[string]string{
		"sdca": "end", "lbfgs": "end", "target --gap-tol 0.001": "end", // legend entries
		"test: certified duality gap vs time": "middle", LabelSeconds: "middle", "epoch": "middle",
		"0.1": "end", // a Y tick label
		"2":   "middle",
	} {
		if got, ok := anchors[text]; !ok || got != want {
			t.Errorf("text %q: anchor %q (present %v), want %q", text, got, ok, want)
		}
	}
}

// TestEpochAxisUnit: the epoch axis names what the runs' rows count — an
// epoch for SDCA and the other per-sentence solvers, an iteration for
// L-BFGS — and says both only for a mix; ReadRun takes the solver from the
// log's metadata.
func TestEpochAxisUnit(t *testing.T) {
	runs := testRuns()
	for _, c := range []struct {
		solvers []string
		label   string
		title   string
	}{
		{[]string{"sdca", "oeg"}, "epoch", "vs epochs"},
		{[]string{"lbfgs", "lbfgs"}, "iteration", "vs iterations"},
		{[]string{"sdca", "lbfgs"}, LabelEpochs, "vs epochs"},
		{[]string{"", ""}, "epoch", "vs epochs"},
	} {
		for k := range runs {
			runs[k].Solver = c.solvers[k]
		}
		fig := LogFigure(runs, LogOptions{Ref: math.NaN()})
		for _, row := range fig.Rows {
			if p := row[1]; p.XLabel != c.label || !strings.HasSuffix(p.Title, c.title) {
				t.Errorf("solvers %q: epoch panel %q labelled %q, want %q and a title ending %q", c.solvers, p.Title, p.XLabel, c.label, c.title)
			}
		}
	}
	var buf bytes.Buffer
	if err := tables.WriteLog(&buf, runs[0].Rows, map[string]string{schemas.KeySolver: "lbfgs"}, arrowio.WriterOptions{Format: arrowio.FormatFile}); err != nil {
		t.Fatal(err)
	}
	path := t.TempDir() + "/log.arrow"
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	run, err := ReadRun(path, "x")
	if err != nil {
		t.Fatal(err)
	}
	if run.Solver != "lbfgs" || EpochUnit(run.Solver) != "iteration" {
		t.Errorf("ReadRun: solver %q", run.Solver)
	}
}
