package dualcrfbeam

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/sdf"

	"github.com/dualcrf/dualcrf/arrowio"
	"github.com/dualcrf/dualcrf/decode"
	"github.com/dualcrf/dualcrf/pipeline"
	"github.com/dualcrf/dualcrf/tables"
)

// EvalConfig configures the eval pipeline: the shards are prediction
// tables, Parquet (as Decode writes them) or Arrow IPC.
type EvalConfig struct {
	Shards []Shard
	// Scheme and NoChunks are stage.EvalOptions'.
	Scheme   string
	NoChunks bool
}

// Check checks c's scheme and options.
func (c EvalConfig) Check() error {
	_, err := c.options()
	return err
}

// options returns c's evaluator options, checked.
func (c EvalConfig) options() (decode.EvalOptions, error) {
	if c.NoChunks && c.Scheme != "" {
		return decode.EvalOptions{}, errors.New("eval: --no-chunks scores tokens only; do not give a scheme with it")
	}
	name := c.Scheme
	if name == "" {
		name = decode.SchemeConlleval.String()
	}
	scheme, err := decode.ParseScheme(name)
	if err != nil {
		return decode.EvalOptions{}, err
	}
	return decode.EvalOptions{Scheme: scheme, NoChunks: c.NoChunks}, nil
}

// Eval adds the eval pipeline to s: every shard scored apart, and
// conlleval's counts combined into one EvalCounts, whose Evaluator gives
// the report of the whole corpus.
func Eval(s beam.Scope, c EvalConfig) (beam.PCollection, error) {
	opts, err := c.options()
	if err != nil {
		return beam.PCollection{}, err
	}
	if len(c.Shards) == 0 {
		return beam.PCollection{}, errors.New("eval: no input shards")
	}
	s = s.Scope("eval")
	shards := beam.Create(s, toAny(c.Shards)...)
	counts := beam.ParDo(s, &evalFn{Scheme: int(opts.Scheme), NoChunks: opts.NoChunks}, shards)
	return beam.Combine(s, &countsFn{Scheme: int(opts.Scheme), NoChunks: opts.NoChunks}, counts), nil
}

// EvalCounts are the conlleval counts of some shards of a corpus. Open
// is the shard that ended inside a chunk (decode.Counts.Open), -1 for
// none; Last is the highest shard index counted.
type EvalCounts struct {
	Counts decode.Counts
	Open   int
	Last   int
}

// Evaluator returns the evaluator of the counted shards, which must be
// the job's n shards. A shard other than the last that ends inside a
// chunk (only odd tags do that) is an error: conlleval would have carried
// the chunk into the next shard, so the shards cannot be scored apart.
func (c EvalCounts) Evaluator(shards []Shard) (*decode.Evaluator, error) {
	if c.Open >= 0 && c.Open != len(shards)-1 {
		return nil, fmt.Errorf("eval: %s ends inside a chunk that its sentence boundary does not close (odd tags): score the shards together, with dualcrf eval",
			shards[c.Open].Path)
	}
	return decode.EvaluatorFromCounts(c.Counts), nil
}

// evalFn scores one shard.
type evalFn struct {
	perShard
	Scheme   int
	NoChunks bool
}

// ProcessElement scores the prediction table of shard sh.
func (fn *evalFn) ProcessElement(ctx context.Context, rt *sdf.LockRTracker, sh Shard, emit func(EvalCounts)) error {
	if !claim(rt) {
		return nil
	}
	ev := decode.NewEvaluator(decode.EvalOptions{Scheme: decode.Scheme(fn.Scheme), NoChunks: fn.NoChunks})
	if err := evaluateFile(ctx, sh.Path, ev); err != nil {
		return err
	}
	c := EvalCounts{Counts: ev.Counts(), Open: -1, Last: sh.Index}
	if c.Counts.Open {
		c.Open = sh.Index
	}
	emit(c)
	return nil
}

// evaluateFile scores the prediction table at path (Parquet, or Arrow IPC
// as dualcrf eval reads it) into ev, as decode.EvaluateReader does.
func evaluateFile(ctx context.Context, path string, ev *decode.Evaluator) error {
	return readPredictionFile(ctx, path, func(s *tables.PredictedSentence) error {
		if err := ev.Add(s.Gold, s.Pred); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		return nil
	})
}

// readPredictionFile reads the prediction table at path (Parquet, or Arrow
// IPC) sentence by sentence with tables.ReadPredictions, gold labels
// required.
func readPredictionFile(ctx context.Context, path string, fn func(*tables.PredictedSentence) error) error {
	rr, closeFn, err := openPredictions(ctx, path)
	if err != nil {
		return err
	}
	defer closeFn()
	return tables.ReadPredictions(rr, path, true, fn)
}

// openPredictions opens the prediction table at path: Parquet when the
// file starts with Parquet's magic, else Arrow IPC.
func openPredictions(ctx context.Context, path string) (array.RecordReader, func(), error) {
	if !isParquet(path) {
		r, name, err := pipeline.OpenInput(path)
		if err != nil {
			return nil, nil, err
		}
		rr, err := tables.OpenRecordReader(r, name, arrowio.ReaderOptions{})
		if err != nil {
			r.Close()
			return nil, nil, err
		}
		return rr, func() { rr.Release(); r.Close() }, nil
	}
	rr, closeFn, err := openParquet(ctx, path)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	return rr, closeFn, nil
}

// isParquet reports whether the file at path starts with Parquet's magic.
func isParquet(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	var head [4]byte
	n, _ := io.ReadFull(f, head[:])
	return n == 4 && string(head[:]) == "PAR1"
}

// openParquet opens the Parquet file at path as a record reader. A corrupt
// file is an error, not a panic.
func openParquet(ctx context.Context, path string) (rr array.RecordReader, closeFn func(), err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("corrupt Parquet file: %v", p)
		}
	}()
	pf, err := file.OpenParquetFile(path, false, file.WithReadProps(parquet.NewReaderProperties(memory.DefaultAllocator)))
	if err != nil {
		return nil, nil, err
	}
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{BatchSize: 64 << 10}, memory.DefaultAllocator)
	if err != nil {
		pf.Close()
		return nil, nil, err
	}
	r, err := fr.GetRecordReader(ctx, nil, nil)
	if err != nil {
		pf.Close()
		return nil, nil, err
	}
	// The table's metadata (format, version, source) is the file's
	// key-value metadata; Arrow's schema read from Parquet lacks it.
	var keys, vals []string
	for _, kv := range pf.MetaData().KeyValueMetadata() {
		if kv.Key != "ARROW:schema" && kv.Value != nil {
			keys, vals = append(keys, kv.Key), append(vals, *kv.Value)
		}
	}
	md := arrow.NewMetadata(keys, vals)
	schema := arrow.NewSchema(r.Schema().Fields(), &md)
	return withSchema{r, schema}, func() { r.Release(); pf.Close() }, nil
}

// withSchema is a record reader whose Schema is another (with metadata).
type withSchema struct {
	array.RecordReader
	schema *arrow.Schema
}

// Schema returns the schema with the file's metadata.
func (w withSchema) Schema() *arrow.Schema { return w.schema }

// countsFn combines the shards' counts.
type countsFn struct {
	Scheme   int
	NoChunks bool
}

// CreateAccumulator returns empty counts.
func (fn *countsFn) CreateAccumulator() EvalCounts {
	return EvalCounts{Counts: decode.Counts{Options: decode.EvalOptions{Scheme: decode.Scheme(fn.Scheme), NoChunks: fn.NoChunks}}, Open: -1, Last: -1}
}

// AddInput adds a shard's counts.
func (fn *countsFn) AddInput(a, c EvalCounts) (EvalCounts, error) {
	return fn.MergeAccumulators(a, c)
}

// MergeAccumulators adds b's counts to a's.
func (fn *countsFn) MergeAccumulators(a, b EvalCounts) (EvalCounts, error) {
	if a.Open >= 0 && b.Open >= 0 {
		return a, fmt.Errorf("eval: shards %d and %d both end inside a chunk (odd tags): score them together, with dualcrf eval", a.Open, b.Open)
	}
	if err := a.Counts.Merge(b.Counts); err != nil {
		return a, err
	}
	a.Open = max(a.Open, b.Open)
	a.Last = max(a.Last, b.Last)
	return a, nil
}

// Report formats of EvalConfig's report.
const (
	ReportText = "text" // conlleval's text report, as dualcrf eval prints it
	ReportJSON = "json" // the scores as JSON, as dualcrf eval --format json
)

// WriteReport adds to s the writing of counts (Eval's output) as the report
// of the job's shards, in format text or json, to the file path (atomic).
func WriteReport(s beam.Scope, counts beam.PCollection, shards []Shard, format, path string) error {
	if format != ReportText && format != ReportJSON {
		return fmt.Errorf("eval: report format %q: want text or json", format)
	}
	beam.ParDo0(s.Scope("report"), &reportFn{Shards: shards, Format: format, Path: path}, counts)
	return nil
}

// reportFn writes the report of the combined counts.
type reportFn struct {
	Shards []Shard
	Format string
	Path   string
}

// ProcessElement writes the report of c.
func (fn *reportFn) ProcessElement(ctx context.Context, c EvalCounts) error {
	ev, err := c.Evaluator(fn.Shards)
	if err != nil {
		return err
	}
	return writeAtomic(ctx, fn.Path, func(out *pipeline.Output) error {
		if fn.Format == ReportJSON {
			return ev.WriteJSON(out)
		}
		return ev.WriteConlleval(out)
	})
}
