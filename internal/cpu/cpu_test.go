package cpu

import (
	"runtime"
	"testing"

	"golang.org/x/sys/cpu"
)

// TestAVX2FMA checks the probe against the processor's own flags: true
// exactly on amd64 with AVX2 and FMA, outside a purego build.
func TestAVX2FMA(t *testing.T) {
	want := runtime.GOARCH == "amd64" && !purego && cpu.X86.HasAVX2 && cpu.X86.HasFMA
	if AVX2FMA() != want {
		t.Fatalf("AVX2FMA() = %v on %s (AVX2 %v, FMA %v, purego %v)", AVX2FMA(), runtime.GOARCH, cpu.X86.HasAVX2, cpu.X86.HasFMA, purego)
	}
	t.Logf("assembly kernels: %v", AVX2FMA())
}

// TestAVX512 checks the AVX-512 probe the same way: true exactly where
// AVX2FMA is and the processor has AVX-512 F, DQ, BW and VL (x/sys/cpu
// reports them only where the operating system saves the vector state).
func TestAVX512(t *testing.T) {
	x := cpu.X86
	want := AVX2FMA() && x.HasAVX512F && x.HasAVX512DQ && x.HasAVX512BW && x.HasAVX512VL
	if AVX512() != want {
		t.Fatalf("AVX512() = %v (AVX2FMA %v, F %v, DQ %v, BW %v, VL %v)", AVX512(), AVX2FMA(), x.HasAVX512F, x.HasAVX512DQ, x.HasAVX512BW, x.HasAVX512VL)
	}
	if AVX512() && !AVX2FMA() {
		t.Fatal("AVX512() without AVX2FMA()")
	}
	t.Logf("AVX-512 kernels: %v", AVX512())
}
