package duals

import (
	"math/rand/v2"
	"path/filepath"
	"testing"
)

// TestStreamHeld: sentences held apart from their blocks (Hold, HoldData),
// changed while other blocks are resident, released or compacted at
// random, read back through Raw and, after their blocks were written
// back, from the file: always the numbers a plain array given the same
// changes holds.
func TestStreamHeld(t *testing.T) {
	d := lengthsDataset([]int{3, 1, 4, 2, 5, 2, 6, 1, 3, 4, 2, 2}, 3)
	s, err := CreateStream(filepath.Join(t.TempDir(), "held"), d, StreamOptions{BlockBytes: 400, HeldSlots: 1, Precision: Float64})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.Blocks() < 4 || s.HeldRoom() != s.SlotBytes() {
		t.Fatalf("%d blocks, room %d for slots of %d bytes", s.Blocks(), s.HeldRoom(), s.SlotBytes())
	}
	want := NewMemory(d, Float64)
	defer want.Close()
	rng := rand.New(rand.NewPCG(1, 2))
	change := func(i int) {
		v := rng.Float64()
		for j := range f64(s, i) {
			f64(s, i)[j] += v
			f64(want, i)[j] += v
		}
	}
	check := func(what string, i int) {
		t.Helper()
		got, w := f64(s, i), f64(want, i)
		for j := range w {
			if got[j] != w[j] {
				t.Fatalf("%s: sentence %d entry %d: %g, want %g", what, i, j, got[j], w[j])
			}
		}
	}
	if err := s.Visit(s.Sequential(), VisitOptions{Write: true, Fresh: true}, func(_, b int) error {
		lo, hi := s.BlockRange(b)
		for i := lo; i < hi; i++ {
			change(i)
		}
		return nil
	}, nil); err != nil {
		t.Fatal(err)
	}
	var held []int
	for epoch := range 6 {
		order := rng.Perm(s.Blocks())
		if err := s.Visit(order, VisitOptions{Write: true}, func(_, b int) error {
			lo, hi := s.BlockRange(b)
			for i := lo; i < hi; i++ {
				check("resident", i)
				change(i)
			}
			for _, i := range held {
				check("held", i)
				change(i)
			}
			// Release some of the block's held sentences, hold others.
			kept := held[:0]
			for _, i := range held {
				if i >= lo && i < hi && rng.IntN(2) == 0 {
					s.Release(i)
					continue
				}
				kept = append(kept, i)
			}
			held = kept
			s.Compact(held)
			for i := lo; i < hi; i++ {
				if !s.Held(i) && rng.IntN(3) == 0 && s.Hold(i) {
					held = append(held, i)
				}
			}
			return nil
		}, nil); err != nil {
			t.Fatal(err)
		}
		if epoch == 0 && len(held) == 0 {
			t.Fatal("nothing held")
		}
	}
	for i := 0; i < s.Len(); i++ {
		check("end", i) // held ones from the room, the rest from the file
	}
	// The file, without the room: every block written back since the last
	// change of its held sentences? Visit all blocks once more, writing.
	if err := s.Visit(s.Sequential(), VisitOptions{Write: true}, func(int, int) error { return nil }, nil); err != nil {
		t.Fatal(err)
	}
	room := make(map[int][]byte)
	for _, i := range held {
		room[i] = append([]byte(nil), s.Raw(i)...)
	}
	s.heldAt = nil // read the file alone
	for i := 0; i < s.Len(); i++ {
		check("file", i)
	}
	// HoldData on a fresh room takes the held duals back.
	s.SetHeld(s.SlotBytes())
	for _, i := range held {
		if !s.HoldData(i, room[i]) {
			t.Fatalf("HoldData(%d) refused", i)
		}
		check("restored", i)
	}
}
