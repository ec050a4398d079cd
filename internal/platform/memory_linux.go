package platform

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// PhysicalMemory returns the RAM this process may use: the machine's total
// (sysinfo), or the memory limit of the process's cgroup v2 when lower.
func PhysicalMemory() (int64, error) {
	var si unix.Sysinfo_t
	if err := unix.Sysinfo(&si); err != nil {
		return 0, fmt.Errorf("physical memory: sysinfo: %w", err)
	}
	total := int64(si.Totalram) * int64(si.Unit)
	if lim, ok := cgroupMemoryLimit(); ok && lim < total {
		total = lim
	}
	return total, nil
}

// cgroupMemoryLimit reads memory.max of the process's cgroup v2, if any.
func cgroupMemoryLimit() (int64, bool) {
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return 0, false
	}
	for _, line := range strings.Split(string(b), "\n") {
		rel, ok := strings.CutPrefix(line, "0::")
		if !ok {
			continue
		}
		m, err := os.ReadFile(filepath.Join("/sys/fs/cgroup", rel, "memory.max"))
		if err != nil {
			return 0, false
		}
		lim, err := strconv.ParseInt(string(bytes.TrimSpace(m)), 10, 64)
		return lim, err == nil && lim > 0
	}
	return 0, false
}
