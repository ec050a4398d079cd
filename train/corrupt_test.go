package train

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// corruptions is the number of corrupted snapshots TestCheckpointCorruption
// tries: a couple of hundred by default, ≥ 1,000 in the long mode
// (go test ./train -run CheckpointCorruption -args -corruptions 1200).
var corruptions = flag.Int("corruptions", 240, "corrupted checkpoints tried by TestCheckpointCorruption")

// snapshotFixture trains a small problem for two epochs with a checkpoint
// after each and returns the problem and the directory.
func snapshotFixture(t testing.TB) (*Problem, string) {
	t.Helper()
	p := randomProblem(t.(*testing.T), 81, 40, 5, 10, 3, true, 0)
	dir := t.TempDir()
	m := &SDCA{Seed: 2}
	set := Settings{MaxEpochs: 2, GapTol: 1e-300, GapEvery: 2, CheckpointEvery: 1, Checkpoint: saver(dir, m)}
	if _, err := Train(context.Background(), p, set, m); err != nil {
		t.Fatal(err)
	}
	return p, dir
}

// corrupt returns b damaged in one of three ways, chosen by rng: a flipped
// bit, a truncation, or a splice (a run of bytes copied from elsewhere in b
// or from other).
func corrupt(rng *rand.Rand, b, other []byte) ([]byte, string) {
	out := append([]byte(nil), b...)
	if len(out) == 0 {
		return []byte{'x'}, "extended"
	}
	switch rng.IntN(3) {
	case 0:
		i := rng.IntN(len(out))
		out[i] ^= 1 << rng.IntN(8)
		return out, "bit flip"
	case 1:
		return out[:rng.IntN(len(out))], "truncation"
	}
	src := out
	if len(other) > 0 && rng.IntN(2) == 0 {
		src = other
	}
	n := 1 + rng.IntN(min(64, len(src)))
	from := rng.IntN(len(src) - n + 1)
	to := rng.IntN(len(out))
	piece := src[from : from+n]
	if rng.IntN(2) == 0 { // overwrite
		copy(out[to:], piece)
		return out, "splice"
	}
	out = append(out[:to], append(append([]byte(nil), piece...), b[to:]...)...) // insert
	return out, "splice"
}

// TestCheckpointCorruption damages every file of the newest snapshot —
// state.json, weights.bin, duals.bin, CURRENT — by bit flips, truncations
// and splices (from elsewhere in the file or the older snapshot's file),
// and loads the directory each time: never a panic; either the damaged
// snapshot is refused with a reason and the intact older one is loaded, or
// (a damaged CURRENT) the newest is found by listing after a warning.
func TestCheckpointCorruption(t *testing.T) {
	p, dir := snapshotFixture(t)
	newest := filepath.Join(dir, "ckpt-000002")
	files := []string{"state.json", "weights.bin", "duals.bin", "CURRENT"}
	orig := map[string][]byte{}
	older := map[string][]byte{}
	path := func(f string) string {
		if f == "CURRENT" {
			return filepath.Join(dir, f)
		}
		return filepath.Join(newest, f)
	}
	for _, f := range files {
		orig[f], _ = os.ReadFile(path(f))
		older[f], _ = os.ReadFile(filepath.Join(dir, "ckpt-000001", f))
	}
	rng := rand.New(rand.NewPCG(9, 9))
	counts := map[string]int{}
	for trial := 0; trial < *corruptions; trial++ {
		f := files[trial%len(files)]
		bad, how := corrupt(rng, orig[f], older[f])
		if bytes.Equal(bad, orig[f]) {
			continue
		}
		counts[f+" "+how]++
		if err := os.WriteFile(path(f), bad, 0o644); err != nil {
			t.Fatal(err)
		}
		var warnings []string
		c, err := LoadCheckpoint(dir, p, func(s string) { warnings = append(warnings, s) })
		os.WriteFile(path(f), orig[f], 0o644)
		if err != nil {
			t.Fatalf("trial %d (%s of %s): %v", trial, how, f, err)
		}
		c.Duals.Close()
		switch {
		case f == "CURRENT":
			if len(warnings) == 0 && !strings.HasPrefix(string(bad), "ckpt-00000") {
				t.Fatalf("trial %d: CURRENT %q loaded %s without a warning", trial, bad, c.Dir)
			}
		case c.Dir == newest:
			t.Fatalf("trial %d: %s of %s accepted", trial, how, f)
		case len(warnings) != 1 || !strings.Contains(warnings[0], "ckpt-000002"):
			t.Fatalf("trial %d: %s of %s: fell back to %s with warnings %q", trial, how, f, c.Dir, warnings)
		}
	}
	t.Logf("%d corruptions: %v", *corruptions, counts)
}

// FuzzDecodeState feeds arbitrary bytes to the state.json reader: it must
// return an error or a state that passes its own checks, never panic.
func FuzzDecodeState(f *testing.F) {
	seed, err := os.ReadFile(filepath.Join("testdata", "state.json"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(seed, 40, 48)
	f.Add([]byte(`{"sha256":"","state":{}}`), 40, 48)
	f.Add([]byte(`{}`), 1, 1)
	f.Fuzz(func(t *testing.T, b []byte, n, dim int) {
		if n < 1 || n > 1<<16 || dim < 1 {
			return
		}
		st, err := decodeState(b, n, dim)
		if err != nil {
			return
		}
		if st.check(n, dim) != nil {
			t.Fatalf("accepted a state that fails its checks: %+v", st)
		}
		again, err := encodeState(st)
		if err != nil {
			t.Fatalf("accepted state does not encode: %v", err)
		}
		if _, err := decodeState(again, n, dim); err != nil {
			t.Fatalf("re-encoded state refused: %v", err)
		}
	})
}

// FuzzDecodeWeights feeds arbitrary bytes to the weights.bin reader, with
// the right checksum (so that the size and value checks are reached) or a
// wrong one.
func FuzzDecodeWeights(f *testing.F) {
	f.Add([]byte{0, 0, 0, 0, 0, 0, 0xf0, 0x3f}, 1, true)
	f.Add([]byte{0, 0, 0, 0, 0, 0, 0xf0, 0x7f}, 1, true) // +Inf
	f.Add([]byte{1, 2, 3}, 1, false)
	f.Fuzz(func(t *testing.T, b []byte, dim int, rightHash bool) {
		if dim < 0 || dim > 1<<20 {
			return
		}
		hash := "00"
		if rightHash {
			s := sha256.Sum256(b)
			hash = hex.EncodeToString(s[:])
		}
		w, err := decodeWeights(b, dim, hash)
		if err != nil {
			return
		}
		if len(w) != dim || !rightHash {
			t.Fatalf("accepted %d weights for dim %d (right hash %v)", len(w), dim, rightHash)
		}
		if finiteWeights(w, 0) != nil {
			t.Fatal("accepted non-finite weights")
		}
	})
}

var updateSeed = flag.Bool("update-seed", false, "rewrite testdata/state.json, FuzzDecodeState's seed")

// TestStateSeed checks that FuzzDecodeState's seed is a valid state of this
// format (40 sentences, 48 weights), so that fuzzing starts from deep inside
// the reader; -update-seed rewrites it.
func TestStateSeed(t *testing.T) {
	seed := filepath.Join("testdata", "state.json")
	if *updateSeed {
		_, dir := snapshotFixture(t)
		b, err := os.ReadFile(filepath.Join(dir, "ckpt-000002", "state.json"))
		if err != nil {
			t.Fatal(err)
		}
		os.MkdirAll("testdata", 0o755)
		if err := os.WriteFile(seed, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	b, err := os.ReadFile(seed)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := decodeState(b, 40, 48); err != nil {
		t.Fatalf("%s: %v (regenerate with -update-seed)", seed, err)
	}
}
