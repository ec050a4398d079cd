package train

import (
	"context"
	"errors"
	"github.com/dualcrf/dualcrf/option"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// bcfwResumeRun trains p by BCFW (gap sampling, refreshes every second
// epoch) from the newest snapshot in dir, or afresh when dir has none.
func bcfwResumeRun(t *testing.T, p *Problem, set Settings, dir string, ctx context.Context, avg bool) (*Result, error) {
	t.Helper()
	m := &BCFW{Seed: 7, Sampler: kindSampler(t, SamplerGap, p), NoAverage: !avg}
	set.Checkpoint = func(pr Progress) (string, error) { return SaveCheckpoint(dir, m, pr) }
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
// uninterrupted run bit for bit, with and not averaging; an SDCA run
// refuses BCFW's snapshot.
func TestBCFWInterruptResumesBitIdentical(t *testing.T) {
	for _, avg := range []bool{false, true} {
		t.Run(map[bool]string{false: "plain", true: "average"}[avg], func(t *testing.T) { testBCFWInterrupt(t, avg) })
	}
}

func testBCFWInterrupt(t *testing.T, avg bool) {
	p := randomProblem(t, 61, 600, 4, 15, 3, true, 0)
	set := Settings{MaxEpochs: 5, GapTol: 1e-300, GapEvery: 2, CheckpointEvery: 1, RefreshEvery: 2}
	full, err := bcfwResumeRun(t, p, set, t.TempDir(), context.Background(), avg)
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
			_, err := bcfwResumeRun(t, p, s, dir, cc, avg)
			var ie *InterruptedError
			if !errors.As(err, &ie) || ie.At != c.at || ie.Snapshot == "" {
				t.Fatalf("interrupted run: %v (at %+v, want %+v)", err, ie, c.at)
			}
			res, err := bcfwResumeRun(t, p, set, dir, context.Background(), avg)
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
			var oe *option.Error
			if err := ck.CheckSettings(p, set, &SDCA{Seed: 7}); !errors.As(err, &oe) || oe.Field != "Method" || oe.Value != "sdca" {
				t.Fatalf("SDCA resuming a BCFW snapshot: %v", err)
			}
		})
	}
}

// TestBCFWResumeAverageRefusals checks that a snapshot's averaged weights
// are verified and must match the run's averaging: a run not averaging
// refuses a snapshot with them, a run with it refuses one without, and a
// damaged average.bin is refused by its name.
func TestBCFWResumeAverageRefusals(t *testing.T) {
	p := randomProblem(t, 62, 200, 4, 10, 3, true, 0)
	set := Settings{MaxEpochs: 2, GapTol: 1e-300, GapEvery: 1, CheckpointEvery: 1}
	resume := func(dir string, avg bool) error {
		c, err := LoadCheckpoint(dir, p, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Duals.Close()
		s := set
		s.MaxEpochs, s.Resume = 3, c
		_, err = Train(context.Background(), p, s, &BCFW{Seed: 7, Sampler: kindSampler(t, SamplerGap, p), NoAverage: !avg})
		return err
	}
	plain, withAvg := t.TempDir(), t.TempDir()
	for dir, avg := range map[string]bool{plain: false, withAvg: true} {
		if _, err := bcfwResumeRun(t, p, set, dir, context.Background(), avg); err != nil {
			t.Fatal(err)
		}
	}
	if err := resume(plain, true); err == nil || !strings.Contains(err.Error(), "no averaged weights") {
		t.Fatalf("an averaging run resuming a snapshot without w̄: %v", err)
	}
	if err := resume(withAvg, false); err == nil || !strings.Contains(err.Error(), "holds averaged weights;") {
		t.Fatalf("a run with NoAverage resuming a snapshot with w̄: %v", err)
	}
	cur, err := os.ReadFile(filepath.Join(withAvg, "CURRENT"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(withAvg, strings.TrimSpace(string(cur)), "average.bin")
	for name, damage := range map[string]func([]byte) []byte{
		"flipped": func(b []byte) []byte { b[3] ^= 1; return b },
		"short":   func(b []byte) []byte { return b[:len(b)-8] },
	} {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		good := slices.Clone(b)
		if err := os.WriteFile(path, damage(b), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := resume(withAvg, true); err == nil || !strings.Contains(err.Error(), "average.bin") {
			t.Fatalf("%s average.bin: %v", name, err)
		}
		if err := os.WriteFile(path, good, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := resume(withAvg, true); err != nil {
		t.Fatalf("the restored snapshot: %v", err)
	}
}
