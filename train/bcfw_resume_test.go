package train

import (
	"context"
	"errors"
	"testing"
)

// bcfwResumeRun trains p by BCFW (gap sampling, refreshes every second
// epoch) from the newest snapshot in dir, or afresh when dir has none.
func bcfwResumeRun(t *testing.T, p *Problem, set Settings, dir string, ctx context.Context) (*Result, error) {
	t.Helper()
	m := &BCFW{Seed: 7, Sampler: kindSampler(t, SamplerGap, p)}
	set.Checkpoint = func(pr Progress) (string, error) { return SaveBCFWCheckpoint(dir, m, pr) }
	if len(snapshotNames(dir)) > 0 {
		c, err := LoadCheckpoint(dir, p, func(s string) { t.Log(s) })
		if err != nil {
			t.Fatal(err)
		}
		defer c.Duals.Close()
		set.Resume = c
	}
	return Train(ctx, p, set, m)
}

// TestBCFWInterruptResumesBitIdentical cancels BCFW training inside an
// epoch at an exact step, before a certificate, during a checkpoint write
// and between epochs, resumes from the snapshot written on the way out,
// and requires the final weights, certificate and log of the
// uninterrupted run bit for bit; an SDCA run refuses BCFW's snapshot.
func TestBCFWInterruptResumesBitIdentical(t *testing.T) {
	p := randomProblem(t, 61, 600, 4, 15, 3, true, 0)
	set := Settings{MaxEpochs: 5, GapTol: 1e-300, GapEvery: 2, CheckpointEvery: 1, RefreshEvery: 2}
	full, err := bcfwResumeRun(t, p, set, t.TempDir(), context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		phase string
		ep    int
		calls int // cancel at once (0) or on the calls-th check of ctx.Err after it
		at    Position
	}{
		{"cert-0", PhaseCertificate, 0, 0, Position{Pending: true}},
		{"epoch-1-start", PhaseEpoch, 1, 0, Position{}},
		{"epoch-1-step256", PhaseEpoch, 1, 2, Position{Step: 256}},
		{"epoch-2-step512", PhaseEpoch, 2, 3, Position{Epoch: 1, Step: 512}},
		{"ckpt-2", PhaseCheckpoint, 2, 0, Position{Epoch: 2}},
		{"cert-4", PhaseCertificate, 4, 0, Position{Epoch: 4, Pending: true}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			cc := &countingCtx{Context: ctx, cancel: cancel, at: -1}
			s := set
			s.Phase = func(ph string, ep int) {
				if ph == c.phase && ep == c.ep {
					if c.calls == 0 {
						cancel()
					}
					cc.calls, cc.at = 0, c.calls
				}
			}
			_, err := bcfwResumeRun(t, p, s, dir, cc)
			var ie *InterruptedError
			if !errors.As(err, &ie) || ie.At != c.at || ie.Snapshot == "" {
				t.Fatalf("interrupted run: %v (at %+v, want %+v)", err, ie, c.at)
			}
			res, err := bcfwResumeRun(t, p, set, dir, context.Background())
			if err != nil {
				t.Fatal(err)
			}
			sameBits(t, "resumed vs uninterrupted", full.Weights, res.Weights)
			if res.Last.Primal != full.Last.Primal || res.Last.Gap != full.Last.Gap || res.Epochs != full.Epochs ||
				len(res.Records) != len(full.Records) {
				t.Fatalf("resumed %+v after %d epochs, uninterrupted %+v after %d", res.Last, res.Epochs, full.Last, full.Epochs)
			}
			for i, r := range res.Records {
				f := full.Records[i]
				if r.Certified != f.Certified || r.Steps != f.Steps || (r.Certified && (r.Primal != f.Primal || r.Gap != f.Gap)) {
					t.Fatalf("record %d: %+v, uninterrupted %+v", i, r, f)
				}
			}
			ck, err := LoadCheckpoint(dir, p, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer ck.Duals.Close()
			var se *SettingsError
			if err := ck.CheckSettings(p, set, &SDCA{Seed: 7}); !errors.As(err, &se) || se.Field != "Solver" {
				t.Fatalf("SDCA resuming a BCFW snapshot: %v", err)
			}
		})
	}
}
