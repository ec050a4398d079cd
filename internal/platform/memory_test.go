//go:build linux || darwin || windows

package platform

import "testing"

// TestPhysicalMemoryKnown: the systems the tool is built for all say how
// much memory there is (sysinfo, sysctl hw.memsize, GlobalMemoryStatusEx).
func TestPhysicalMemoryKnown(t *testing.T) {
	got, err := PhysicalMemory()
	if err != nil || got <= 0 {
		t.Fatalf("PhysicalMemory = %d, %v", got, err)
	}
}
