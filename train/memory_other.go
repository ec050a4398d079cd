//go:build !linux && !darwin && !windows

package train

import (
	"errors"
	"fmt"
	"runtime"
)

// physicalMemory fails: the memory size is not known on this system.
func physicalMemory() (int64, error) {
	return 0, fmt.Errorf("physical memory: not known on %s: %w", runtime.GOOS, errors.ErrUnsupported)
}
