package main

import (
	"fmt"
	"syscall"
)

// signalSelf fails: a Windows process cannot send itself SIGINT or SIGTERM.
func signalSelf(sig syscall.Signal) error {
	return fmt.Errorf("cannot send %v to this process on windows", sig)
}
