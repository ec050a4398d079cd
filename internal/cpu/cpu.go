// Package cpu is the one probe of the processor that crf and train consult
// to choose between their assembly kernels and the Go twins those kernels
// are tested against.
package cpu

// AVX2FMA reports whether the assembly kernels of crf and train can run:
// on amd64 with AVX2 and FMA, and never in a build with the purego tag,
// which selects the Go loops everywhere.
func AVX2FMA() bool { return avx2FMA }

// AVX512 reports whether the AVX-512 kernels of crf and train can run: where
// AVX2FMA does, on a processor (and operating system) with AVX-512 F, DQ,
// BW and VL. Those kernels compute exactly what the AVX2 ones do, bit for
// bit, eight lanes at a time; without them the AVX2 kernels run.
func AVX512() bool { return avx512 }
