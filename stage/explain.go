package stage

import (
	"bufio"
	"cmp"
	"fmt"
	"io"
	"iter"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"unicode/utf8"

	"github.com/dualcrf/dualcrf/crf"
	"github.com/dualcrf/dualcrf/featurize"
	"github.com/dualcrf/dualcrf/option"
	"github.com/dualcrf/dualcrf/schemas"
	"github.com/dualcrf/dualcrf/tables"
)

// DefaultExplainTop is how many attributes Explain shows per label and sign
// when ExplainOptions.Top is zero.
const DefaultExplainTop = 10

// ExplainOptions are the options of Explain. The zero value is the
// default.
type ExplainOptions struct {
	// Top is how many attributes to show per label with the largest
	// positive weights, and as many with the most negative; 0 means
	// DefaultExplainTop.
	Top int
}

// Check refuses a negative Top.
func (o ExplainOptions) Check() error {
	if o.Top < 0 {
		return &option.Error{Field: "Top", Value: fmt.Sprint(o.Top), Msg: "want ≥ 1 (0: the default)"}
	}
	return nil
}

// attrTemplates returns the function naming the template that made an
// attribute of m, from the templates m records: an attribute is named
// TEMPLATE=VALUES, or TEMPLATE alone (boolean and num templates); template
// names hold no '='. It returns "" for an attribute no recorded template
// names (an input attribute, as from CRFsuite files, or a model that
// records no templates).
func attrTemplates(m *crf.Model) func(attr string) string {
	set, err := featurize.RecordedTemplates(m.Meta, "model")
	if err != nil || set == nil {
		return func(string) string { return "" }
	}
	names := make(map[string]bool, set.Len())
	for i := range set.Len() {
		if n := set.Name(i); !strings.HasPrefix(n, "@") {
			names[n] = true
		}
	}
	return func(attr string) string {
		t, _, _ := strings.Cut(attr, "=")
		if names[t] {
			return t
		}
		return ""
	}
}

// WeightRows returns m's weights as rows of the weights table (the rows of
// WeightRowSeq, in its order).
func WeightRows(m *crf.Model) []tables.WeightRow {
	return slices.Collect(WeightRowSeq(m))
}

// WeightRowSeq yields m's weights as rows of the weights table, one at a
// time (a model's rows take about twelve times its weights' memory): the
// non-zero attribute weights in attribute order (labels in label order
// within an attribute), every transition weight (previous label by
// previous label), then the bias, start and end weights of every label
// unless the model has none. Each attribute is given the template that
// made it when the model records its templates.
func WeightRowSeq(m *crf.Model) iter.Seq[tables.WeightRow] {
	return func(yield func(tables.WeightRow) bool) {
		A, K := m.Layout.NumAttrs, m.Layout.NumLabels
		tmpl := attrTemplates(m)
		for a := range A {
			t := ""
			for y, w := range m.Weights[a*K : (a+1)*K] {
				if w == 0 {
					continue
				}
				if t == "" {
					t = tmpl(m.AttrNames[a])
				}
				if !yield(tables.WeightRow{Kind: schemas.KindAttr, Label: m.LabelNames[y], Attribute: m.AttrNames[a], Template: t, Weight: w}) {
					return
				}
			}
		}
		tr := m.Layout.Trans()
		for y := range K {
			for y2 := range K {
				if !yield(tables.WeightRow{Kind: schemas.KindTrans, Label: m.LabelNames[y2], FromLabel: m.LabelNames[y], Weight: m.Weights[tr+y*K+y2]}) {
					return
				}
			}
		}
		if !m.Layout.NoBias {
			for i, kind := range []string{schemas.KindBias, schemas.KindStart, schemas.KindEnd} {
				off := m.Layout.Bias() + i*K
				for y := range K {
					if !yield(tables.WeightRow{Kind: kind, Label: m.LabelNames[y], Weight: m.Weights[off+y]}) {
						return
					}
				}
			}
		}
	}
}

// scored is an attribute with its weight for one label.
type scored struct {
	attr string
	w    float64
}

// topAttributes returns, for label y, the n attributes with the largest
// positive weights (largest first) and the n with the most negative
// (most negative first); ties go by attribute name.
func topAttributes(m *crf.Model, y, n int) (pos, neg []scored) {
	K := m.Layout.NumLabels
	for a := range m.Layout.NumAttrs {
		w := m.Weights[a*K+y]
		switch {
		case w > 0:
			pos = append(pos, scored{m.AttrNames[a], w})
		case w < 0:
			neg = append(neg, scored{m.AttrNames[a], w})
		}
	}
	byWeight := func(desc bool) func(a, b scored) int {
		return func(a, b scored) int {
			c := cmp.Compare(a.w, b.w)
			if desc {
				c = -c
			}
			return cmp.Or(c, strings.Compare(a.attr, b.attr))
		}
	}
	slices.SortFunc(pos, byWeight(true))
	slices.SortFunc(neg, byWeight(false))
	return pos[:min(n, len(pos))], neg[:min(n, len(neg))]
}

// Explain writes what model m (read from name) learnt, for people: a
// summary of its weights, then per label the Top attributes with the
// largest positive and the most negative weights, the transition matrix
// (rows: previous label; columns: next label) and the label bias, start
// and end weights when the model has them. Columns are aligned with
// spaces. The text is written as it is made: the K×K transition matrix of
// a model of many labels is not held in memory.
func Explain(w io.Writer, m *crf.Model, name string, o ExplainOptions) error {
	if err := o.Check(); err != nil {
		return err
	}
	top := cmp.Or(o.Top, DefaultExplainTop)
	A, K := m.Layout.NumAttrs, m.Layout.NumLabels
	nonzero := 0
	for _, v := range m.Weights[:m.Layout.Trans()] {
		if v != 0 {
			nonzero++
		}
	}
	b := bufio.NewWriterSize(w, explainBuffer)
	fmt.Fprintf(b, "model %s: %d labels, %d attributes, %d non-zero attribute weights of %d (feature space %s, transitions %s)\n",
		name, K, A, nonzero, A*K, cmp.Or(m.Meta[schemas.KeyFeatureSpace], "full"), cmp.Or(m.Meta[schemas.KeyTransitions], "all"))
	if m.Layout.NoBias {
		b.WriteString("no bias, start or end weights (trained with --no-bias)\n")
	}

	tmpl := attrTemplates(m)
	perTemplate := map[string]int{}
	for a, n := range m.AttrNames {
		if slices.ContainsFunc(m.Weights[a*K:(a+1)*K], func(v float64) bool { return v != 0 }) {
			perTemplate[tmpl(n)]++
		}
	}
	if set, err := featurize.RecordedTemplates(m.Meta, name); err == nil && set != nil && set.Len() > 0 {
		b.WriteString("\nattributes with a non-zero weight, by template:\n")
		tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', 0)
		for i := range set.Len() {
			if t := set.Name(i); !strings.HasPrefix(t, "@") {
				fmt.Fprintf(tw, "  %d\t%s\n", perTemplate[t], t)
			}
		}
		if n := perTemplate[""]; n > 0 {
			fmt.Fprintf(tw, "  %d\t(no template: input attributes)\n", n)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}

	fmt.Fprintf(b, "\ntop %d attributes per label: largest positive weights | most negative weights\n", top)
	for y, label := range m.LabelNames {
		pos, neg := topAttributes(m, y, top)
		fmt.Fprintf(b, "\n%s\n", label)
		tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', 0)
		for i := range max(len(pos), len(neg)) {
			cell := func(s []scored) string {
				if i >= len(s) {
					return "\t"
				}
				return fixed(s[i].w, 4) + "\t" + s[i].attr
			}
			fmt.Fprintf(tw, "  %s\t|  %s\n", cell(pos), cell(neg))
		}
		if len(pos)+len(neg) == 0 {
			fmt.Fprintln(tw, "  (no non-zero attribute weight)")
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}

	b.WriteString("\ntransitions (row: previous label, column: next label)\n")
	writeTransitions(b, m)

	if !m.Layout.NoBias {
		b.WriteString("\nlabel weights at every token (bias), at the first (start) and at the last (end)\n")
		tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintf(tw, "\tbias\tstart\tend\t\n")
		for y, label := range m.LabelNames {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t\n", label, fixed(m.Weights[m.Layout.Bias()+y], 4),
				fixed(m.Weights[m.Layout.Start()+y], 4), fixed(m.Weights[m.Layout.End()+y], 4))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	return b.Flush()
}

// explainBuffer is the buffer Explain writes through.
const explainBuffer = 64 << 10

// writeTransitions writes m's transition matrix with a header row of the
// labels and a row per previous label, each cell right-aligned in its
// column and followed by a space (as text/tabwriter aligns it), a row at
// a time: the widths of the columns are found first, in a pass over the
// weights, so the K×K cells are never held.
func writeTransitions(b *bufio.Writer, m *crf.Model) {
	K, tr := m.Layout.NumLabels, m.Layout.Trans()
	width := make([]int, K+1) // column 0: the previous labels
	for y, l := range m.LabelNames {
		width[0] = max(width[0], utf8.RuneCountInString(l))
		width[y+1] = utf8.RuneCountInString(l)
	}
	for y := range K {
		for y2 := range K {
			width[y2+1] = max(width[y2+1], len(fixed(m.Weights[tr+y*K+y2], 2)))
		}
	}
	cell := func(c int, s string) {
		for range width[c] + 1 - utf8.RuneCountInString(s) {
			b.WriteByte(' ')
		}
		b.WriteString(s)
	}
	cell(0, "")
	for y, l := range m.LabelNames {
		cell(y+1, l)
	}
	b.WriteByte('\n')
	for y, from := range m.LabelNames {
		cell(0, from)
		for y2 := range K {
			cell(y2+1, fixed(m.Weights[tr+y*K+y2], 2))
		}
		b.WriteByte('\n')
	}
}

// fixed formats v with prec decimals and a sign, without "-0.00" for a
// small negative number.
func fixed(v float64, prec int) string {
	s := strconv.FormatFloat(v, 'f', prec, 64)
	if strings.Trim(s, "-0.") == "" {
		return strconv.FormatFloat(0, 'f', prec, 64)
	}
	if v > 0 {
		return "+" + s
	}
	return s
}
