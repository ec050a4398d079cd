package main

import (
	"bytes"
	"context"
	"encoding/xml"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dualcrf/dualcrf/internal/datatest"
	"github.com/dualcrf/dualcrf/tables"
)

func TestParseFlagsRefuses(t *testing.T) {
	for _, args := range [][]string{
		{"-figures", "5"}, {"-sets", "wsj"}, {"-solvers", "sgd"}, {"-scale", "0"}, {"-format", "pdf"}, {"extra"},
	} {
		if _, err := parseFlags(args, io.Discard); err == nil {
			t.Errorf("%v accepted", args)
		}
	}
}

// TestFigure2Smoke runs Figure 2 for one epoch per sampler on OCR and
// checks the figure (XML, one curve per sampler), the logs and the notes.
func TestFigure2Smoke(t *testing.T) {
	out := t.TempDir()
	var log bytes.Buffer
	err := run(context.Background(), []string{"-data", datatest.Dir(t), "-out", out, "-figures", "2", "-scale", "0.025"}, &log)
	if err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	svg, err := os.ReadFile(filepath.Join(out, "fig2-ocr-samplers.svg"))
	if err != nil {
		t.Fatal(err)
	}
	if err := xml.Unmarshal(svg, new(struct{})); err != nil {
		t.Fatalf("figure is not XML: %v", err)
	}
	notes, err := os.ReadFile(filepath.Join(out, "results-fig2.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"n = 6202 sequences", "A = 128 attributes", "K = 26 labels", "= 4082", "| max |"} {
		if !strings.Contains(string(notes), want) {
			t.Errorf("results.md lacks %q:\n%s", want, notes)
		}
	}
	logs, _ := filepath.Glob(filepath.Join(out, "logs", "ocr-sampler-*.arrow"))
	if len(logs) != 5 {
		t.Fatalf("%d logs, want 5 (one per sampler)", len(logs))
	}
}

func TestBracketAndRatio(t *testing.T) {
	nan := func() float64 { var z float64; return z / z }()
	rows := []tables.LogRow{{Epoch: 0, Primal: 5, Gap: 4, GapEstimate: nan}, {Epoch: 1, Primal: 2, Gap: 0.5, GapEstimate: 1}, {Epoch: 2, Primal: nan, Gap: nan}}
	lo, hi := bracket([]result{{Rows: rows}, {Rows: []tables.LogRow{{Primal: 1.8, Gap: 0.4}}}})
	if lo != 1.5 || hi != 1.8 {
		t.Errorf("bracket [%g, %g], want [1.5, 1.8]", lo, hi)
	}
	if got := ratioRange(rows); got != "2.00, 2.00" {
		t.Errorf("ratio %s", got)
	}
}
