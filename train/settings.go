package train

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/dualcrf/dualcrf/duals"
	"github.com/dualcrf/dualcrf/option"
)

// settingsVersion is the version of the run settings a checkpoint records.
const settingsVersion = 1

// RunSettings are the settings of a run that a resumed run must repeat to
// continue it bit for bit, with their defaults applied; a checkpoint
// records them (in state.json) and a resume is checked against them.
type RunSettings struct {
	Version int    `json:"version"`
	Solver  string `json:"solver"`
	// The problem: λ, its sentences and its feature space.
	Lambda float64 `json:"lambda"`
	// L1 is the elastic net's λ₁ (0, and absent, for the ℓ2 objective).
	L1           float64 `json:"l1,omitempty"`
	Sentences    int     `json:"sentences"`
	FeatureSpace string  `json:"feature_space"`
	Transitions  string  `json:"transitions"`
	Bias         bool    `json:"bias"`
	// Hamming is BCFW's Hamming loss; "" for the other methods (and in a
	// BCFW checkpoint written before it could be set: HammingMean).
	Hamming string `json:"hamming,omitempty"`
	// How the epochs are run: the schedule ("" for the sequential SDCA,
	// which records Workers 1; "rounds" with its RoundSize; "async-atomic"
	// or "async-wild"), and on a streamed store its blocks (0 for duals
	// held otherwise). RoundSteps, the steps per worker of an earlier
	// version's parallel rounds, only its checkpoints have.
	Schedule    string `json:"schedule,omitempty"`
	Workers     int    `json:"workers"`
	RoundSize   int    `json:"round_size,omitempty"`
	RoundSteps  int    `json:"round_steps,omitempty"`
	DualsBlocks int    `json:"duals_blocks,omitempty"`
	// The sampler's kind and, for NewSampler's, its non-uniform share.
	Sampler    string   `json:"sampler"`
	NonUniform *float64 `json:"nonuniform,omitempty"`
	// The step: ε of the initial duals, the line search's sub-precision,
	// the seed.
	Epsilon      float64 `json:"epsilon"`
	SubPrecision float64 `json:"sub_precision"`
	Seed         uint64  `json:"seed"`
	// RefreshEvery is Settings.RefreshEvery, for a method that refreshes.
	RefreshEvery int `json:"refresh_every,omitempty"`
	// DualPrecision is SDCA's duals.Precision by name; "" for float64
	// (precisionSetting), which every snapshot written before the
	// precision could be chosen holds.
	DualPrecision string `json:"dual_precision,omitempty"`
}

// precisionSetting is the DualPrecision a run of precision p records: ""
// for float64, so that snapshots of float64 runs from before the precision
// was recorded compare equal.
func precisionSetting(p duals.Precision) string {
	if p == duals.Float64 {
		return ""
	}
	return p.String()
}

// settingsOf returns the settings of a run of m on p under s that a
// checkpoint records: the method's and the refresh period. ok is false for
// a method that cannot resume.
func settingsOf(p *Problem, s Settings, m Method) (rs RunSettings, ok bool) {
	rm, ok := m.(Resumer)
	if !ok {
		return RunSettings{}, false
	}
	rs = rm.RunSettings(p)
	if _, ok := m.(Refresher); ok {
		rs.RefreshEvery = s.RefreshEvery
	}
	return rs, true
}

// setting is one run setting as the settings check compares it.
type setting struct {
	field string // its name: RunSettings' field
	words string // what it is, for a refusal's message
	value string
}

// list returns the settings in the order the check names them: the
// problem, then the workers before the round length that follows from
// them.
func (rs RunSettings) list() []setting {
	g := func(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }
	nonUniform := "(none)"
	if rs.NonUniform != nil {
		nonUniform = g(*rs.NonUniform)
	}
	hamming := rs.Hamming
	if hamming == "" && rs.Solver == "bcfw" {
		hamming = HammingMean // all there was
	}
	precision := rs.DualPrecision
	if precision == "" {
		precision = duals.Float64.String() // all there was
	}
	return []setting{
		{"Solver", "the solver", rs.Solver},
		{"Lambda", "λ", g(rs.Lambda)},
		{"L1", "λ₁ (the ℓ1 weight)", g(rs.L1)},
		{"Sentences", "the number of sentences", strconv.Itoa(rs.Sentences)},
		{"FeatureSpace", "the feature space", rs.FeatureSpace},
		{"Transitions", "the transitions", rs.Transitions},
		{"Bias", "the bias features", strconv.FormatBool(rs.Bias)},
		{"Hamming", "the Hamming loss", hamming},
		{"Schedule", "the schedule of the steps", rs.schedule()},
		{"RoundSize", "the round size", strconv.Itoa(rs.RoundSize)},
		{"DualsBlocks", "the streamed duals' block count (it follows from the memory budget and the rest of the run)", strconv.Itoa(rs.DualsBlocks)},
		{"Sampler", "the sampler", rs.Sampler},
		{"NonUniform", "the sampler's non-uniform share", nonUniform},
		{"Epsilon", "ε of the initial duals", g(rs.Epsilon)},
		{"SubPrecision", "the line search's sub-precision", g(rs.SubPrecision)},
		{"Seed", "the seed", strconv.FormatUint(rs.Seed, 10)},
		{"RefreshEvery", "the gap-refresh period", strconv.Itoa(rs.RefreshEvery)},
		{"DualPrecision", "the duals' precision", precision},
	}
}

// schedule names the schedule in words: "sequential", "rounds",
// "async-atomic", "async-wild", or an earlier version's parallel SDCA.
func (rs RunSettings) schedule() string {
	switch {
	case rs.Schedule != "":
		return rs.Schedule
	case rs.Workers > 1:
		return fmt.Sprintf("an earlier version's parallel rounds (%d workers, %d steps each)", rs.Workers, rs.RoundSteps)
	}
	return ScheduleSequential
}

// errOldSettings refuses a checkpoint whose state.json an earlier version
// wrote (its run settings by the command's flag names).
var errOldSettings = errors.New("state.json: written by an earlier version of dualcrf, whose snapshots this one cannot continue; start a fresh run")

// CheckSettings refuses a resume of m on p under s from c whose settings
// differ from the checkpoint's, naming the first setting that differs
// (checkSettings).
func (c *Checkpoint) CheckSettings(p *Problem, s Settings, m Method) error {
	now, ok := settingsOf(p, s, m)
	if !ok {
		return fmt.Errorf("%w: %T cannot resume from a checkpoint", ErrSettings, m)
	}
	return c.checkSettings(now)
}

// checkSettings compares the settings of this run with the checkpoint's:
// the first that differs is refused with an *option.Error that wraps
// ErrResumeSettings, about the option that sets it (resumeSetting) with
// this run's value and the checkpoint's in its message; a setting no
// option sets alone (the bias, the sentences, a streamed store's blocks)
// is said in words.
func (c *Checkpoint) checkSettings(now RunSettings) error {
	was := c.state.Settings.list()
	for i, s := range now.list() {
		if s.value == was[i].value {
			continue
		}
		if opt := resumeSetting(s.field); opt != "" {
			return &option.Error{Field: opt, Value: s.value, Err: ErrResumeSettings,
				Msg: fmt.Sprintf("%s was made with {%s} %s: resume with the same setting, or start afresh", c.Dir, opt, was[i].value)}
		}
		return &option.Error{Err: ErrResumeSettings,
			Msg: fmt.Sprintf("%s was made with %s, this run has %s: resume with the same setting, or start afresh", c.Dir, s.phrase(was[i].value), s.phrase(s.value))}
	}
	return nil
}

// phrase says a value v of the setting in words, naming the options that
// bear on it as {Field}.
func (s setting) phrase(v string) string {
	switch {
	case s.field == "Bias" && v == "false":
		return "{NoBias}"
	case s.field == "Bias":
		return "the bias features (no {NoBias})"
	case s.field == "Schedule" && v == ScheduleSequential:
		return "the sequential SDCA ({SDCA.Workers} 1)"
	case s.field == "Schedule" && v == ScheduleRounds:
		return "the rounds of the parallel SDCA (the default, or {SDCA.RoundSize})"
	case s.field == "Schedule" && (v == ScheduleAsyncAtomic || v == ScheduleAsyncWild):
		return "asynchronous steps ({SDCA.Async} " + v[len("async-"):] + ")"
	case s.field == "DualsBlocks" && v == "0":
		return "duals not streamed"
	case s.field == "DualsBlocks":
		return "streamed duals in " + v + " blocks (their size follows the memory budget, {MemoryBudget} or half of physical memory, and the rest of the run)"
	}
	return s.words + " " + v
}
