//go:build linux || darwin

package platform

import (
	"fmt"
	"os"
	"unsafe"

	"golang.org/x/sys/unix"
)

// AllocOffHeap reports that AllocFloats returns memory outside the Go heap
// on this system.
const AllocOffHeap = true

// AllocFloats returns n zero float64s in anonymous memory outside the Go
// heap (mmap MAP_PRIVATE|MAP_ANONYMOUS, page-aligned) and the function that
// unmaps them; if the system refuses the mapping, it falls back to the heap
// (free nil).
func AllocFloats(n int) (v []float64, free func()) {
	if n == 0 {
		return nil, nil
	}
	mem, err := unix.Mmap(-1, 0, 8*n, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANON)
	if err != nil {
		return make([]float64, n), nil
	}
	v = unsafe.Slice((*float64)(unsafe.Pointer(unsafe.SliceData(mem))), n)
	return v, func() { unix.Munmap(mem) }
}

// mapView is what unmapping needs besides the mapped bytes: nothing here.
type mapView struct{}

// MapShared maps the first size bytes of f read-write and shared
// (MAP_SHARED), so that writes to the bytes reach the file.
func MapShared(f *os.File, size int) (*Mapping, error) {
	mem, err := unix.Mmap(int(f.Fd()), 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		return nil, err
	}
	return &Mapping{mem: mem}, nil
}

// Unmap removes the mapping (munmap).
func (m *Mapping) Unmap() error { return unix.Munmap(m.mem) }

// Flush writes the dirty pages to the file and waits for the disk (msync
// MS_SYNC).
func (m *Mapping) Flush() error { return unix.Msync(m.mem, unix.MS_SYNC) }

// Advise tells the kernel how the mapping will be accessed (madvise).
func (m *Mapping) Advise(a Advice) error {
	advice := unix.MADV_NORMAL
	if a == AccessRandom {
		advice = unix.MADV_RANDOM
	}
	if err := unix.Madvise(m.mem, advice); err != nil {
		return fmt.Errorf("madvise: %w", err)
	}
	return nil
}

// DropPages removes the whole pages within bytes [lo, hi) of the mapping
// from the process's memory (madvise MADV_DONTNEED). The mapping is shared,
// so no data is lost: a later access finds it in the page cache or the file.
// A failure only leaves the pages resident, so it is not reported.
func (m *Mapping) DropPages(lo, hi int64) {
	pg := int64(os.Getpagesize())
	lo = (lo + pg - 1) / pg * pg
	hi = min(hi, int64(len(m.mem))) / pg * pg
	if lo < hi {
		unix.Madvise(m.mem[lo:hi], unix.MADV_DONTNEED)
	}
}
