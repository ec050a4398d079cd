//go:build !purego

package cpu

import "golang.org/x/sys/cpu"

// avx2FMA is read once, at start-up.
var avx2FMA = cpu.X86.HasAVX2 && cpu.X86.HasFMA
