package duals

import (
	"runtime"
	"testing"

	"github.com/dualcrf/dualcrf/crf"
)

// TestMemoryOffHeap: a Memory's duals are not on the Go heap, so
// they do not double the garbage collector's target (formerly they were).
func TestMemoryOffHeap(t *testing.T) {
	if !OffHeap {
		t.Skip("Memory keeps the duals on the Go heap on this system")
	}
	const n = 4 << 20 // 32 MiB of duals in one block
	d := &crf.Dataset{NumLabels: n, NumAttrs: 1, SentStart: []int{0, 1}, AttrStart: []int{0, 0}, Labels: []int32{0}}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	s := NewMemory(d, Float64)
	runtime.ReadMemStats(&after)
	mu := f64(s, 0)
	if len(mu) != n {
		t.Fatalf("block of %d entries, want %d", len(mu), n)
	}
	for i := range mu {
		if mu[i] != 0 {
			t.Fatalf("entry %d is %g", i, mu[i])
		}
		mu[i] = float64(i)
	}
	if grew := int64(after.HeapAlloc) - int64(before.HeapAlloc); grew > 8*n/4 {
		t.Fatalf("the heap grew by %d bytes for %d bytes of duals", grew, 8*n)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}
