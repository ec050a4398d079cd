package main

// The checks every stage runs on its files before it creates anything:
// no output may be an input or another output (pipeline.CheckDistinct), and
// an output's name, flags and destination must agree on what it holds
// (pipeline.ResolveOutput). Each stage calls one function below at the top
// of its action. Also here: featurize's limits on its input.

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/dualcrf/dualcrf/featurize"
	"github.com/dualcrf/dualcrf/pipeline"
)

// pathOf names a file by the flag that gives it ("" for the stage's
// argument).
func pathOf(flag, name string) pipeline.Path { return pipeline.Path{Flag: flag, Name: name} }

// checkFiles refuses outputs that would overwrite an input or each other.
func checkFiles(c *cli.Context, stage string, inputs, outputs []pipeline.Path) error {
	if err := std(c).CheckDistinct(inputs, outputs); err != nil {
		return fmt.Errorf("%s: %w", stage, err)
	}
	return nil
}

// arrowOutput resolves the Arrow output of a stage with --ipc and -o
// (featurize, synth): the IPC format is --ipc's when given, else the
// extension's (.feather: file, .arrows: stream), else stream.
func arrowOutput(c *cli.Context, stage string) (pipeline.WriterOptions, error) {
	wopts, err := writerOptions(c)
	if err != nil {
		return wopts, err
	}
	req := pipeline.OutputRequest{Flag: "-o", Path: c.String("output"), PathGiven: c.IsSet("output"),
		Kinds: []pipeline.Kind{pipeline.KindArrow}}
	if c.IsSet("ipc") {
		req.IPC, req.IPCFlag = wopts.Format, "--ipc"
	}
	of, err := std(c).ResolveOutput(req)
	if err != nil {
		return wopts, fmt.Errorf("%s: %w", stage, err)
	}
	wopts.Format = of.IPC
	return wopts, nil
}

// featurizeFiles checks featurize's files and resolves its output.
func featurizeFiles(c *cli.Context, input string) (pipeline.WriterOptions, error) {
	err := checkFiles(c, "featurize",
		[]pipeline.Path{pathOf("", input), pathOf("--model", c.String("model")), pathOf("--vocab", c.String("vocab"))},
		[]pipeline.Path{pathOf("-o", c.String("output"))})
	if err != nil {
		return pipeline.WriterOptions{}, err
	}
	return arrowOutput(c, "featurize")
}

// decodeOutput checks decode's files and resolves its output: --format
// when given, else the extension of -o (.parquet, .conll/.txt, .arrow…),
// else an Arrow stream.
func decodeOutput(c *cli.Context) (pipeline.Kind, pipeline.WriterOptions, error) {
	input := c.Args().First()
	if input == "" && c.String("text") == "" {
		input = "-"
	}
	err := checkFiles(c, "decode",
		[]pipeline.Path{pathOf("-m", c.String("model")), pathOf("--text", c.String("text")), pathOf("", input)},
		[]pipeline.Path{pathOf("-o", c.String("output"))})
	if err != nil {
		return "", pipeline.WriterOptions{}, err
	}
	kinds := []pipeline.Kind{pipeline.KindArrow, pipeline.KindCoNLL, pipeline.KindParquet}
	req := pipeline.OutputRequest{Flag: "-o", Path: c.String("output"), PathGiven: c.IsSet("output"), Kinds: kinds}
	if c.IsSet("format") {
		req.Kind, req.KindFlag = pipeline.Kind(c.String("format")), "--format"
		switch req.Kind {
		case pipeline.KindArrow, pipeline.KindCoNLL, pipeline.KindParquet:
		default:
			return "", pipeline.WriterOptions{}, fmt.Errorf("decode: --format %q: want arrow, conll or parquet", req.Kind)
		}
	}
	wopts, err := writerOptions(c)
	if err != nil {
		return "", wopts, err
	}
	if c.IsSet("ipc") {
		req.IPC, req.IPCFlag = wopts.Format, "--ipc"
	}
	of, err := std(c).ResolveOutput(req)
	if err != nil {
		return "", wopts, fmt.Errorf("decode: %w", err)
	}
	if of.Kind == pipeline.KindArrow {
		wopts.Format = of.IPC
	}
	return of.Kind, wopts, nil
}

// evalFiles checks eval's files: the report goes to standard output, and
// --arrow is an Arrow IPC file.
func evalFiles(c *cli.Context, input string) error {
	outputs := []pipeline.Path{pathOf("report", "-")}
	if path := c.String("arrow"); path != "" {
		outputs = append(outputs, pathOf("--arrow", path))
		_, err := std(c).ResolveOutput(pipeline.OutputRequest{Flag: "--arrow", Path: path, PathGiven: true,
			Kinds: []pipeline.Kind{pipeline.KindArrow}, IPC: pipeline.FormatFile})
		if err != nil {
			return fmt.Errorf("eval: %w", err)
		}
	}
	return checkFiles(c, "eval", []pipeline.Path{pathOf("", input)}, outputs)
}

// trainFiles checks train's files: the model (-o) and log (--log) are
// Arrow IPC files; --duals PATH is written too.
func trainFiles(c *cli.Context, input string) error {
	outputs := []pipeline.Path{pathOf("-o", c.String("output")), pathOf("--log", c.String("log")),
		pathOf("--plot", c.String("plot")), pathOf("--cpuprofile", c.String("cpuprofile"))}
	if d := c.String("duals"); d != "memory" && d != "auto" {
		outputs = append(outputs, pathOf("--duals", d))
	}
	for _, flag := range []string{"output", "log"} {
		path := c.String(flag)
		if path == "" {
			continue
		}
		name := "--" + flag
		if flag == "output" {
			name = "-o"
		}
		_, err := std(c).ResolveOutput(pipeline.OutputRequest{Flag: name, Path: path, PathGiven: true,
			Kinds: []pipeline.Kind{pipeline.KindArrow}, IPC: pipeline.FormatFile})
		if err != nil {
			return fmt.Errorf("train: %w", err)
		}
	}
	return checkFiles(c, "train", []pipeline.Path{pathOf("", input), pathOf("--valid", c.String("valid"))}, outputs)
}

// limitFlags bound what featurize holds of its input at once.
func limitFlags() []cli.Flag {
	return []cli.Flag{
		&cli.IntFlag{Name: "max-line-bytes", Value: featurize.DefaultMaxLineBytes, Usage: "longest input line accepted, in bytes"},
		&cli.IntFlag{Name: "max-sentence-tokens", Value: featurize.DefaultMaxSentenceTokens, Usage: "most tokens a sentence may have"},
	}
}

// applyLimits sets the input limits from their flags.
func applyLimits(c *cli.Context, in *featurize.InputOptions) error {
	for _, name := range []string{"max-line-bytes", "max-sentence-tokens"} {
		if v := c.Int(name); v < 1 {
			return fmt.Errorf("featurize: --%s %d: want at least 1", name, v)
		}
	}
	in.MaxLineBytes, in.MaxSentenceTokens = c.Int("max-line-bytes"), c.Int("max-sentence-tokens")
	return nil
}
