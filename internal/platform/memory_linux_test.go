package platform

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"testing"
)

// TestPhysicalMemory agrees with /proc/meminfo's MemTotal (at most equal: a
// cgroup limit may be lower).
func TestPhysicalMemory(t *testing.T) {
	got, err := PhysicalMemory()
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		t.Skip("no /proc/meminfo")
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) == 3 && fields[0] == "MemTotal:" && fields[2] == "kB" {
			kb, err := strconv.ParseInt(fields[1], 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			if got <= 0 || got > kb*1024 {
				t.Fatalf("PhysicalMemory = %d, MemTotal = %d bytes", got, kb*1024)
			}
			return
		}
	}
	t.Fatal("no MemTotal in /proc/meminfo")
}
