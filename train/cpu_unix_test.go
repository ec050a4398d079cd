//go:build unix

package train_test

import (
	"syscall"
	"time"
)

// cpuSeconds returns the process's user and system CPU seconds so far.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}
