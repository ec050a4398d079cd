//go:build !windows

package main

import (
	"os"
	"runtime"
	"syscall"
)

// peakRSS returns the maximum resident set size of a finished process in
// bytes (Linux reports KiB, macOS bytes), or 0 when unknown.
func peakRSS(st *os.ProcessState) int64 {
	if st == nil {
		return 0
	}
	ru, ok := st.SysUsage().(*syscall.Rusage)
	if !ok || ru == nil {
		return 0
	}
	if runtime.GOOS == "darwin" {
		return int64(ru.Maxrss)
	}
	return int64(ru.Maxrss) * 1024
}
