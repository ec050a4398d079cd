package platform

import (
	"fmt"
	"unsafe"

	"golang.org/x/sys/windows"
)

// memoryStatusEx is Windows' MEMORYSTATUSEX.
type memoryStatusEx struct {
	length               uint32
	memoryLoad           uint32
	totalPhys            uint64
	availPhys            uint64
	totalPageFile        uint64
	availPageFile        uint64
	totalVirtual         uint64
	availVirtual         uint64
	availExtendedVirtual uint64
}

// PhysicalMemory returns the RAM this process may use: the machine's total
// (GlobalMemoryStatusEx, which golang.org/x/sys/windows does not wrap).
func PhysicalMemory() (int64, error) {
	proc := windows.NewLazySystemDLL("kernel32.dll").NewProc("GlobalMemoryStatusEx")
	if err := proc.Find(); err != nil {
		return 0, fmt.Errorf("physical memory: %w", err)
	}
	st := memoryStatusEx{}
	st.length = uint32(unsafe.Sizeof(st))
	if ok, _, err := proc.Call(uintptr(unsafe.Pointer(&st))); ok == 0 {
		return 0, fmt.Errorf("physical memory: GlobalMemoryStatusEx: %w", err)
	}
	return int64(st.totalPhys), nil
}
