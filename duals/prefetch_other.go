//go:build !amd64 || purego

package duals

// prefetch does nothing on this architecture.
func prefetch(b []byte) {}
