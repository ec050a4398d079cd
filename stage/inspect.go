package stage

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/dualcrf/dualcrf/arrowio"
	"github.com/dualcrf/dualcrf/crf"
	"github.com/dualcrf/dualcrf/internal/platform"
	"github.com/dualcrf/dualcrf/pipeline"
	"github.com/dualcrf/dualcrf/schemas"
	"github.com/dualcrf/dualcrf/tables"
)

// Inspect reads the whole table in, checking it as the stage that reads it
// would (a model's checksum and weights, every row of a table), and
// returns a summary: its kind and format version, then counts, labels and
// metadata. A table that is damaged or not dualcrf's is an error saying
// why. Standard input is copied to an unnamed temporary file, as the table
// is read twice.
func Inspect(ctx context.Context, in Input) (string, error) {
	src, err := in.source(ctx)
	if err != nil {
		return "", err
	}
	open, done, err := reopenable(src)
	if err != nil {
		return "", err
	}
	defer done()
	var buf bytes.Buffer
	if err := inspect(&buf, open); err != nil {
		return "", err
	}
	return buf.String(), nil
}

// opener runs fn on the input as often as needed.
type opener func(fn func(r io.Reader, name string) error) error

// inspect writes the summary of the table open reads to out, choosing the
// reader by the table's dualcrf.format.
func inspect(out *bytes.Buffer, open opener) error {
	var format string
	err := open(func(r io.Reader, name string) error {
		rr, err := tables.OpenRecordReader(r, name, arrowio.ReaderOptions{})
		if err != nil {
			return err
		}
		defer rr.Release()
		format = schemas.MetadataMap(rr.Schema())[schemas.KeyFormat]
		return nil
	})
	if err != nil {
		return err
	}
	switch format {
	case schemas.ModelFormat:
		return open(func(r io.Reader, name string) error {
			m, err := tables.ReadModel(r, name, arrowio.ReaderOptions{})
			if err != nil {
				return err
			}
			return printModel(out, name, m)
		})
	case schemas.FeatureFormat:
		return open(func(r io.Reader, name string) error {
			s, err := tables.InspectFeatureTable(r, name, tables.FeatureReadOptions{})
			if err != nil {
				return err
			}
			printFeatureTable(out, name, s)
			return nil
		})
	}
	readers := map[string]func(*bytes.Buffer, array.RecordReader, string) error{
		schemas.PredictionFormat: printPredictions,
		schemas.LogFormat:        printLog,
		schemas.ScoresFormat:     printScores,
		schemas.WeightsFormat:    printWeights,
	}
	summarise, ok := readers[format]
	if !ok {
		return open(func(_ io.Reader, name string) error {
			return fmt.Errorf("%s: not a table dualcrf writes (schema metadata %s is %q; want %s, %s, %s, %s, %s or %s)", name,
				schemas.KeyFormat, format, schemas.FeatureFormat, schemas.ModelFormat, schemas.PredictionFormat, schemas.LogFormat, schemas.ScoresFormat,
				schemas.WeightsFormat)
		})
	}
	return open(func(r io.Reader, name string) error {
		rr, err := tables.OpenRecordReader(r, name, arrowio.ReaderOptions{})
		if err != nil {
			return err
		}
		defer rr.Release()
		return summarise(out, rr, name)
	})
}

// printFeatureTable summarises a feature table.
func printFeatureTable(out *bytes.Buffer, name string, s tables.FeatureSummary) {
	fmt.Fprintf(out, "feature table %s (format version %s)\n", name, s.Version)
	fmt.Fprintf(out, "sentences   %d\ntokens      %d (longest sentence %d)\nattributes  %d (%d occurrences, %d tokens with real values)\n",
		s.Sentences, s.Tokens, s.MaxLen, s.Attributes, s.AttrOccurrences, s.RealValued)
	fmt.Fprintf(out, "columns     %s\nlabels      %d (%d tokens unlabelled)\n", strings.Join(s.Columns, " "), len(s.Labels), s.Unlabelled)
	idx := make([]int, len(s.Labels))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return s.LabelCounts[idx[a]] > s.LabelCounts[idx[b]] })
	for _, i := range idx {
		fmt.Fprintf(out, "  %-12s %d\n", s.Labels[i], s.LabelCounts[i])
	}
	printMetadata(out, s.Metadata, schemas.KeyTemplates, schemas.KeyMinCount, schemas.KeySource)
}

// printMetadata prints the given metadata keys that md has, one block each.
func printMetadata(out *bytes.Buffer, md map[string]string, keys ...string) {
	for _, k := range keys {
		if v, ok := md[k]; ok {
			fmt.Fprintf(out, "%s:\n  %s\n", k, strings.ReplaceAll(strings.TrimSpace(v), "\n", "\n  "))
		}
	}
}

// printModel summarises model m read from the input name; its training
// statistics must be a JSON object.
func printModel(out *bytes.Buffer, name string, m *crf.Model) error {
	fmt.Fprintf(out, "model %s (format version %s)\n", name, m.Meta[schemas.KeyVersion])
	fmt.Fprintf(out, "attributes  %d\nlabels      %d  %s\nweights     %d (bias/start/end: %v)\n",
		m.Layout.NumAttrs, m.Layout.NumLabels, strings.Join(m.LabelNames, " "), m.Layout.Dim(), !m.Layout.NoBias)
	printNonZero(out, m)
	fmt.Fprintf(out, "%-23s %s (verified)\n", schemas.KeyChecksum, m.Meta[schemas.KeyChecksum])
	for _, k := range []string{schemas.KeyLambda, schemas.KeyL1, schemas.KeyN, schemas.KeySolver, schemas.KeyFeatureSpace} {
		if v, ok := m.Meta[k]; ok || k != schemas.KeyL1 {
			fmt.Fprintf(out, "%-23s %s\n", k, v)
		}
	}
	if v, ok := m.Meta[schemas.KeyTraining]; ok {
		facts, err := schemas.ParseTrainingFacts(v)
		if err != nil {
			return fmt.Errorf("%s: model metadata %s: %w", name, schemas.KeyTraining, err)
		}
		fmt.Fprintf(out, "%s:\n", schemas.KeyTraining)
		for _, f := range facts {
			fmt.Fprintf(out, "  %-12s %s\n", f.Key, f.Value)
		}
	}
	printMetadata(out, m.Meta, schemas.KeyTemplates, schemas.KeyMinCount, schemas.KeySource)
	return nil
}

// printNonZero prints how many of m's weights are not zero (the weights a
// model file stores): in all, by kind, and the attribute weights of each
// label.
func printNonZero(out *bytes.Buffer, m *crf.Model) {
	lay := m.Layout
	K := lay.NumLabels
	perLabel := make([]int, K)
	attr, trans, other := 0, 0, 0
	for j, w := range m.Weights {
		if w == 0 {
			continue
		}
		switch {
		case j < lay.Trans():
			attr++
			perLabel[j%K]++
		case j < lay.Trans()+K*K:
			trans++
		default:
			other++
		}
	}
	all := attr + trans + other
	fmt.Fprintf(out, "non-zero    %d: %d attribute, %d transition", all, attr, trans)
	if !lay.NoBias {
		fmt.Fprintf(out, ", %d bias/start/end", other)
	}
	fmt.Fprintf(out, "\n  attribute weights per label:\n")
	for y, name := range m.LabelNames {
		fmt.Fprintf(out, "  %-12s %d\n", name, perLabel[y])
	}
}

// printPredictions summarises a prediction table.
func printPredictions(out *bytes.Buffer, rr array.RecordReader, name string) error {
	s, err := tables.InspectPredictions(rr, name)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "prediction table %s (format version %s)\n", name, s.Version)
	if s.Ranked {
		fmt.Fprintf(out, "ranked      n-best labellings (decode --nbest, a rank column): the figures below are those of rank 1\n")
	}
	fmt.Fprintf(out, "sentences   %d\ntokens      %d (longest sentence %d)\ncolumns     %s\n",
		s.Sentences, s.Tokens, s.MaxLen, strings.Join(s.Columns, " "))
	switch {
	case !s.Gold:
		fmt.Fprintf(out, "gold        none\n")
	case s.Labelled == 0:
		fmt.Fprintf(out, "gold        none of the %d tokens labelled\n", s.Tokens)
	default:
		fmt.Fprintf(out, "gold        %d tokens labelled; token accuracy %.6f\n", s.Labelled, s.Accuracy())
	}
	if s.Marginals {
		fmt.Fprintf(out, "marginals   mean confidence %.6f\n", s.MeanConf)
	}
	labels := s.PredLabels()
	fmt.Fprintf(out, "predicted   %d labels\n", len(labels))
	for _, l := range labels {
		fmt.Fprintf(out, "  %-12s %d\n", l, s.Predicted[l])
	}
	printMetadata(out, s.Metadata, schemas.KeySource)
	return nil
}

// printScores summarises a scores table (eval --arrow).
func printScores(out *bytes.Buffer, rr array.RecordReader, name string) error {
	s, err := tables.ReadScores(rr, name)
	if err != nil {
		return err
	}
	md := schemas.MetadataMap(rr.Schema())
	fmt.Fprintf(out, "scores table %s (format version %s)\n", name, md[schemas.KeyVersion])
	fmt.Fprintf(out, "scheme      %s\nsentences   %d\ntokens      %d (%d correct)\naccuracy    %.6f\n",
		s.Scheme, s.Sentences, s.Tokens, s.CorrectTokens, s.Accuracy)
	if c := s.Chunks; c != nil {
		fmt.Fprintf(out, "chunks      %d gold, %d predicted, %d correct\nprecision   %.6f\nrecall      %.6f\nf1          %.6f\n",
			c.Gold, c.Predicted, c.Correct, c.Precision, c.Recall, c.F1)
	}
	fmt.Fprintf(out, "(scores are fractions in [0, 1])\n")
	printMetadata(out, md, schemas.KeySource)
	return nil
}

// printLog summarises a training log: every epoch's row.
func printLog(out *bytes.Buffer, rr array.RecordReader, name string) error {
	log, err := tables.ReadLog(rr, name)
	if err != nil {
		return err
	}
	var cols []string
	for _, f := range schemas.LogFields() {
		cols = append(cols, f.Name)
	}
	num := func(v float64) string {
		if math.IsNaN(v) {
			return "-" // null
		}
		return strconv.FormatFloat(v, 'g', 7, 64)
	}
	count := func(v int64) string {
		if v < 0 {
			return "-" // null
		}
		return strconv.FormatInt(v, 10)
	}
	rows := make([][]string, len(log.Rows))
	for i, r := range log.Rows {
		rows[i] = []string{strconv.Itoa(r.Epoch), strconv.FormatInt(r.Steps, 10), num(r.Seconds), num(r.TotalSeconds),
			num(r.CertSeconds), num(r.Primal), num(r.Dual), num(r.Gap), num(r.IdentityResidual), num(r.GapEstimate),
			strconv.FormatInt(r.LineSearch, 10), num(r.ValidAccuracy), num(r.ValidF1),
			count(r.OracleCalls), count(r.CertOracleCalls), count(r.Updates)}
	}
	md := log.Metadata
	fmt.Fprintf(out, "training log %s (format version %s)\n", name, md[schemas.KeyVersion])
	fmt.Fprintf(out, "epochs      %d rows\nsolver      %s\n", len(rows), md[schemas.KeySolver])
	printAligned(out, cols, rows)
	fmt.Fprintf(out, "(seconds exclude certificate passes, shown as cert_seconds; valid_accuracy and valid_f1 are fractions in [0, 1]; - is null)\n")
	return nil
}

// printAligned prints a table with right-aligned columns.
func printAligned(out *bytes.Buffer, cols []string, rows [][]string) {
	width := make([]int, len(cols))
	for c, n := range cols {
		width[c] = len(n)
		for _, r := range rows {
			width[c] = max(width[c], len(r[c]))
		}
	}
	line := func(cells []string) {
		for c, s := range cells {
			if c > 0 {
				out.WriteString("  ")
			}
			out.WriteString(strings.Repeat(" ", width[c]-len(s)) + s)
		}
		out.WriteByte('\n')
	}
	line(cols)
	for _, r := range rows {
		line(r)
	}
}

// reopenable returns a function that runs fn on the input in as often as
// needed, and a function that frees what that takes: standard input is
// copied once to an unnamed temporary file (a spool), not into memory,
// so a table of any size can be inspected from a pipe.
func reopenable(in pipeline.Source) (opener, func(), error) {
	once := func(fn func(io.Reader, string) error) error {
		r, name, err := in.Open()
		if err != nil {
			return err
		}
		defer r.Close()
		return fn(r, name)
	}
	if !in.IsStdin() {
		return once, func() {}, nil
	}
	var spool *platform.Spool
	var name string
	err := once(func(r io.Reader, n string) error {
		name = n
		var err error
		if spool, err = platform.NewSpool("", n); err != nil {
			return err
		}
		_, err = io.Copy(spool, r)
		var de *pipeline.DecompressError
		if errors.As(err, &de) {
			return err // it names the input
		}
		if err != nil {
			return fmt.Errorf("read %s: %w", n, err)
		}
		return nil
	})
	if err != nil {
		if spool != nil {
			spool.Close()
		}
		return nil, nil, err
	}
	size := spool.Size()
	return func(fn func(io.Reader, string) error) error { return fn(io.NewSectionReader(spool, 0, size), name) },
		func() { spool.Close() }, nil
}

// printWeights summarises a weights table (explain -o): its rows by kind,
// its labels and the templates of its attributes. It reads the rows one at
// a time, keeping only the distinct names.
func printWeights(out *bytes.Buffer, rr array.RecordReader, name string) error {
	md := schemas.MetadataMap(rr.Schema())
	kinds := map[string]int{}
	labels, templates, attrs := map[string]bool{}, map[string]bool{}, map[string]bool{}
	see := func(set map[string]bool, s string) {
		if !set[s] {
			set[strings.Clone(s)] = true
		}
	}
	rows := 0
	err := tables.EachWeightRow(rr, name, func(r tables.WeightRow) error {
		rows++
		kinds[r.Kind]++
		see(labels, r.Label)
		if r.Kind == schemas.KindAttr {
			see(attrs, r.Attribute)
			if r.Template != "" {
				see(templates, r.Template)
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "weights table %s (format version %s)\n", name, md[schemas.KeyVersion])
	fmt.Fprintf(out, "rows        %d\n", rows)
	for _, k := range []string{schemas.KindAttr, schemas.KindTrans, schemas.KindBias, schemas.KindStart, schemas.KindEnd} {
		fmt.Fprintf(out, "  %-10s %d\n", k, kinds[k])
	}
	fmt.Fprintf(out, "labels      %d\nattributes  %d (with a non-zero weight)\ntemplates   %d\n", len(labels), len(attrs), len(templates))
	printMetadata(out, md, schemas.KeySource)
	return nil
}
