package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"

	"github.com/dualcrf/dualcrf/arrowio"
	"github.com/dualcrf/dualcrf/beam/dualcrfbeam"
	"github.com/dualcrf/dualcrf/featurize"
	"github.com/dualcrf/dualcrf/pipeline"
	"github.com/dualcrf/dualcrf/tables"
)

// runFeaturize runs the featurize pipeline.
func runFeaturize(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	f := newStageFlags("featurize", "featurize -o DIR [flags] SHARD...", stdout, stderr)
	out := f.String("o", "", "output directory of the feature tables part-NNNNN.arrow (required)")
	tmpl := f.String("template", "", "built-in template set ("+joinNames(featurize.BuiltinNames())+") or template file; default by format")
	minCount := f.Int("min-count", 1, "drop attributes seen fewer times in all shards (per template and value); 0 and 1 keep all")
	format := f.String("input-format", "", "input format: "+joinNames(featurize.Formats())+" (default conll)")
	columns := f.String("columns", "", "comma-separated names of the CoNLL token columns (default word,pos,chunk,…)")
	labelCol := f.Int("label-column", 0, "1-based CoNLL label column (default: the last)")
	noLabels := f.Bool("no-labels", false, "the input has no label column (text to tag)")
	xpos := f.Bool("xpos", false, "CoNLL-U: label words with XPOS instead of UPOS")
	keepDoc := f.Bool("keep-docstart", false, "CoNLL: keep -DOCSTART- lines as tokens")
	ipcFormat := f.String("ipc", "stream", "Arrow IPC format: stream or file")
	compression := f.String("compression", "none", "IPC body compression: none, zstd or lz4")
	globs, err := f.parse(args)
	if err != nil {
		return err
	}
	if *out == "" {
		return errors.New("featurize: -o DIR is required")
	}
	if *minCount < 0 {
		return fmt.Errorf("featurize: --min-count %d: want a count ≥ 0", *minCount)
	}
	if *labelCol < 0 {
		return fmt.Errorf("featurize: --label-column %d: want a column ≥ 1", *labelCol)
	}
	if *noLabels && *labelCol != 0 {
		return errors.New("featurize: --no-labels and --label-column contradict each other")
	}
	if *format != "" && !slices.Contains(featurize.Formats(), *format) {
		return fmt.Errorf("featurize: --input-format %q: want one of %s", *format, joinNames(featurize.Formats()))
	}
	if err := checkFormatFlags(f, *format); err != nil {
		return err
	}
	in := featurize.InputOptions{Format: *format, LabelColumn: *labelCol, XPOS: *xpos, KeepDocstart: *keepDoc}
	if *noLabels {
		in.LabelColumn = -1
	}
	if *columns != "" {
		in.Columns = splitComma(*columns)
	}
	var w arrowio.WriterOptions
	if w.Format, err = arrowio.ParseFormat(*ipcFormat); err != nil {
		return fmt.Errorf("featurize: --ipc: %w", err)
	}
	if w.Compression, err = arrowio.ParseCompression(*compression); err != nil {
		return fmt.Errorf("featurize: --compression: %w", err)
	}
	shards, err := dualcrfbeam.Shards(globs)
	if err != nil {
		return fmt.Errorf("featurize: %w", err)
	}
	if err := checkOutputs("featurize", shards, partPaths(*out, shards, "arrow")); err != nil {
		return err
	}
	if err := f.start(); err != nil {
		return err
	}
	p, s := beam.NewPipelineWithRoot()
	cfg := dualcrfbeam.FeaturizeConfig{Shards: shards, OutDir: *out, Templates: *tmpl, MinCount: *minCount, Input: in, Writer: w}
	if _, err := dualcrfbeam.Featurize(s, cfg); err != nil {
		return err
	}
	if err := f.run(ctx, p); err != nil {
		return fmt.Errorf("featurize: %w", err)
	}
	fmt.Fprintf(stderr, "featurize: %d shards -> %s\n", len(shards), filepath.Join(*out, "part-*.arrow"))
	return nil
}

// runDecode runs the decode pipeline.
func runDecode(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	f := newStageFlags("decode", "decode -m MODEL -o DIR [flags] SHARD...", stdout, stderr)
	model := f.String("m", "", "the model (required)")
	out := f.String("o", "", "output directory of the prediction tables part-NNNNN.parquet (required)")
	text := f.Bool("text", false, "the shards are raw text, featurized with the model's templates and vocabulary")
	format := f.String("input-format", "", "with --text: input format (default: the model's)")
	noLabels := f.Bool("no-labels", false, "with --text: the input has no label column")
	marginals := f.Bool("marginals", false, "add each predicted label's marginal probability and the sentence's log-probability")
	chunk := f.Int("chunk-tokens", tables.DefaultChunkTokens, "tokens per chunk read, decoded and written at a time (memory bound)")
	globs, err := f.parse(args)
	if err != nil {
		return err
	}
	switch {
	case *model == "":
		return errors.New("decode: -m MODEL is required")
	case *out == "":
		return errors.New("decode: -o DIR is required")
	case *chunk < 1:
		return fmt.Errorf("decode: --chunk-tokens %d: want a count ≥ 1", *chunk)
	case !*text && (*format != "" || *noLabels):
		return errors.New("decode: --input-format and --no-labels apply to --text")
	case *format != "" && !slices.Contains(featurize.Formats(), *format):
		return fmt.Errorf("decode: --input-format %q: want one of %s", *format, joinNames(featurize.Formats()))
	}
	if _, err := os.Stat(*model); err != nil {
		return fmt.Errorf("decode: %w", err)
	}
	shards, err := dualcrfbeam.Shards(globs)
	if err != nil {
		return fmt.Errorf("decode: %w", err)
	}
	if err := checkOutputs("decode", append(shards, dualcrfbeam.Shard{Path: *model}), partPaths(*out, shards, "parquet")); err != nil {
		return err
	}
	if err := f.start(); err != nil {
		return err
	}
	p, s := beam.NewPipelineWithRoot()
	cfg := dualcrfbeam.DecodeConfig{Shards: shards, OutDir: *out, Model: *model, Text: *text, InputFormat: *format,
		NoLabels: *noLabels, Marginals: *marginals, ChunkTokens: *chunk}
	if _, err := dualcrfbeam.Decode(s, cfg); err != nil {
		return err
	}
	if err := f.run(ctx, p); err != nil {
		return fmt.Errorf("decode: %w", err)
	}
	fmt.Fprintf(stderr, "decode: %d shards -> %s\n", len(shards), filepath.Join(*out, "part-*.parquet"))
	return nil
}

// runEval runs the eval pipeline and prints its report.
func runEval(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	f := newStageFlags("eval", "eval [-o FILE] [flags] SHARD...", stdout, stderr)
	out := f.String("o", "-", "the report's file (- = standard output, with the in-process runner only)")
	format := f.String("format", dualcrfbeam.ReportText, "report: text (conlleval's) or json")
	scheme := f.String("scheme", "", "chunk rules: conlleval (default), auto, iob1, iob2 or iobes")
	noChunks := f.Bool("no-chunks", false, "score token accuracy only (part-of-speech tags)")
	globs, err := f.parse(args)
	if err != nil {
		return err
	}
	if *format != dualcrfbeam.ReportText && *format != dualcrfbeam.ReportJSON {
		return fmt.Errorf("eval: --format %q: want text or json", *format)
	}
	cfg := dualcrfbeam.EvalConfig{Scheme: *scheme, NoChunks: *noChunks}
	if err := cfg.Check(); err != nil {
		return err
	}
	if cfg.Shards, err = dualcrfbeam.Shards(globs); err != nil {
		return fmt.Errorf("eval: %w", err)
	}
	shards := cfg.Shards
	if err := checkOutputs("eval", shards, []string{*out}); err != nil {
		return err
	}
	if err := f.start(); err != nil {
		return err
	}
	path := *out
	if pipeline.IsStdin(path) {
		if !inProcess() {
			return errors.New("eval: workers of a remote runner cannot write to this terminal; give -o FILE on a file system they share")
		}
		dir, err := os.MkdirTemp("", "dualcrf-beam-eval-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		path = filepath.Join(dir, "report")
	}
	p, s := beam.NewPipelineWithRoot()
	counts, err := dualcrfbeam.Eval(s, cfg)
	if err != nil {
		return err
	}
	if err := dualcrfbeam.WriteReport(s, counts, shards, *format, path); err != nil {
		return err
	}
	if err := f.run(ctx, p); err != nil {
		return fmt.Errorf("eval: %w", err)
	}
	if path == *out {
		return nil
	}
	r, err := os.Open(path)
	if err != nil {
		return err
	}
	defer r.Close()
	_, err = io.Copy(stdout, r)
	return err
}

// checkFormatFlags refuses input flags that the input format (conll when
// "") does not read, as dualcrf featurize does, rather than ignore them.
func checkFormatFlags(f *stageFlags, format string) error {
	if format == "" {
		format = "conll"
	}
	only := map[string]string{"columns": "conll", "label-column": "conll", "no-labels": "conll", "keep-docstart": "conll", "xpos": "conllu"}
	var err error
	f.Visit(func(fl *flag.Flag) {
		if want, ok := only[fl.Name]; ok && want != format && err == nil {
			err = fmt.Errorf("featurize: --%s applies to --input-format %s, not to the input format %s", fl.Name, want, format)
		}
	})
	return err
}

// run runs the pipeline p. A job that fails is reported by the error of
// the stage that failed it (the file and the problem), without the
// runner's plan around it unless --verbose.
func (f *stageFlags) run(ctx context.Context, p *beam.Pipeline) error {
	err := dualcrfbeam.Run(ctx, p)
	if err == nil || f.verbose {
		return err
	}
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	return errors.New(rootCause(err.Error()))
}

// rootCause returns the message of the DoFn that failed a Beam job, the
// text after the last "DoFn[…] failed:" of the job's error, or msg.
func rootCause(msg string) string {
	i := strings.LastIndex(msg, "DoFn[")
	if i < 0 {
		return msg
	}
	const mark = "failed:\n"
	j := strings.Index(msg[i:], mark)
	if j < 0 {
		return msg
	}
	return strings.TrimSpace(msg[i+j+len(mark):])
}

// checkOutputs refuses outputs that are inputs: any of outs that names the
// same file as a shard (an existing output would be overwritten).
func checkOutputs(stage string, shards []dualcrfbeam.Shard, outs []string) error {
	ins := make([]os.FileInfo, len(shards))
	for i, sh := range shards {
		ins[i], _ = os.Stat(sh.Path)
	}
	for _, out := range outs {
		st, err := os.Stat(out)
		if err != nil {
			continue // not there yet: not an input
		}
		for i, in := range ins {
			if in != nil && os.SameFile(st, in) {
				return fmt.Errorf("%s: the output %s is the input %s", stage, out, shards[i].Path)
			}
		}
	}
	return nil
}

// partPaths returns the outputs of the shards in dir.
func partPaths(dir string, shards []dualcrfbeam.Shard, ext string) []string {
	out := make([]string, len(shards))
	for i := range shards {
		out[i] = dualcrfbeam.OutputPath(dir, i, ext)
	}
	return out
}
