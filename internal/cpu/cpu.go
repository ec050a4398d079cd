// Package cpu is the one probe of the processor that crf and train consult
// to choose between their assembly kernels and the Go twins those kernels
// are tested against.
package cpu

// AVX2FMA reports whether the assembly kernels of crf and train can run:
// on amd64 with AVX2 and FMA, and never in a build with the purego tag,
// which selects the Go loops everywhere.
func AVX2FMA() bool { return avx2FMA }
