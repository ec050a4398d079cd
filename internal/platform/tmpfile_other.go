//go:build !linux

package platform

import (
	"errors"
	"os"
)

// OpenUnnamed reports that unnamed files are not available on this system.
func OpenUnnamed(dir string, perm uint32) (*os.File, error) { return nil, ErrNoUnnamed }

// LinkUnnamed is never called where OpenUnnamed always fails.
func LinkUnnamed(f *os.File, path string) error { return errors.ErrUnsupported }
