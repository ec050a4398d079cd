package main

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dualcrf/dualcrf/crf"
	"github.com/dualcrf/dualcrf/crf/crftest"
	"github.com/dualcrf/dualcrf/featurize"
	"github.com/dualcrf/dualcrf/stage"
)

// TestObjective evaluates a hand-written dump on a two-sentence attribute
// file and checks P against enumeration of every label path, and that a
// feature of an attribute the table lacks is reported.
func TestObjective(t *testing.T) {
	dir := t.TempDir()
	text := "A\tx\ty:2\nB\tx\tz\\:1\n\nB\tz\\:1\n\n"
	table := filepath.Join(dir, "t.arrow")
	var buf bytes.Buffer
	if _, err := stage.Featurize(context.Background(), stage.Reader(strings.NewReader(text), "t.txt"), &buf,
		stage.FeaturizeOptions{Input: &featurize.InputOptions{Format: "crfsuite"}}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(table, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	dump := `TRANSITIONS = {
  (1) A --> B: 0.500000
  (1) B --> B: -0.250000
}

STATE_FEATURES = {
  (0) x --> A: 1.000000
  (0) z:1 --> B: 0.750000
  (0) y --> B: -2.000000
  (0) nowhere --> A: 3.000000
}
`
	dumpFile := filepath.Join(dir, "cs.dump")
	if err := os.WriteFile(dumpFile, []byte(dump), 0o644); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := run([]string{"-lambda", "0.5", "-l1", "0.2/n", table, dumpFile}, &out); err != nil {
		t.Fatal(err)
	}
	// The same weights by name, and P by enumeration.
	rt, _, err := stage.FeaturizeTable(context.Background(), stage.Reader(strings.NewReader(text), "t.txt"),
		stage.FeaturizeOptions{Input: &featurize.InputOptions{Format: "crfsuite"}})
	if err != nil {
		t.Fatal(err)
	}
	d := rt.Data
	lay := crf.Layout{NumAttrs: d.NumAttrs, NumLabels: d.NumLabels, NoBias: true}
	w := make([]float64, lay.Dim())
	lab := map[string]int{}
	for y, l := range d.LabelNames {
		lab[l] = y
	}
	for a, name := range d.AttrNames {
		switch name {
		case "x":
			w[lay.Row(int32(a))+lab["A"]] = 1
		case "z:1":
			w[lay.Row(int32(a))+lab["B"]] = 0.75
		case "y":
			w[lay.Row(int32(a))+lab["B"]] = -2
		}
	}
	w[lay.Trans()+lab["A"]*2+lab["B"]] = 0.5
	w[lay.Trans()+lab["B"]*2+lab["B"]] = -0.25
	loss := 0.0
	for i := range d.Len() {
		s := d.Sentence(i)
		j := crftest.Enumerate(lay, w, s)
		loss += j.LogZ - crf.Dot(w, lay, s, s.Labels)
	}
	want := loss/2 + 0.5/2*(1+0.75*0.75+4+0.25+0.0625) + 0.1*(1+0.75+2+0.5+0.25)
	var p, np float64
	var nnz, unknown int
	if _, err := fmt.Sscanf(out.String(), "P %g\nnP %g\nnonzero %d\nunknown %d\n", &p, &np, &nnz, &unknown); err != nil {
		t.Fatalf("output %q: %v", out.String(), err)
	}
	if math.Abs(p-want) > 1e-12 || math.Abs(np-2*want) > 1e-6 || nnz != 5 || unknown != 1 || !strings.Contains(out.String(), "nowhere --> A") {
		t.Fatalf("output\n%s\nwant P %.10g, 5 non-zero, 1 unknown (nowhere --> A)", out.String(), want)
	}
}
