//go:build !windows

package platform

// isBrokenPipeOS reports false: EPIPE is the only such error here.
func isBrokenPipeOS(err error) bool { return false }
