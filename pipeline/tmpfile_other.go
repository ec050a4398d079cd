//go:build !linux

package pipeline

import (
	"errors"
	"os"
)

// openUnnamed reports that unnamed files are not available on this system.
func openUnnamed(dir string, perm uint32) (*os.File, error) { return nil, errNoUnnamed }

// linkUnnamed is never called where openUnnamed always fails.
func linkUnnamed(f *os.File, path string) error { return errors.ErrUnsupported }
