package train

import (
	"strings"
	"testing"
)

// TestCheckSettingsNamesRealFlags: a resume refused for a setting that is
// no flag of its own says what it is — the block count of streamed duals
// (it named a flag --duals-blocks, which does not exist), the bias
// (--no-bias, not --bias false).
func TestCheckSettingsNamesRealFlags(t *testing.T) {
	for _, c := range []struct {
		snap, run map[string]string
		want      string
	}{
		{map[string]string{"duals-blocks": "4"}, map[string]string{"duals-blocks": "5"},
			"made with streamed duals in 4 blocks (their size follows the memory budget, --memory-budget or half of physical memory, and the rest of the run), this run has streamed duals in 5 blocks"},
		{map[string]string{"bias": "true"}, map[string]string{"bias": "false"},
			"made with the bias features (no --no-bias), this run has --no-bias"},
		{map[string]string{"seed": "1"}, map[string]string{"seed": "1", "duals-blocks": "3"},
			"made with duals-blocks (not recorded), this run has streamed duals in 3 blocks"},
	} {
		ck := &Checkpoint{Dir: "ck", State: CheckpointState{Settings: c.snap}}
		err := ck.CheckSettings(c.run)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "--duals-blocks") || strings.Contains(err.Error(), "--bias") {
			t.Errorf("%v → %v: %v, want %q", c.snap, c.run, err, c.want)
		}
	}
}
