package duals

import (
	"fmt"
	"os"
	"unsafe"

	"golang.org/x/sys/windows"
)

// defaultAdvice is unused: Windows has no madvise, and its default access
// pattern is what MADV_NORMAL asks for elsewhere.
const defaultAdvice = 0

// mapView is what unmapping needs besides the mapped bytes: the file
// mapping object.
type mapView struct{ h windows.Handle }

// mapShared maps the first size bytes of f read-write and shared
// (CreateFileMapping, MapViewOfFile), so that writes to the bytes reach the
// file.
func mapShared(f *os.File, size int) ([]byte, mapView, error) {
	n := uint64(size)
	h, err := windows.CreateFileMapping(windows.Handle(f.Fd()), nil, windows.PAGE_READWRITE,
		uint32(n>>32), uint32(n&0xffffffff), nil)
	if err != nil {
		return nil, mapView{}, fmt.Errorf("CreateFileMapping: %w", err)
	}
	addr, err := windows.MapViewOfFile(h, windows.FILE_MAP_WRITE, 0, 0, uintptr(size))
	if err != nil {
		windows.CloseHandle(h)
		return nil, mapView{}, fmt.Errorf("MapViewOfFile: %w", err)
	}
	// addr is the address of memory the Go heap does not manage: read it
	// through a pointer to the variable so that vet's unsafeptr check (which
	// guards against uintptrs of Go memory) is not misled.
	p := *(*unsafe.Pointer)(unsafe.Pointer(&addr))
	return unsafe.Slice((*byte)(p), size), mapView{h: h}, nil
}

// unmap removes the view and closes the file mapping object.
func (s *File) unmap() error {
	err := windows.UnmapViewOfFile(uintptr(unsafe.Pointer(unsafe.SliceData(s.mem))))
	if cerr := windows.CloseHandle(s.view.h); err == nil {
		err = cerr
	}
	return err
}

// flush writes the dirty pages of the view to the file (FlushViewOfFile,
// which does not wait) and waits for the disk (FlushFileBuffers).
func (s *File) flush() error {
	if err := windows.FlushViewOfFile(uintptr(unsafe.Pointer(unsafe.SliceData(s.mem))), uintptr(len(s.mem))); err != nil {
		return fmt.Errorf("FlushViewOfFile: %w", err)
	}
	return s.f.Sync()
}

// advise does nothing: Windows has no madvise.
func (s *File) advise(advice int) error { return nil }

// allocate sets f's size (SetEndOfFile, which on NTFS allocates the space),
// so that writes through the mapping cannot fail for want of disk space.
func allocate(f *os.File, size int64) error { return f.Truncate(size) }

// dropPages does nothing: Windows has no madvise.
func (s *File) dropPages(lo, hi int64) {}
