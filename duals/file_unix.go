//go:build linux || darwin

package duals

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// defaultAdvice is the access pattern the mapping is declared with (see
// BenchmarkStoreSweep).
const defaultAdvice = unix.MADV_NORMAL

// mapView is what unmapping needs besides the mapped bytes: nothing here.
type mapView struct{}

// mapShared maps the first size bytes of f read-write and shared
// (MAP_SHARED), so that writes to the bytes reach the file.
func mapShared(f *os.File, size int) ([]byte, mapView, error) {
	mem, err := unix.Mmap(int(f.Fd()), 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	return mem, mapView{}, err
}

// unmap removes the mapping (munmap).
func (s *File) unmap() error { return unix.Munmap(s.mem) }

// flush writes the dirty pages to the file and waits for the disk (msync
// MS_SYNC).
func (s *File) flush() error { return unix.Msync(s.mem, unix.MS_SYNC) }

// advise tells the kernel how the mapping will be accessed (madvise).
func (s *File) advise(advice int) error {
	if err := unix.Madvise(s.mem, advice); err != nil {
		return fmt.Errorf("madvise duals file %s: %w", s.path, err)
	}
	return nil
}

// dropPages removes the whole pages within bytes [lo, hi) of the mapping
// from the process's memory (madvise MADV_DONTNEED). The mapping is shared,
// so no data is lost: a later access finds it in the page cache or the file.
// A failure only leaves the pages resident, so it is not reported.
func (s *File) dropPages(lo, hi int64) {
	pg := int64(os.Getpagesize())
	lo = (lo + pg - 1) / pg * pg
	hi = min(hi, int64(len(s.mem))) / pg * pg
	if lo < hi {
		unix.Madvise(s.mem[lo:hi], unix.MADV_DONTNEED)
	}
}
