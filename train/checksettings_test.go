package train

import (
	"errors"
	"strings"
	"testing"
)

// TestCheckSettingsNamesWorkers: a resume with another worker count names
// --workers (a sequential run records neither it nor the round length), and
// equal settings, with the sequential run's workers left out, pass.
func TestCheckSettingsNamesWorkers(t *testing.T) {
	seq := map[string]string{"seed": "1", "sampler": "gap"}
	par := map[string]string{"seed": "1", "sampler": "gap", "workers": "2", "round-steps": "64"}
	for _, c := range []struct {
		name      string
		snap, run map[string]string
		want      string // "" for success
	}{
		{"same sequential", seq, seq, ""},
		{"same parallel", par, par, ""},
		{"explicit one worker", seq, map[string]string{"seed": "1", "sampler": "gap", "workers": "1"}, ""},
		{"sequential, resumed with two", seq, par, "made with --workers 1, this run has --workers 2"},
		{"two, resumed sequential", par, seq, "made with --workers 2, this run has --workers 1"},
		{"other round", par, map[string]string{"seed": "1", "sampler": "gap", "workers": "2", "round-steps": "16"},
			"made with --round-steps 64, this run has --round-steps 16"},
		{"other seed", seq, map[string]string{"seed": "2", "sampler": "gap"}, "made with --seed 1, this run has --seed 2"},
	} {
		ck := &Checkpoint{Dir: "ck/ckpt-000002", State: CheckpointState{Settings: c.snap}}
		err := ck.CheckSettings(c.run)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.want != "" && (err == nil || !errors.Is(err, ErrResumeSettings) || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: error %v, want one saying %q", c.name, err, c.want)
		}
	}
}
