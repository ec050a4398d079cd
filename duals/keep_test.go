package duals

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
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

// writeKeptFixture writes a kept-duals file at precision p of a random
// dataset whose blocks hold random chains, and returns the dataset, store,
// keys and path.
func writeKeptFixture(t *testing.T, p Precision) (*crf.Dataset, *Memory, []SentenceKey, string) {
	t.Helper()
	d := testDataset(7, 3)
	d.LabelNames = []string{"A", "B", "C"}
	m := NewMemory(d, p)
	t.Cleanup(func() { m.Close() })
	rng := rand.New(rand.NewPCG(3, 4))
	keys := make([]SentenceKey, d.Len())
	for i := range d.Len() {
		m.Put(i, randomChain(rng, d.SentStart[i+1]-d.SentStart[i], d.NumLabels))
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

// TestKeptRoundTrip reads back every key, length and entry bit for bit, at
// each precision.
func TestKeptRoundTrip(t *testing.T) {
	for _, p := range Precisions {
		t.Run(p.String(), func(t *testing.T) { testKeptRoundTrip(t, p) })
	}
}

func testKeptRoundTrip(t *testing.T, p Precision) {
	d, m, keys, path := writeKeptFixture(t, p)
	k, err := OpenKept(path)
	if err != nil {
		t.Fatal(err)
	}
	defer k.Close()
	if k.Info.Sentences != d.Len() || strings.Join(k.Info.Labels, ",") != "A,B,C" || k.Info.LambdaSetting != "1/n" || k.Info.Templates != "abc" ||
		k.Precision != p || k.Info.Precision != p.String() {
		t.Fatalf("header %+v", k.Info)
	}
	seen := 0
	err = k.Each(func(j int, mu []float64) error {
		if k.Keys[j] != keys[j] || k.Lens[j] != d.SentStart[j+1]-d.SentStart[j] {
			t.Errorf("sentence %d: key or length differs", j)
		}
		want := make([]float64, len(mu))
		m.Load(j, want)
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
	for _, p := range Precisions {
		t.Run(p.String(), func(t *testing.T) { testKeptCorrupt(t, p) })
	}
}

func testKeptCorrupt(t *testing.T, p Precision) {
	_, _, _, path := writeKeptFixture(t, p)
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
	for _, p := range Precisions {
		m := NewMemory(d, p)
		for i := range d.Len() {
			mu := make([]float64, crf.BlockLen(d.SentStart[i+1]-d.SentStart[i], 2))
			for e := range mu {
				mu[e] = 0.25
			}
			m.Put(i, mu)
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
		os.Remove(path)
	}
	f.Add(keptV1(f, d, 0.25))
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

// keptV1 returns the bytes of a kept-duals file of format version 1, as
// versions before the precision was recorded wrote them: no precision in
// its header, μ in float64, every entry x.
func keptV1(tb testing.TB, d *crf.Dataset, x float64) []byte {
	tb.Helper()
	js, err := json.Marshal(struct {
		Labels    []string `json:"labels"`
		Sentences int      `json:"sentences"`
		Source    string   `json:"source"`
	}{d.LabelNames, d.Len(), "old.arrow"})
	if err != nil {
		tb.Fatal(err)
	}
	le := binary.LittleEndian
	b := append([]byte("DCRFKEPT"), 1, 0, 0, 0)
	b = le.AppendUint32(b, uint32(len(js)))
	b = le.AppendUint32(b, crc32.Update(crc32.Update(0, castagnoli, b[:16]), castagnoli, js))
	b = append(b, js...)
	recs := []byte{}
	for i := range d.Len() {
		var key [16]byte
		key[0] = byte(i)
		recs = append(recs, key[:]...)
		recs = le.AppendUint32(recs, uint32(d.SentStart[i+1]-d.SentStart[i]))
	}
	b = append(b, recs...)
	b = le.AppendUint32(b, crc32.Checksum(recs, castagnoli))
	mu := []byte{}
	for range Entries(d) {
		mu = le.AppendUint64(mu, math.Float64bits(x))
	}
	b = append(b, mu...)
	b = le.AppendUint32(b, crc32.Checksum(mu, castagnoli))
	return append(b, "DCRFEND\x00"...)
}

// TestKeptVersion1: a kept-duals file of version 1 (float64, no precision
// in its header) is read, its duals as they were; one of version 1 that
// names a precision, or of a later version, is refused by name.
func TestKeptVersion1(t *testing.T) {
	d := testDataset(9, 2)
	d.LabelNames = []string{"x", "y"}
	b := keptV1(t, d, 0.25)
	k, err := ReadKept(bytes.NewReader(b), int64(len(b)), "old.duals")
	if err != nil {
		t.Fatal(err)
	}
	if k.Precision != Float64 || k.Info.Precision != "float64" || len(k.Keys) != d.Len() || k.Keys[3][0] != 3 {
		t.Fatalf("read %v %+v", k.Precision, k.Info)
	}
	n := 0
	if err := k.Each(func(j int, mu []float64) error {
		for _, x := range mu {
			if x != 0.25 {
				return fmt.Errorf("block %d holds %v", j, x)
			}
		}
		n++
		return nil
	}); err != nil || n != d.Len() {
		t.Fatalf("%d blocks: %v", n, err)
	}
	later := bytes.Clone(b)
	later[8] = 3
	if _, err := ReadKept(bytes.NewReader(later), int64(len(later)), "new.duals"); err == nil ||
		!strings.Contains(err.Error(), "new.duals") || !strings.Contains(err.Error(), "version 3") {
		t.Fatalf("version 3: %v", err)
	}
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
// blocks that has committed (a run with checkpoints), at each precision:
// reading them writes no block back, so the few free slots are not used
// up (it panicked with "no free slot"), and the kept file holds every
// block as the store does; the store's committed state is left as it was.
func TestKeptFromCommittedStream(t *testing.T) {
	for _, p := range Precisions {
		t.Run(p.String(), func(t *testing.T) { testKeptFromCommittedStream(t, p) })
	}
}

func testKeptFromCommittedStream(t *testing.T, p Precision) {
	lens := make([]int, 24)
	for i := range lens {
		lens[i] = 2 + i%5
	}
	d := lengthsDataset(lens, 3)
	d.LabelNames = []string{"A", "B", "C"}
	dir := t.TempDir()
	s, err := CreateStream(filepath.Join(dir, "duals.stream"), d, StreamOptions{BlockBytes: 300 * p.EntryBytes() / 8, Spare: 2, Precision: p})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.Blocks() < 8 {
		t.Fatalf("%d blocks, want many more than the spare slots", s.Blocks())
	}
	want := NewMemory(d, p)
	defer want.Close()
	rng := rand.New(rand.NewPCG(5, 6))
	fill := func() error {
		return s.Visit(s.Sequential(), VisitOptions{Write: true, Fresh: true}, func(_, b int) error {
			lo, hi := s.BlockRange(b)
			for i := lo; i < hi; i++ {
				mu := randomChain(rng, d.SentStart[i+1]-d.SentStart[i], d.NumLabels)
				s.Put(i, slices.Clone(mu))
				want.Put(i, mu)
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
	if k.Precision != p {
		t.Fatalf("kept at %v, the store is %v", k.Precision, p)
	}
	if err := k.Each(func(j int, mu []float64) error {
		w := make([]float64, len(mu))
		want.Load(j, w)
		if !slices.Equal(mu, w) {
			t.Errorf("kept block %d: %v, want %v", j, mu, w)
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
