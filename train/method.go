package train

import (
	"context"
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"sync"
	"time"
)

// Method is an optimisation method driven by Train. It owns only its
// mathematics; Train owns the loop, limits, stopping rules and the log.
type Method interface {
	// Init prepares the method for p.
	Init(p *Problem) error
	// Epoch runs one unit of work: n SDCA steps, or one L-BFGS iteration.
	// When ctx is cancelled it returns ctx's error, leaving the method at a
	// point it can be checkpointed and continued from.
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
	// identity; NaN for methods without blocks.
	Residual float64
	// Weights are the weights w the certificate is about (SDCA: ŵ(μ)
	// recomputed from the duals), valid until the method's next Certify:
	// a method may make the next certificate in the same buffer (SDCA
	// does), so that a run holds one such copy of the weights. Train drops
	// a certificate before it asks for the next, and the last one's
	// weights are the Result's.
	Weights []float64
}

// Counters are a method's running totals.
type Counters struct {
	Steps       int64   // steps (SDCA, OEG: sentence steps; SAG: line searches made; L-BFGS: oracle calls of its evaluations)
	LineSearch  int64   // line-search evaluations
	GapEstimate float64 // running estimate of the gap (SDCA), NaN if none
	// OracleCalls is the number of oracle calls (forward–backward passes
	// over one sentence) the method's epochs made: its steps' and its line
	// searches' or Lipschitz tests' (OEG's trials, SAG's tests), L-BFGS's
	// n per evaluation — certificates and refreshes excluded (Train adds
	// the refreshes). It is the x-axis "oracle calls" of the paper's
	// Figure 4.
	OracleCalls int64
	// Updates is the number of parameter updates: one per step that moves
	// w (SDCA, OEG, SAG: per sentence step; L-BFGS: per accepted
	// iteration), the x-axis "parameter updates" of the paper's Figure 4.
	Updates int64
	// CertifyCalls is the number of oracle calls one Certify makes (n for
	// a full pass; 0 when the certificate reuses an evaluation, as
	// L-BFGS's does).
	CertifyCalls int64
}

// Settings are the driver's limits, policies and hooks. The zero value of
// each field is its documented default; negative limits are refused.
type Settings struct {
	MaxEpochs int           // 0: DefaultMaxEpochs
	MaxTime   time.Duration // 0: no limit
	GapTol    float64       // stop when the certified gap ≤ GapTol; 0: DefaultGapTol
	// GapEvery, when positive, certifies every GapEvery-th epoch as well
	// (certified rows in the log on request). Whatever its value, an epoch
	// whose gap estimate (Counters.GapEstimate) is at most
	// EstimateSlack·GapTol is certified, since the target may be met; 0
	// (DefaultGapEvery) certifies only then — and every epoch for a method
	// without an estimate (L-BFGS). Negative is the same as 0. The initial point and
	// the last epoch are always certified; a certificate above GapTol costs
	// its pass and nothing else (training goes on from the same point).
	GapEvery int
	// RefreshEvery, when positive, recomputes every gap estimate exactly (a
	// full pass, counted as training time) at the start of every
	// RefreshEvery-th epoch (Osokin et al. 2016); the method must have
	// gap estimates to refresh (SDCA). 0: never.
	RefreshEvery int
	// Validate, when set, is called after each certificate with the
	// certified weights (valid during the call: the next certificate may
	// reuse them); its metrics go into the log record.
	Validate func(w []float64) (map[string]float64, error)
	// Record, when set, receives every epoch's record when it is made, and
	// again when a later certificate of the same point completes it.
	Record func(EpochRecord) error
	// Resume, when not nil, continues the run checkpoint Resume holds from
	// its exact position: the method (SDCA) takes back its state, and
	// epochs, steps, training time and log go on from there, so that the
	// run ends as the uninterrupted one would have, bit for bit. The
	// checkpoint must have been made with the same settings, else Train
	// fails with an *option.Error wrapping ErrResumeSettings (Checkpoint.CheckSettings). The caller closes its duals after Train.
	// An SDCA run takes the checkpoint's Weights over (they are nil after).
	Resume *Checkpoint
	// Checkpoint, when set, is called after every CheckpointEvery-th epoch
	// and whenever CheckpointInterval of training time has passed since the
	// last call (either may be zero to disable it), and once more when ctx
	// is cancelled, at the exact point where the run stopped, before Train
	// returns an *InterruptedError. It returns the snapshot's name.
	Checkpoint         func(p Progress) (string, error)
	CheckpointEvery    int
	CheckpointInterval time.Duration
	// Phase, when set, is called as the run enters a phase (PhaseEpoch,
	// PhaseCertificate, PhaseCheckpoint) of an epoch. A checkpoint written
	// within an epoch (SDCA's on a streamed store) is in that epoch; one
	// written at an epoch's end in the epoch ended.
	Phase func(phase string, epoch int)
	// Facts, when set, are the caller's facts about the run as a JSON
	// object — what its model records of where it started, which the
	// settings do not say — that every snapshot keeps and a resumed run's
	// Checkpoint.Facts returns, so that its model says the same.
	Facts json.RawMessage
}

// Position is an exact point of a run: Epoch epochs have all their steps
// done and Step steps of the next one are done. Pending says that epoch
// Epoch's record (its certificate, validation, checkpoint) is not made yet;
// then Step is 0.
type Position struct {
	Epoch   int
	Step    int
	Pending bool
}

// Progress is how far a run has come: its position, training time, log,
// the counters at the start of the epoch in progress, and the settings it
// runs with.
type Progress struct {
	Position
	Training time.Duration
	Records  []EpochRecord
	// settings are the run's settings, which a snapshot records so that a
	// resumed run can be checked against them; facts are Settings.Facts.
	settings RunSettings
	facts    json.RawMessage
	// EpochTraining and EpochLineSearch are the training time and the
	// method's line-search count when the epoch in progress (or pending)
	// began.
	EpochTraining   time.Duration
	EpochLineSearch int64
}

// EpochRecord is one row of the training log. Primal, Dual, Gap and
// Residual are NaN unless Certified (Residual also for methods without
// blocks); GapEstimate is NaN for methods without one.
type EpochRecord struct {
	Epoch       int
	Steps       int64
	Seconds     float64 // training time of this epoch, certificates excluded
	Total       float64 // cumulative training time, certificates excluded
	CertSeconds float64 // time of this epoch's certificate pass (0 if none)
	Certified   bool    // whether Primal/Dual/Gap were computed for this epoch's point
	Primal      float64
	Dual        float64
	Gap         float64
	Residual    float64
	GapEstimate float64
	LineSearch  int64 // line-search evaluations this epoch
	// OracleCalls is the run's oracle calls so far, certificates excluded
	// (Counters.OracleCalls plus the refresh passes); CertOracleCalls the
	// oracle calls of the certificate passes so far, this epoch's included.
	// Their sum is every forward–backward pass of the run.
	OracleCalls     int64
	CertOracleCalls int64
	Updates         int64 // parameter updates so far (Counters.Updates)
	Metrics         map[string]float64
}

// Status says why Train stopped.
type Status int

// The statuses. Their String forms ("gap", "epochs", "time", "no-progress")
// are what the CLI prints and what models record as "stopped".
const (
	NotStopped  Status = iota // the zero Status: the run has not stopped
	GapReached                // the certified gap reached GapTol
	EpochLimit                // MaxEpochs epochs were run
	TimeLimit                 // MaxTime of training time was spent
	NoProgress                // the method could make no further progress (ErrNoProgress)
	Interrupted               // ctx was cancelled: Train returned an *InterruptedError
)

var statusNames = [...]string{NotStopped: "not-stopped", GapReached: "gap", EpochLimit: "epochs", TimeLimit: "time",
	NoProgress: "no-progress", Interrupted: "interrupted"}

// String returns the status's name: "gap", "epochs", "time", "no-progress",
// "interrupted" or "not-stopped".
func (s Status) String() string {
	if s < 0 || int(s) >= len(statusNames) {
		return "Status(" + strconv.Itoa(int(s)) + ")"
	}
	return statusNames[s]
}

// MarshalText returns the status's String, so that JSON holds its name.
func (s Status) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// Result is what Train returns.
type Result struct {
	// Weights are the weights the last certificate is about (for SDCA
	// ŵ(μ) of the final duals), the ones to write as the model.
	Weights  []float64
	Epochs   int
	Last     Certificate // the certificate of the final point
	Stopped  Status      // why training stopped
	Training time.Duration
	Records  []EpochRecord // the whole log, from epoch 0
	GapTol   float64       // the tolerance in force
}

// TargetMet reports whether the final certified gap is within the tolerance.
func (r *Result) TargetMet() bool { return r.Last.Gap <= r.GapTol }

// InterruptedError is the error Train returns when ctx is cancelled: where
// the run stopped and which phase the cancellation interrupted.
type InterruptedError struct {
	Phase    string   // the phase running when ctx was cancelled (Phase* constants)
	Epoch    int      // the epoch of that phase
	At       Position // where the run stopped
	Snapshot string   // the snapshot holding the run at At; "" if none
	Err      error    // ctx's error
}

// Error says where the run was interrupted and where it stopped.
func (e *InterruptedError) Error() string {
	var s string
	switch e.Phase {
	case PhaseSetup:
		s = "interrupted during setup"
	case PhaseEpoch:
		s = fmt.Sprintf("interrupted in epoch %d", e.Epoch)
	case PhaseCertificate:
		s = fmt.Sprintf("interrupted during the certificate pass of epoch %d", e.Epoch)
	case PhaseCheckpoint:
		s = fmt.Sprintf("interrupted during a checkpoint write after epoch %d (the write was completed)", e.Epoch)
		if e.At.Step > 0 && e.Epoch == e.At.Epoch+1 {
			// A write within the epoch (SDCA's commits of a streamed store).
			s = fmt.Sprintf("interrupted during a checkpoint write in epoch %d (the write was completed)", e.Epoch)
		}
	default:
		s = "interrupted during " + e.Phase
	}
	switch {
	case e.At.Pending:
		s += fmt.Sprintf("; stopped before the certificate of epoch %d", e.At.Epoch)
	case e.At.Step > 0:
		s += fmt.Sprintf("; stopped after step %d of epoch %d", e.At.Step, e.At.Epoch+1)
	default:
		s += fmt.Sprintf("; stopped after epoch %d", e.At.Epoch)
	}
	if e.Snapshot != "" {
		s += "; snapshot " + e.Snapshot + " holds the run"
	}
	return s
}

// Unwrap returns ctx's error.
func (e *InterruptedError) Unwrap() error { return e.Err }

var (
	_ error                  = (*InterruptedError)(nil)
	_ fmt.Stringer           = Status(0)
	_ encoding.TextMarshaler = Status(0)
)

// check refuses negative limits and a NaN tolerance.
func (s *Settings) check() error {
	switch {
	case s.MaxEpochs < 0:
		return fmt.Errorf("%w: MaxEpochs %d is negative", ErrSettings, s.MaxEpochs)
	case s.MaxTime < 0:
		return fmt.Errorf("%w: MaxTime %v is negative", ErrSettings, s.MaxTime)
	case !(s.GapTol >= 0) || math.IsInf(s.GapTol, 0):
		return fmt.Errorf("%w: GapTol %g, want a finite tolerance ≥ 0", ErrSettings, s.GapTol)
	case s.CheckpointEvery < 0 || s.CheckpointInterval < 0:
		return fmt.Errorf("%w: negative checkpoint period", ErrSettings)
	case s.RefreshEvery < 0:
		return fmt.Errorf("%w: RefreshEvery %d is negative", ErrSettings, s.RefreshEvery)
	}
	if c := s.Resume; c != nil && (c.state.Epoch < 0 || c.state.Step < 0 || (c.state.Pending && c.state.Step != 0)) {
		return fmt.Errorf("%w: resume position %+v", ErrSettings, c.Progress().Position)
	}
	return nil
}

// checkMethod refuses a policy the method cannot carry out.
func (s *Settings) checkMethod(m Method) error {
	if _, ok := m.(Refresher); s.RefreshEvery > 0 && !ok {
		return fmt.Errorf("%w: RefreshEvery %d, but %T has no gap estimates to refresh", ErrSettings, s.RefreshEvery, m)
	}
	if _, ok := m.(Resumer); s.Resume != nil && !ok {
		return fmt.Errorf("%w: %T cannot resume from a checkpoint", ErrSettings, m)
	}
	return nil
}

// run is one call of Train.
type run struct {
	ctx       context.Context
	s         Settings
	m         Method
	maxEpochs int
	tol       float64
	every     int
	prog      Progress
	last      *Certificate // the certificate of the current point, if made in this run
	lastCkpt  time.Duration
	certCalls int64     // oracle calls of the certificate passes so far
	n         int       // the problem's number of sentences
	saved     *Position // the position of the last snapshot written
	snapshot  string    // its name

	mu       sync.Mutex // guards phase, phaseEp, hitPhase, hitEp
	phase    string
	phaseEp  int
	hitPhase string        // the phase when ctx was cancelled
	hitEp    int           //
	hitDone  chan struct{} // closed once hitPhase is set
}

// Train runs m on p until a stopping rule fires or ctx is cancelled — from
// the start, or from the checkpoint s.Resume. The initial point is
// certified and logged as epoch 0. When ctx is cancelled Train writes a
// snapshot at the exact point reached (if Checkpoint is set) and returns
// an *InterruptedError together with a Result whose Stopped is Interrupted
// and which holds the epochs, training time and log so far (no weights:
// the point reached is not certified). On any other error the Result is
// nil.
func Train(ctx context.Context, p *Problem, s Settings, m Method) (*Result, error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	if err := p.checkLayout(); err != nil {
		return nil, err
	}
	r := &run{ctx: ctx, s: s, m: m, n: p.N(), maxEpochs: s.MaxEpochs, tol: s.GapTol, every: s.GapEvery, phase: PhaseSetup,
		hitDone: make(chan struct{})}
	if r.maxEpochs == 0 {
		r.maxEpochs = DefaultMaxEpochs
	}
	if r.tol == 0 {
		r.tol = DefaultGapTol
	}
	if r.every < 0 {
		r.every = 0
	}
	if err := s.checkMethod(m); err != nil {
		return nil, err
	}
	settings, _ := settingsOf(p, s, m)
	if s.Resume != nil {
		if err := s.Resume.checkSettings(settings); err != nil {
			return nil, err
		}
	}
	stop := context.AfterFunc(ctx, r.hit)
	defer stop()
	t0 := time.Now()
	if s.Resume != nil {
		if err := m.(Resumer).Resume(p, s.Resume); err != nil {
			return nil, err
		}
		r.prog = *s.Resume.Progress()
		r.prog.Records = append([]EpochRecord(nil), r.prog.Records...)
		r.saved = &Position{}
		*r.saved = r.prog.Position
		if n := len(r.prog.Records); n > 0 {
			r.certCalls = r.prog.Records[n-1].CertOracleCalls
		}
	} else {
		if err := m.Init(p); err != nil {
			return nil, err
		}
		r.prog = Progress{Position: Position{Pending: true}, Training: time.Since(t0)}
	}
	r.prog.settings, r.prog.facts = settings, s.Facts
	r.lastCkpt = r.prog.Training
	r.installCommit()
	res, err := r.loop()
	if err != nil {
		return r.interrupted(err)
	}
	return res, nil
}

// installCommit gives a method that must checkpoint within an epoch (SDCA
// on a streamed store, whose spare slots bound the block writes between two
// commits) the function that does it, when the run checkpoints.
func (r *run) installCommit() {
	cm, ok := r.m.(Committer)
	if !ok || r.s.Checkpoint == nil {
		return
	}
	cm.SetCommit(func() error {
		r.noteStep()
		err := r.checkpoint()
		r.enter(PhaseEpoch, r.prog.Epoch+1)
		return err
	})
}

// noteStep takes the method's position within the epoch in progress into
// the run's progress, for a method whose epochs can stop between steps.
func (r *run) noteStep() {
	if es, ok := r.m.(EpochStepper); ok {
		r.prog.Step = es.EpochSteps()
	}
}

// hit notes the phase in which ctx was cancelled.
func (r *run) hit() {
	r.mu.Lock()
	r.hitPhase, r.hitEp = r.phase, r.phaseEp
	r.mu.Unlock()
	close(r.hitDone)
}

// enter records the phase the run is in and tells Settings.Phase.
func (r *run) enter(phase string, epoch int) {
	r.mu.Lock()
	r.phase, r.phaseEp = phase, epoch
	r.mu.Unlock()
	if r.s.Phase != nil {
		r.s.Phase(phase, epoch)
	}
}

// loop runs epochs until a stopping rule fires.
func (r *run) loop() (*Result, error) {
	first := true
	for {
		if r.prog.Pending {
			if err := r.finishEpoch(); err != nil {
				return nil, err
			}
		}
		// An epoch interrupted between steps is finished before any
		// stopping rule is looked at.
		if !(first && r.prog.Step > 0) {
			if reason := r.stopReason(); reason != NotStopped {
				return r.result(reason)
			}
		}
		first = false
		if err := r.epoch(); err != nil {
			if errors.Is(err, ErrNoProgress) && r.ctx.Err() == nil {
				r.prog.Epoch++
				r.prog.Step, r.prog.Pending = 0, true
				if err := r.finishEpoch(); err != nil {
					return nil, err
				}
				return r.result(NoProgress)
			}
			return nil, err
		}
	}
}

// epoch runs (or finishes) one epoch of the method.
func (r *run) epoch() error {
	if r.prog.Step == 0 {
		r.prog.EpochTraining = r.prog.Training
		r.prog.EpochLineSearch = r.m.Counters().LineSearch
	}
	r.enter(PhaseEpoch, r.prog.Epoch+1)
	te := time.Now()
	err := r.refresh()
	if err == nil {
		err = r.m.Epoch(r.ctx)
	}
	r.prog.Training += time.Since(te)
	if err != nil {
		r.noteStep()
		return err
	}
	if err := finiteWeights(r.m.Weights(), r.prog.Epoch+1); err != nil {
		return err
	}
	r.last = nil
	r.prog.Epoch++
	r.prog.Step, r.prog.Pending = 0, true
	return nil
}

// refresh recomputes the method's gap estimates when an epoch starts at a
// multiple of the refresh period (after the first): RefreshEvery, or
// WarmRefreshEvery for a run that started warm (refreshEvery).
func (r *run) refresh() error {
	if r.prog.Step != 0 || r.refreshEvery() <= 0 || r.prog.Epoch%r.refreshEvery() != 0 || r.prog.Epoch == 0 {
		return nil
	}
	return r.m.(Refresher).Refresh(r.ctx)
}

// refreshEvery returns the run's refresh period: RefreshEvery when given;
// else WarmRefreshEvery for a run that started warm with a sampler of gap
// estimates (SDCA.Warm), 0 (never) for others.
func (r *run) refreshEvery() int {
	if r.s.RefreshEvery > 0 {
		return r.s.RefreshEvery
	}
	if rm, ok := r.m.(Refresher); ok {
		return rm.RefreshPeriod()
	}
	return 0
}

// refreshCalls returns the oracle calls of the refresh passes made before
// the pending epoch's record: one full pass at the start of every epoch
// that follows epoch e > 0 with e a multiple of RefreshEvery (refresh) —
// counted from the position alone, so that a resumed run counts as the
// uninterrupted one.
func (r *run) refreshCalls() int64 {
	R, e := r.refreshEvery(), r.prog.Epoch-1 // the pending epoch is prog.Epoch: it started after epoch e
	if R <= 0 || e < 1 {
		return 0
	}
	return int64(e/R) * int64(r.n)
}

// finishEpoch makes the pending epoch's record — certifying it when due —
// and writes the checkpoint when due.
func (r *run) finishEpoch() error {
	ep := r.prog.Epoch
	est := r.m.Counters().GapEstimate
	due := ep == 0 || r.due(ep, est)
	certify := due || ep >= r.maxEpochs || (r.s.MaxTime > 0 && r.prog.Training >= r.s.MaxTime)
	c := r.m.Counters()
	rec := EpochRecord{Epoch: ep, Steps: c.Steps, Seconds: (r.prog.Training - r.prog.EpochTraining).Seconds(),
		Total: r.prog.Training.Seconds(), GapEstimate: c.GapEstimate, LineSearch: c.LineSearch - r.prog.EpochLineSearch,
		OracleCalls: c.OracleCalls + r.refreshCalls(), CertOracleCalls: r.certCalls, Updates: c.Updates,
		Primal: math.NaN(), Dual: math.NaN(), Gap: math.NaN(), Residual: math.NaN()}
	if certify {
		if err := r.certify(&rec); err != nil {
			return err
		}
		// Only a certificate the schedule made may steer the run: one
		// forced by a stop is absent from a longer run that goes on.
		if cu, ok := r.m.(CertificateUser); ok && due {
			cu.UseCertificate()
		}
	}
	r.prog.Records = append(r.prog.Records, rec)
	r.prog.Pending = false
	if r.s.Record != nil {
		if err := r.s.Record(rec); err != nil {
			return err
		}
	}
	if r.s.Checkpoint != nil && ep > 0 && ((r.s.CheckpointEvery > 0 && ep%r.s.CheckpointEvery == 0) ||
		(r.s.CheckpointInterval > 0 && r.prog.Training-r.lastCkpt >= r.s.CheckpointInterval)) {
		if err := r.checkpoint(); err != nil {
			return err
		}
		r.lastCkpt = r.prog.Training
	}
	return nil
}

// due reports whether epoch ep's point is to be certified by the period
// (GapEvery > 0), or else by the gap estimate est (NaN: none, so every
// epoch).
func (r *run) due(ep int, est float64) bool {
	if r.every > 0 && ep%r.every == 0 {
		return true
	}
	if math.IsNaN(est) {
		return r.every <= 0 // no estimate to go by (L-BFGS): every epoch, unless a period is set
	}
	return est <= EstimateSlack*r.tol
}

// certify certifies the current point into rec and validates its weights.
func (r *run) certify(rec *EpochRecord) error {
	r.enter(PhaseCertificate, r.prog.Epoch)
	tc := time.Now()
	cert, err := r.m.Certify(r.ctx)
	if err != nil {
		return err
	}
	if !finite(cert.Primal) || !finite(cert.Dual) || !finite(cert.Gap) {
		return fmt.Errorf("%w: at epoch %d the primal is %g and the dual %g", ErrNonFinite, r.prog.Epoch, cert.Primal, cert.Dual)
	}
	if err := finiteWeights(cert.Weights, r.prog.Epoch); err != nil {
		return err
	}
	rec.CertSeconds += time.Since(tc).Seconds()
	r.certCalls += r.m.Counters().CertifyCalls
	rec.CertOracleCalls = r.certCalls
	rec.Certified = true
	rec.Primal, rec.Dual, rec.Gap, rec.Residual = cert.Primal, cert.Dual, cert.Gap, cert.Residual
	r.last = &cert
	if r.s.Validate != nil {
		if rec.Metrics, err = r.s.Validate(cert.Weights); err != nil {
			return fmt.Errorf("validate: %w", err)
		}
	}
	return nil
}

// checkpoint writes a snapshot of the current position.
func (r *run) checkpoint() error {
	r.enter(PhaseCheckpoint, r.checkpointEpoch())
	name, err := r.s.Checkpoint(r.progress())
	if err != nil {
		return err
	}
	pos := r.prog.Position
	r.saved, r.snapshot = &pos, name
	return nil
}

// checkpointEpoch is the epoch of a checkpoint written at the current
// position: the epoch in progress for one within an epoch, else the one
// ended.
func (r *run) checkpointEpoch() int {
	if r.prog.Step > 0 {
		return r.prog.Epoch + 1
	}
	return r.prog.Epoch
}

// progress returns a copy of the run's progress.
func (r *run) progress() Progress {
	p := r.prog
	p.Records = append([]EpochRecord(nil), r.prog.Records...)
	return p
}

// stopReason returns why the run stops at the current epoch boundary, or
// NotStopped.
func (r *run) stopReason() Status {
	if n := len(r.prog.Records); n > 0 {
		if l := r.prog.Records[n-1]; l.Certified && l.Epoch == r.prog.Epoch && l.Gap <= r.tol {
			return GapReached
		}
	}
	if r.prog.Epoch >= r.maxEpochs {
		return EpochLimit
	}
	if r.s.MaxTime > 0 && r.prog.Training >= r.s.MaxTime {
		return TimeLimit
	}
	return NotStopped
}

// result ends the run: it makes sure the last certificate is about the
// final point (certifying it again after a resume, and completing the last
// record if it was uncertified) and returns the certified weights.
func (r *run) result(reason Status) (*Result, error) {
	if r.last == nil {
		n := len(r.prog.Records)
		rec := EpochRecord{Epoch: r.prog.Epoch}
		if n > 0 && r.prog.Records[n-1].Epoch == r.prog.Epoch {
			rec = r.prog.Records[n-1]
		}
		wasCertified := rec.Certified
		if err := r.certify(&rec); err != nil {
			return nil, err
		}
		if !wasCertified && n > 0 {
			r.prog.Records[n-1] = rec
			if r.s.Record != nil {
				if err := r.s.Record(rec); err != nil {
					return nil, err
				}
			}
		}
	}
	res := &Result{Weights: r.last.Weights, Epochs: r.prog.Epoch, Last: *r.last, Stopped: reason,
		Training: r.prog.Training, Records: r.prog.Records, GapTol: r.tol}
	return res, nil
}

// interrupted turns a cancellation into an *InterruptedError, writing a
// snapshot of the exact position reached unless one already holds it, and
// returns the Result so far; any other error it returns alone.
func (r *run) interrupted(err error) (*Result, error) {
	if r.ctx.Err() == nil || !errors.Is(err, r.ctx.Err()) {
		return nil, err
	}
	<-r.hitDone // ctx is cancelled, so hit runs
	r.mu.Lock()
	ie := &InterruptedError{Phase: r.hitPhase, Epoch: r.hitEp, At: r.prog.Position, Err: err}
	r.mu.Unlock()
	if ie.Phase == "" {
		ie.Phase = PhaseSetup
	}
	res := &Result{Epochs: r.prog.Epoch, Stopped: Interrupted, Training: r.prog.Training,
		Records: r.progress().Records, GapTol: r.tol}
	if r.s.Checkpoint == nil {
		return res, ie
	}
	if r.saved != nil && *r.saved == r.prog.Position {
		ie.Snapshot = r.snapshot
		return res, ie
	}
	r.enter(PhaseCheckpoint, r.checkpointEpoch())
	name, cerr := r.s.Checkpoint(r.progress())
	if cerr != nil {
		return res, fmt.Errorf("%w (and the snapshot of the interrupted run failed: %v)", ie, cerr)
	}
	ie.Snapshot = name
	return res, ie
}

// finiteWeights refuses weights with an infinite or NaN entry.
func finiteWeights(w []float64, epoch int) error {
	for j, v := range w {
		if !finite(v) {
			return fmt.Errorf("%w: after epoch %d weight %d is %g (λ too small for the data, or extreme attribute values?)",
				ErrNonFinite, epoch, j, v)
		}
	}
	return nil
}

func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

func nan() float64 { return math.NaN() }
