package duals

import (
	"bytes"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
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
