//go:build !windows

// Package fifotest makes named FIFOs for the tests of the stages that must
// read a pipe once (featurize's spool, pipeline's inputs, the command).
package fifotest

import (
	"syscall"
	"testing"
)

// Make makes a named FIFO at path, failing the test if it cannot.
func Make(t testing.TB, path string) {
	t.Helper()
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Fatal(err)
	}
}
