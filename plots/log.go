package plots

import (
	"fmt"
	"os"

	"github.com/dualcrf/dualcrf/pipeline"
	"github.com/dualcrf/dualcrf/tables"
)

// Run is one training run's log, named for the legend.
type Run struct {
	Name string
	Rows []tables.LogRow
}

// ReadRun reads the training log at path (as `train --log` writes it),
// named by name.
func ReadRun(path, name string) (Run, error) {
	f, err := os.Open(path)
	if err != nil {
		return Run{}, err
	}
	defer f.Close()
	rr, err := pipeline.OpenRecordReader(f, path, pipeline.ReaderOptions{})
	if err != nil {
		return Run{}, err
	}
	defer rr.Release()
	log, err := tables.ReadLog(rr, path)
	if err != nil {
		return Run{}, err
	}
	if len(log.Rows) == 0 {
		return Run{}, fmt.Errorf("%s: the training log has no rows", path)
	}
	return Run{Name: name, Rows: log.Rows}, nil
}

// Curve returns the series of run over its certified rows (those whose
// gap is not NaN): y(row) against x(row).
func Curve(run Run, style int, x, y func(tables.LogRow) float64) Series {
	s := Series{Name: run.Name, Style: style}
	for _, r := range run.Rows {
		if r.Gap != r.Gap { // NaN: no certificate this epoch
			continue
		}
		s.X, s.Y = append(s.X, x(r)), append(s.Y, y(r))
	}
	return s
}

// Axes of the training-log figures.
var (
	// Seconds is the training time so far (certificate passes excluded).
	Seconds = func(r tables.LogRow) float64 { return r.TotalSeconds }
	// Epochs is the epoch (L-BFGS: the iteration).
	Epochs = func(r tables.LogRow) float64 { return float64(r.Epoch) }
	// Gap is the certified duality gap.
	Gap = func(r tables.LogRow) float64 { return r.Gap }
	// Primal is P(w).
	Primal = func(r tables.LogRow) float64 { return r.Primal }
)

// Axis labels.
const (
	LabelSeconds = "training seconds (certificates excluded)"
	LabelEpochs  = "epochs (L-BFGS: iterations)"
	LabelGap     = "log10 certified gap"
	LabelPrimal  = "primal P(w)"
)

// LogFigure is the 2×2 figure of training logs: the certified gap (log10)
// and the primal against training seconds and epochs, one curve per run,
// over the rows that carry a certificate. title heads every panel.
func LogFigure(title string, runs []Run) Figure {
	panel := func(name, xl, yl string, log10 bool, x, y func(tables.LogRow) float64) Panel {
		p := Panel{Title: title + name, XLabel: xl, YLabel: yl, Log10Y: log10}
		for k, r := range runs {
			p.Series = append(p.Series, Curve(r, k, x, y))
		}
		return p
	}
	if title != "" {
		title += ": "
	}
	return Figure{Rows: [][]Panel{
		{panel("certified gap vs time", LabelSeconds, LabelGap, true, Seconds, Gap),
			panel("certified gap vs epochs", LabelEpochs, LabelGap, true, Epochs, Gap)},
		{panel("primal vs time", LabelSeconds, LabelPrimal, false, Seconds, Primal),
			panel("primal vs epochs", LabelEpochs, LabelPrimal, false, Epochs, Primal)},
	}}
}
