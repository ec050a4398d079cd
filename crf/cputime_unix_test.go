//go:build unix

package crf_test

import (
	"syscall"
	"time"
)

// cpuTime returns the CPU time the process has used, which a loaded
// machine's other work does not add to (as it adds to the wall clock).
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
