package train

import (
	"fmt"
	"path/filepath"
	"testing"
)

// TestSchedulerChoice: Init runs the sequential scheduler for one worker,
// the ordered (parallel) one for more or for a round size, the
// asynchronous one when asked, and the streamed one on a streamed store; a run of each keeps the run's position and counters.
func TestSchedulerChoice(t *testing.T) {
	p := randomProblem(t, 5, 40, 6, 12, 3, true, 0)
	stream := newStream(t, p, filepath.Join(t.TempDir(), "duals.stream"), 2048, 0)
	for _, c := range []struct {
		m    *SDCA
		want string
	}{
		{&SDCA{Seed: 1, Workers: 1}, "*train.sequential"},
		{&SDCA{Seed: 1, Workers: 2, RoundSize: 4}, "*train.ordered"},
		{&SDCA{Seed: 1, Workers: 1, RoundSize: 4}, "*train.ordered"},
		{&SDCA{Seed: 1, Workers: 2, Async: AsyncAtomic}, "*train.async"},
		{&SDCA{Seed: 1, Duals: stream}, "*train.streamed"},
	} {
		if c.m.Async != "" && raceDetector {
			continue // asynchronous steps race by design (async_test.go)
		}
		if err := c.m.Init(p); err != nil {
			t.Fatal(err)
		}
		if got := fmt.Sprintf("%T", c.m.sched); got != c.want {
			t.Errorf("Workers %d, Duals %T: scheduler %s, want %s", c.m.Workers, c.m.Duals, got, c.want)
		}
		if err := c.m.Epoch(t.Context()); err != nil {
			t.Fatal(err)
		}
		if c.m.epoch != 1 || c.m.pos != 0 || c.m.Counters().Steps != int64(p.N()) {
			t.Errorf("%s: after an epoch at epoch %d step %d with %d steps, want 1, 0, %d",
				c.want, c.m.epoch, c.m.pos, c.m.Counters().Steps, p.N())
		}
	}
}
