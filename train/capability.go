package train

// What some methods can do beyond Method, as exported interfaces a program
// asks a method for, so that a method written outside this package can
// offer the same.

import (
	"context"
	"fmt"
	"reflect"

	"github.com/dualcrf/dualcrf/crf"
	"github.com/dualcrf/dualcrf/duals"
)

// Refresher is a method that samples by gap estimates it can recompute
// exactly (Settings.RefreshEvery): SDCA and BCFW. Train refuses a
// RefreshEvery for a method that is not.
type Refresher interface {
	Method
	// Refresh recomputes the gap estimates at the current point with a
	// full pass over the data; Train calls it between two epochs.
	Refresh(ctx context.Context) error
	// RefreshPeriod returns the period, in epochs, at which the method
	// asks to be refreshed when Settings.RefreshEvery is not given; 0:
	// never (SDCA started warm with a sampler of gap estimates asks for
	// WarmRefreshEvery).
	RefreshPeriod() int
}

// CertificateUser is a method that learns from the pass of its last
// certificate (BCFW's exact block gaps, for its sampler). Train calls
// UseCertificate after a certificate the schedule made (Settings.GapEvery
// and the gap estimate), not after one a stop forced: a run that goes on
// longer would not have made it.
type CertificateUser interface {
	Method
	UseCertificate()
}

// Committer is a method that must checkpoint within an epoch (SDCA on a
// streamed store, whose spare slots bound the block writes between two
// commits). When the run checkpoints, Train gives it, before the first
// epoch, the function that writes a checkpoint at the method's position.
type Committer interface {
	Method
	SetCommit(commit func() error)
}

// EpochStepper is a method whose epochs can stop between two steps (a
// cancelled context, a commit within the epoch): Train records its
// position in the epoch from EpochSteps, so that a checkpoint resumes
// there.
type EpochStepper interface {
	Method
	// EpochSteps returns the steps done in the epoch in progress (0
	// between epochs).
	EpochSteps() int
}

// Resumer is a method that continues a run from a checkpoint
// (Settings.Resume) bit for bit: SDCA and BCFW. Train refuses a Resume
// for a method that is not, and one whose RunSettings differ from the
// checkpoint's.
type Resumer interface {
	Method
	// RunSettings returns every setting of the method on p that a resumed
	// run must repeat to continue bit for bit, with the defaults applied.
	RunSettings(p *Problem) RunSettings
	// Resume prepares the method for p at the exact position of the
	// checkpoint c, instead of Init: duals, weights, counters, sampler
	// and random state as they were.
	Resume(p *Problem, c *Checkpoint) error
}

// LiveStepper is a method that publishes, while an epoch runs, how many
// of its steps are done (SDCA): a progress display polls it from another
// goroutine.
type LiveStepper interface {
	Method
	// LiveSteps returns the steps done in the epoch in progress, to
	// within a few hundred.
	LiveSteps() int
}

// DualsHolder is a method whose point is dual variables in a duals.Store
// (SDCA): what a run keeps for a warm start (RunKeepDuals).
type DualsHolder interface {
	Method
	// Store returns the store of the duals in use (after Init).
	Store() duals.Store
}

// DualsPrecision is a method that keeps its duals at a precision of its
// choosing (SDCA's DualPrecision): a program makes the files that hold
// them (a memory-mapped file, a streamed store) at it.
type DualsPrecision interface {
	Method
	// Precision returns the precision of the duals a run of the method
	// keeps, with its default applied.
	Precision() duals.Precision
}

// Metered is a method that says, for a display of the progress of its
// passes, how many sentences its Init and each Certify count on the
// problem's Meter (Problem.Meter). A method that is not counts none in
// Init (an unknown total) and n per Certify.
type Metered interface {
	Method
	// MeterTotals returns the sentences Init and each Certify count on a
	// problem of n sentences.
	MeterTotals(n int) (init, certify int64)
}

// Workers is a method that runs its epochs on several goroutines (SDCA),
// which a program reports and a memory estimate counts.
type Workers interface {
	Method
	// NumWorkers returns the goroutines the method runs on a problem of n
	// sentences.
	NumWorkers(n int) int
}

// SetMade sets the field of m that a run makes from the option opt
// (Description.Made: SDCA's Sampler from RunSampler) to v, and reports
// whether m has one.
func SetMade(m Method, opt string, v any) bool {
	d, ok := Describe(m)
	if !ok {
		return false
	}
	for f, o := range d.Made {
		if o == opt {
			fv := field(m, f)
			if v == nil {
				fv.SetZero()
				return true
			}
			rv := reflect.ValueOf(v)
			if !rv.Type().AssignableTo(fv.Type()) {
				panic(fmt.Sprintf("train: %T.%s is a %s, not %T", m, f, fv.Type(), v))
			}
			fv.Set(rv)
			return true
		}
	}
	return false
}

// Made returns the fields of m that a run makes that are set, each as an
// option.Error names it ("SDCA.Sampler") with the option it is made from.
func Made(m Method) map[string]string {
	d, _ := Describe(m)
	set := map[string]string{}
	for f, opt := range d.Made {
		if !field(m, f).IsZero() {
			set[TypeName(m)+"."+f] = opt
		}
	}
	return set
}

// Reads reports whether m reads the option opt of a run (Description.Reads).
func Reads(m Method, opt string) bool {
	d, _ := Describe(m)
	for _, r := range d.Reads {
		if r == opt {
			return true
		}
	}
	return false
}

// MeterTotals implements Metered: μ⁰ (unless streamed, whose Init counts
// its pass as it goes) and ŵ(μ⁰) in Init; ŵ(μ) and the oracle pass in a
// certificate.
func (m *SDCA) MeterTotals(n int) (init, certify int64) {
	if _, ok := m.Duals.(*duals.Stream); ok {
		return int64(n), 2 * int64(n)
	}
	return 2 * int64(n), 2 * int64(n)
}

// MeterTotals implements Metered: the first gradient in Init; none in a
// certificate, which reuses the last evaluation.
func (m *LBFGS) MeterTotals(n int) (init, certify int64) { return int64(n), 0 }

var (
	_ LiveStepper    = (*SDCA)(nil)
	_ DualsHolder    = (*SDCA)(nil)
	_ DualsPrecision = (*SDCA)(nil)
	_ Metered        = (*SDCA)(nil)
	_ Metered        = (*LBFGS)(nil)
	_ Workers        = (*SDCA)(nil)
)

// StateSizer is a method that keeps state for every sentence besides the
// weights (SDCA's and BCFW's duals, OEG's potentials, SAG's gradients),
// which a program reports before it trains.
type StateSizer interface {
	Method
	// StateBytes returns the bytes of that state on d in memory, what it
	// is, and its form: 12345, "duals", "μ, float64".
	StateBytes(d *crf.Dataset) (bytes int64, what, form string)
}

// StateBytes implements StateSizer: the duals, at m's precision.
func (m *SDCA) StateBytes(d *crf.Dataset) (int64, string, string) {
	p := m.Precision()
	return duals.Bytes(d, p), "duals", "μ, " + p.String()
}

// StateBytes implements StateSizer: the duals, in float64.
func (m *BCFW) StateBytes(d *crf.Dataset) (int64, string, string) {
	return duals.Bytes(d, duals.Float64), "duals", "μ, float64"
}

// StateBytes implements StateSizer: the potentials and cached sums.
func (m *OEG) StateBytes(d *crf.Dataset) (int64, string, string) {
	return OEGBytes(d), "potentials θ̃ and marginal sums", "float64"
}

// StateBytes implements StateSizer: the stored marginal sums.
func (m *SAG) StateBytes(d *crf.Dataset) (int64, string, string) {
	return SAGBytes(d), "stored marginal sums", "float64"
}

var (
	_ StateSizer = (*SDCA)(nil)
	_ StateSizer = (*BCFW)(nil)
	_ StateSizer = (*OEG)(nil)
	_ StateSizer = (*SAG)(nil)
)
