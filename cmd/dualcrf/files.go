package main

// The checks every stage runs on its files before it creates anything:
// no output may be an input or another output (pipeline.CheckDistinct), and
// an output's name, flags and destination must agree on what it holds
// (pipeline.ResolveOutput). Each stage calls one function below at the top
// of its action. Also here: featurize's limits on its input.

import (
	"cmp"
	"fmt"
	"path/filepath"

	"github.com/urfave/cli/v2"

	"github.com/dualcrf/dualcrf/arrowio"
	"github.com/dualcrf/dualcrf/featurize"
	"github.com/dualcrf/dualcrf/pipeline"
	"github.com/dualcrf/dualcrf/stage"
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

// arrowOutput resolves the table output of a stage with --ipc and -o
// (featurize, synth): with parquet true (featurize), Parquet when
// --output-format parquet or -o names a .parquet file; else Arrow IPC in
// --ipc's format when given, else the extension's (.feather: file,
// .arrows: stream), else stream.
func arrowOutput(c *cli.Context, stage string, parquet bool) (arrowio.WriterOptions, error) {
	wopts, err := writerOptions(c)
	if err != nil {
		return wopts, err
	}
	req := pipeline.OutputRequest{Flag: "-o", Path: c.String("output"), PathGiven: c.IsSet("output"),
		Kinds: []pipeline.Kind{pipeline.KindArrow}}
	if parquet {
		req.Kinds = append(req.Kinds, pipeline.KindParquet)
		if c.IsSet("output-format") {
			req.Kind, req.KindFlag = pipeline.Kind(c.String("output-format")), "--output-format"
			if req.Kind != pipeline.KindArrow && req.Kind != pipeline.KindParquet {
				return wopts, fmt.Errorf("%s: --output-format %q: want arrow, parquet or crfsuite", stage, req.Kind)
			}
		}
	}
	if c.IsSet("ipc") {
		req.IPC, req.IPCFlag = wopts.Format, "--ipc"
	}
	of, err := std(c).ResolveOutput(req)
	if err != nil {
		return wopts, fmt.Errorf("%s: %w", stage, err)
	}
	if of.Kind == pipeline.KindParquet {
		return parquetOptions(c, stage)
	}
	wopts.Format = of.IPC
	return wopts, nil
}

// parquetOptions are the writer options of a Parquet output; --ipc and
// --compression, which choose an Arrow IPC output's layout, are refused.
func parquetOptions(c *cli.Context, stage string) (arrowio.WriterOptions, error) {
	if c.IsSet("ipc") {
		return arrowio.WriterOptions{}, fmt.Errorf("%s: --ipc applies to Arrow IPC output, not Parquet", stage)
	}
	if c.IsSet("compression") {
		return arrowio.WriterOptions{}, fmt.Errorf("%s: --compression applies to Arrow IPC output, not Parquet (always zstd-compressed)", stage)
	}
	return arrowio.WriterOptions{Format: arrowio.FormatParquet}, nil
}

// tableFileFormat resolves an output that holds one of the tool's tables
// as a file (train's -o and --log, eval's --arrow): Parquet when its name
// ends .parquet or .pq, else the Arrow IPC file format.
func tableFileFormat(c *cli.Context, flag, path string) (arrowio.Format, error) {
	// Only train's -o has a default, standard output: binary output to a
	// terminal is refused there unless -o - is given explicitly.
	given := flag != "-o" || c.IsSet("output")
	of, err := std(c).ResolveOutput(pipeline.OutputRequest{Flag: flag, Path: path, PathGiven: given,
		Kinds: []pipeline.Kind{pipeline.KindArrow, pipeline.KindParquet}, IPC: arrowio.FormatFile})
	if err != nil {
		return "", err
	}
	if of.Kind == pipeline.KindParquet {
		return arrowio.FormatParquet, nil
	}
	return arrowio.FormatFile, nil
}

// featurizeFiles checks featurize's files and resolves its output: a
// feature table (arrowOutput), or CRFsuite attribute lines with
// --output-format crfsuite, for which --ipc and --compression mean nothing.
func featurizeFiles(c *cli.Context, input string) (pipeline.Kind, arrowio.WriterOptions, error) {
	err := checkFiles(c, "featurize",
		[]pipeline.Path{pathOf("", input), pathOf("--model", c.String("model")), pathOf("--vocab", c.String("vocab"))},
		[]pipeline.Path{pathOf("-o", c.String("output"))})
	if err != nil {
		return "", arrowio.WriterOptions{}, err
	}
	if c.String("output-format") != string(pipeline.KindCRFsuite) {
		wopts, err := arrowOutput(c, "featurize", true)
		if err != nil {
			return "", wopts, err
		}
		if wopts.Format == arrowio.FormatParquet {
			return pipeline.KindParquet, wopts, nil
		}
		return pipeline.KindArrow, wopts, nil
	}
	for _, name := range []string{"ipc", "compression"} {
		if c.IsSet(name) {
			return "", arrowio.WriterOptions{}, fmt.Errorf("featurize: --%s applies to Arrow IPC output, not to --output-format crfsuite (text)", name)
		}
	}
	_, err = std(c).ResolveOutput(pipeline.OutputRequest{Flag: "-o", Path: c.String("output"), PathGiven: c.IsSet("output"),
		Kinds: []pipeline.Kind{pipeline.KindCRFsuite}, Kind: pipeline.KindCRFsuite, KindFlag: "--output-format"})
	if err != nil {
		return "", arrowio.WriterOptions{}, fmt.Errorf("featurize: %w", err)
	}
	return pipeline.KindCRFsuite, arrowio.WriterOptions{}, nil
}

// decodeOutput checks decode's files and resolves its output: --format
// when given, else the extension of -o (.parquet, .conll/.txt, .arrow…),
// else an Arrow stream.
func decodeOutput(c *cli.Context) (pipeline.Kind, arrowio.WriterOptions, error) {
	input := c.Args().First()
	if input == "" && c.String("text") == "" {
		input = "-"
	}
	err := checkFiles(c, "decode",
		[]pipeline.Path{pathOf("-m", c.String("model")), pathOf("--text", c.String("text")), pathOf("", input)},
		[]pipeline.Path{pathOf("-o", c.String("output"))})
	if err != nil {
		return "", arrowio.WriterOptions{}, err
	}
	kinds := []pipeline.Kind{pipeline.KindArrow, pipeline.KindCoNLL, pipeline.KindParquet}
	req := pipeline.OutputRequest{Flag: "-o", Path: c.String("output"), PathGiven: c.IsSet("output"), Kinds: kinds}
	if c.IsSet("format") {
		req.Kind, req.KindFlag = pipeline.Kind(c.String("format")), "--format"
		switch req.Kind {
		case pipeline.KindArrow, pipeline.KindCoNLL, pipeline.KindParquet:
		default:
			return "", arrowio.WriterOptions{}, fmt.Errorf("decode: --format %q: want arrow, conll or parquet", req.Kind)
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
// --arrow (--scores) is an Arrow IPC file, or Parquet by its name; it
// returns the scores table's format.
func evalFiles(c *cli.Context, input string) (arrowio.Format, error) {
	outputs := []pipeline.Path{pathOf("report", "-")}
	var format arrowio.Format
	if path := c.String("arrow"); path != "" {
		outputs = append(outputs, pathOf("--arrow", path))
		var err error
		if format, err = tableFileFormat(c, "--arrow", path); err != nil {
			return "", fmt.Errorf("eval: %w", err)
		}
	}
	return format, checkFiles(c, "eval", []pipeline.Path{pathOf("", input)}, outputs)
}

// trainFiles checks train's files: the model (-o) and log (--log) are
// Arrow IPC files, or Parquet by their names (tableFileFormat); the duals
// file (--duals PATH, stream:PATH, or duals.stream in the checkpoint
// directory) and the checkpoint directory's LOCK and CURRENT are written
// too. It returns the formats of the model and the log.
func trainFiles(c *cli.Context, input string, duals stage.Duals) (model, log arrowio.Format, err error) {
	ckpt := cmp.Or(c.String("checkpoint"), c.String("resume"))
	outputs := []pipeline.Path{pathOf("-o", c.String("output")), pathOf("--log", c.String("log")),
		pathOf("--plot", c.String("plot")), pathOf("--cpuprofile", c.String("cpuprofile")),
		pathOf("--duals", duals.File(ckpt))}
	if ckpt != "" {
		for _, name := range []string{"LOCK", "CURRENT"} {
			outputs = append(outputs, pathOf("--checkpoint", filepath.Join(ckpt, name)))
		}
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
		f, err := tableFileFormat(c, name, path)
		if err != nil {
			return "", "", fmt.Errorf("train: %w", err)
		}
		if flag == "output" {
			model = f
		} else {
			log = f
		}
	}
	return model, log, checkFiles(c, "train", []pipeline.Path{pathOf("", input), pathOf("--valid", c.String("valid"))}, outputs)
}

// limitFlags bound what featurize holds of its input at once
// (featurize.InputOptions' limits, and the row limit of the
// tables.TokenColumns that featurize makes of them).
func limitFlags() optionFlags[struct{}] {
	return optionFlags[struct{}]{
		{catInput, &cli.IntFlag{Name: "max-line-bytes", Value: featurize.DefaultMaxLineBytes, Usage: "longest input line accepted, in bytes"},
			[]string{"InputOptions.MaxLineBytes", "TokenColumns.MaxRowBytes"}, nil},
		{catInput, &cli.IntFlag{Name: "max-sentence-tokens", Value: featurize.DefaultMaxSentenceTokens, Usage: "most tokens a sentence may have"},
			[]string{"InputOptions.MaxSentenceTokens"}, nil},
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
