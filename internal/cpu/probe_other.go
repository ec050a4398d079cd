//go:build !amd64 || purego

package cpu

// avx2FMA and avx512 are false: no assembly kernel exists for this
// architecture, or the purego tag asks for the Go loops.
const (
	avx2FMA = false
	avx512  = false
)
