package main

import (
	"fmt"
	"io"

	"github.com/urfave/cli/v2"

	"github.com/dualcrf/dualcrf/crf"
	"github.com/dualcrf/dualcrf/crfsuite"
	"github.com/dualcrf/dualcrf/internal/platform"
	"github.com/dualcrf/dualcrf/pipeline"
	"github.com/dualcrf/dualcrf/stage"
)

func exportCommand() *cli.Command {
	return &cli.Command{
		Name:      "export",
		Usage:     "write a model in another tool's format: CRFsuite 0.12's binary model",
		ArgsUsage: "MODEL|-",
		Description: `Writes the model in CRFsuite's binary model format (--format crfsuite), which crfsuite tag,
python-crfsuite, sklearn-crfsuite, crfsuite-rs and CRFsuite's other bindings read. The export is exact
for a model trained with --no-bias (CRFsuite's model has state and transition weights only; use
--feature-space observed for CRFsuite's own feature set): CRFsuite tags every sentence as decode does.
A model with non-zero bias, start or end weights is refused with the reason: CRFsuite has no place for
them and they cannot be folded into its weights.

   dualcrf train --feature-space observed --no-bias -o model.arrow train.arrow
   dualcrf export --format crfsuite -o model.crfsuite model.arrow
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
		{catOutput, memoryBudgetFlag("the file is built in memory (about ten times its size at most, with its lists): an export estimated to need more is refused"), nil, nil},
	}
}

// runExport reads the model and writes it in the format asked for.
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
	var s crfsuite.Summary
	err = withOutput(c, out, func(w io.Writer, name string) error {
		var err error
		if s, err = crfsuite.WriteModel(w, m); err != nil {
			return fmt.Errorf("export: %s: %w", name, err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	logf(c, "export: %s: %d features (%d transitions), %d attributes, %d labels, %d bytes",
		outputName(out), s.Features, s.Transition, s.Attributes, s.Labels, s.Bytes)
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
