package main

import (
	"bytes"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/dualcrf/dualcrf/crf"
	"github.com/dualcrf/dualcrf/crfsuite"
	"github.com/dualcrf/dualcrf/featurize"
	"github.com/dualcrf/dualcrf/internal/platform"
	"github.com/dualcrf/dualcrf/pipeline"
	"github.com/dualcrf/dualcrf/schemas"
	"github.com/dualcrf/dualcrf/stage"
)

func exportCommand() *cli.Command {
	return &cli.Command{
		Name:      "export",
		Usage:     "write a model in another tool's format: CRFsuite 0.12's binary model, and its templates as a Python module",
		ArgsUsage: "MODEL|-",
		Description: `Writes the model in CRFsuite's binary model format (--format crfsuite), which crfsuite tag,
python-crfsuite, sklearn-crfsuite, crfsuite-rs and CRFsuite's other bindings read, and beside it the
model's feature templates as a Python module (--features-py): sent2features(sentence) gives the
attributes featurize gives, with the standard library only. The export is exact: CRFsuite tags every
sentence as decode does. CRFsuite has no label bias, start or end weights: they become the state
weights of marker attributes (@bias on every token, @start on the first, @end on the last), which
the Python module and featurize --model M --output-format crfsuite add to each sentence.

   dualcrf export --format crfsuite -o model.crfsuite model.arrow     # also model_features.py
   dualcrf featurize --model model.arrow --output-format crfsuite -o test.crfsuite.txt test.txt.gz
   crfsuite tag -m model.crfsuite test.crfsuite.txt`,
		Flags:  exportFlags().cliFlags(),
		Action: exportFlags().checkedAction(runExport),
	}
}

// exportFlags is export's flag table: its flags and the files it names.
func exportFlags() optionFlags[struct{}] {
	return optionFlags[struct{}]{
		{catInput, argFiles("MODEL", pipeline.RoleInput, true), nil, nil},
		{catOutput, &cli.StringFlag{Name: "format", Usage: "the model format to write: crfsuite (required)"}, nil, nil},
		{catOutput, fileOf(pipeline.RoleOutput, &cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "the file to write (required; - for standard output)"}).std(), nil, nil},
		{catOutput, fileOf(pipeline.RoleOutput, &cli.StringFlag{Name: "features-py", DefaultText: "beside -o: NAME_features.py, NAME its name without extension; none when -o is -",
			Usage: "the Python module of the model's feature templates to write (- for standard output)"}).std().derived(featuresPyOf), nil, nil},
		{catOutput, memoryBudgetFlag("the file is built in memory (about ten times its size at most, with its lists): an export estimated to need more is refused"), nil, nil},
	}
}

// runExport reads the model and writes it in the format asked for, and
// its templates as a Python module.
func runExport(c *cli.Context) error {
	if c.NArg() != 1 {
		return fmt.Errorf("export: want one model file (or -), got %d arguments", c.NArg())
	}
	switch f := c.String("format"); f {
	case "crfsuite":
	case "":
		return fmt.Errorf("export: --format is required: crfsuite")
	default:
		return fmt.Errorf("export: --format %q: want crfsuite", f)
	}
	in, out := c.Args().First(), c.String("output")
	if out == "" {
		return fmt.Errorf("export: -o is required: the CRFsuite model file to write (- for standard output)")
	}
	budget, err := memoryBudget(c)
	if err != nil {
		return fmt.Errorf("export: %w", err)
	}
	py := c.String("features-py")
	switch {
	case c.IsSet("features-py") && py == "":
		return fmt.Errorf("export: --features-py: want a file name (- for standard output)")
	case !c.IsSet("features-py") && !pipeline.IsStdin(out):
		py = featuresPyBeside(out)
	case pipeline.IsStdin(out) && py == "-":
		return fmt.Errorf("export: -o and --features-py are both standard output: name a file for one of them")
	}
	m, err := stage.ReadModel(c.Context, stageInput(c, in))
	if err != nil {
		return err
	}
	if err := crfsuite.Check(m); err != nil {
		return fmt.Errorf("export: %s: %w", inputName(in), err)
	}
	if err := checkExportMemory(m, inputName(in), budget, platform.PhysicalMemory); err != nil {
		return err
	}
	var module []byte
	if py != "" {
		if module, err = featuresModule(m, inputName(in), out, py); err != nil {
			if !c.IsSet("features-py") && recordsNoTemplates(m) {
				logf(c, "export: no Python feature module: %s records no feature templates (it was not trained on featurized text)", inputName(in))
				module, py = nil, ""
			} else {
				return fmt.Errorf("export: --features-py %s: %w", py, err)
			}
		}
	} else if pipeline.IsStdin(out) && !c.IsSet("features-py") {
		logf(c, "export: no Python feature module (-o is standard output): --features-py FILE writes one")
	}

	var s crfsuite.Summary
	err = writeOutputs(c, []pendingOutput{
		{out, func(w io.Writer) error {
			var err error
			s, err = crfsuite.WriteModel(w, m)
			return err
		}},
		{py, func(w io.Writer) error {
			_, err := w.Write(module)
			return err
		}},
	})
	if err != nil {
		return fmt.Errorf("export: %w", err)
	}
	logf(c, "export: %s: %d features (%d transitions), %d attributes (%d markers), %d labels, %d bytes",
		outputName(out), s.Features, s.Transition, s.Attributes, s.Markers, s.Labels, s.Bytes)
	if mk := crfsuite.MarkersOf(m); mk.Bias != "" {
		model := "MODEL"
		if !pipeline.IsStdin(in) {
			model = in
		}
		who := fmt.Sprintf("featurize --model %s --output-format crfsuite and the Python module add them", model)
		if recordsNoTemplates(m) {
			who = "give them to CRFsuite's tagger with each token's attributes"
		}
		logf(c, "export: the bias, start and end weights are the marker attributes %s (every token), %s (the first) and %s (the last): %s",
			mk.Bias, mk.Start, mk.End, who)
	}
	if py != "" {
		logf(c, "export: %s: the Python module of the model's templates (sent2features)", outputName(py))
	}
	return nil
}

// recordsNoTemplates reports whether m records no feature templates (a
// model trained on a table made without text, such as synth's).
func recordsNoTemplates(m *crf.Model) bool {
	_, ok := m.Meta[schemas.KeyTemplates]
	return !ok
}

// featuresPyOf is the --features-py export writes when the flag is not
// given: featuresPyBeside -o, none when -o is standard output.
func featuresPyOf(c *cli.Context) string {
	if out := c.String("output"); out != "" && !pipeline.IsStdin(out) {
		return featuresPyBeside(out)
	}
	return ""
}

// featuresPyBeside is the default --features-py of the CRFsuite model out:
// beside it, NAME_features.py, NAME out's base name without its extension
// made a Python identifier (so that the module can be imported).
func featuresPyBeside(out string) string {
	base := strings.TrimSuffix(filepath.Base(out), filepath.Ext(out))
	return filepath.Join(filepath.Dir(out), pythonIdentifier(base)+"_features.py")
}

// pythonIdentifier makes s a Python identifier: each character that is not
// an ASCII letter, digit or '_' becomes '_', and one that begins with a digit
// (or is empty) is prefixed by "model_".
func pythonIdentifier(s string) string {
	b := []byte(s)
	for i, c := range b {
		if !(c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9') {
			b[i] = '_'
		}
	}
	if len(b) == 0 || b[0] >= '0' && b[0] <= '9' {
		return "model_" + string(b)
	}
	return string(b)
}

// featuresModule is the Python module of m's templates (read from name),
// for the CRFsuite model out, to be written to py.
func featuresModule(m *crf.Model, name, out, py string) ([]byte, error) {
	f, err := featurize.FromModel(m, name)
	if err != nil {
		return nil, err
	}
	cols := f.Columns
	if cols == nil {
		cols = f.Templates.RequiredColumns()
	}
	module := "features"
	if !pipeline.IsStdin(py) {
		module = strings.TrimSuffix(filepath.Base(py), ".py")
	}
	crfsuiteModel := "model.crfsuite"
	if !pipeline.IsStdin(out) {
		crfsuiteModel = filepath.Base(out)
	}
	var b bytes.Buffer
	err = featurize.WritePython(&b, f.Templates, featurize.PythonOptions{
		Model: filepath.Base(name), Checksum: m.Meta[schemas.KeyChecksum], CRFsuiteModel: crfsuiteModel,
		Columns: cols, Markers: featurize.Markers(crfsuite.MarkersOf(m)), Generator: "dualcrf export", Module: module})
	return b.Bytes(), err
}

// pendingOutput is an output's path and what writes it; an empty path is
// none.
type pendingOutput struct {
	path  string
	write func(io.Writer) error
}

// writeOutputs writes each output to its unnamed temporary, then commits
// them all: a failure, or a signal, before the commits leaves none of them.
func writeOutputs(c *cli.Context, outs []pendingOutput) error {
	var opened []*pipeline.Output
	defer func() {
		for _, o := range opened {
			o.Abort()
		}
	}()
	for _, po := range outs {
		if po.path == "" {
			continue
		}
		o, err := std(c).CreateOutput(po.path)
		if err != nil {
			return err
		}
		opened = append(opened, o)
		if err := po.write(o); err != nil {
			return fmt.Errorf("%s: %w", o.Name(), err)
		}
	}
	if err := c.Context.Err(); err != nil {
		return err
	}
	for len(opened) > 0 {
		if err := opened[0].Commit(); err != nil {
			return err
		}
		opened = opened[1:]
	}
	return nil
}

// checkExportMemory refuses to export model m (read from name) when its
// CRFsuite file does not fit the format's 32-bit offsets, or when writing
// it would need more memory than budget (0: the machine's, from phys),
// before anything is built.
func checkExportMemory(m *crf.Model, name string, budget int64, phys func() (int64, error)) error {
	size := crfsuite.SizeOf(m)
	if err := size.Check(); err != nil {
		return fmt.Errorf("export: %s: %w", name, err)
	}
	allowed := ""
	if budget > 0 {
		allowed = "the --memory-budget " + byteSize(budget)
	} else if b, err := phys(); err == nil && b > 0 {
		budget, allowed = b, "the "+byteSize(b)+" of memory this machine has (physical memory, or the cgroup's limit)"
	} else {
		return nil
	}
	modelBytes := 8 * int64(len(m.Weights))
	for _, names := range [][]string{m.AttrNames, m.LabelNames} {
		for _, n := range names {
			modelBytes += int64(len(n)) + 16
		}
	}
	const runtimeBytes = 24 << 20
	need := runtimeBytes + modelBytes + size.Memory
	if need <= budget {
		return nil
	}
	return fmt.Errorf("export: %s: writing it in CRFsuite's format needs about %s in memory (%s to build its file of %s in memory with its feature lists, %s for the model, %s for the runtime), more than %s allows; try --memory-budget SIZE if more memory is available",
		name, byteSize(need), byteSize(size.Memory), byteSize(size.File), byteSize(modelBytes), byteSize(runtimeBytes), allowed)
}

// byteSize formats a number of bytes for people.
func byteSize(b int64) string {
	switch {
	case b >= 1<<30:
		return fmt.Sprintf("%.2f GiB", float64(b)/(1<<30))
	case b >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20))
	case b >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(b)/(1<<10))
	}
	return fmt.Sprintf("%d B", b)
}
