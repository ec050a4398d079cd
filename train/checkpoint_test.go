package train

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dualcrf/dualcrf/duals"
	"github.com/dualcrf/dualcrf/option"
)

// TestResumeIsBitIdentical runs 6 epochs in one go and 3 + 3 with a
// checkpoint in between; the weights must be equal bit for bit.
func TestResumeIsBitIdentical(t *testing.T) {
	p := randomProblem(t, 51, 40, 6, 15, 3, true, 0)
	ctx := context.Background()
	set := Settings{MaxEpochs: 6, GapTol: 1e-300, GapEvery: 2}
	full, err := Train(ctx, p, set, &SDCA{Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	m := &SDCA{Seed: 5}
	first := set
	first.MaxEpochs = 3
	first.CheckpointEvery = 1
	first.Checkpoint = saver(dir, m)
	if _, err := Train(ctx, p, first, m); err != nil {
		t.Fatal(err)
	}
	if got := snapshotNames(dir); len(got) != keepSnapshots || got[0] != "ckpt-000003" {
		t.Fatalf("snapshots %v, want the newest %d ending with ckpt-000003", got, keepSnapshots)
	}
	c, err := LoadCheckpoint(dir, p, func(s string) { t.Error(s) })
	if err != nil {
		t.Fatal(err)
	}
	defer c.Duals.Close()
	if c.state.Epoch != 3 {
		t.Fatalf("resumed at epoch %d, want 3", c.state.Epoch)
	}
	second := set
	second.Resume = c
	res, err := Train(ctx, p, second, &SDCA{Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	if res.Epochs != 6 {
		t.Fatalf("resumed run ended at epoch %d", res.Epochs)
	}
	for j, w := range full.Weights {
		if math.Float64bits(w) != math.Float64bits(res.Weights[j]) {
			t.Fatalf("weight %d: uninterrupted %.17g, resumed %.17g", j, w, res.Weights[j])
		}
	}
}

// TestCheckpointRefusals checks that damaged snapshots are refused with a
// reason and the previous one is used, and that wrong directories and
// datasets are refused.
func TestCheckpointRefusals(t *testing.T) {
	p := randomProblem(t, 52, 20, 5, 10, 3, false, 0)
	ctx := context.Background()
	dir := t.TempDir()
	m := &SDCA{Seed: 1}
	set := Settings{MaxEpochs: 2, GapTol: 1e-300, CheckpointEvery: 1,
		Checkpoint: saver(dir, m)}
	if _, err := Train(ctx, p, set, m); err != nil {
		t.Fatal(err)
	}
	// Corrupt the newest snapshot's weights: the older one must be used.
	wpath := filepath.Join(dir, "ckpt-000002", "weights.bin")
	b, _ := os.ReadFile(wpath)
	b[10] ^= 0xff
	os.WriteFile(wpath, b, 0o644)
	var warnings []string
	c, err := LoadCheckpoint(dir, p, func(s string) { warnings = append(warnings, s) })
	if err != nil {
		t.Fatal(err)
	}
	c.Duals.Close()
	if c.state.Epoch != 1 || len(warnings) != 1 || !strings.Contains(warnings[0], "checksum") {
		t.Fatalf("loaded epoch %d with warnings %q; want epoch 1 after refusing the corrupt one", c.state.Epoch, warnings)
	}
	// Duals that no longer match the weights are refused too.
	dpath := filepath.Join(dir, "ckpt-000001", "duals.bin")
	fs, err := duals.OpenFile(dpath, p.Data)
	if err != nil {
		t.Fatal(err)
	}
	blk := loadBlock(fs, 3)
	blk[0], blk[1] = blk[1], blk[0]+1e-3
	blk[2] -= 1e-3
	fs.Put(3, blk)
	fs.Close()
	if _, err := LoadCheckpoint(dir, p, nil); !errors.Is(err, ErrNoCheckpoint) || !strings.Contains(err.Error(), "duals.bin: CRC-32C") {
		t.Fatalf("tampered duals: %v", err)
	}
	// Not a checkpoint directory; another dataset.
	if _, err := LoadCheckpoint(t.TempDir(), p, nil); !errors.Is(err, ErrNoCheckpoint) {
		t.Fatalf("empty directory: %v", err)
	}
	dir2 := t.TempDir()
	m2 := &SDCA{Seed: 1}
	set.Checkpoint = saver(dir2, m2)
	if _, err := Train(ctx, p, set, m2); err != nil {
		t.Fatal(err)
	}
	other := randomProblem(t, 53, 20, 5, 10, 3, false, 0)
	if _, err := LoadCheckpoint(dir2, other, nil); err == nil || !strings.Contains(err.Error(), "another dataset") {
		t.Fatalf("other dataset: %v", err)
	}
}

// TestCheckpointOnCancel checks that cancelling training writes a snapshot
// before returning the context's error.
func TestCheckpointOnCancel(t *testing.T) {
	p := randomProblem(t, 54, 30, 5, 10, 3, false, 0)
	ctx, cancel := context.WithCancel(context.Background())
	dir := t.TempDir()
	m := &SDCA{Seed: 1}
	set := Settings{MaxEpochs: 50, GapTol: 1e-300,
		Record: func(r EpochRecord) error {
			if r.Epoch == 2 {
				cancel()
			}
			return nil
		},
		Checkpoint: saver(dir, m)}
	var ie *InterruptedError
	if _, err := Train(ctx, p, set, m); !errors.Is(err, context.Canceled) || !errors.As(err, &ie) {
		t.Fatalf("err %v, want an *InterruptedError context.Canceled", err)
	}
	c, err := LoadCheckpoint(dir, p, nil)
	if err != nil {
		t.Fatal(err)
	}
	c.Duals.Close()
	if c.state.Epoch != 2 || c.state.Step != 0 || c.state.Pending || ie.At != (Position{Epoch: 2}) {
		t.Fatalf("snapshot at %+v after %+v, want epoch 2 (cancelled while recording epoch 2)", c.state, ie)
	}
}

// saver returns a Settings.Checkpoint writing m's snapshots into dir.
func saver(dir string, m *SDCA) func(Progress) (string, error) {
	return func(pr Progress) (string, error) { return SaveCheckpoint(dir, m, pr) }
}

// TestResumeWithRefresh resumes, with one call (Settings.Resume), a run
// whose gap estimates the driver refreshes every second epoch, from the
// snapshot after epoch 2 — where the next epoch starts with a refresh —
// and requires the weights of the uninterrupted run bit for bit; a run
// without the refresh ends elsewhere (so the refresh did happen). Resuming
// with another refresh period is refused, naming it; and the policies a
// method cannot carry out are refused.
func TestResumeWithRefresh(t *testing.T) {
	p := randomProblem(t, 55, 40, 6, 15, 3, false, 0)
	ctx := context.Background()
	set := Settings{MaxEpochs: 5, GapTol: 1e-300, GapEvery: 2, RefreshEvery: 2}
	imp := func() *SDCA { return &SDCA{Seed: 6, Sampler: kindSampler(t, SamplerGapImportance, p)} }
	full, err := Train(ctx, p, set, imp())
	if err != nil {
		t.Fatal(err)
	}
	plain := set
	plain.RefreshEvery = 0
	none, err := Train(ctx, p, plain, imp())
	if err != nil {
		t.Fatal(err)
	}
	if slices.Equal(none.Weights, full.Weights) {
		t.Fatal("the same weights with and without the refresh")
	}
	dir := t.TempDir()
	m := imp()
	first := set
	first.MaxEpochs, first.CheckpointEvery, first.Checkpoint = 2, 1, saver(dir, m)
	if _, err := Train(ctx, p, first, m); err != nil {
		t.Fatal(err)
	}
	c, err := LoadCheckpoint(dir, p, func(s string) { t.Error(s) })
	if err != nil {
		t.Fatal(err)
	}
	defer c.Duals.Close()
	if c.state.Epoch != 2 || c.state.Settings.RefreshEvery != 2 {
		t.Fatalf("snapshot at epoch %d with settings %v", c.state.Epoch, c.state.Settings)
	}
	second := set
	second.Resume = c
	res, err := Train(ctx, p, second, imp())
	if err != nil {
		t.Fatal(err)
	}
	sameBits(t, "resumed with refresh vs uninterrupted", full.Weights, res.Weights)

	other := second
	other.RefreshEvery = 3
	if _, err := Train(ctx, p, other, imp()); !isSettingsError(err, "RefreshEvery", "2", "3") {
		t.Fatalf("resume with another refresh period: %v", err)
	}
	for _, s := range []Settings{{RefreshEvery: 1}, {Resume: c}, {RefreshEvery: -1}} {
		if _, err := Train(ctx, p, s, &LBFGS{}); !errors.Is(err, ErrSettings) {
			t.Fatalf("L-BFGS with %+v: %v, want ErrSettings", s, err)
		}
	}
	if _, err := SaveCheckpoint(t.TempDir(), m, Progress{}); err == nil || !strings.Contains(err.Error(), "no run settings") {
		t.Fatalf("a snapshot without the run's settings: %v", err)
	}
}

// TestCheckFreshAndRemoveSnapshots: a directory is fresh when it is
// missing or holds no snapshot and no CURRENT; RemoveSnapshots removes
// the snapshots, CURRENT and the streamed duals named, and nothing else.
func TestCheckFreshAndRemoveSnapshots(t *testing.T) {
	dir := t.TempDir()
	if err := CheckFresh(filepath.Join(dir, "missing")); err != nil {
		t.Errorf("missing directory: %v", err)
	}
	if err := CheckFresh(dir); err != nil {
		t.Errorf("empty directory: %v", err)
	}
	os.WriteFile(filepath.Join(dir, "LOCK"), nil, 0o644)
	os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("mine"), 0o644)
	os.WriteFile(filepath.Join(dir, "CURRENT"), []byte("ckpt-000002\n"), 0o644)
	err := CheckFresh(dir)
	// The advice names the option; a command renders it as its flag.
	var oe *option.Error
	if !errors.Is(err, ErrCheckpointExists) || !strings.Contains(err.Error(), "Resume "+dir) ||
		!errors.As(err, &oe) || !strings.Contains(oe.Format(func(f string) string { return "--" + strings.ToLower(f) }), "--resume "+dir) {
		t.Errorf("CURRENT alone: %v", err)
	}
	for _, n := range []string{"ckpt-000001", "ckpt-000002"} {
		os.Mkdir(filepath.Join(dir, n), 0o755)
		os.WriteFile(filepath.Join(dir, n, "state.json"), []byte("{}"), 0o644)
	}
	if err := CheckFresh(dir); err == nil || !strings.Contains(err.Error(), "newest ckpt-000002") {
		t.Errorf("two snapshots: %v", err)
	}
	stream := filepath.Join(dir, "duals.stream")
	os.WriteFile(stream, []byte("μ"), 0o644)
	if err := RemoveSnapshots(dir, stream); err != nil {
		t.Fatal(err)
	}
	ents, _ := os.ReadDir(dir)
	var left []string
	for _, e := range ents {
		left = append(left, e.Name())
	}
	if strings.Join(left, " ") != "LOCK notes.txt" {
		t.Errorf("left %v, want LOCK and notes.txt", left)
	}
	if err := CheckFresh(dir); err != nil {
		t.Errorf("after RemoveSnapshots: %v", err)
	}
}
