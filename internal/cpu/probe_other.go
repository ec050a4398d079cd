//go:build !amd64 || purego

package cpu

// avx2FMA is false: no assembly kernel exists for this architecture, or
// the purego tag asks for the Go loops.
const avx2FMA = false
