//go:build !purego

package cpu

import "golang.org/x/sys/cpu"

// avx2FMA and avx512 are read once, at start-up.
var (
	avx2FMA = cpu.X86.HasAVX2 && cpu.X86.HasFMA
	avx512  = avx2FMA && cpu.X86.HasAVX512F && cpu.X86.HasAVX512DQ && cpu.X86.HasAVX512BW && cpu.X86.HasAVX512VL
)
