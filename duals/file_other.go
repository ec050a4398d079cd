//go:build !linux && !darwin && !windows

package duals

import (
	"errors"
	"fmt"
	"os"
	"runtime"
)

// defaultAdvice is unused: files cannot be mapped here.
const defaultAdvice = 0

// mapView is empty: files cannot be mapped here.
type mapView struct{}

// mapShared fails: memory-mapped duals files are not supported on this
// system (use a Memory).
func mapShared(f *os.File, size int) ([]byte, mapView, error) {
	return nil, mapView{}, fmt.Errorf("memory-mapped duals files are not supported on %s: %w", runtime.GOOS, errors.ErrUnsupported)
}

// unmap does nothing: nothing is ever mapped.
func (s *File) unmap() error { return nil }

// flush does nothing: nothing is ever mapped.
func (s *File) flush() error { return nil }

// advise does nothing: nothing is ever mapped.
func (s *File) advise(advice int) error { return nil }

// allocate sets f's size.
func allocate(f *os.File, size int64) error { return f.Truncate(size) }

// dropPages does nothing: files cannot be mapped here.
func (s *File) dropPages(lo, hi int64) {}
