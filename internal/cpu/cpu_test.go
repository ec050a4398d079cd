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
