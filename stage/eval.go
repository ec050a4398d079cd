package stage

import (
	"context"

	"github.com/dualcrf/dualcrf/decode"
)

// EvalOptions configure Eval. The zero value scores chunks by conlleval's
// rules.
type EvalOptions struct {
	// Scheme is the chunk rules: decode.SchemeConlleval (the zero value),
	// SchemeAuto, SchemeIOB1, SchemeIOB2 or SchemeIOBES.
	Scheme decode.Scheme
	// NoChunks scores token accuracy only (part-of-speech tags); not with
	// Scheme.
	NoChunks bool
	// AutoNoChunks scores token accuracy only when no label has a chunk
	// prefix, saying so (decode.EvalOptions.AutoNoChunks).
	AutoNoChunks bool
	// Calibration adds the reliability table of the predicted chunks'
	// confidence (a prediction table decoded with ChunkConfidence); not
	// with NoChunks.
	Calibration bool
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
	if _, err := decode.ParseScheme(o.Scheme.String()); err != nil {
		return nil, optionError("Scheme", o.Scheme.String(), "want one of decode's schemes")
	}
	if o.Calibration && o.NoChunks {
		return nil, optionError("EvalOptions.Calibration", nil, "calibrates chunk confidence: not with {EvalOptions.NoChunks}")
	}
	return decode.NewEvaluator(decode.EvalOptions{Scheme: o.Scheme, NoChunks: o.NoChunks, AutoNoChunks: o.AutoNoChunks && !o.Calibration,
		Calibration: o.Calibration}), nil
}
