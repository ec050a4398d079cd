package train

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dualcrf/dualcrf/option"
)

// isSettingsError reports whether err is a refused resume about the option
// that sets run setting field (resumeSetting), with this run's value now
// and the checkpoint's was in its message.
func isSettingsError(err error, field, was, now string) bool {
	var oe *option.Error
	return errors.Is(err, ErrResumeSettings) && errors.As(err, &oe) &&
		oe.Field == resumeSetting(field) && oe.Value == now && strings.Contains(oe.Msg, "{"+oe.Field+"} "+was+":")
}

// TestCheckSettingsNamesWorkers: a resume with another round size names
// the round size, and equal settings pass (the rounds record no workers:
// any number continues them); TestCheckSettingsInWords has the schedules.
func TestCheckSettingsNamesWorkers(t *testing.T) {
	seq := RunSettings{Version: settingsVersion, Seed: 1, Sampler: "gap", Workers: 1}
	par := RunSettings{Version: settingsVersion, Seed: 1, Sampler: "gap", Schedule: ScheduleRounds, RoundSize: 64}
	async := RunSettings{Version: settingsVersion, Seed: 1, Sampler: "gap", Schedule: ScheduleAsyncAtomic}
	with := func(rs RunSettings, f func(*RunSettings)) RunSettings { f(&rs); return rs }
	for _, c := range []struct {
		name           string
		snap, run      RunSettings
		field, was, is string // field "" for success
		words          string
	}{
		{name: "same sequential", snap: seq, run: seq},
		{name: "same parallel", snap: par, run: par},
		{name: "same asynchronous", snap: async, run: async},
		{"other round", par, with(par, func(rs *RunSettings) { rs.RoundSize = 16 }), "RoundSize", "64", "16",
			"SDCA.RoundSize 16: ck/ckpt-000002 was made with SDCA.RoundSize 64"},
		{"other seed", seq, with(seq, func(rs *RunSettings) { rs.Seed = 2 }), "Seed", "1", "2", "SDCA.Seed 2: ck/ckpt-000002 was made with SDCA.Seed 1"},
	} {
		ck := &Checkpoint{Dir: "ck/ckpt-000002", state: checkpointState{Settings: c.snap}}
		err := ck.checkSettings(c.run)
		switch {
		case c.field == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.field != "" && (!isSettingsError(err, c.field, c.was, c.is) || !strings.Contains(err.Error(), c.words)):
			t.Errorf("%s: error %v, want one saying %q", c.name, err, c.words)
		}
	}
}

// TestCheckSettingsInWords: a refused resume of a setting no option sets
// alone says what it is in words, naming the options that bear on it as
// {Field} (a program renders them in its own words): the block count of
// streamed duals, which follows from the budget, the bias, and the
// schedule of the steps (sequential, the rounds, asynchronous, an earlier
// version's rounds), which the workers, the round size and the
// asynchronous option set together.
func TestCheckSettingsInWords(t *testing.T) {
	seqRS := RunSettings{Version: settingsVersion, Seed: 1, Sampler: "gap", Workers: 1}
	parRS := RunSettings{Version: settingsVersion, Seed: 1, Sampler: "gap", Schedule: ScheduleRounds, RoundSize: 64}
	oldRS := RunSettings{Version: settingsVersion, Seed: 1, Sampler: "gap", Workers: 2, RoundSteps: 2}
	asyncRS := RunSettings{Version: settingsVersion, Seed: 1, Sampler: "gap", Schedule: ScheduleAsyncAtomic}
	for _, c := range []struct {
		snap, run RunSettings
		field     string
		want      string
	}{
		{RunSettings{DualsBlocks: 4}, RunSettings{DualsBlocks: 5}, "DualsBlocks",
			"ck was made with streamed duals in 4 blocks (their size follows the memory budget, {MemoryBudget} or half of physical memory, and the rest of the run), this run has streamed duals in 5 blocks"},
		{RunSettings{Bias: true}, RunSettings{Bias: false}, "Bias", "ck was made with the bias features (no {NoBias}), this run has {NoBias}"},
		{seqRS, parRS, "Schedule", "ck was made with the sequential SDCA ({SDCA.Workers} 1), this run has the rounds of the parallel SDCA (the default, or {SDCA.RoundSize})"},
		{parRS, seqRS, "Schedule", "ck was made with the rounds of the parallel SDCA (the default, or {SDCA.RoundSize}), this run has the sequential SDCA ({SDCA.Workers} 1)"},
		{parRS, asyncRS, "Schedule", "this run has asynchronous steps ({SDCA.Async} atomic)"},
		{oldRS, parRS, "Schedule", "ck was made with the schedule of the steps an earlier version's parallel rounds (2 workers, 2 steps each), this run has the rounds"},
		{RunSettings{Seed: 1}, RunSettings{Seed: 1, DualsBlocks: 3}, "DualsBlocks", "made with duals not streamed, this run has streamed duals in 3 blocks"},
	} {
		ck := &Checkpoint{Dir: "ck", state: checkpointState{Settings: c.snap}}
		err := ck.checkSettings(c.run)
		var oe *option.Error
		if !errors.As(err, &oe) || oe.Field != "" || !errors.Is(err, ErrResumeSettings) || !strings.Contains(oe.Msg, c.want) || strings.Contains(err.Error(), "--") {
			t.Errorf("%+v → %+v: %v, want %q", c.snap, c.run, err, c.want)
		}
	}
}

// TestOldSettingsRefused: a snapshot whose state.json an earlier version
// wrote, with the run settings by the command's flag names, is refused
// with a message that says so and what to do.
func TestOldSettingsRefused(t *testing.T) {
	p := randomProblem(t, 41, 30, 6, 12, 3, true, 0)
	dir := t.TempDir()
	m := &SDCA{Seed: 7}
	if _, err := Train(context.Background(), p, Settings{MaxEpochs: 1, CheckpointEvery: 1, Checkpoint: saver(dir, m)}, m); err != nil {
		t.Fatal(err)
	}
	names := Snapshots(dir)
	if len(names) == 0 {
		t.Fatal("no snapshot written")
	}
	path := filepath.Join(dir, names[0], "state.json")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// Rewrite it as the earlier version did: version 2, settings a map of
	// flag names to values, with the checksum of the new bytes.
	var f stateFile
	var st map[string]any
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(f.State, &st); err != nil {
		t.Fatal(err)
	}
	st["version"] = 2
	st["settings"] = map[string]string{"solver": "sdca", "seed": "7", "lambda": "0.03", "sampler": "gap", "nonuniform": "0.8"}
	body, err := json.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(body)
	old, err := json.Marshal(stateFile{SHA256: hex.EncodeToString(sum[:]), State: body})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, old, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := decodeState(old, p.N(), p.Layout.Dim()); !errors.Is(err, errOldSettings) {
		t.Fatalf("old state.json decoded: %v", err)
	}
	for _, n := range names[1:] {
		os.RemoveAll(filepath.Join(dir, n))
	}
	_, err = LoadCheckpoint(dir, p, nil)
	if !errors.Is(err, ErrNoCheckpoint) || !strings.Contains(err.Error(), "earlier version") || !strings.Contains(err.Error(), "start a fresh run") {
		t.Fatalf("resume from an old snapshot: %v", err)
	}
}

// TestPartitionedRoundsSnapshotRefused: a snapshot of the former parallel
// SDCA (its workers' own random states) is refused by name, not continued
// under the ordered scheduler, which would not give the model it was
// heading for.
func TestPartitionedRoundsSnapshotRefused(t *testing.T) {
	st := checkpointState{Workers: 2, WorkerRNG: [][]byte{make([]byte, 20), make([]byte, 20)}, Next: -1}
	st.Sentences, st.Dim = 10, 5
	err := st.check(10, 5)
	if err == nil || !strings.Contains(err.Error(), "earlier version's parallel SDCA") {
		t.Fatalf("a snapshot with workers' random states: %v, want a refusal naming it", err)
	}
}
