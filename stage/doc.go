// Package stage holds dualcrf's pipeline stages as library calls: Featurize,
// Train, Decode, Eval and Inspect each take a context, their inputs and
// outputs, and an options struct whose zero value is the documented default
// (the defaults the dualcrf command's flags show), and return a typed result.
//
// The stages compose in one process without touching the file system: an
// input is an Input (a file, or a reader with the name messages give it),
// an output an io.Writer, and FeaturizeTable and Train hand their results
// back in memory:
//
//	t, _, err := stage.FeaturizeTable(ctx, stage.File("train.txt.gz"), stage.FeaturizeOptions{MinCount: 3})
//	res, err := stage.Train(ctx, t, "train", stage.TrainOptions{})
//	var pred bytes.Buffer
//	_, err = stage.Decode(ctx, res.Model, stage.File("test.txt.gz"), &pred, stage.DecodeOptions{Text: true})
//	ev, err := stage.Eval(ctx, stage.Reader(&pred, "predictions"), stage.EvalOptions{})
//
// The command (cmd/dualcrf) maps its flags to these options and adds what
// only a command has: output files written atomically, the check that no
// output is an input, exit codes and signals. The options are typed (the
// solver is a train.Method value, λ a Lambda, the duals' place a Duals),
// and an option out of range is an *OptionError naming the option's field;
// the command names its flag instead.
//
// A zero field of TrainOptions is its default, except for those that mean
// zero at zero (RefreshEvery, MaxTime, CheckpointEvery,
// CheckpointInterval); the solver's seed is its method's Seed field, 0
// unless set.
//
// Progress lines and warnings go to the Log writer of a stage's options,
// never to the process's standard error.
package stage
