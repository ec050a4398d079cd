//go:build !windows

package main

import (
	"syscall"
	"testing"
)

// mkfifo makes a named FIFO at path.
func mkfifo(t *testing.T, path string) {
	t.Helper()
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Fatal(err)
	}
}
