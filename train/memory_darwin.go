package train

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// physicalMemory is the machine's total (sysctl hw.memsize).
func physicalMemory() (int64, error) {
	n, err := unix.SysctlUint64("hw.memsize")
	if err != nil {
		return 0, fmt.Errorf("physical memory: sysctl hw.memsize: %w", err)
	}
	return int64(n), nil
}
