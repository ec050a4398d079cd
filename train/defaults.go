package train

// The defaults of the settings of Train and of the methods: the zero value
// of each field stands for its default, and the CLI's flags take them from
// here.
const (
	DefaultMaxEpochs = 100  // Settings.MaxEpochs
	DefaultGapTol    = 1e-3 // Settings.GapTol
	DefaultGapEvery  = 0    // Settings.GapEvery: certify when it can matter
	// EstimateSlack is how far above GapTol a method's gap estimate may be
	// for a certificate to be worth its pass when Settings.GapEvery is 0:
	// the running estimate of stale block gaps stays within a factor 2 of
	// the true gap (Le Priol et al. 2018, §6.3 and Figure 9).
	EstimateSlack = 2

	DefaultSampler = SamplerGap // SDCA.Sampler
	// DefaultEpsilon is the uniform weight ε of the initial duals
	// (SDCA.Epsilon). Since ŵ(μ⁰) = (ε/(λn)) Σ_i (F_i − E_uniform[F]) grows
	// with the corpus, a large ε starts far out (ε = 1e-3 gives an initial
	// gap of 594 on CoNLL-2000); with 1e-9 the start is w ≈ 0 and the gap
	// 73.2, the paper's 73.1, and the following epochs match the paper's
	// curve.
	DefaultEpsilon      = 1e-9
	DefaultSubPrecision = 1e-3 // SDCA.SubPrecision
	// DefaultRoundSize is SDCA.RoundSize's zero value: the steps of a round
	// of the parallel SDCA. A step's oracle misses the commits of the round
	// before and of its own round's earlier steps (2R − 1 at most): on
	// CoNLL-2000 (λ = 1/n) rounds of 2, 4 and 8 steps reach a certified gap
	// of 1e-3 in 14, 14 and 15 epochs and 1e-4 in 18, 20 and 21, the
	// sequential SDCA in 13 and 18. Two rounds in flight keep about 2R
	// workers busy.
	DefaultRoundSize = 2
	// DefaultWorkers is SDCA.Workers's zero value: one per core, in rounds
	// (the model does not depend on the number of cores).
	DefaultWorkers = AllWorkers
	// AllWorkers, as SDCA.Workers, runs one worker per core
	// (runtime.GOMAXPROCS).
	AllWorkers = -1

	DefaultNonUniform = 0.8 // SamplerOptions.NonUniform, the probability of a non-uniform draw
	DefaultInitialGap = 100 // SamplerOptions.InitialGap

	DefaultOEGEta      = 0.5         // OEG.Eta: every sentence's initial step size η_i
	DefaultSAGVariant  = SAGNUS      // SAG.Variant
	DefaultSAGInitialL = 1.0         // SAG.InitialL: every L_i before its first test
	DefaultLBFGSStore  = 10          // LBFGS.Store: the number of correction pairs
	DefaultHamming     = HammingMean // BCFW.Hamming
)

// The names of the settings' values and of what a run reports: the
// sampler kinds (NewSampler), the SAG variants (SAG.Variant), BCFW's
// Hamming losses (BCFW.Hamming), the held-out
// metrics the log knows and the phases of a run (Settings.Phase,
// InterruptedError).
const (
	SamplerUniform       = "uniform"
	SamplerGap           = "gap"
	SamplerImportance    = "importance"
	SamplerGapImportance = "gap-importance"
	SamplerMax           = "max"

	SAGUniform = "uniform"  // uniform sampling, Lipschitz test every iteration
	SAGNUS     = "nus"      // SAG-NUS: non-uniform sampling, Lipschitz test every iteration
	SAGNUSStar = "nus-star" // SAG-NUS*: SAG-NUS that skips line searches of sentences whose tests pass at once

	HammingMean  = "mean"  // BCFW.Hamming: a wrong token costs 1/T_i, a sentence's loss lies in [0,1]
	HammingCount = "count" // BCFW.Hamming: a wrong token costs 1, a sentence's loss is its count of wrong tokens

	MetricAccuracy = "accuracy" // token accuracy in [0,1]
	MetricF1       = "f1"       // chunk F1 in [0,1]

	PhaseSetup       = "setup"
	PhaseEpoch       = "epoch"
	PhaseCertificate = "certificate"
	PhaseCheckpoint  = "checkpoint write"
)
