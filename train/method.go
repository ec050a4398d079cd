package train

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"
)

// Method is an optimisation method driven by Train. It owns only its
// mathematics; Train owns the loop, limits, stopping rules and the log.
type Method interface {
	// Init prepares the method for p.
	Init(p *Problem) error
	// Epoch runs one unit of work: n SDCA steps, or one L-BFGS iteration.
	Epoch(ctx context.Context) error
	// Weights returns the current weights (the method's own slice).
	Weights() []float64
	// Certify computes the exact primal and a certified duality gap with a
	// full pass over the data.
	Certify(ctx context.Context) (Certificate, error)
	// Counters reports the method's running statistics.
	Counters() Counters
}

// Certificate is the result of a full pass.
type Certificate struct {
	Primal float64 // P(w)
	Dual   float64 // D(μ), or a lower bound on P* for primal methods
	Gap    float64 // P − D ≥ P(w) − P*
	// Residual is |(P − D) − mean block gap| for SDCA, the check of the gap
	// identity; zero for methods without blocks.
	Residual float64
}

// Counters are a method's running totals.
type Counters struct {
	Steps       int64   // oracle calls made by updates
	LineSearch  int64   // line-search evaluations
	GapEstimate float64 // running estimate of the gap (SDCA), NaN if none
}

// Settings are the driver's limits and hooks. The zero value of each field
// is its documented default.
type Settings struct {
	MaxEpochs int           // 0: 100
	MaxTime   time.Duration // 0: no limit
	GapTol    float64       // stop when the certified gap ≤ GapTol; 0: DefaultGapTol
	// GapEvery is the number of epochs between certificate passes; 0 means
	// 1; negative means only when the method's gap estimate falls below
	// GapTol.
	GapEvery int
	// Validate, when set, is called after each certified epoch with the
	// current weights; its metrics go into the log record.
	Validate func(w []float64) (map[string]float64, error)
	// Record, when set, receives every epoch's record (e.g. the log writer).
	Record func(EpochRecord) error
	// Start, when not nil, continues an interrupted run: epochs are counted
	// on from Start.Epoch, training time from Start.Training, and the
	// initial point is not certified again.
	Start *Progress
	// Checkpoint, when set, is called after every CheckpointEvery-th epoch
	// and whenever CheckpointInterval of training time has passed since the
	// last call (either may be zero to disable it), and once more when ctx
	// is cancelled during an epoch, before Train returns ctx's error.
	Checkpoint         func(p Progress) error
	CheckpointEvery    int
	CheckpointInterval time.Duration
}

// Progress is how far a run has come: completed epochs and training time.
type Progress struct {
	Epoch    int
	Training time.Duration
}

// DefaultGapTol is the default certified-gap stopping tolerance.
const DefaultGapTol = 1e-3

// EpochRecord is one row of the training log.
type EpochRecord struct {
	Epoch       int
	Steps       int64
	Seconds     float64 // training time of this epoch, certificates excluded
	Total       float64 // cumulative training time, certificates excluded
	CertSeconds float64 // time of this epoch's certificate pass (0 if none)
	Certified   bool    // whether Primal/Dual/Gap were computed this epoch
	Primal      float64
	Dual        float64
	Gap         float64
	Residual    float64
	GapEstimate float64
	LineSearch  int64 // line-search evaluations this epoch
	Metrics     map[string]float64
}

// Result is what Train returns.
type Result struct {
	Weights  []float64
	Epochs   int
	Last     Certificate // last certificate
	Stopped  string      // why training stopped: "gap", "epochs", "time", "no-progress"
	Training time.Duration
}

// ErrIdentity reports a certificate whose gap identity does not hold: the
// incrementally kept weights have drifted from ŵ(μ), or the duals are corrupt.
var ErrIdentity = errors.New("train: gap identity violated")

// Train runs m on p until a stopping rule fires or ctx is cancelled. The
// initial point is certified and logged as epoch 0.
func Train(ctx context.Context, p *Problem, s Settings, m Method) (*Result, error) {
	maxEpochs := s.MaxEpochs
	if maxEpochs == 0 {
		maxEpochs = 100
	}
	tol := s.GapTol
	if tol == 0 {
		tol = DefaultGapTol
	}
	every := s.GapEvery
	if every == 0 {
		every = 1
	}
	t0 := time.Now()
	if err := m.Init(p); err != nil {
		return nil, err
	}
	res := &Result{}
	training := time.Since(t0)
	first := 1
	if s.Start != nil {
		first = s.Start.Epoch + 1
		training = s.Start.Training
	}
	record := func(ep int, sec float64, prevLS int64, certify bool) (EpochRecord, error) {
		c := m.Counters()
		r := EpochRecord{Epoch: ep, Steps: c.Steps, Seconds: sec, Total: training.Seconds(),
			GapEstimate: c.GapEstimate, LineSearch: c.LineSearch - prevLS,
			Primal: math.NaN(), Dual: math.NaN(), Gap: math.NaN()}
		if certify {
			tc := time.Now()
			cert, err := m.Certify(ctx)
			if err != nil {
				return r, err
			}
			r.CertSeconds = time.Since(tc).Seconds()
			r.Certified = true
			r.Primal, r.Dual, r.Gap, r.Residual = cert.Primal, cert.Dual, cert.Gap, cert.Residual
			res.Last = cert
			if s.Validate != nil {
				if r.Metrics, err = s.Validate(m.Weights()); err != nil {
					return r, fmt.Errorf("validate: %w", err)
				}
			}
		}
		if s.Record != nil {
			if err := s.Record(r); err != nil {
				return r, err
			}
		}
		return r, nil
	}
	var last EpochRecord
	if s.Start == nil {
		var err error
		if last, err = record(0, training.Seconds(), 0, true); err != nil {
			return nil, err
		}
	}
	lastCkpt := training
	for ep := first; ; ep++ {
		if last.Certified && last.Gap <= tol {
			res.Stopped = "gap"
			break
		}
		if ep > maxEpochs {
			res.Stopped = "epochs"
			break
		}
		if s.MaxTime > 0 && training >= s.MaxTime {
			res.Stopped = "time"
			break
		}
		prevLS := m.Counters().LineSearch
		te := time.Now()
		if err := m.Epoch(ctx); err != nil {
			if ctx.Err() != nil && s.Checkpoint != nil {
				training += time.Since(te)
				if cerr := s.Checkpoint(Progress{Epoch: ep - 1, Training: training}); cerr != nil {
					return nil, fmt.Errorf("%w (and the checkpoint on interrupt failed: %v)", err, cerr)
				}
			}
			if errors.Is(err, ErrNoProgress) {
				res.Stopped = "no-progress"
				if _, err := record(ep, time.Since(te).Seconds(), prevLS, true); err != nil {
					return nil, err
				}
				break
			}
			return nil, err
		}
		sec := time.Since(te)
		training += sec
		res.Epochs = ep
		est := m.Counters().GapEstimate
		certify := (every > 0 && ep%every == 0) || (!math.IsNaN(est) && est <= tol) ||
			ep == maxEpochs || (s.MaxTime > 0 && training >= s.MaxTime)
		var err error
		if last, err = record(ep, sec.Seconds(), prevLS, certify); err != nil {
			return nil, err
		}
		if s.Checkpoint != nil && ((s.CheckpointEvery > 0 && ep%s.CheckpointEvery == 0) ||
			(s.CheckpointInterval > 0 && training-lastCkpt >= s.CheckpointInterval)) {
			if err := s.Checkpoint(Progress{Epoch: ep, Training: training}); err != nil {
				return nil, err
			}
			lastCkpt = training
		}
	}
	res.Weights = m.Weights()
	res.Training = training
	return res, nil
}

func nan() float64 { return math.NaN() }
