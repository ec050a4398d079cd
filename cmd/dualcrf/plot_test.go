package main

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/dualcrf/dualcrf/plots"
)

// certifiedEpochs lists the certified epochs of the training log at path.
func certifiedEpochs(t *testing.T, path string) []int {
	t.Helper()
	run, err := plots.ReadRun(path, "run")
	if err != nil {
		t.Fatal(err)
	}
	var eps []int
	for _, r := range run.Rows {
		if r.Gap == r.Gap {
			eps = append(eps, r.Epoch)
		}
	}
	return eps
}

// TestTrainPlotCertifiesEveryEpoch: train --plot certifies every epoch,
// so that its figure has a point per epoch; an explicit --gap-every keeps
// its policy (0: the initial point and the last epoch only, here).
func TestTrainPlotCertifiesEveryEpoch(t *testing.T) {
	f := fixtures(t)
	dir := t.TempDir()
	common := []string{"train", "-q", "--max-epochs", "4", "--gap-tol", "1e-9"}
	mustRun(t, dir, append(common, "--plot", "fit.png", "--log", "every.arrow", "-o", "m1.arrow", f.train)...)
	if got := fmt.Sprint(certifiedEpochs(t, filepath.Join(dir, "every.arrow"))); got != "[0 1 2 3 4]" {
		t.Errorf("train --plot certified epochs %s, want all of 0…4", got)
	}
	mustRun(t, dir, append(common, "--plot", "fit.svg", "--gap-every", "0", "--log", "policy.arrow", "-o", "m2.arrow", f.train)...)
	if got := fmt.Sprint(certifiedEpochs(t, filepath.Join(dir, "policy.arrow"))); got != "[0 4]" {
		t.Errorf("train --plot --gap-every 0 certified epochs %s, want [0 4]", got)
	}
}
