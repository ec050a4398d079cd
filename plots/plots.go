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
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"

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

// Series is one curve: the points (X[i], Y[i]), drawn in the order given.
// Points whose X or Y is NaN or infinite are left out.
type Series struct {
	Name string
	X, Y []float64
	// Style picks the colour, dashes and marker (plotutil's palettes);
	// series of the same Style look alike across panels and figures.
	Style int
}

// Panel is one chart.
type Panel struct {
	Title, XLabel, YLabel string
	// Log10Y draws log10 of Y (points with Y ≤ 0 are left out), with
	// ticks at the powers of ten.
	Log10Y bool
	Series []Series
}

// Figure is a grid of panels, Rows[i][j] in row i, column j; every row
// has the same number of panels. A zero PanelWidth or PanelHeight is the
// default.
type Figure struct {
	Rows                    [][]Panel
	PanelWidth, PanelHeight vg.Length
}

// points returns the drawable points of s.
func (s Series) points(log10 bool) plotter.XYs {
	var xys plotter.XYs
	for i := range min(len(s.X), len(s.Y)) {
		x, y := s.X[i], s.Y[i]
		if log10 {
			if !(y > 0) {
				continue
			}
			y = math.Log10(y)
		}
		if math.IsNaN(x) || math.IsInf(x, 0) || math.IsNaN(y) || math.IsInf(y, 0) {
			continue
		}
		xys = append(xys, plotter.XY{X: x, Y: y})
	}
	return xys
}

// plot builds the gonum plot of p: one line per series with points (a
// series of one point is a marker alone).
func (p Panel) plot() (*plot.Plot, error) {
	pl := plot.New()
	pl.Title.Text = p.Title
	pl.X.Label.Text, pl.Y.Label.Text = p.XLabel, p.YLabel
	pl.Legend.Top = true
	pl.Legend.XOffs, pl.Legend.YOffs = vg.Points(-4), vg.Points(-4)
	if p.Log10Y {
		pl.Y.Tick.Marker = log10Ticks{}
	}
	pl.Add(plotter.NewGrid())
	for _, s := range p.Series {
		xys := s.points(p.Log10Y)
		if len(xys) == 0 {
			continue
		}
		c := plotutil.Color(s.Style)
		sc, err := plotter.NewScatter(xys)
		if err != nil {
			return nil, fmt.Errorf("plot %q, series %q: %w", p.Title, s.Name, err)
		}
		sc.Color, sc.Shape, sc.Radius = c, plotutil.Shape(s.Style), vg.Points(2)
		if len(xys) == 1 {
			pl.Add(sc)
			pl.Legend.Add(s.Name, sc)
			continue
		}
		line, err := plotter.NewLine(xys)
		if err != nil {
			return nil, fmt.Errorf("plot %q, series %q: %w", p.Title, s.Name, err)
		}
		line.Color, line.Dashes, line.Width = c, plotutil.Dashes(s.Style), vg.Points(1.5)
		pl.Add(line)
		pl.Legend.Add(s.Name, line)
	}
	return pl, nil
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
		c = vgsvg.New(width, height)
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
