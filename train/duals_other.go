//go:build !linux && !darwin

package train

// allocFloats returns n zero float64s on the Go heap (free is nil).
func allocFloats(n int) ([]float64, func()) { return make([]float64, n), nil }

// dualsOffHeap reports that MemoryStore keeps the duals outside the Go heap.
const dualsOffHeap = false
