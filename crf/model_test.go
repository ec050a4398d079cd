package crf

import (
	"fmt"
	"math"
	"strings"
	"testing"
)

// TestCheckRefusesNonFinite: Check names the row, label and value of a
// weight that is NaN or infinite.
func TestCheckRefusesNonFinite(t *testing.T) {
	lay := Layout{NumAttrs: 2, NumLabels: 2}
	for _, c := range []struct {
		index     int
		row       string
		labelName string
	}{
		{lay.Row(1) + 1, `attr "y=1"`, "B"}, {lay.Trans(), `trans "A"`, "A"},
		{lay.Bias() + 1, "bias", "B"}, {lay.End(), "end", "A"},
	} {
		for _, bad := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
			m := &Model{Layout: lay, Weights: make([]float64, lay.Dim()), AttrNames: []string{"x=0", "y=1"}, LabelNames: []string{"A", "B"}}
			m.Weights[c.index] = bad
			err := m.Check()
			if err == nil {
				t.Fatalf("weight %d = %v accepted", c.index, bad)
			}
			for _, s := range []string{c.row, `label "` + c.labelName + `"`, " is " + fmt.Sprint(bad)} {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("weight %d = %v: error %q lacks %q", c.index, bad, err, s)
				}
			}
		}
	}
}

// TestCheckNames: labels must be non-empty and distinct, attribute names
// distinct.
func TestCheckNames(t *testing.T) {
	lay := Layout{NumAttrs: 2, NumLabels: 2, NoBias: true}
	for _, c := range []struct {
		attrs, labels []string
		want          string
	}{
		{[]string{"x", "x"}, []string{"A", "B"}, `both named "x"`},
		{[]string{"x", "y"}, []string{"A", "A"}, `both named "A"`},
		{[]string{"x", "y"}, []string{"A", ""}, "empty name"},
	} {
		m := &Model{Layout: lay, Weights: make([]float64, lay.Dim()), AttrNames: c.attrs, LabelNames: c.labels}
		if err := m.Check(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("attrs %q labels %q: error %v, want %q", c.attrs, c.labels, err, c.want)
		}
	}
}
