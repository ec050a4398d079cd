package train

import (
	"errors"
	"fmt"
)

// FieldError refuses a method's setting out of range (SDCA.Check and the
// others): the method, the field of its struct, the value and what the
// value should be. It wraps ErrBadProblem.
type FieldError struct {
	Method string // "SDCA", "LBFGS", "OEG" or "SAG"
	Field  string // e.g. "SubPrecision"
	Value  any
	Want   string // e.g. "want a step length in (0,1)"
}

// Error names the method's field, its value and what it should be.
func (e *FieldError) Error() string {
	return fmt.Sprintf("%v: %s.%s %v: %s", ErrBadProblem, e.Method, e.Field, e.Value, e.Want)
}

// Unwrap returns ErrBadProblem.
func (e *FieldError) Unwrap() error { return ErrBadProblem }

// The errors of train; the errors returned wrap them.
var (
	// ErrBadProblem marks a training problem that cannot be trained on.
	ErrBadProblem = errors.New("train: bad problem")

	// ErrBadSampler is wrapped by every error of NewSampler and Restore.
	ErrBadSampler = errors.New("train: bad sampler")

	// ErrSettings marks settings the driver refuses.
	ErrSettings = errors.New("train: bad settings")

	// ErrNoProgress is returned by a Method's Epoch when it can make no further
	// progress (e.g. the L-BFGS line search cannot decrease P in floating point);
	// Train then stops with status NoProgress.
	ErrNoProgress = errors.New("train: no further progress possible")

	// ErrNonFinite reports a training whose objective or weights turned
	// infinite or NaN.
	ErrNonFinite = errors.New("train: non-finite objective or weights")

	// ErrIdentity reports a certificate whose gap identity does not hold: the
	// incrementally kept weights have drifted from ŵ(μ), or the duals are corrupt.
	ErrIdentity = errors.New("train: gap identity violated")

	// ErrNoCheckpoint is returned by LoadCheckpoint when DIR holds no usable
	// snapshot.
	ErrNoCheckpoint = errors.New("train: no usable checkpoint")

	// ErrResumeSettings is wrapped by the *SettingsError of a resume whose
	// settings differ from those its checkpoint was made with.
	ErrResumeSettings = errors.New("train: resume with other settings")

	// ErrCheckpointExists refuses to start a run afresh in a checkpoint
	// directory that holds another run's snapshots (CheckFresh's errors wrap
	// it).
	ErrCheckpointExists = errors.New("checkpoint directory holds snapshots")
)
