package duals

import (
	"bytes"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/dualcrf/dualcrf/crf"
)

// writeKeptFixture writes a kept-duals file of a random dataset whose
// blocks hold random probabilities, and returns the dataset, store, keys
// and path.
func writeKeptFixture(t *testing.T) (*crf.Dataset, *Memory, []SentenceKey, string) {
	t.Helper()
	d := testDataset(7, 3)
	d.LabelNames = []string{"A", "B", "C"}
	m := NewMemory(d)
	t.Cleanup(func() { m.Close() })
	rng := rand.New(rand.NewPCG(3, 4))
	keys := make([]SentenceKey, d.Len())
	for i := range d.Len() {
		for e := range m.Block(i) {
			m.Block(i)[e] = rng.Float64()
		}
		for b := range keys[i] {
			keys[i][b] = byte(rng.IntN(256))
		}
	}
	path := filepath.Join(t.TempDir(), "kept.duals")
	info := KeptInfo{Lambda: 0.5, LambdaSetting: "1/n", Templates: "abc", KeyColumns: []string{"word"}, Source: "t.arrow"}
	if err := writeKeptFile(path, info, keys, d, m); err != nil {
		t.Fatal(err)
	}
	return d, m, keys, path
}

// TestKeptRoundTrip reads back every key, length and entry bit for bit.
func TestKeptRoundTrip(t *testing.T) {
	d, m, keys, path := writeKeptFixture(t)
	k, err := OpenKept(path)
	if err != nil {
		t.Fatal(err)
	}
	defer k.Close()
	if k.Info.Sentences != d.Len() || strings.Join(k.Info.Labels, ",") != "A,B,C" || k.Info.LambdaSetting != "1/n" || k.Info.Templates != "abc" {
		t.Fatalf("header %+v", k.Info)
	}
	seen := 0
	err = k.Each(func(j int, mu []float64) error {
		if k.Keys[j] != keys[j] || k.Lens[j] != d.SentStart[j+1]-d.SentStart[j] {
			t.Errorf("sentence %d: key or length differs", j)
		}
		want := m.Block(j)
		if len(mu) != len(want) {
			t.Fatalf("block %d: %d entries, want %d", j, len(mu), len(want))
		}
		for e := range mu {
			if math.Float64bits(mu[e]) != math.Float64bits(want[e]) {
				t.Fatalf("block %d entry %d: %v, want %v", j, e, mu[e], want[e])
			}
		}
		seen++
		return nil
	})
	if err != nil || seen != d.Len() {
		t.Fatalf("read %d blocks of %d: %v", seen, d.Len(), err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm()&0o044 == 0 {
		t.Errorf("mode %v (%v): want a file others may read, as the other outputs", fi.Mode(), err)
	}
}

// TestKeptCorrupt flips every byte of a kept-duals file in turn, and cuts
// and extends it: each is an error naming the file, never a panic or a
// file taken as sound.
func TestKeptCorrupt(t *testing.T) {
	_, _, _, path := writeKeptFixture(t)
	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(t.TempDir(), "bad.duals")
	// Every byte through the reader of bytes; a few through the file.
	try := func(what string, b []byte, file bool) {
		t.Helper()
		var err error
		if file {
			if err := os.WriteFile(bad, b, 0o644); err != nil {
				t.Fatal(err)
			}
			var k *Kept
			if k, err = OpenKept(bad); err == nil {
				err = k.Each(func(int, []float64) error { return nil })
				k.Close()
			}
		} else {
			var k *Kept
			if k, err = ReadKept(bytes.NewReader(b), int64(len(b)), bad); err == nil {
				// μ is verified as Each reads it.
				err = k.Each(func(int, []float64) error { return nil })
			}
		}
		if err == nil {
			t.Fatalf("%s: accepted", what)
		}
		var fe *FileError
		if !errors.As(err, &fe) || fe.Path != bad || !strings.Contains(err.Error(), bad) {
			t.Fatalf("%s: %v, want a *FileError naming %s", what, err, bad)
		}
	}
	for off := range good {
		b := bytes.Clone(good)
		b[off] ^= 0x10
		try("byte "+strconv.Itoa(off)+" changed", b, off%997 == 0 || off == len(good)-1)
	}
	for _, n := range []int{0, 7, 19, 20, len(good) / 2, len(good) - 1} {
		try("cut to "+strconv.Itoa(n), good[:n], true)
	}
	try("extended", append(bytes.Clone(good), 0), true)
}

// FuzzReadKept feeds arbitrary bytes to the kept-duals reader: an error or
// a file whose blocks can all be read, never a panic.
func FuzzReadKept(f *testing.F) {
	d := testDataset(9, 2)
	d.LabelNames = []string{"x", "y"}
	m := NewMemory(d)
	for i := range d.Len() {
		for e := range m.Block(i) {
			m.Block(i)[e] = 0.25
		}
	}
	path := filepath.Join(f.TempDir(), "seed.duals")
	if err := writeKeptFile(path, KeptInfo{}, make([]SentenceKey, d.Len()), d, m); err != nil {
		f.Fatal(err)
	}
	m.Close()
	seed, err := os.ReadFile(path)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(seed)
	f.Add(seed[:40])
	f.Fuzz(func(t *testing.T, b []byte) {
		k, err := ReadKept(bytes.NewReader(b), int64(len(b)), "fuzz.duals")
		if err != nil {
			if !strings.HasPrefix(err.Error(), "fuzz.duals: ") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		n := 0
		err = k.Each(func(int, []float64) error { n++; return nil })
		if err != nil {
			// μ is verified as Each reads it: a corrupted μ is an error
			// naming the file.
			if !strings.HasPrefix(err.Error(), "fuzz.duals: ") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		if n != len(k.Keys) {
			t.Fatalf("a verified file read %d of %d blocks", n, len(k.Keys))
		}
	})
}

// writeKeptFile writes a kept-duals file at path with WriteKept.
func writeKeptFile(path string, info KeptInfo, keys []SentenceKey, d *crf.Dataset, src Store) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := WriteKept(f, path, info, keys, d, src); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// TestKeptFromCommittedStream keeps the duals of a streamed store of many
// blocks that has committed (a run with checkpoints): reading them writes
// no block back, so the few free slots are not used up (it panicked with
// "no free slot"), and the kept file holds every block as the store does;
// the store's committed state is left as it was.
func TestKeptFromCommittedStream(t *testing.T) {
	lens := make([]int, 24)
	for i := range lens {
		lens[i] = 2 + i%5
	}
	d := lengthsDataset(lens, 3)
	d.LabelNames = []string{"A", "B", "C"}
	dir := t.TempDir()
	s, err := CreateStream(filepath.Join(dir, "duals.stream"), d, StreamOptions{BlockBytes: 300, Spare: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.Blocks() < 8 {
		t.Fatalf("%d blocks, want many more than the spare slots", s.Blocks())
	}
	want := NewMemory(d)
	defer want.Close()
	fill := func() error {
		return s.Visit(s.Sequential(), VisitOptions{Write: true}, func(_, b int) error {
			lo, hi := s.BlockRange(b)
			for i := lo; i < hi; i++ {
				for j := range s.Block(i) {
					s.Block(i)[j] = float64((i+j)%5) / 8
					want.Block(i)[j] = s.Block(i)[j]
				}
			}
			return nil
		}, nil)
	}
	var st StreamState
	save := func(c StreamState) error { st = c; return nil }
	if err := fill(); err != nil {
		t.Fatal(err)
	}
	if err := s.Commit(save); err != nil {
		t.Fatal(err)
	}
	committed := st
	keys := make([]SentenceKey, d.Len())
	path := filepath.Join(dir, "kept.duals")
	if err := writeKeptFile(path, KeptInfo{LambdaSetting: "1/n"}, keys, d, s); err != nil {
		t.Fatal(err)
	}
	k, err := OpenKept(path)
	if err != nil {
		t.Fatal(err)
	}
	defer k.Close()
	if err := k.Each(func(j int, mu []float64) error {
		if !slices.Equal(mu, want.Block(j)) {
			t.Errorf("kept block %d: %v, want %v", j, mu, want.Block(j))
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	// Nothing was written: the next commit records the same slots.
	if err := s.Commit(save); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(st.Slots, committed.Slots) || !slices.Equal(st.CRC, committed.CRC) {
		t.Fatalf("the kept read moved the blocks: slots %v → %v", committed.Slots, st.Slots)
	}
}
