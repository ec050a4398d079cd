//go:build measure

package train

import (
	"context"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dualcrf/dualcrf/duals"
	"github.com/dualcrf/dualcrf/tables"
)

// TestCompactDualsMeasure is the measurement, built only with the measure
// tag, on the feature table DUALCRF_COMPACT_TABLE names:
//
//	DUALCRF_COMPACT_TABLE=train.arrow DUALCRF_COMPACT_EPOCHS=40 \
//	  DUALCRF_COMPACT_MODES=float64,float32,bf16,bf16all,f16,u16 \
//	  go test -tags measure ./train -run TestCompactDualsMeasure -v -timeout 0
//
// It trains SDCA-GAP (seed 1, λ = 1/n) once per mode, alternating the
// modes epoch by epoch, certifies every epoch (ŵ(μ) and D(μ) from the
// duals as stored) and prints one line per mode and epoch: the certified
// gap, P, D, the gap identity's residual and the epoch's wall time. D
// above the best float64 primal would be a certificate claiming too much.
func TestCompactDualsMeasure(t *testing.T) {
	path := os.Getenv("DUALCRF_COMPACT_TABLE")
	if path == "" {
		t.Fatal("set DUALCRF_COMPACT_TABLE to a feature table to measure the duals' precisions")
	}
	epochs := 40
	if s := os.Getenv("DUALCRF_COMPACT_EPOCHS"); s != "" {
		var err error
		if epochs, err = strconv.Atoi(s); err != nil {
			t.Fatal(err)
		}
	}
	modes := []string{"float64", "float32", "bf16", "bf16all", "f16", "u16"}
	if s := os.Getenv("DUALCRF_COMPACT_MODES"); s != "" {
		modes = strings.Split(s, ",")
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	ft, err := tables.ReadFeatureTable(f, path, tables.FeatureReadOptions{SkipText: true})
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	type run struct {
		mode string
		m    *SDCA
		p    *Problem
	}
	var runs []run
	for _, mode := range modes {
		p, err := NewProblem(ft.Data, 1/float64(ft.Data.Len()), false)
		if err != nil {
			t.Fatal(err)
		}
		s, err := NewSampler(DefaultSampler, p.N(), SamplerOptions{})
		if err != nil {
			t.Fatal(err)
		}
		m := &SDCA{Sampler: s, Seed: 1}
		switch mode {
		case "float64", "float32":
			if m.DualPrecision, err = duals.ParsePrecision(mode); err != nil {
				t.Fatal(err)
			}
		case "bf16", "bf16all", "f16", "u16":
			m.Duals = newStore16(ft.Data, mode)
		default:
			t.Fatalf("mode %q", mode)
		}
		if err := m.Init(p); err != nil {
			t.Fatal(err)
		}
		runs = append(runs, run{mode, m, p})
		fmt.Printf("compact %s: n=%d K=%d entries=%d\n", mode, p.N(), p.Layout.NumLabels, duals.Entries(ft.Data))
	}
	for e := 1; e <= epochs; e++ {
		for _, r := range runs {
			t0 := time.Now()
			if err := r.m.Epoch(ctx); err != nil {
				t.Fatal(err)
			}
			wall := time.Since(t0)
			w, err := r.p.What(r.m.duals)
			if err != nil {
				t.Fatal(err)
			}
			pr, err := r.p.pass(ctx, w, r.m.duals, false)
			if err != nil {
				t.Fatal(err)
			}
			fmt.Printf("compact %-7s epoch %3d gap %.4e P %.12f D %.12f resid %.2e wall %.2fs\n",
				r.mode, e, pr.Primal-pr.Dual, pr.Primal, pr.Dual, math.Abs(pr.Primal-pr.Dual-pr.MeanGap), wall.Seconds())
		}
	}
}
