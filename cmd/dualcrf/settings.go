package main

import (
	"errors"
	"fmt"

	"github.com/dualcrf/dualcrf/train"
)

// settingFlags are the train flags that set each run setting a resume
// must repeat (train.SettingsError.Field).
var settingFlags = map[string]string{
	"Solver":       "--solver",
	"Lambda":       "--lambda",
	"FeatureSpace": "--feature-space",
	"Transitions":  "--transitions",
	"Workers":      "--workers",
	"RoundSteps":   "--round-steps",
	"Sampler":      "--sampler",
	"NonUniform":   "--nonuniform",
	"Epsilon":      "--epsilon",
	"SubPrecision": "--subprecision",
	"Seed":         "--seed",
	"RefreshEvery": "--refresh-every",
}

// settingsFlagError restates a resume refused for its settings by the
// train flags that set them; other errors it returns as they are.
func settingsFlagError(err error) error {
	var se *train.SettingsError
	if !errors.As(err, &se) {
		return err
	}
	flag := func(v string) string {
		switch f, ok := settingFlags[se.Field]; {
		case ok:
			return f + " " + v
		case se.Field == "Bias" && v == "false":
			return "--no-bias"
		case se.Field == "Bias":
			return "the bias features (no --no-bias)"
		case se.Field == "DualsBlocks" && v == "0":
			return "duals not streamed"
		case se.Field == "DualsBlocks":
			return "streamed duals in " + v + " blocks (their size follows the memory budget, --memory-budget or half of physical memory, and the rest of the run)"
		}
		return se.Field + " " + v
	}
	return fmt.Errorf("%w: %s was made with %s, this run has %s; resume with the same setting (or start afresh)",
		train.ErrResumeSettings, se.Dir, flag(se.Checkpoint), flag(se.Now))
}
