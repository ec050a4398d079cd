package train

import "errors"

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

	// ErrResumeSettings is wrapped by the *option.Error refusing a resume
	// whose settings differ from those its checkpoint was made with.
	ErrResumeSettings = errors.New("train: resume with other settings")

	// ErrCheckpointExists refuses to start a run afresh in a checkpoint
	// directory that holds another run's snapshots (CheckFresh's errors wrap
	// it).
	ErrCheckpointExists = errors.New("checkpoint directory holds snapshots")
)
