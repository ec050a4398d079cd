//go:build linux || darwin

package duals

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// allocFloats returns n zero float64s in anonymous memory outside the Go
// heap (mmap MAP_PRIVATE|MAP_ANONYMOUS) and the function that unmaps them;
// if the system refuses the mapping, it falls back to the heap (free nil).
func allocFloats(n int) ([]float64, func()) {
	if n == 0 {
		return nil, nil
	}
	mem, err := unix.Mmap(-1, 0, 8*n, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANON)
	if err != nil {
		return make([]float64, n), nil
	}
	v := unsafe.Slice((*float64)(unsafe.Pointer(unsafe.SliceData(mem))), n)
	return v, func() { unix.Munmap(mem) }
}

// OffHeap reports whether Memory keeps the duals outside the Go heap on
// this system.
const OffHeap = true
