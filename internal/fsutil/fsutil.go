// Package fsutil holds the file-system helpers that both the pipeline's
// outputs and the trainer's checkpoints and dual stores need, so that train
// does not import pipeline (and with it Arrow).
package fsutil

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// SyncDir makes the directory entries of dir durable (a file created or
// renamed in it), by syncing the directory itself. File systems that cannot
// sync a directory (EINVAL) are taken to need no such sync.
func SyncDir(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("sync directory: %w", err)
	}
	defer f.Close()
	if err := f.Sync(); err != nil && !errors.Is(err, syscall.EINVAL) {
		return fmt.Errorf("sync directory %s: %w", dir, err)
	}
	return nil
}
