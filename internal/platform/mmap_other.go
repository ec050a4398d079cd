//go:build !linux && !darwin && !windows

package platform

import (
	"errors"
	"fmt"
	"os"
	"runtime"
)

// AllocOffHeap reports that AllocFloats returns memory outside the Go heap
// on this system: not here.
const AllocOffHeap = false

// AllocFloats returns n zero float64s on the Go heap (free is nil).
func AllocFloats(n int) (v []float64, free func()) { return make([]float64, n), nil }

// mapView is empty: files cannot be mapped here.
type mapView struct{}

// MapShared fails: memory-mapped files are not supported on this system.
func MapShared(f *os.File, size int) (*Mapping, error) {
	return nil, fmt.Errorf("memory-mapped files are not supported on %s: %w", runtime.GOOS, errors.ErrUnsupported)
}

// Unmap does nothing: nothing is ever mapped.
func (m *Mapping) Unmap() error { return nil }

// Flush does nothing: nothing is ever mapped.
func (m *Mapping) Flush() error { return nil }

// Advise does nothing: nothing is ever mapped.
func (m *Mapping) Advise(a Advice) error { return nil }

// DropPages does nothing: nothing is ever mapped.
func (m *Mapping) DropPages(lo, hi int64) {}
