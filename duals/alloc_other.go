//go:build !linux && !darwin

package duals

// allocFloats returns n zero float64s on the Go heap (free is nil).
func allocFloats(n int) ([]float64, func()) { return make([]float64, n), nil }

// OffHeap reports whether Memory keeps the duals outside the Go heap on
// this system.
const OffHeap = false
