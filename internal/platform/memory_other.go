//go:build !linux && !darwin && !windows

package platform

import (
	"errors"
	"fmt"
	"runtime"
)

// PhysicalMemory fails (the error wraps errors.ErrUnsupported): the memory
// size is not known on this system.
func PhysicalMemory() (int64, error) {
	return 0, fmt.Errorf("physical memory: not known on %s: %w", runtime.GOOS, errors.ErrUnsupported)
}
