// Package stage holds dualcrf's pipeline stages as library calls: Featurize,
// Train, Decode, Eval and Inspect each take a context, their inputs and
// outputs, and an options struct whose zero value is the documented default
// (the defaults the dualcrf command's flags show), and return a typed result.
//
// The stages compose in one process without touching the file system: an
// input is a pipeline.Source (a path, or a reader standing for standard
// input), an output an io.Writer, and FeaturizeTable and Train hand their
// results back in memory:
//
//	t, _, err := stage.FeaturizeTable(ctx, pipeline.Source{Path: "train.txt.gz"}, stage.FeaturizeOptions{MinCount: 3})
//	res, err := stage.Train(ctx, t, "train", stage.TrainOptions{})
//	var pred bytes.Buffer
//	_, err = stage.Decode(ctx, res.Model, pipeline.Source{Path: "test.txt.gz"}, &pred, stage.DecodeOptions{Text: true})
//	ev, err := stage.Eval(ctx, pipeline.Source{Stdin: &pred}, stage.EvalOptions{})
//
// The command (cmd/dualcrf) maps its flags to these options and adds what
// only a command has: output files written atomically, the check that no
// output is an input, exit codes and signals. Messages name the command's
// flags (a Go caller sets the option of the same name).
//
// Two of TrainOptions' fields mean zero at zero, as the command's flags' 0
// does: Seed (a seed has no unset value: 0 is a seed like any other) and
// CheckpointEvery (0: checkpoints by time and on interrupt only); the
// command's defaults are DefaultSeed and DefaultCheckpointEvery. Every
// other zero field is the default.
//
// Progress lines and warnings go to the Log writer of a stage's options,
// never to the process's standard error.
package stage
