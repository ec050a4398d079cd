package duals

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dualcrf/dualcrf/crf/crftest"
)

// FuzzStreamFile: whatever the bytes of a streamed duals file and the slot
// map of a committed state, opening, adopting and reading every block
// either works or fails with an error naming the file — never a panic.
func FuzzStreamFile(f *testing.F) {
	d := lengthsDataset([]int{3, 1, 4, 2, 5}, 3)
	o := StreamOptions{BlockBytes: 300, Spare: 2, Precision: Float64}
	dir := f.TempDir()
	good := filepath.Join(dir, "good")
	s, err := CreateStream(good, d, o)
	if err != nil {
		f.Fatal(err)
	}
	var st StreamState
	s.Visit(s.Sequential(), VisitOptions{Write: true, Fresh: true}, func(_, b int) error {
		lo, hi := s.BlockRange(b)
		for i := lo; i < hi; i++ {
			for j := range f64(s, i) {
				f64(s, i)[j] = float64(i + j)
			}
		}
		return nil
	}, nil)
	if err := s.Commit(func(c StreamState) error { st = c; return nil }); err != nil {
		f.Fatal(err)
	}
	s.Close()
	b, _ := os.ReadFile(good)
	slots := make([]byte, 0, 2*len(st.Slots))
	for k, x := range st.Slots {
		slots = append(slots, byte(x), byte(st.CRC[k]))
	}
	f.Add(b, slots)
	f.Add(b[:streamAlign], slots)
	f.Add(b, []byte{0, 0, 1})
	f.Add([]byte("DUALSTRM"), []byte{})
	f.Fuzz(func(t *testing.T, file, slots []byte) {
		path := filepath.Join(t.TempDir(), "fuzzed")
		if err := os.WriteFile(path, file, 0o666); err != nil {
			t.Fatal(err)
		}
		s, err := OpenStream(path, d, o)
		if err != nil {
			if !strings.Contains(err.Error(), path) {
				t.Fatalf("error without the file's name: %v", err)
			}
			return
		}
		defer s.Close()
		var st StreamState
		for k := 0; k+1 < len(slots); k += 2 {
			st.Slots = append(st.Slots, int32(int8(slots[k])))
			st.CRC = append(st.CRC, uint32(slots[k+1]))
		}
		if err := s.Adopt(st); err != nil {
			if !strings.Contains(err.Error(), path) {
				t.Fatalf("error without the file's name: %v", err)
			}
			return
		}
		err = s.Visit(s.Sequential(), VisitOptions{}, func(int, int) error { return nil }, nil)
		if err != nil && !strings.Contains(err.Error(), path) {
			t.Fatalf("error without the file's name: %v", err)
		}
	})
}

// TestStreamLocked: a streamed duals file is locked while its store is
// open; a second store, created or opened on it, is refused and leaves the
// first run's file as it was (a second run re-initialising the file would
// make the first fail on a CRC mismatch and its snapshots unusable).
func TestStreamLocked(t *testing.T) {
	d := crftest.RandomDataset(rand.New(rand.NewPCG(77, 1)), 40, 6, 15, 3, true)
	path := filepath.Join(t.TempDir(), "duals.stream")
	o := StreamOptions{BlockBytes: Bytes(d, Float64) / 3, Precision: Float64}
	s, err := CreateStream(path, d, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	// A run's writes: every block filled and written back.
	if err := s.Visit(s.Sequential(), VisitOptions{Write: true, Fresh: true}, func(_, b int) error {
		lo, hi := s.BlockRange(b)
		for i := lo; i < hi; i++ {
			for j := range f64(s, i) {
				f64(s, i)[j] = float64(i) + float64(j)/64
			}
		}
		return nil
	}, nil); err != nil {
		t.Fatal(err)
	}
	if err := s.waitWrites(); err != nil {
		t.Fatal(err)
	}
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for name, open := range map[string]func() (*Stream, error){
		"create": func() (*Stream, error) { return CreateStream(path, d, o) },
		"open":   func() (*Stream, error) { return OpenStream(path, d, o) },
	} {
		s2, err := open()
		if err == nil {
			s2.Close()
			t.Fatalf("%s: a second store on a file in use was not refused", name)
		}
		if !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "in use by another training run") {
			t.Errorf("%s: %v, want the file named in use", name, err)
		}
	}
	after, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(before, after) {
		t.Fatal("the refused store changed the file in use")
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s3, err := OpenStream(path, d, o)
	if err != nil {
		t.Fatalf("after the first store closed: %v", err)
	}
	s3.Close()
}

// TestStreamPrecision: a streamed file records its precision; opening it
// for a run of the other precision is refused, naming the file and the
// option to give, and leaves the file as it was.
func TestStreamPrecision(t *testing.T) {
	d := lengthsDataset([]int{3, 1, 4, 2, 5}, 3)
	path := filepath.Join(t.TempDir(), "duals.stream")
	s, err := CreateStream(path, d, StreamOptions{BlockBytes: 300, Precision: Float64})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(path)
	_, err = OpenStream(path, d, StreamOptions{BlockBytes: 300, Precision: Float32})
	if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "holds float64 duals") ||
		!strings.Contains(err.Error(), "SDCA.DualPrecision float64") {
		t.Fatalf("float32 run on a float64 file: %v", err)
	}
	if after, _ := os.ReadFile(path); !bytes.Equal(before, after) {
		t.Fatal("the refused open changed the file")
	}
	s, err = OpenStream(path, d, StreamOptions{BlockBytes: 300, Precision: Float64})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
}
