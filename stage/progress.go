package stage

import (
	"fmt"
	"math"
	"sync/atomic"

	"github.com/dualcrf/dualcrf/progress"
	"github.com/dualcrf/dualcrf/tables"
	"github.com/dualcrf/dualcrf/train"
)

// trainProgress is train's task on the options' Progress reporter: the
// steps of the epoch in progress (polled from SDCA, which publishes them
// every 256 steps; L-BFGS counts iterations), and a note with the epoch,
// the last certified gap against the target and the certificate passes.
type trainProgress struct {
	task   *progress.Task
	epochs int     // the epoch limit
	tol    float64 // the gap target
	gap    float64 // the last certified gap (NaN before the first)
	est    float64 // the last epoch's gap estimate (NaN: none)
	certs  int     // certificate passes so far
	epoch  int
	// stepping is set while SDCA steps; between the steps of two epochs
	// (a certificate, a checkpoint) the bar shows the epoch full.
	stepping atomic.Bool
}

// startProgress starts the train task when o.Progress is set and hooks it
// to the driver's Phase and Record callbacks.
func (r *trainer) startProgress() {
	if r.o.Progress == nil {
		return
	}
	tp := &trainProgress{epochs: r.set.MaxEpochs, tol: r.set.GapTol, gap: math.NaN(), est: math.NaN()}
	if tp.epochs == 0 {
		tp.epochs = train.DefaultMaxEpochs
	}
	if tp.tol == 0 {
		tp.tol = train.DefaultGapTol
	}
	if r.sd != nil {
		tp.task = r.o.Progress.Start("train", "steps", int64(r.p.N()))
		n := int64(r.p.N())
		tp.task.Poll(func() int64 {
			if !tp.stepping.Load() {
				return n
			}
			return int64(r.sd.LiveSteps())
		})
	} else {
		tp.task = r.o.Progress.Start("train", "iterations", int64(tp.epochs))
	}
	phase, record := r.set.Phase, r.set.Record
	r.set.Phase = func(ph string, epoch int) {
		tp.phase(ph, epoch, r.sd == nil)
		if phase != nil {
			phase(ph, epoch)
		}
	}
	r.set.Record = func(rec train.EpochRecord) error {
		if rec.Certified {
			tp.gap = rec.Gap
		}
		tp.est = rec.GapEstimate
		tp.task.Note(tp.note(""))
		if record != nil {
			return record(rec)
		}
		return nil
	}
	r.progress = tp
}

// phase follows the driver into a phase of epoch.
func (tp *trainProgress) phase(ph string, epoch int, lbfgs bool) {
	tp.stepping.Store(ph == train.PhaseEpoch)
	switch ph {
	case train.PhaseEpoch:
		tp.epoch = epoch
		if lbfgs {
			tp.task.Set(int64(epoch - 1))
			tp.task.Note(tp.note(""))
		} else {
			tp.task.Restart(tp.note(""))
		}
	case train.PhaseCertificate:
		tp.certs++
		tp.task.Note(tp.note("certifying"))
	case train.PhaseCheckpoint:
		tp.task.Note(tp.note("checkpoint"))
	}
}

// note is the text after the bar: epoch e/max, the certified gap → the
// target, the certificate passes, and what is happening when not stepping.
func (tp *trainProgress) note(doing string) string {
	s := fmt.Sprintf("epoch %d/%d", tp.epoch, tp.epochs)
	if !math.IsNaN(tp.gap) {
		s += fmt.Sprintf("  gap %.3g → %.3g", tp.gap, tp.tol)
	}
	if !math.IsNaN(tp.est) {
		s += fmt.Sprintf(" (est %.3g)", tp.est)
	}
	s += fmt.Sprintf("  certs %d", tp.certs)
	if doing != "" {
		s += "  " + doing + "…"
	}
	return s
}

// end ends the task.
func (tp *trainProgress) end() {
	if tp != nil {
		tp.task.End()
	}
}

// decodeProgress counts the sentences and tokens decode has written.
func decodeProgress(p *progress.Reporter, write func(*tables.FeatureTable, *tables.Predictions) error) (func(*tables.FeatureTable, *tables.Predictions) error, func()) {
	if p == nil {
		return write, func() {}
	}
	task := p.Start("decode", "sentences", 0)
	var sents, tokens int64
	return func(t *tables.FeatureTable, pr *tables.Predictions) error {
		sents += int64(t.Data.Len())
		tokens += int64(t.Data.NumTokens())
		task.Set(sents)
		task.Note(fmt.Sprintf("%d tokens", tokens))
		return write(t, pr)
	}, task.End
}
