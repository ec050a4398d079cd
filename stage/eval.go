package stage

import (
	"context"

	"github.com/dualcrf/dualcrf/decode"
)

// DefaultScheme is the chunk rules Eval applies by default: conlleval's.
const DefaultScheme = "conlleval"

// EvalOptions configure Eval. The zero value scores chunks by conlleval's
// rules.
type EvalOptions struct {
	// Scheme is the chunk rules (decode.ParseScheme): conlleval (""),
	// auto, iob1, iob2 or iobes.
	Scheme string
	// NoChunks scores token accuracy only (part-of-speech tags); not with
	// Scheme.
	NoChunks bool
	// AutoNoChunks scores token accuracy only when no label has a chunk
	// prefix, saying so (decode.EvalOptions.AutoNoChunks).
	AutoNoChunks bool
}

// Eval scores the prediction table in against its gold labels: token
// accuracy, per-label and chunk precision, recall and F1. The evaluator
// returned gives the scores (Result) and writes conlleval's report or JSON.
// A table without gold labels is an error.
func Eval(ctx context.Context, in Input, o EvalOptions) (*decode.Evaluator, error) {
	ev, err := o.evaluator()
	if err != nil {
		return nil, err
	}
	rr, name, done, err := in.records(ctx)
	if err != nil {
		return nil, err
	}
	defer done()
	if err := decode.EvaluateReader(rr, name, ev); err != nil {
		return nil, err
	}
	return ev, nil
}

// evaluator returns an empty evaluator for o.
func (o EvalOptions) evaluator() (*decode.Evaluator, error) {
	name := o.Scheme
	if name == "" {
		name = DefaultScheme
	}
	scheme, err := decode.ParseScheme(name)
	if err != nil {
		return nil, err
	}
	return decode.NewEvaluator(decode.EvalOptions{Scheme: scheme, NoChunks: o.NoChunks, AutoNoChunks: o.AutoNoChunks}), nil
}
