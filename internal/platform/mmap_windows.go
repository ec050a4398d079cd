package platform

import (
	"fmt"
	"os"
	"unsafe"

	"golang.org/x/sys/windows"
)

// AllocOffHeap reports that AllocFloats returns memory outside the Go heap
// on this system: not here.
const AllocOffHeap = false

// AllocFloats returns n zero float64s on the Go heap (free is nil).
func AllocFloats(n int) (v []float64, free func()) { return make([]float64, n), nil }

// mapView is what unmapping needs besides the mapped bytes: the file
// mapping object, and the file, which flushing syncs.
type mapView struct {
	h windows.Handle
	f *os.File
}

// MapShared maps the first size bytes of f read-write and shared
// (CreateFileMapping, MapViewOfFile), so that writes to the bytes reach the
// file.
func MapShared(f *os.File, size int) (*Mapping, error) {
	n := uint64(size)
	h, err := windows.CreateFileMapping(windows.Handle(f.Fd()), nil, windows.PAGE_READWRITE,
		uint32(n>>32), uint32(n&0xffffffff), nil)
	if err != nil {
		return nil, fmt.Errorf("CreateFileMapping: %w", err)
	}
	addr, err := windows.MapViewOfFile(h, windows.FILE_MAP_WRITE, 0, 0, uintptr(size))
	if err != nil {
		windows.CloseHandle(h)
		return nil, fmt.Errorf("MapViewOfFile: %w", err)
	}
	// addr is the address of memory the Go heap does not manage: read it
	// through a pointer to the variable so that vet's unsafeptr check (which
	// guards against uintptrs of Go memory) is not misled.
	p := *(*unsafe.Pointer)(unsafe.Pointer(&addr))
	return &Mapping{mem: unsafe.Slice((*byte)(p), size), view: mapView{h: h, f: f}}, nil
}

// Unmap removes the view and closes the file mapping object.
func (m *Mapping) Unmap() error {
	err := windows.UnmapViewOfFile(uintptr(unsafe.Pointer(unsafe.SliceData(m.mem))))
	if cerr := windows.CloseHandle(m.view.h); err == nil {
		err = cerr
	}
	return err
}

// Flush writes the dirty pages of the view to the file (FlushViewOfFile,
// which does not wait) and waits for the disk (FlushFileBuffers).
func (m *Mapping) Flush() error {
	if err := windows.FlushViewOfFile(uintptr(unsafe.Pointer(unsafe.SliceData(m.mem))), uintptr(len(m.mem))); err != nil {
		return fmt.Errorf("FlushViewOfFile: %w", err)
	}
	return m.view.f.Sync()
}

// Advise does nothing: Windows has no madvise, and its default access
// pattern is what AccessNormal asks for elsewhere.
func (m *Mapping) Advise(a Advice) error { return nil }

// DropPages does nothing: Windows has no madvise.
func (m *Mapping) DropPages(lo, hi int64) {}
