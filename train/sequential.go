package train

import (
	"context"
	"fmt"
)

// scheduler runs the epochs of an SDCA run: which sentences its steps
// take, in what order, and on which weights. setup chooses one: sequential
// (in memory, one stepper), ordered (workers in rounds, ordered.go) or
// streamed (block by block through a streamed store, sdca_stream.go).
type scheduler interface {
	// start takes the point the run is at after Init or a resume: SDCA's
	// weights and sampler.
	start()
	// epoch runs an epoch, or the rest of one interrupted before, keeping
	// SDCA's position; when ctx is cancelled it returns ctx's error at a
	// point a checkpoint can hold.
	epoch(ctx context.Context) error
	// save records the scheduler's position in a checkpoint's state at
	// step SDCA.pos of the epoch; restore takes it back.
	save(st *checkpointState) error
	restore(st checkpointState) error
	// refresh hands the sampler(s) every sentence's exact gap; estimate
	// returns the running mean gap estimate; samplerState the sampler state
	// of the whole run.
	refresh(gaps []float64)
	estimate() float64
	samplerState() SamplerState
}

// oneSampler is the part of a scheduler whose steps all draw from SDCA's
// sampler (sequential, streamed).
type oneSampler struct{ m *SDCA }

func (o oneSampler) refresh(gaps []float64)     { o.m.sampler.Refresh(gaps) }
func (o oneSampler) estimate() float64          { return o.m.sampler.Estimate() }
func (o oneSampler) samplerState() SamplerState { return o.m.sampler.State() }

// sequential is the SDCA of the paper: n steps per epoch on the run's
// weights, each sentence drawn from the sampler.
type sequential struct {
	oneSampler
	next int // the sentence drawn for step pos (when pos > 0)
}

func (s *sequential) start() {}

// epoch returns, when ctx is cancelled, between two steps (every 256
// steps, or before the first sentence is drawn at an epoch's start), with
// the sentence already drawn kept for the checkpoint.
func (s *sequential) epoch(ctx context.Context) error {
	m := s.m
	d := &draws{sampler: m.sampler, rng: m.rng}
	n := m.p.N()
	i := s.next
	if m.pos == 0 {
		if err := ctx.Err(); err != nil {
			return err
		}
		i = m.sampler.Next(m.rng)
	}
	// Each step but the epoch's last hands its block gap to the sampler and
	// draws the next sentence as soon as the gap is known — the sampler sees
	// the same calls in the same order as Update-after-Step, Next-before-Step
	// — so that the next sentence's weight rows are fetched while this step
	// finishes.
	for k := m.pos; k < n; k++ {
		if k&255 == 0 && k > 0 {
			m.live.Store(int64(k))
			if ctx.Err() != nil {
				m.pos, s.next = k, i
				return ctx.Err()
			}
		}
		if k == n-1 {
			st, _ := m.st.step(d, i, false)
			m.sampler.Update(i, st.Gap)
			break
		}
		_, i = m.st.step(d, i, true)
	}
	s.next = -1
	m.endEpoch()
	return nil
}

// save records the sentence drawn for the next step.
func (s *sequential) save(st *checkpointState) error {
	if s.m.pos > 0 {
		st.Next = s.next
	}
	return nil
}

// restore takes back the sentence drawn for the next step; a snapshot of
// another schedule is refused.
func (s *sequential) restore(st checkpointState) error {
	if st.Schedule != "" || st.Workers > 1 {
		return errSchedule(st, ScheduleSequential)
	}
	s.next = st.Next
	return nil
}

// errSchedule refuses to resume a snapshot made by another schedule than
// this run's (the settings check names the setting first; this is its
// last line of defence).
func errSchedule(st checkpointState, now string) error {
	was := st.Schedule
	switch {
	case was == "" && st.Workers > 1:
		was = fmt.Sprintf("an earlier version's parallel SDCA (%d workers)", st.Workers)
	case was == "":
		was = ScheduleSequential
	}
	return fmt.Errorf("resume: the snapshot was made by the %s schedule, this run has %s", was, now)
}
