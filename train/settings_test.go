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
)

// isSettingsError reports whether err is a refused resume naming setting
// field with the checkpoint's value was and this run's now.
func isSettingsError(err error, field, was, now string) bool {
	var se *SettingsError
	return errors.Is(err, ErrResumeSettings) && errors.As(err, &se) &&
		se.Field == field && se.Checkpoint == was && se.Now == now
}

// TestCheckSettingsNamesWorkers: a resume with another schedule names the
// schedule, one with another round size the round size, and equal settings
// pass (the rounds record no workers: any number continues them); an
// earlier version's parallel rounds are named as such.
func TestCheckSettingsNamesWorkers(t *testing.T) {
	seq := runSettings{Version: settingsVersion, Seed: 1, Sampler: "gap", Workers: 1}
	par := runSettings{Version: settingsVersion, Seed: 1, Sampler: "gap", Schedule: ScheduleRounds, RoundSize: 64}
	old := runSettings{Version: settingsVersion, Seed: 1, Sampler: "gap", Workers: 2, RoundSteps: 2}
	async := runSettings{Version: settingsVersion, Seed: 1, Sampler: "gap", Schedule: ScheduleAsyncAtomic}
	with := func(rs runSettings, f func(*runSettings)) runSettings { f(&rs); return rs }
	for _, c := range []struct {
		name           string
		snap, run      runSettings
		field, was, is string // field "" for success
		words          string
	}{
		{name: "same sequential", snap: seq, run: seq},
		{name: "same parallel", snap: par, run: par},
		{name: "same asynchronous", snap: async, run: async},
		{"sequential, resumed with rounds", seq, par, "Schedule", "sequential", "rounds", "made with the schedule of the steps sequential, this run has rounds"},
		{"rounds, resumed sequential", par, seq, "Schedule", "rounds", "sequential", "made with the schedule of the steps rounds, this run has sequential"},
		{"rounds, resumed asynchronous", par, async, "Schedule", "rounds", "async-atomic", "this run has async-atomic"},
		{"other round", par, with(par, func(rs *runSettings) { rs.RoundSize = 16 }), "RoundSize", "64", "16",
			"made with the round size 64, this run has 16"},
		{"earlier parallel rounds", old, par, "Schedule", "an earlier version's parallel rounds (2 workers, 2 steps each)", "rounds",
			"made with the schedule of the steps an earlier version's parallel rounds (2 workers, 2 steps each), this run has rounds"},
		{"other seed", seq, with(seq, func(rs *runSettings) { rs.Seed = 2 }), "Seed", "1", "2", "made with the seed 1, this run has 2"},
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

// TestCheckSettingsInWords: a refused resume says what the setting is in
// words, never by a flag of the command (which maps SettingsError.Field to
// its own flags): the block count of streamed duals, which no flag sets,
// and the bias.
func TestCheckSettingsInWords(t *testing.T) {
	for _, c := range []struct {
		snap, run runSettings
		field     string
		want      string
	}{
		{runSettings{DualsBlocks: 4}, runSettings{DualsBlocks: 5}, "DualsBlocks",
			"made with the streamed duals' block count (it follows from the memory budget and the rest of the run) 4, this run has 5"},
		{runSettings{Bias: true}, runSettings{Bias: false}, "Bias", "made with the bias features true, this run has false"},
		{runSettings{Seed: 1}, runSettings{Seed: 1, DualsBlocks: 3}, "DualsBlocks", "block count (it follows from the memory budget and the rest of the run) 0, this run has 3"},
	} {
		ck := &Checkpoint{Dir: "ck", state: checkpointState{Settings: c.snap}}
		err := ck.checkSettings(c.run)
		var se *SettingsError
		if !errors.As(err, &se) || se.Field != c.field || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "--") {
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
