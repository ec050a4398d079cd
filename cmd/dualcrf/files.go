package main

// The files a command names, declared once in its flag table, and the
// checks every stage runs on them before it reads or creates anything.
// Each flag that names a file is a fileFlag (input, output, state read,
// state written, state read and written, directory: pipeline.Role), and
// the command's arguments and the standard output it prints to are
// fileArgs rows of the same table; checkedAction collects them all and
// hands them to pipeline's one check (Std.CheckFiles), which the job
// runner applies to a job's stages too. Also here: how an output's name,
// flags and destination agree on what it holds (pipeline.ResolveOutput),
// and featurize's limits on its input.

import (
	"flag"
	"fmt"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/dualcrf/dualcrf/arrowio"
	"github.com/dualcrf/dualcrf/featurize"
	"github.com/dualcrf/dualcrf/pipeline"
)

// fileFlag is a flag that names a file: its definition, and how the
// command uses the file (pipeline.FileSpec: its role, whether "-" is a
// standard stream, where the path is in the flag's value). To urfave/cli
// it is the *cli.StringFlag it holds.
type fileFlag struct {
	*cli.StringFlag
	spec pipeline.FileSpec
	// unset, when not nil, is the file the command names when the flag is
	// not given, made from other flags (export's --features-py beside -o).
	unset func(c *cli.Context) string
}

// fileOf declares f a flag that names a file of role r; "-" is refused
// there unless std says otherwise.
func fileOf(r pipeline.Role, f *cli.StringFlag) *fileFlag {
	return &fileFlag{StringFlag: f, spec: pipeline.FileSpec{Role: r}}
}

// std makes "-" name standard input (a role that reads) or output.
func (f *fileFlag) std() *fileFlag { f.spec.Std = true; return f }

// split says where the path is in the flag's value (FileSpec.Split).
func (f *fileFlag) split(fn func(string) (prefix, path string)) *fileFlag {
	f.spec.Split = fn
	return f
}

// derived declares the file the command names when the flag is not
// given: fn's, from the other flags ("": none).
func (f *fileFlag) derived(fn func(c *cli.Context) string) *fileFlag {
	f.unset = fn
	return f
}

// shown names the flag in messages as users mostly write it: its
// one-letter alias when it has one (-o), else its name (--log).
func (f *fileFlag) shown() string {
	for _, a := range f.Aliases {
		if len(a) == 1 {
			return "-" + a
		}
	}
	return "--" + f.Name
}

// paths returns the file the flag names in c, if any.
func (f *fileFlag) paths(c *cli.Context) []pipeline.Path {
	v := c.String(f.Name)
	if !c.IsSet(f.Name) && f.unset != nil {
		v = f.unset(c)
	}
	if v == "" {
		return nil
	}
	_, path := f.spec.PathOf(v)
	if path == "" {
		return nil
	}
	return []pipeline.Path{{Flag: f.shown(), Name: path, Role: f.spec.Role, Std: f.spec.Std}}
}

// fileArg declares files a command names without a flag of its own: its
// arguments, or the standard output it prints to. It sits in the flag
// table as a row without a flag: cliFlags leaves it out.
type fileArg struct {
	usage string // the arguments' name in the usage ("FEATURES"), or what standard output gets ("report")
	spec  pipeline.FileSpec
	// names returns the files named in c; nil: the arguments.
	names func(c *cli.Context) []string
	flag  string // the name in messages: "" for the arguments
}

// argFiles declares the command's arguments files of role r; "-" names
// standard input there when std.
func argFiles(usage string, r pipeline.Role, std bool) *fileArg {
	return &fileArg{usage: usage, spec: pipeline.FileSpec{Role: r, Std: std}}
}

// orStdin makes the command read standard input when it has no argument.
func (a *fileArg) orStdin() *fileArg {
	a.names = func(c *cli.Context) []string {
		if c.NArg() == 0 {
			return []string{"-"}
		}
		return c.Args().Slice()
	}
	return a
}

// stdoutFile declares the standard output a command prints what to (a
// report, a summary).
func stdoutFile(what string) *fileArg {
	return &fileArg{usage: what, flag: what, spec: pipeline.FileSpec{Role: pipeline.RoleOutput, Std: true},
		names: func(*cli.Context) []string { return []string{"-"} }}
}

// paths returns the files a names in c.
func (a *fileArg) paths(c *cli.Context) []pipeline.Path {
	names := c.Args().Slice()
	if a.names != nil {
		names = a.names(c)
	}
	out := make([]pipeline.Path, 0, len(names))
	for _, n := range names {
		out = append(out, pipeline.Path{Flag: a.flag, Name: n, Role: a.spec.Role, Std: a.spec.Std})
	}
	return out
}

// fileArg is a row of a flag table, not a flag: these methods make it a
// cli.Flag that cliFlags and plainFlags leave out.
func (a *fileArg) String() string               { return a.usage }
func (a *fileArg) Apply(*flag.FlagSet) error    { return nil }
func (a *fileArg) Names() []string              { return []string{a.usage} }
func (a *fileArg) IsSet() bool                  { return false }
func (a *fileArg) isFlag() bool                 { return false }
func (f *fileFlag) isFlag() bool                { return true }
func (f *fileFlag) declared() pipeline.FileSpec { return f.spec }
func (a *fileArg) declared() pipeline.FileSpec  { return a.spec }

// fileDecl is a row of a flag table that declares files: a fileFlag or a
// fileArg.
type fileDecl interface {
	cli.Flag
	paths(c *cli.Context) []pipeline.Path
	declared() pipeline.FileSpec
	isFlag() bool
}

// files returns the rows of the table that declare files, in its order.
func (fs optionFlags[S]) files() []fileDecl {
	var out []fileDecl
	for _, f := range fs {
		if d, ok := f.Flag.(fileDecl); ok {
			out = append(out, d)
		}
	}
	return out
}

// checkedAction returns run preceded by the check of every file the
// table declares (checkDeclared), so that no run of the command starts
// with files that would lose one another.
func (fs optionFlags[S]) checkedAction(run cli.ActionFunc) cli.ActionFunc {
	decls := fs.files()
	return func(c *cli.Context) error {
		if err := checkDeclared(c, decls); err != nil {
			return err
		}
		return run(c)
	}
}

// checkDeclared refuses, before anything is read or written, a run whose
// declared files would lose one another (pipeline.Std.CheckFiles), naming
// the command and the flags.
func checkDeclared(c *cli.Context, decls []fileDecl) error {
	var paths []pipeline.Path
	for _, d := range decls {
		paths = append(paths, d.paths(c)...)
	}
	if err := std(c).CheckFiles(paths); err != nil {
		return fmt.Errorf("%s: %w", c.Command.Name, err)
	}
	return nil
}

// commandFiles returns the rows that declare files of every command, by
// command name: what the job runner and the tests read of the tables.
func commandFiles() map[string][]fileDecl {
	return map[string][]fileDecl{
		"featurize": featurizeFlags().files(),
		"inspect":   inspectFlags().files(),
		"train":     trainFlags().files(),
		"decode":    decodeTable().files(),
		"eval":      evalFlags().files(),
		"explain":   explainFlags().files(),
		"export":    exportFlags().files(),
		"demo":      demoFlags().files(),
		"synth":     synthTable().files(),
		"run":       runFlags().files(),
		"plot":      plotFlags().files(),
	}
}

// flagFiles returns the files the flags of command declare, by each of
// their names (aliases too): what a job's stage options name.
func flagFiles(command string) map[string]pipeline.FileSpec {
	out := map[string]pipeline.FileSpec{}
	for _, d := range commandFiles()[command] {
		if d.isFlag() {
			for _, n := range d.Names() {
				out[n] = d.declared()
			}
		}
	}
	return out
}

// dualsPath is where --duals's value names a file: stream:PATH or PATH;
// memory, auto and stream name none.
func dualsPath(v string) (prefix, path string) {
	switch v {
	case "memory", "auto", "stream", "stream:":
		return "", ""
	}
	if p, ok := strings.CutPrefix(v, "stream:"); ok {
		return "stream:", p
	}
	return "", v
}

// templatePath is where --template's value names a file: anything but a
// built-in set's name.
func templatePath(v string) (prefix, path string) {
	if slices.Contains(featurize.BuiltinNames(), v) {
		return "", ""
	}
	return "", v
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

// featurizeOutput resolves featurize's output: a feature table
// (arrowOutput), or CRFsuite attribute lines with --output-format crfsuite,
// for which --ipc and --compression mean nothing.
func featurizeOutput(c *cli.Context) (pipeline.Kind, arrowio.WriterOptions, error) {
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
	_, err := std(c).ResolveOutput(pipeline.OutputRequest{Flag: "-o", Path: c.String("output"), PathGiven: c.IsSet("output"),
		Kinds: []pipeline.Kind{pipeline.KindCRFsuite}, Kind: pipeline.KindCRFsuite, KindFlag: "--output-format"})
	if err != nil {
		return "", arrowio.WriterOptions{}, fmt.Errorf("featurize: %w", err)
	}
	return pipeline.KindCRFsuite, arrowio.WriterOptions{}, nil
}

// decodeOutput resolves decode's output: --format when given, else the
// extension of -o (.parquet, .conll/.txt, .arrow…), else an Arrow stream.
func decodeOutput(c *cli.Context) (pipeline.Kind, arrowio.WriterOptions, error) {
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

// evalFormat returns the format of eval's scores table: --arrow
// (--scores) is an Arrow IPC file, or Parquet by its name.
func evalFormat(c *cli.Context) (arrowio.Format, error) {
	path := c.String("arrow")
	if path == "" {
		return "", nil
	}
	format, err := tableFileFormat(c, "--arrow", path)
	if err != nil {
		return "", fmt.Errorf("eval: %w", err)
	}
	return format, nil
}

// trainFormats returns the formats of train's model (-o) and log (--log):
// Arrow IPC files, or Parquet by their names (tableFileFormat).
func trainFormats(c *cli.Context) (model, log arrowio.Format, err error) {
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
	return model, log, nil
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
