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
	// DefaultRoundSize is the number of steps of a round of the parallel
	// SDCA that SDCA.RoundSteps's zero value asks for: each of P workers
	// makes max(1, DefaultRoundSize/P) steps per round. A step's oracle is
	// as stale as the round is long: on CoNLL-2000 (λ = 1/n) rounds of 2,
	// 4, 8, 16 and 32 steps reach a certified gap of 1e-3 in 13, 13, 14,
	// 15 and 20 epochs, the sequential SDCA in 13.
	DefaultRoundSize = 4
	// DefaultWorkers is SDCA.Workers's zero value: the sequential SDCA.
	// On CoNLL-2000 2 workers need the sequential SDCA's 13 epochs to a
	// certified gap of 1e-3 (18 to 1e-4), but on 2 cores shared with other
	// work they did not win in wall time; more workers are there on
	// request.
	DefaultWorkers = 1
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
