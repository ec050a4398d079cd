package platform

import (
	"errors"

	"golang.org/x/sys/windows"
)

// isBrokenPipeOS reports Windows' errors for a write to a pipe whose
// reader has gone: ERROR_NO_DATA ("the pipe is being closed") or
// ERROR_BROKEN_PIPE.
func isBrokenPipeOS(err error) bool {
	return errors.Is(err, windows.ERROR_NO_DATA) || errors.Is(err, windows.ERROR_BROKEN_PIPE)
}
