package stage

import (
	"fmt"
	"math"
	"sync/atomic"

	"github.com/dualcrf/dualcrf/progress"
	"github.com/dualcrf/dualcrf/tables"
	"github.com/dualcrf/dualcrf/train"
)

// trainProgress is train's task on the options' Progress reporter, in
// phases: "init" (the initial point: SDCA's ŵ(μ⁰), L-BFGS's first
// gradient; "resume" when resuming), "epoch e/max" (SDCA: its steps,
// polled from SDCA, which publishes them every 256 steps; the other
// solvers: the epochs done out of max), "certify epoch e" (the sentences
// of the certificate's full pass, polled from the problem's Meter) and
// "checkpoint epoch e". The note tells the last certified gap and the
// epoch it is from, against the target, the latest gap estimate and the
// certificate passes so far.
type trainProgress struct {
	task   *progress.Task
	n      int64         // sentences
	meter  *atomic.Int64 // the sentences of full passes so far (train.Problem.Meter)
	live   func() int64  // the steps of the epoch under way (train.LiveStepper); nil for a method that does not say
	epochs int           // the epoch limit
	tol    float64       // the gap target
	gap    float64       // the last certified gap (NaN before the first)
	gapEp  int           // the epoch it certifies
	est    float64       // the last epoch's gap estimate (NaN: none)
	certs  int           // certificate passes so far
	// certTotal is the sentences a certificate counts on the meter.
	certTotal int64
}

// counter returns the poll function of a phase that starts now and
// counts sentences on the meter, at most total when it is known.
func (tp *trainProgress) counter(total int64) func() int64 {
	base := tp.meter.Load()
	return func() int64 {
		n := tp.meter.Load() - base
		if total > 0 {
			n = min(n, total)
		}
		return n
	}
}

// startProgress starts the train task when o.Progress is set, in its
// init phase, and hooks it to the driver's Phase and Record callbacks.
func (r *trainer) startProgress() {
	if r.o.Progress == nil {
		return
	}
	tp := &trainProgress{n: int64(r.p.N()), meter: new(atomic.Int64), epochs: r.set.MaxEpochs, tol: r.set.GapTol,
		gap: math.NaN(), est: math.NaN()}
	if tp.epochs == 0 {
		tp.epochs = train.DefaultMaxEpochs
	}
	if tp.tol == 0 {
		tp.tol = train.DefaultGapTol
	}
	r.p.Meter = tp.meter
	// The init phase counts the passes it makes: SDCA's μ⁰ (in memory)
	// and ŵ(μ⁰), L-BFGS's first gradient; OEG and SAG count none (an
	// unknown total). A certificate is SDCA's ŵ(μ) and a forward–backward
	// pass, OEG's and SAG's a pass, L-BFGS's none (its last gradient's).
	initTotal, certTotal := int64(0), tp.n
	if m, ok := r.m.(train.Metered); ok {
		initTotal, certTotal = m.MeterTotals(r.p.N())
	}
	if m, ok := r.m.(train.LiveStepper); ok {
		tp.live = func() int64 { return int64(m.LiveSteps()) }
	}
	tp.certTotal = certTotal
	tp.task = r.o.Progress.Start("train", "sentences", tp.n)
	tp.task.Note(tp.note())
	if r.resume != nil {
		tp.task.Phase("resume", "", 0, nil)
	} else {
		tp.task.Phase("init", "sentences", initTotal, tp.counter(initTotal))
	}
	phase, record := r.set.Phase, r.set.Record
	r.set.Phase = func(ph string, epoch int) {
		tp.phase(ph, epoch)
		if phase != nil {
			phase(ph, epoch)
		}
	}
	r.set.Record = func(rec train.EpochRecord) error {
		if rec.Certified {
			tp.gap, tp.gapEp = rec.Gap, rec.Epoch
		}
		tp.est = rec.GapEstimate
		tp.task.Note(tp.note())
		if record != nil {
			return record(rec)
		}
		return nil
	}
	r.progress = tp
}

// phase follows the driver into a phase of epoch.
func (tp *trainProgress) phase(ph string, epoch int) {
	switch ph {
	case train.PhaseEpoch:
		name := fmt.Sprintf("epoch %d/%d", epoch, tp.epochs)
		if tp.live != nil {
			tp.task.Phase(name, "steps", tp.n, tp.live)
		} else {
			done := int64(epoch - 1)
			tp.task.Phase(name, "epochs", int64(tp.epochs), func() int64 { return done })
		}
	case train.PhaseCertificate:
		tp.certs++
		tp.task.Note(tp.note())
		tp.task.Phase(fmt.Sprintf("certify epoch %d", epoch), "sentences", tp.certTotal, tp.counter(tp.certTotal))
	case train.PhaseCheckpoint:
		tp.task.Phase(fmt.Sprintf("checkpoint epoch %d", epoch), "", 0, nil)
	}
}

// note is the text after the bar: the last certified gap "@" its epoch →
// the target, the latest estimate, the certificate passes.
func (tp *trainProgress) note() string {
	s := ""
	if !math.IsNaN(tp.gap) {
		s = fmt.Sprintf("gap %.3g @%d → %.3g", tp.gap, tp.gapEp, tp.tol)
	} else {
		s = fmt.Sprintf("gap ? → %.3g", tp.tol)
	}
	if !math.IsNaN(tp.est) && !math.IsInf(tp.est, 0) {
		s += fmt.Sprintf(" (est %.3g)", tp.est)
	}
	return s + fmt.Sprintf("  certs %d", tp.certs)
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
