package main

// The command's advice for a template that reads a column the input
// lacks.

import (
	"errors"
	"fmt"
	"strings"

	"github.com/dualcrf/dualcrf/featurize"
)

// columnMeanings say what the columns templates commonly read hold.
var columnMeanings = map[string]string{"w": "the words", "word": "the words", "pos": "part-of-speech tags", "tag": "part-of-speech tags",
	"chunk": "chunk tags", "lemma": "lemmas"}

// explainMissingColumn rewrites a *featurize.MissingColumnError in err
// (wrapped or not) as a refusal that names the column, what it holds and how to supply it;
// stage names the command, whose the templates' owner ("model m.arrow's
// templates"), model the model ("" without one) and input the input.
// Other errors are returned as they are.
func explainMissingColumn(err error, stage, whose, model, input string) error {
	var me *featurize.MissingColumnError
	if err == nil || !errors.As(err, &me) {
		return err
	}
	col := me.Column
	what := ""
	if m, ok := columnMeanings[col]; ok {
		what = " (" + m + ")"
	}
	var how string
	switch {
	case columnMeanings[col] == "part-of-speech tags" && model != "":
		how = fmt.Sprintf("give CoNLL text with a POS column (a token a line: word POS), or tag the words with a part-of-speech model first and chain: dualcrf decode -m POS-MODEL --input-format plain --text %s | dualcrf %s -m %s --text - (docs/own-data.md)", input, stage, model)
		if stage == "featurize" {
			how = fmt.Sprintf("give CoNLL text with a POS column (a token a line: word POS), or tag the words with a part-of-speech model first: dualcrf decode -m POS-MODEL --text %s -o tagged.arrow; dualcrf featurize --model %s tagged.arrow (docs/own-data.md)", input, model)
		}
	case columnMeanings[col] == "part-of-speech tags":
		how = "give CoNLL text with a POS column (a token a line: word POS label), or choose templates that read the words only (--template ner or pos; docs/own-data.md)"
	default:
		how = fmt.Sprintf("give input with that column (--columns names CoNLL columns; --column %s=SOURCE reads a table column under that name; docs/own-data.md)", col)
	}
	return fmt.Errorf("%s: %s read column %s%s, which %s lacks (its columns: %s; template %s): %s",
		stage, whose, col, what, input, strings.Join(me.Columns, " "), me.Template, how)
}
