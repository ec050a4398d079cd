package dualcrfbeam

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/sdf"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/log"

	"github.com/dualcrf/dualcrf/arrowio"
	"github.com/dualcrf/dualcrf/crf"
	"github.com/dualcrf/dualcrf/pipeline"
	"github.com/dualcrf/dualcrf/stage"
	"github.com/dualcrf/dualcrf/tables"
)

// DecodeConfig configures the decode pipeline: the shards are feature
// tables made with the model's templates, or raw text with Text.
type DecodeConfig struct {
	Shards []Shard
	OutDir string // part-NNNNN.parquet, one per shard
	// Model is the model file, read once into the pipeline's side input.
	Model string
	// Text, InputFormat, NoLabels, Marginals and ChunkTokens are
	// stage.DecodeOptions'.
	Text        bool
	InputFormat string
	NoLabels    bool
	Marginals   bool
	ChunkTokens int
}

// Decode adds the decode pipeline to s: the model file's bytes as a side
// input, and each shard's predictions written as Parquet, as `dualcrf
// decode --format parquet` writes them. The returned collection holds
// each shard's summary.
func Decode(s beam.Scope, c DecodeConfig) (beam.PCollection, error) {
	if len(c.Shards) == 0 {
		return beam.PCollection{}, errors.New("decode: no input shards")
	}
	if c.Model == "" {
		return beam.PCollection{}, errors.New("decode: no model")
	}
	if c.ChunkTokens < 0 {
		return beam.PCollection{}, fmt.Errorf("decode: chunk-tokens %d: want a count ≥ 0", c.ChunkTokens)
	}
	s = s.Scope("decode")
	model := beam.ParDo(s, readFile, beam.Create(s, c.Model))
	shards := beam.Create(s, toAny(c.Shards)...)
	fn := &decodeFn{ModelName: c.Model, OutDir: c.OutDir, Text: c.Text, InputFormat: c.InputFormat, NoLabels: c.NoLabels,
		Marginals: c.Marginals, ChunkTokens: c.ChunkTokens}
	return beam.ParDo(s, fn, shards, beam.SideInput{Input: model}), nil
}

// readFile returns the bytes of the file path.
func readFile(path string) ([]byte, error) {
	return os.ReadFile(path)
}

// DecodeResult is one shard's prediction table.
type DecodeResult struct {
	Shard  int
	Path   string // the prediction table written
	Tokens int
}

// decodeFn decodes a shard with the model of the side input.
type decodeFn struct {
	perShard
	ModelName   string
	OutDir      string
	Text        bool
	InputFormat string
	NoLabels    bool
	Marginals   bool
	ChunkTokens int

	model *crf.Model // read from the side input once
}

// ProcessElement decodes the shard sh into part-NNNNN.parquet.
func (fn *decodeFn) ProcessElement(ctx context.Context, rt *sdf.LockRTracker, sh Shard, model []byte, emit func(DecodeResult)) error {
	if !claim(rt) {
		return nil
	}
	if fn.model == nil {
		m, err := tables.ReadModel(bytes.NewReader(model), fn.ModelName, arrowio.ReaderOptions{})
		if err != nil {
			return err
		}
		fn.model = m
	}
	// One decoding goroutine: the engine runs shards in parallel.
	o := stage.DecodeOptions{Format: tables.PredictionParquet, Marginals: fn.Marginals, Workers: 1, ChunkTokens: fn.ChunkTokens,
		Text: fn.Text, InputFormat: fn.InputFormat, NoLabels: fn.NoLabels, ModelName: fn.ModelName, Log: &logWriter{ctx: ctx}}
	path := OutputPath(fn.OutDir, sh.Index, "parquet")
	res := DecodeResult{Shard: sh.Index, Path: path}
	err := writeAtomic(ctx, path, func(out *pipeline.Output) error {
		cov, err := stage.Decode(ctx, fn.model, stage.File(sh.Path), out, o)
		res.Tokens = cov.Tokens
		return err
	})
	if err != nil {
		return fmt.Errorf("decode: shard %d: %w", sh.Index, err)
	}
	emit(res)
	return nil
}

// logWriter passes a stage's warnings to Beam's log.
type logWriter struct{ ctx context.Context }

// Write logs p as a warning.
func (w *logWriter) Write(p []byte) (int, error) {
	log.Warn(w.ctx, string(bytes.TrimRight(p, "\n")))
	return len(p), nil
}
