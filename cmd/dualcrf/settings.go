package main

import (
	"errors"
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/dualcrf/dualcrf/train"
)

// settingOptions are the options (as trainFlags names them) behind each
// run setting a resume must repeat (train.SettingsError.Field); the flag
// that sets each comes from trainFlags, the one table of train's flags.
var settingOptions = map[string]string{
	"Solver":       "Method",
	"Lambda":       "Lambda",
	"L1":           "L1",
	"FeatureSpace": "FeatureSpace",
	"Transitions":  "Transitions",
	"Hamming":      "BCFW.Hamming",
	"Workers":      "SDCA.Workers",
	"RoundSteps":   "SDCA.RoundSteps",
	"Sampler":      "Sampler.Kind",
	"NonUniform":   "Sampler.NonUniform",
	"Epsilon":      "SDCA.Epsilon",
	"SubPrecision": "SDCA.SubPrecision",
	"Seed":         "SDCA.Seed",
	"RefreshEvery": "RefreshEvery",
}

// settingsFlagError restates a resume refused for its settings by the
// train flags that set them; other errors it returns as they are.
func settingsFlagError(err error) error {
	var se *train.SettingsError
	if !errors.As(err, &se) {
		return err
	}
	flags := trainFlags()
	flag := func(v string) string {
		option, ok := settingOptions[se.Field]
		var f cli.Flag
		if ok {
			f = flags.flagOf(option)
		}
		switch {
		case f != nil:
			return "--" + f.Names()[0] + " " + v
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
