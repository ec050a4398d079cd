package dualcrfbeam

import (
	"bytes"
	"context"
	"encoding/gob"
	"reflect"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/sdf"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/x/beamx"
)

// The DoFns, combiners and coders are registered so that a worker — this
// binary, started by the engine — can run them.
func init() {
	register.DoFn4x1[context.Context, *sdf.LockRTracker, Shard, func(ShardCounts), error](&countFn{})
	register.DoFn5x1[context.Context, *sdf.LockRTracker, Shard, Vocab, func(FeaturizeResult), error](&featurizeFn{})
	register.DoFn5x1[context.Context, *sdf.LockRTracker, Shard, []byte, func(DecodeResult), error](&decodeFn{})
	register.DoFn4x1[context.Context, *sdf.LockRTracker, Shard, func(EvalCounts), error](&evalFn{})
	register.DoFn2x1[context.Context, EvalCounts, error](&reportFn{})
	register.Function1x2[string, []byte, error](readFile)
	register.Combiner3[VocabCounts, ShardCounts, Vocab](&vocabFn{})
	register.Combiner1[EvalCounts](&countsFn{})
	register.Emitter1[ShardCounts]()
	register.Emitter1[FeaturizeResult]()
	register.Emitter1[DecodeResult]()
	register.Emitter1[EvalCounts]()
	beam.RegisterCoder(reflect.TypeFor[VocabCounts](), encodeVocabCounts, decodeVocabCounts)
	beam.RegisterCoder(reflect.TypeFor[EvalCounts](), encodeEvalCounts, decodeEvalCounts)
}

// The coders of the types holding maps, which Beam's schema coder does not
// take: gob.

func encodeVocabCounts(v VocabCounts) ([]byte, error) { return gobEncode(v) }
func encodeEvalCounts(v EvalCounts) ([]byte, error)   { return gobEncode(v) }

func decodeVocabCounts(b []byte) (VocabCounts, error) {
	var v VocabCounts
	return v, gob.NewDecoder(bytes.NewReader(b)).Decode(&v)
}

func decodeEvalCounts(b []byte) (EvalCounts, error) {
	var v EvalCounts
	return v, gob.NewDecoder(bytes.NewReader(b)).Decode(&v)
}

// gobEncode encodes v with gob.
func gobEncode(v any) ([]byte, error) {
	var b bytes.Buffer
	err := gob.NewEncoder(&b).Encode(v)
	return b.Bytes(), err
}

// Run runs the pipeline p on the runner its flags choose (--runner,
// default prism: in this process; --endpoint: a job server's address).
func Run(ctx context.Context, p *beam.Pipeline) error {
	return beamx.Run(ctx, p)
}
