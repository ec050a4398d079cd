package main

import (
	"fmt"
	"io"
	"math"
	"slices"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/dualcrf/dualcrf/internal/platform"
	"github.com/dualcrf/dualcrf/pipeline"
	"github.com/dualcrf/dualcrf/synth"
)

func synthCommand() *cli.Command {
	return &cli.Command{
		Name:  "synth",
		Usage: "write a synthetic feature table drawn from a random CRF, for scale tests",
		Description: `Draws a random sparse "true" CRF from --seed, then for each sentence random attributes
(--per-token per token, Zipf-distributed over --attrs) and labels sampled exactly from the CRF.
The output is streamed in constant memory (stream format); the same options give the same bytes.
Sets with the same seed and disjoint [--first, --first+--sentences) are independent samples of
the same CRF: a training and a test set. The table's metadata records the options and the true
weights' Viterbi accuracy on held-out sentences, a ceiling for learners.

   dualcrf synth --sentences 46000 --labels 45 --min-len 20 --max-len 30 -o big.arrow
   dualcrf synth --sentences 2000 --first 46000 --labels 45 --min-len 20 --max-len 30 -o test.arrow`,
		Flags:  synthTable().cliFlags(),
		Action: synthTable().checkedAction(synthFlags().rendering(runSynth)),
	}
}

// synthTable is synth's flag table: synthFlags, the output and its
// format.
func synthTable() optionFlags[struct{}] {
	return slices.Concat(synthFlags(), optionFlags[struct{}]{
		{catOutput, fileOf(pipeline.RoleOutput, &cli.StringFlag{Name: "output", Aliases: []string{"o"}, Value: "-", Usage: "output file (- = standard output)"}).std(), nil, nil},
	}, plain[struct{}](catOutput, writerFlags()...))
}

// synthFlags are synth's flags with the synth.Options they set (as
// synth's errors name them: option.Error); runSynth reads them.
func synthFlags() optionFlags[struct{}] {
	return optionFlags[struct{}]{
		{catFeatures, &cli.IntFlag{Name: "sentences", Aliases: []string{"n"}, Value: 1000, Usage: "number of sentences"}, []string{"Options.Sentences"}, nil},
		{catFeatures, intIn(&cli.IntFlag{Name: "min-len", Value: 20, Usage: "shortest sentence, in tokens (≥ 1)"}, 1, math.MaxInt, ""), []string{"Options.MinLen"}, nil},
		{catFeatures, intIn(&cli.IntFlag{Name: "max-len", Value: 30, Usage: "longest sentence, in tokens (≥ --min-len)"}, 1, math.MaxInt, ""), []string{"Options.MaxLen"}, nil},
		{catFeatures, &cli.IntFlag{Name: "labels", Aliases: []string{"k"}, Value: 45, Usage: "number of labels K"}, []string{"Options.Labels"}, nil},
		{catFeatures, &cli.IntFlag{Name: "attrs", Value: 10000, Usage: "attribute vocabulary size A"}, []string{"Options.Attrs"}, nil},
		{catFeatures, &cli.IntFlag{Name: "per-token", Value: 20, Usage: "attributes per token"}, []string{"Options.PerToken"}, nil},
		{catFeatures, &cli.Uint64Flag{Name: "seed", Value: 1, Usage: "random seed of the true CRF and of every sentence"}, []string{"Options.Seed"}, nil},
		{catFeatures, positiveFloat(&cli.Float64Flag{Name: "noise", Value: 1, Usage: "temperature > 0: the true weights are divided by it (larger: noisier labels)"}, ""),
			[]string{"Options.Noise"}, nil},
		{catFeatures, &cli.BoolFlag{Name: "real", Usage: "real-valued attributes (values in [0.25, 1.75)) instead of binary"}, []string{"Options.Real"}, nil},
		{catFeatures, &cli.IntFlag{Name: "first", Usage: "index of the first sentence in the seed's sequence"}, []string{"Options.First"}, nil},
		{catFeatures, workersFlag("generating (the output does not depend on it)"), []string{"Options.Workers"}, nil},
	}
}

func runSynth(c *cli.Context) error {
	if c.NArg() > 0 {
		return fmt.Errorf("synth: takes no arguments, got %q", c.Args().First())
	}
	wopts, err := arrowOutput(c, "synth", false)
	if err != nil {
		return err
	}
	opts := synth.Options{
		Sentences: c.Int("sentences"),
		MinLen:    c.Int("min-len"),
		MaxLen:    c.Int("max-len"),
		Labels:    c.Int("labels"),
		Attrs:     c.Int("attrs"),
		PerToken:  c.Int("per-token"),
		Seed:      c.Uint64("seed"),
		Noise:     c.Float64("noise"),
		Real:      c.Bool("real"),
		First:     c.Int("first"),
		Workers:   c.Int("workers"),
	}
	if opts.MaxLen < opts.MinLen {
		return fmt.Errorf("synth: --max-len %d is below --min-len %d", opts.MaxLen, opts.MinLen)
	}
	var sum synth.Summary
	var name string
	t0 := time.Now()
	err = withOutput(c, c.String("output"), func(w io.Writer, n string) error {
		name = n
		sum, err = synth.Generate(c.Context, w, opts, wopts)
		return err
	})
	if err != nil {
		return err
	}
	sec := time.Since(t0).Seconds()
	logf(c, "synth: %d sentences, %d tokens, %d labels, %d attributes -> %s in %.1fs (%.0f tokens/s)",
		sum.Sentences, sum.Tokens, len(sum.Labels), sum.Attributes, name, sec, float64(sum.Tokens)/sec)
	logf(c, "synth: true weights' Viterbi accuracy %.4f on these sentences (ceiling), %.4f on %d held-out; "+
		"training duals %s (μ, float32; %s in float64)%s",
		sum.TrueAccuracy, sum.CeilingEstimate, synth.HeldOut, gib(sum.DualBytes/2), gib(sum.DualBytes), memoryNote(sum.DualBytes/2))
	return nil
}

// gib formats a byte count in GiB (MiB when small).
func gib(b int64) string {
	if b < 1<<30 {
		return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20))
	}
	return fmt.Sprintf("%.2f GiB", float64(b)/(1<<30))
}

// memoryNote compares a dual size with the RAM this process may use.
func memoryNote(b int64) string {
	ram, err := platform.PhysicalMemory()
	if err != nil || ram <= 0 {
		return ""
	}
	if b > ram {
		return fmt.Sprintf(", more than the %s of RAM", gib(ram))
	}
	return fmt.Sprintf(", %.0f%% of the %s of RAM", 100*float64(b)/float64(ram), gib(ram))
}
