package stage

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

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

// WeightRows returns m's weights as rows of the weights table: the non-zero
// attribute weights in attribute order (labels in label order within an
// attribute), every transition weight (previous label by previous label),
// then the bias, start and end weights of every label unless the model
// has none. Each attribute is given the template that made it when the
// model records its templates.
func WeightRows(m *crf.Model) []tables.WeightRow {
	A, K := m.Layout.NumAttrs, m.Layout.NumLabels
	tmpl := attrTemplates(m)
	var rows []tables.WeightRow
	for a := range A {
		t := ""
		for y, w := range m.Weights[a*K : (a+1)*K] {
			if w == 0 {
				continue
			}
			if t == "" {
				t = tmpl(m.AttrNames[a])
			}
			rows = append(rows, tables.WeightRow{Kind: schemas.KindAttr, Label: m.LabelNames[y],
				Attribute: m.AttrNames[a], Template: t, Weight: w})
		}
	}
	tr := m.Layout.Trans()
	for y := range K {
		for y2 := range K {
			rows = append(rows, tables.WeightRow{Kind: schemas.KindTrans, Label: m.LabelNames[y2],
				FromLabel: m.LabelNames[y], Weight: m.Weights[tr+y*K+y2]})
		}
	}
	if !m.Layout.NoBias {
		for i, kind := range []string{schemas.KindBias, schemas.KindStart, schemas.KindEnd} {
			off := m.Layout.Bias() + i*K
			for y := range K {
				rows = append(rows, tables.WeightRow{Kind: kind, Label: m.LabelNames[y], Weight: m.Weights[off+y]})
			}
		}
	}
	return rows
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
// spaces.
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
	var b strings.Builder
	fmt.Fprintf(&b, "model %s: %d labels, %d attributes, %d non-zero attribute weights of %d (feature space %s, transitions %s)\n",
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
		tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
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

	fmt.Fprintf(&b, "\ntop %d attributes per label: largest positive weights | most negative weights\n", top)
	for y, label := range m.LabelNames {
		pos, neg := topAttributes(m, y, top)
		fmt.Fprintf(&b, "\n%s\n", label)
		tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
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
	tw := tabwriter.NewWriter(&b, 0, 0, 1, ' ', tabwriter.AlignRight)
	b2 := func(cells ...string) { fmt.Fprintf(tw, "%s\t\n", strings.Join(cells, "\t")) }
	b2(append([]string{""}, m.LabelNames...)...)
	tr := m.Layout.Trans()
	for y, from := range m.LabelNames {
		cells := []string{from}
		for y2 := range K {
			cells = append(cells, fixed(m.Weights[tr+y*K+y2], 2))
		}
		b2(cells...)
	}
	if err := tw.Flush(); err != nil {
		return err
	}

	if !m.Layout.NoBias {
		b.WriteString("\nlabel weights at every token (bias), at the first (start) and at the last (end)\n")
		tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintf(tw, "\tbias\tstart\tend\t\n")
		for y, label := range m.LabelNames {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t\n", label, fixed(m.Weights[m.Layout.Bias()+y], 4),
				fixed(m.Weights[m.Layout.Start()+y], 4), fixed(m.Weights[m.Layout.End()+y], 4))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
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
