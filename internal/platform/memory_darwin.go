package platform

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// PhysicalMemory returns the RAM this process may use: the machine's total
// (sysctl hw.memsize).
func PhysicalMemory() (int64, error) {
	n, err := unix.SysctlUint64("hw.memsize")
	if err != nil {
		return 0, fmt.Errorf("physical memory: sysctl hw.memsize: %w", err)
	}
	return int64(n), nil
}
