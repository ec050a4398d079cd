// Package plots draws figures from training logs with gonum.org/v1/plot:
// curves (Series) in panels (Panel) laid out in a grid (Figure), written
// as SVG or PNG by the file's extension. LogFigure is the figure of `train
// --plot` and `dualcrf plot`: certified gap and primal against training
// seconds and epochs, one curve per run.
package plots

import (
	"fmt"
	"image/color"
	"io"
	"math"
	"path/filepath"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"github.com/dualcrf/dualcrf/pipeline"
)

// Default panel size and PNG resolution.
const (
	DefaultPanelWidth  = 13 * vg.Centimeter
	DefaultPanelHeight = 9 * vg.Centimeter
	PNGDPI             = 150
)

// Format is an image format a figure is written in.
type Format string

// The formats, named by their file extensions.
const (
	SVG Format = "svg"
	PNG Format = "png"
)

// FormatOf returns the format named by path's extension (.svg or .png,
// any case); any other extension is an error.
func FormatOf(path string) (Format, error) {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".svg":
		return SVG, nil
	case ".png":
		return PNG, nil
	}
	if filepath.Ext(path) == "" {
		return "", fmt.Errorf("%s: a plot is written as .svg or .png, and this name has no extension", path)
	}
	return "", fmt.Errorf("%s: a plot is written as .svg or .png, not %s", path, filepath.Ext(path))
}

// Series is one curve: the points (X[i], Y[i]), drawn in the order given,
// each with a marker, joined by a solid line. Points whose X or Y is NaN or
// infinite (or, on a log axis, ≤ 0) are left out, and the segment across
// a point left out is dotted.
type Series struct {
	Name string
	X, Y []float64
	// Dotted, when not nil, marks the segments to draw dotted: Dotted[i]
	// is the segment from the point before i to point i (in a training log:
	// the epochs between were not certified).
	Dotted []bool
	// Style picks the colour and marker (plotutil's palettes); series of
	// the same Style look alike across panels and figures.
	Style int
}

// Level is a horizontal line across a panel (a target), named in the
// legend.
type Level struct {
	Name string
	Y    float64
}

// Panel is one chart.
type Panel struct {
	Title, XLabel, YLabel string
	// LogY draws Y on a logarithmic axis (points with Y ≤ 0 are left
	// out), labelled at powers of ten ("1e-3", "0.01", …, "1000", "1e4").
	// The plot holds log10 Y on a linear axis whose ticks are labelled
	// with the values (gonum's LogScale centres the axis label badly).
	LogY bool
	// Log10Y draws log10 of Y on a linear axis with whole-number ticks;
	// the Y label should say "log10". LogY is the more readable choice.
	Log10Y bool
	// IntegerX puts the X ticks on whole numbers only (epochs).
	IntegerX bool
	// XFromZero starts the X axis at 0 when no point is below it.
	XFromZero bool
	// Levels are horizontal lines (dashed, grey) drawn under the series.
	Levels []Level
	Series []Series
}

// Figure is a grid of panels, Rows[i][j] in row i, column j; every row
// has the same number of panels. A zero PanelWidth or PanelHeight is the
// default.
type Figure struct {
	Rows                    [][]Panel
	PanelWidth, PanelHeight vg.Length
}

// drawnPoint is a point of a series as drawn: where, and whether the
// segment reaching it is dotted.
type drawnPoint struct {
	plotter.XY
	dotted bool
}

// points returns the drawable points of s: log10 of Y when log10, and
// none with Y ≤ 0 when positive (a log axis).
func (s Series) points(log10, positive bool) []drawnPoint {
	var pts []drawnPoint
	skipped := false
	for i := range min(len(s.X), len(s.Y)) {
		x, y := s.X[i], s.Y[i]
		dotted := skipped || (i < len(s.Dotted) && s.Dotted[i])
		if (log10 || positive) && !(y > 0) {
			skipped = len(pts) > 0
			continue
		}
		if log10 {
			y = math.Log10(y)
		}
		if math.IsNaN(x) || math.IsInf(x, 0) || math.IsNaN(y) || math.IsInf(y, 0) {
			skipped = len(pts) > 0
			continue
		}
		if len(pts) == 0 {
			dotted = false
		}
		pts = append(pts, drawnPoint{XY: plotter.XY{X: x, Y: y}, dotted: dotted})
		skipped = false
	}
	return pts
}

// Style of the figures: line widths, marker radius, the dots of a segment
// across uncertified epochs, the colour of levels.
var (
	lineWidth   = vg.Points(1.5)
	markerSize  = vg.Points(3)
	dotDashes   = []vg.Length{vg.Points(1), vg.Points(3)}
	levelDashes = []vg.Length{vg.Points(6), vg.Points(3)}
	levelColor  = color.Gray{Y: 0x70}
)

// DottedLegend is the legend entry of the dotted segments.
const DottedLegend = "epochs between not certified"

// layers are the plotters of a panel by kind, as plot added them.
type layers struct {
	markers              []*plotter.Scatter // one per series drawn
	solid, dotted, level []*plotter.Line
}

// plot builds the gonum plot of p.
func (p Panel) plot() (*plot.Plot, error) {
	pl, _, err := p.build()
	return pl, err
}

// build builds the gonum plot of p: per series, a marker at every point
// and solid lines between consecutive points (dotted across the segments
// Dotted marks); the levels as dashed grey lines.
func (p Panel) build() (*plot.Plot, *layers, error) {
	ly := &layers{}
	pl := plot.New()
	for _, h := range []*text.Handler{&pl.Title.TextStyle.Handler, &pl.X.Label.TextStyle.Handler, &pl.Y.Label.TextStyle.Handler,
		&pl.X.Tick.Label.Handler, &pl.Y.Tick.Label.Handler, &pl.Legend.TextStyle.Handler} {
		*h = anchoredText{*h}
	}
	pl.Title.Text = p.Title
	pl.X.Label.Text, pl.Y.Label.Text = p.XLabel, p.YLabel
	pl.Legend.Top = true
	pl.Legend.XOffs, pl.Legend.YOffs = vg.Points(-4), vg.Points(-4)
	pl.Legend.ThumbnailWidth = vg.Points(24)
	pl.X.Tick.Marker = niceTicks{integer: p.IntegerX}
	pl.Y.Tick.Marker = niceTicks{}
	if p.Log10Y {
		pl.Y.Tick.Marker = log10Ticks{}
	}
	logY := p.LogY && !p.Log10Y
	if logY {
		pl.Y.Tick.Marker = powerTicks{}
	}
	pl.Add(plotter.NewGrid())
	ylo, yhi := math.Inf(1), math.Inf(-1)
	xlo, xhi := math.Inf(1), math.Inf(-1)
	anyDotted := false
	for _, s := range p.Series {
		pts := s.points(p.Log10Y || logY, logY)
		if len(pts) == 0 {
			continue
		}
		c := plotutil.Color(s.Style)
		xys := make(plotter.XYs, len(pts))
		for i, q := range pts {
			xys[i] = q.XY
			ylo, yhi = math.Min(ylo, q.Y), math.Max(yhi, q.Y)
			xlo, xhi = math.Min(xlo, q.X), math.Max(xhi, q.X)
		}
		sc, err := plotter.NewScatter(xys)
		if err != nil {
			return nil, nil, fmt.Errorf("plot %q, series %q: %w", p.Title, s.Name, err)
		}
		sc.Color, sc.Shape, sc.Radius = c, plotutil.Shape(s.Style), markerSize
		thumbs := []plot.Thumbnailer{sc}
		// Runs of solid segments as one line each; every dotted segment
		// as a line of its own.
		first := 0
		for i := 1; i <= len(pts); i++ {
			if i < len(pts) && !pts[i].dotted {
				continue
			}
			if i-first > 1 {
				line, err := plotter.NewLine(xys[first:i])
				if err != nil {
					return nil, nil, fmt.Errorf("plot %q, series %q: %w", p.Title, s.Name, err)
				}
				line.Color, line.Width = c, lineWidth
				pl.Add(line)
				ly.solid = append(ly.solid, line)
				if len(thumbs) == 1 {
					thumbs = append([]plot.Thumbnailer{line}, sc)
				}
			}
			if i < len(pts) {
				dot, err := plotter.NewLine(xys[i-1 : i+1])
				if err != nil {
					return nil, nil, fmt.Errorf("plot %q, series %q: %w", p.Title, s.Name, err)
				}
				dot.Color, dot.Width, dot.Dashes = c, lineWidth, dotDashes
				pl.Add(dot)
				ly.dotted = append(ly.dotted, dot)
				anyDotted = true
			}
			first = i
		}
		pl.Add(sc)
		ly.markers = append(ly.markers, sc)
		pl.Legend.Add(s.Name, thumbs...)
	}
	for _, lv := range p.Levels {
		if math.IsNaN(lv.Y) || math.IsInf(lv.Y, 0) || ((logY || p.Log10Y) && !(lv.Y > 0)) {
			continue
		}
		if logY || p.Log10Y {
			lv.Y = math.Log10(lv.Y)
		}
		if math.IsInf(xlo, 0) { // no series point: nothing to span
			continue
		}
		line, err := plotter.NewLine(plotter.XYs{{X: xlo, Y: lv.Y}, {X: xhi, Y: lv.Y}})
		if err != nil {
			return nil, nil, fmt.Errorf("plot %q, level %q: %w", p.Title, lv.Name, err)
		}
		line.Color, line.Width, line.Dashes = levelColor, vg.Points(1), levelDashes
		pl.Add(line)
		ly.level = append(ly.level, line)
		pl.Legend.Add(lv.Name, line)
		ylo, yhi = math.Min(ylo, lv.Y), math.Max(yhi, lv.Y)
	}
	if anyDotted {
		dot, _ := plotter.NewLine(plotter.XYs{{}, {}})
		dot.Color, dot.Width, dot.Dashes = color.Gray{Y: 0x40}, lineWidth, dotDashes
		pl.Legend.Add(DottedLegend, dot)
	}
	if p.XFromZero && xlo >= 0 {
		pl.X.Min = 0
	}
	if logY {
		// Whole decades, so that the axis is labelled at both ends; a
		// panel without points gets one decade.
		if math.IsInf(ylo, 0) {
			ylo, yhi = 0, 1
		}
		pl.Y.Min, pl.Y.Max = math.Floor(ylo), math.Ceil(yhi)
		if pl.Y.Max <= pl.Y.Min {
			pl.Y.Max = pl.Y.Min + 1
		}
	}
	return pl, ly, nil
}

// niceTicks marks a linear axis at multiples of 1, 2 or 5 × 10ᵏ (whole
// numbers only when integer), 4 to 10 of them, with minor ticks between.
type niceTicks struct{ integer bool }

// Ticks implements plot.Ticker.
func (t niceTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(hi > lo) || math.IsInf(hi-lo, 0) {
		return plot.DefaultTicks{}.Ticks(lo, hi)
	}
	step := niceStep(hi-lo, 5)
	if t.integer {
		step = math.Max(step, 1)
	}
	minor := step / 5
	if step == 2*math.Pow(10, math.Floor(math.Log10(step))) {
		minor = step / 4
	}
	if t.integer && minor < 1 {
		minor = 1
	}
	digits := max(0, int(-math.Floor(math.Log10(step)+1e-9)))
	var ticks []plot.Tick
	for v := math.Ceil(lo/minor) * minor; v <= hi+minor*1e-9; v += minor {
		k := math.Round(v / minor)
		v = k * minor // no drift
		tk := plot.Tick{Value: v}
		if r := v / step; math.Abs(r-math.Round(r)) < 1e-9 {
			tk.Label = strconv.FormatFloat(v, 'f', digits, 64)
			if digits > 0 {
				tk.Label = strings.TrimRight(strings.TrimRight(tk.Label, "0"), ".")
			}
			if tk.Label == "-0" {
				tk.Label = "0"
			}
		}
		if minor != step || tk.Label != "" {
			ticks = append(ticks, tk)
		}
		if len(ticks) > 200 {
			return plot.DefaultTicks{}.Ticks(lo, hi)
		}
	}
	return ticks
}

// niceStep returns the step of 1, 2 or 5 × 10ᵏ that cuts span into about
// n parts (at least n/2, at most 2n).
func niceStep(span float64, n int) float64 {
	raw := span / float64(n)
	p := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= raw/1.5 {
			return m * p
		}
	}
	return 10 * p
}

// powerTicks marks an axis of log10 values at the powers of ten,
// labelled with the values (at most about 10 labels), with minor ticks at
// 2…9 × 10ᵏ when the range spans at most 6 decades; a range of at most 2
// decades is labelled at 2 and 5 × 10ᵏ too.
type powerTicks struct{}

// Ticks implements plot.Ticker.
func (powerTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(hi > lo) || math.IsInf(hi-lo, 0) {
		return nil
	}
	first, last := math.Floor(lo), math.Ceil(hi)
	decades := last - first
	step := math.Max(1, math.Ceil(decades/10))
	const eps = 1e-9
	var ticks []plot.Tick
	for k := first; k <= last; k++ {
		if k >= lo-eps && k <= hi+eps {
			tk := plot.Tick{Value: k}
			if math.Mod(k-first, step) == 0 {
				tk.Label = power10(int(k))
			}
			ticks = append(ticks, tk)
		}
		if decades > 6 {
			continue
		}
		for m := 2; m <= 9; m++ {
			v := k + math.Log10(float64(m))
			if v < lo || v > hi {
				continue
			}
			tk := plot.Tick{Value: v}
			if decades <= 2 && (m == 2 || m == 5) {
				tk.Label = scaled(m, int(k))
			}
			ticks = append(ticks, tk)
		}
	}
	return ticks
}

// power10 writes 10ᵏ as a tick label: "0.01" to "1000" in decimals,
// "1e-3" and "1e4" beyond.
func power10(k int) string { return scaled(1, k) }

// scaled writes m × 10ᵏ (m a whole number 1…9) as power10 does: "0.05",
// "200", "5e-3", "2e4".
func scaled(m, k int) string {
	if k >= -2 && k <= 3 {
		return strconv.FormatFloat(float64(m)*math.Pow(10, float64(k)), 'f', max(0, -k), 64)
	}
	return strconv.Itoa(m) + "e" + strconv.Itoa(k)
}

// log10Ticks marks whole numbers on a log10 axis (every power of ten),
// falling back to the default ticks on ranges of less than two decades.
type log10Ticks struct{}

// Ticks implements plot.Ticker.
func (log10Ticks) Ticks(lo, hi float64) []plot.Tick {
	first, last := math.Ceil(lo), math.Floor(hi)
	if last-first < 2 {
		return plot.DefaultTicks{}.Ticks(lo, hi)
	}
	step := math.Ceil((last - first) / 8) // at most about 8 labels
	var ticks []plot.Tick
	for v := first; v <= last; v++ {
		t := plot.Tick{Value: v}
		if math.Mod(v, step) == 0 {
			t.Label = strconv.Itoa(int(v))
		}
		ticks = append(ticks, t)
	}
	return ticks
}

// size returns the figure's width and height.
func (f Figure) size() (vg.Length, vg.Length) {
	w, h := f.PanelWidth, f.PanelHeight
	if w <= 0 {
		w = DefaultPanelWidth
	}
	if h <= 0 {
		h = DefaultPanelHeight
	}
	return vg.Length(len(f.Rows[0])) * w, vg.Length(len(f.Rows)) * h
}

// draw draws the figure onto c.
func (f Figure) draw(c vg.CanvasSizer) error {
	grid := make([][]*plot.Plot, len(f.Rows))
	for i, row := range f.Rows {
		grid[i] = make([]*plot.Plot, len(row))
		for j, p := range row {
			pl, err := p.plot()
			if err != nil {
				return err
			}
			grid[i][j] = pl
		}
	}
	dc := draw.New(c)
	tiles := draw.Tiles{Rows: len(grid), Cols: len(grid[0]),
		PadX: vg.Centimeter, PadY: vg.Centimeter,
		PadTop: vg.Points(6), PadBottom: vg.Points(6), PadLeft: vg.Points(6), PadRight: vg.Points(6)}
	canvases := plot.Align(grid, tiles, dc)
	for i := range grid {
		for j := range grid[i] {
			grid[i][j].Draw(canvases[i][j])
		}
	}
	return nil
}

// check refuses a figure without panels or with ragged rows.
func (f Figure) check() error {
	if len(f.Rows) == 0 || len(f.Rows[0]) == 0 {
		return fmt.Errorf("plot: a figure without panels")
	}
	for i, row := range f.Rows {
		if len(row) != len(f.Rows[0]) {
			return fmt.Errorf("plot: row %d has %d panels, row 0 has %d", i, len(row), len(f.Rows[0]))
		}
	}
	return nil
}

// Write draws the figure in format to w.
func (f Figure) Write(w io.Writer, format Format) error {
	if err := f.check(); err != nil {
		return err
	}
	width, height := f.size()
	var c interface {
		vg.CanvasSizer
		io.WriterTo
	}
	switch format {
	case SVG:
		c = newSVGCanvas(width, height)
	case PNG:
		img := vgimg.NewWith(vgimg.UseWH(width, height), vgimg.UseDPI(PNGDPI), vgimg.UseBackgroundColor(color.White))
		c = vgimg.PngCanvas{Canvas: img}
	default:
		return fmt.Errorf("plot: unknown format %q (svg or png)", format)
	}
	if err := f.draw(c); err != nil {
		return err
	}
	_, err := c.WriteTo(w)
	return err
}

// WriteFile writes the figure to path, in the format its extension names,
// atomically: the file appears complete or not at all.
func WriteFile(path string, f Figure) error {
	format, err := FormatOf(path)
	if err != nil {
		return err
	}
	out, err := pipeline.CreateOutput(path)
	if err != nil {
		return err
	}
	defer out.Close()
	if err := f.Write(out, format); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return out.Commit()
}
