package plots

import (
	"fmt"
	"math"
	"os"
	"strconv"

	"github.com/dualcrf/dualcrf/arrowio"
	"github.com/dualcrf/dualcrf/schemas"
	"github.com/dualcrf/dualcrf/tables"
)

// Run is one training run's log, named for the legend.
type Run struct {
	Name string
	Rows []tables.LogRow
	// Solver is the solver that wrote the log (its metadata: sdca, lbfgs,
	// …; "" when unknown), which says what a row counts: an epoch, or an
	// iteration (EpochUnit).
	Solver string
}

// EpochUnit names what one row of a training log by solver counts:
// "iteration" for L-BFGS (and OWL-QN), whose rows are its iterations,
// "epoch" (a pass over the sentences) for the others.
func EpochUnit(solver string) string {
	switch solver {
	case "lbfgs", "owlqn":
		return "iteration"
	}
	return "epoch"
}

// epochAxis returns the label and plural noun of the epoch axis of runs:
// their common unit, or "epoch (L-BFGS: iteration)" when they mix.
func epochAxis(runs []Run) (label, plural string) {
	units := map[string]bool{}
	for _, r := range runs {
		units[EpochUnit(r.Solver)] = true
	}
	if len(units) == 1 {
		for u := range units {
			return u, u + "s"
		}
	}
	return LabelEpochs, "epochs"
}

// ReadRun reads the training log at path (as `train --log` writes it),
// named by name.
func ReadRun(path, name string) (Run, error) {
	f, err := os.Open(path)
	if err != nil {
		return Run{}, err
	}
	defer f.Close()
	rr, err := tables.OpenRecordReader(f, path, arrowio.ReaderOptions{})
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
	return Run{Name: name, Rows: log.Rows, Solver: log.Metadata[schemas.KeySolver]}, nil
}

// Curve returns the series of run over its certified rows (those whose
// gap is not NaN): y(row) against x(row). The segment to a certified row
// whose epoch does not follow the previous certified one is dotted: the
// epochs between were not certified.
func Curve(run Run, style int, x, y func(tables.LogRow) float64) Series {
	s := Series{Name: run.Name, Style: style}
	prev := 0
	for _, r := range run.Rows {
		if r.Gap != r.Gap { // NaN: no certificate this epoch
			continue
		}
		s.X, s.Y = append(s.X, x(r)), append(s.Y, y(r))
		s.Dotted = append(s.Dotted, len(s.X) > 1 && r.Epoch != prev+1)
		prev = r.Epoch
	}
	return s
}

// Axes of the training-log figures.
var (
	// Seconds is the training time so far (certificate passes excluded).
	Seconds = func(r tables.LogRow) float64 { return r.TotalSeconds }
	// Epochs is the epoch (L-BFGS: the iteration; see EpochUnit).
	Epochs = func(r tables.LogRow) float64 { return float64(r.Epoch) }
	// Gap is the certified duality gap.
	Gap = func(r tables.LogRow) float64 { return r.Gap }
	// Primal is P(w).
	Primal = func(r tables.LogRow) float64 { return r.Primal }
)

// Axis labels.
const (
	LabelSeconds = "training time, s (certificate passes excluded)"
	// LabelEpochs is the epoch axis of runs of solvers that count
	// differently (EpochUnit); runs of one kind say theirs.
	LabelEpochs = "epoch (L-BFGS: iteration)"
	LabelGap    = "gap P − D, nats/sentence"
	LabelPrimal = "primal P(w), nats/sentence"
	// LabelLog10Gap is the gap's label on a log10-valued axis (Log10Y).
	LabelLog10Gap = "log10 certified gap"
)

// LogOptions are the choices of LogFigure.
type LogOptions struct {
	// Title heads every panel (e.g. the training data's name).
	Title string
	// Ref is the reference optimum P* of the suboptimality panels, P − P*;
	// NaN: none, and those panels show P − D_best instead, D_best the
	// best certified dual of the runs (a lower bound on P*, so the curve
	// is an upper bound on P − P*).
	Ref float64
	// RefName says where Ref comes from, for the axis label ("" when it
	// was given as a number).
	RefName string
	// GapTol, when > 0, is drawn in the gap panels as the target.
	GapTol float64
}

// BestDual returns the largest certified dual of the runs (NaN: none).
// Every certified dual is a lower bound on P*, so P − BestDual bounds
// P − P* from above.
func BestDual(runs []Run) float64 {
	best := math.NaN()
	for _, r := range runs {
		for _, row := range r.Rows {
			if row.Gap == row.Gap && !math.IsNaN(row.Dual) && !math.IsInf(row.Dual, 0) && !(row.Dual <= best) {
				best = row.Dual
			}
		}
	}
	return best
}

// BestPrimal returns the smallest certified primal of the runs (NaN:
// none): the reference P* a log gives.
func BestPrimal(runs []Run) float64 {
	best := math.NaN()
	for _, r := range runs {
		for _, row := range r.Rows {
			if row.Gap == row.Gap && !math.IsNaN(row.Primal) && !math.IsInf(row.Primal, 0) && !(row.Primal >= best) {
				best = row.Primal
			}
		}
	}
	return best
}

// AboveRef returns the certified rows of the runs whose primal is below
// ref: P* ≤ P(w) for every w, so such a ref is not this problem's optimum
// (their points have no suboptimality to draw). The result names run and
// epoch, "" when there is none.
func AboveRef(runs []Run, ref float64) string {
	for _, r := range runs {
		for _, row := range r.Rows {
			if row.Gap == row.Gap && row.Primal < ref {
				return fmt.Sprintf("%s epoch %d has P = %.10g", r.Name, row.Epoch, row.Primal)
			}
		}
	}
	return ""
}

// LogFigure is the 2×2 figure of training logs, one curve per run over
// the rows that carry a certificate, a marker at each: the certified gap
// and the primal suboptimality (P − P* with a reference, else P − D_best)
// on log axes, against training seconds and against epochs.
func LogFigure(runs []Run, o LogOptions) Figure {
	title := o.Title
	if title != "" {
		title += ": "
	}
	// The labels stay short: a Y label longer than the panel is high
	// squeezes the panel.
	ref, subLabel, subTitle := o.Ref, "", ""
	switch {
	case !math.IsNaN(ref) && o.RefName != "":
		subTitle, subLabel = "P − P*, P* = "+fmtPrimal(ref)+" ("+o.RefName+")", "P − P*, nats/sentence"
	case !math.IsNaN(ref):
		subTitle, subLabel = "P − P*, P* = "+fmtPrimal(ref), "P − P*, nats/sentence"
	default:
		ref = BestDual(runs)
		subTitle, subLabel = "P − best dual "+fmtPrimal(ref)+" (≥ P − P*)", "P − D_best, nats/sentence"
	}
	sub := func(r tables.LogRow) float64 { return r.Primal - ref }
	panel := func(name, xl, yl string, integer bool, x, y func(tables.LogRow) float64, gap bool) Panel {
		p := Panel{Title: title + name, XLabel: xl, YLabel: yl, LogY: true, IntegerX: integer, XFromZero: true}
		for k, r := range runs {
			p.Series = append(p.Series, Curve(r, k, x, y))
		}
		if gap && o.GapTol > 0 {
			p.Levels = []Level{{Name: "target --gap-tol " + strconv.FormatFloat(o.GapTol, 'g', -1, 64), Y: o.GapTol}}
		}
		return p
	}
	epochs, plural := epochAxis(runs)
	return Figure{Rows: [][]Panel{
		{panel("certified duality gap vs time", LabelSeconds, LabelGap, false, Seconds, Gap, true),
			panel("certified duality gap vs "+plural, epochs, LabelGap, true, Epochs, Gap, true)},
		{panel(subTitle+" vs time", LabelSeconds, subLabel, false, Seconds, sub, false),
			panel(subTitle+" vs "+plural, epochs, subLabel, true, Epochs, sub, false)},
	}}
}

// fmtPrimal writes a primal value with the digits that tell runs apart.
func fmtPrimal(v float64) string { return strconv.FormatFloat(v, 'g', 8, 64) }
