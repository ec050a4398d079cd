package tables

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/dualcrf/dualcrf/option"
)

// UnknownAttrWarn is the share of attribute occurrences unknown to a model
// (or to a fixed vocabulary) above which featurize and decode warn. Test
// data featurized with its own training vocabulary leaves about a tenth
// unknown (CoNLL-2000 test with the chunking templates and cut-off 3: 9.6%);
// text of another language, tag set or template set leaves most of it.
const UnknownAttrWarn = 0.5

// maxListedLabels is the number of unknown labels a warning names.
const maxListedLabels = 10

// Coverage counts how much of some data a model's vocabulary and labels
// cover: attribute occurrences the model has no weights for play no part in
// decoding, and a token whose gold label the model cannot produce is always
// mispredicted (eval counts it as an error).
type Coverage struct {
	Tokens        int            // tokens seen
	Attrs         int            // attribute occurrences seen, known or not
	UnknownAttrs  int            // attribute occurrences the model does not know
	Labelled      int            // tokens with a gold label
	UnknownLabels map[string]int // gold labels the model does not know → their tokens
}

// AddLabel counts one token's gold label; known says whether the model
// knows it.
func (c *Coverage) AddLabel(label string, known bool) {
	c.Labelled++
	if known {
		return
	}
	if c.UnknownLabels == nil {
		c.UnknownLabels = make(map[string]int)
	}
	c.UnknownLabels[label]++
}

// Add adds the counts of o to c.
func (c *Coverage) Add(o Coverage) {
	c.Tokens += o.Tokens
	c.Attrs += o.Attrs
	c.UnknownAttrs += o.UnknownAttrs
	c.Labelled += o.Labelled
	for l, n := range o.UnknownLabels {
		if c.UnknownLabels == nil {
			c.UnknownLabels = make(map[string]int)
		}
		c.UnknownLabels[l] += n
	}
}

// UnknownLabelled returns the number of tokens whose gold label the model
// does not know.
func (c Coverage) UnknownLabelled() int {
	n := 0
	for _, k := range c.UnknownLabels {
		n += k
	}
	return n
}

// Mismatch returns an error naming the data and the model when they share
// nothing: there are tokens but no attribute occurrence the model knows, or
// there are gold labels but none the model can produce. Decoding such data
// is meaningless (every prediction comes from the biases and transitions
// alone, or every one is wrong).
func (c Coverage) Mismatch(data, model string) error {
	if c.Tokens > 0 && c.Attrs == c.UnknownAttrs {
		return fmt.Errorf("%s and %s share no attribute: none of the %d attribute occurrences of its %d tokens is one the model knows "+
			"(featurized with other templates or another vocabulary? %w)",
			data, model, c.Attrs, c.Tokens, &option.Error{Msg: "featurize the text with {FeaturizeOptions.Like} " + model})
	}
	if c.Labelled > 0 && c.UnknownLabelled() == c.Labelled {
		return fmt.Errorf("%s and %s share no label: none of the gold labels of its %d labelled tokens (%s) is one the model can predict",
			data, model, c.Labelled, c.labelList())
	}
	return nil
}

// Warnings returns, one line each, what the counts say of a partial
// mismatch with the model named model: a share of unknown attribute
// occurrences above UnknownAttrWarn, and gold labels the model cannot
// produce, with their token counts.
func (c Coverage) Warnings(model string) []string {
	var out []string
	if c.Attrs > 0 && float64(c.UnknownAttrs) > UnknownAttrWarn*float64(c.Attrs) {
		out = append(out, fmt.Sprintf("%d of %d attribute occurrences (%.1f%%) are unknown to %s and play no part (more than %.0f%%: is this the kind of text it was trained on?)",
			c.UnknownAttrs, c.Attrs, 100*float64(c.UnknownAttrs)/float64(c.Attrs), model, 100*UnknownAttrWarn))
	}
	if n := c.UnknownLabelled(); n > 0 {
		out = append(out, fmt.Sprintf("%d of %d labelled tokens have a gold label %s cannot predict (kept; scored as errors): %s",
			n, c.Labelled, model, c.labelList()))
	}
	return out
}

// labelList names the unknown labels, most frequent first, with counts.
func (c Coverage) labelList() string {
	labels := make([]string, 0, len(c.UnknownLabels))
	for l := range c.UnknownLabels {
		labels = append(labels, l)
	}
	slices.SortFunc(labels, func(a, b string) int {
		return cmp.Or(cmp.Compare(c.UnknownLabels[b], c.UnknownLabels[a]), strings.Compare(a, b))
	})
	var b strings.Builder
	for i, l := range labels {
		if i == maxListedLabels {
			fmt.Fprintf(&b, ", … (%d labels in all)", len(labels))
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s (%d)", l, c.UnknownLabels[l])
	}
	return b.String()
}
