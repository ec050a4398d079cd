package platform

import (
	"errors"
	"syscall"
)

// IsBrokenPipe reports whether err comes from writing to a pipe whose
// reader has gone (EPIPE; on Windows ERROR_NO_DATA or ERROR_BROKEN_PIPE).
func IsBrokenPipe(err error) bool {
	return errors.Is(err, syscall.EPIPE) || isBrokenPipeOS(err)
}
