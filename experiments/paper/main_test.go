package main

import (
	"bytes"
	"context"
	"encoding/xml"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/dualcrf/dualcrf/internal/datatest"
	"github.com/dualcrf/dualcrf/tables"
)

func TestParseFlagsRefuses(t *testing.T) {
	for _, args := range [][]string{
		{"-figures", "5"}, {"-figures", "6.2"}, {"-sets", "wsj"}, {"-solvers", "sgd"}, {"-scale", "0"}, {"-format", "pdf"}, {"extra"},
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

// TestSubPrecisionAndReuse runs §6.2's sub-precisions on OCR for one epoch,
// then again with -reuse: the second run reads the five logs back (no
// training) and writes the same table; a damaged log is refused by name.
func TestSubPrecisionAndReuse(t *testing.T) {
	out := t.TempDir()
	args := []string{"-data", datatest.Dir(t), "-out", out, "-figures", "sub", "-sets", "ocr", "-scale", "0.04"}
	var log1, log2 bytes.Buffer
	if err := run(context.Background(), args, &log1); err != nil {
		t.Fatalf("%v\n%s", err, log1.String())
	}
	notes1, err := os.ReadFile(filepath.Join(out, "results-figsub-ocr.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, sp := range subPrecisions {
		row := "| " + strconv.FormatFloat(sp, 'g', -1, 64) + " | "
		if !strings.Contains(string(notes1), row) {
			t.Errorf("the notes lack the row of sub-precision %g:\n%s", sp, notes1)
		}
	}
	if err := run(context.Background(), append(args, "-reuse"), &log2); err != nil {
		t.Fatalf("%v\n%s", err, log2.String())
	}
	if n := strings.Count(log2.String(), "read back from"); n != len(subPrecisions) {
		t.Errorf("-reuse read %d logs back, want %d:\n%s", n, len(subPrecisions), log2.String())
	}
	notes2, err := os.ReadFile(filepath.Join(out, "results-figsub-ocr.md"))
	if err != nil {
		t.Fatal(err)
	}
	table := func(b []byte) string {
		s := string(b)
		return s[strings.Index(s, "| sub-precision"):strings.Index(s, "These runs")]
	}
	if table(notes1) != table(notes2) {
		t.Errorf("the table read back differs:\n%s\nagainst\n%s", table(notes2), table(notes1))
	}
	bad := filepath.Join(out, "logs", "ocr-subprecision-0.5.arrow")
	if err := os.WriteFile(bad, []byte("not a log"), 0o644); err != nil {
		t.Fatal(err)
	}
	err = run(context.Background(), append(args, "-reuse"), io.Discard)
	if err == nil || !strings.Contains(err.Error(), bad) {
		t.Errorf("a damaged log read back gave %v, want an error naming %s", err, bad)
	}
}
