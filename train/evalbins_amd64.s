//go:build !purego

#include "textflag.h"

// func evalBinsAVX2Asm(gamma float64, rho, pm, logD []float64) (s, s2 float64)
//
// evalBinsGo four bins at a time; len(rho) is a multiple of 4,
// len(pm) ≥ 7·len(rho) and len(logD) ≥ len(rho). Per lane, with r = ρ_b,
// H_k = pm[k·len(rho) + b] and log D = logD[b]:
//   D  = g·r + (1−g),  c = g·r/D
//   t  = H1 − c·(H2/2 − c·(H3/3 − c·(H4/4 − c·(H5/5 − c·H6/6))))
//   s  += H0·log D + c·t
//   p0 = H0 − c·(H1 − c·(… − c·H5)),  p1 = H1 − c·(H2 − c·(… − c·H6))
//   s2 += ((r − 1)·p0 + r·p1)/D
// and s, s2 are the sums of the four lanes.
TEXT ·evalBinsAVX2Asm(SB), NOSPLIT, $0-96
	MOVQ rho_base+8(FP), SI
	MOVQ rho_len+16(FP), CX
	MOVQ pm_base+32(FP), DI
	MOVQ logD_base+56(FP), R11
	MOVQ CX, DX
	SHLQ $3, DX             // stride between moments, bytes
	LEAQ (DX)(DX*2), R8     // 3·stride
	LEAQ (DX)(DX*4), R9     // 5·stride
	LEAQ (R8)(R8*1), R10    // 6·stride

	VBROADCASTSD gamma+0(FP), Y15
	VMOVUPD      ebone<>(SB), Y14
	VSUBPD       Y15, Y14, Y14 // 1 − g
	VXORPD       Y13, Y13, Y13 // s
	VXORPD       Y12, Y12, Y12 // s2

	TESTQ CX, CX
	JZ    done

loop:
	VMOVUPD     (SI), Y0      // r
	VMULPD      Y0, Y15, Y2   // g·r
	VADDPD      Y14, Y2, Y1   // D = g·r + (1 − g)
	VDIVPD      Y1, Y2, Y2    // c

	// t, by Horner's scheme from H6/6.
	VMOVUPD      (DI)(R10*1), Y3
	VMULPD       ebsixth<>(SB), Y3, Y3
	VMOVUPD      (DI)(R9*1), Y6
	VMULPD       ebfifth<>(SB), Y6, Y6
	VFNMADD213PD Y6, Y2, Y3   // H5/5 − c·t
	VMOVUPD      (DI)(DX*4), Y6
	VMULPD       ebquarter<>(SB), Y6, Y6
	VFNMADD213PD Y6, Y2, Y3   // H4/4 − c·t
	VMOVUPD      (DI)(R8*1), Y6
	VMULPD       ebthird<>(SB), Y6, Y6
	VFNMADD213PD Y6, Y2, Y3   // H3/3 − c·t
	VMOVUPD      (DI)(DX*2), Y6
	VMULPD       ebhalf<>(SB), Y6, Y6
	VFNMADD213PD Y6, Y2, Y3   // H2/2 − c·t
	VFNMADD213PD (DI)(DX*1), Y2, Y3 // H1 − c·t

	// p0 from H5, p1 from H6.
	VMOVUPD      (DI)(R9*1), Y4
	VMOVUPD      (DI)(R10*1), Y5
	VFNMADD213PD (DI)(DX*4), Y2, Y4
	VFNMADD213PD (DI)(R9*1), Y2, Y5
	VFNMADD213PD (DI)(R8*1), Y2, Y4
	VFNMADD213PD (DI)(DX*4), Y2, Y5
	VFNMADD213PD (DI)(DX*2), Y2, Y4
	VFNMADD213PD (DI)(R8*1), Y2, Y5
	VFNMADD213PD (DI)(DX*1), Y2, Y4
	VFNMADD213PD (DI)(DX*2), Y2, Y5
	VFNMADD213PD (DI), Y2, Y4
	VFNMADD213PD (DI)(DX*1), Y2, Y5

	// s2 += ((r − 1)·p0 + r·p1)/D
	VSUBPD      ebone<>(SB), Y0, Y6
	VMULPD      Y4, Y6, Y6
	VFMADD231PD Y5, Y0, Y6
	VDIVPD      Y1, Y6, Y6
	VADDPD      Y6, Y12, Y12

	// s += H0·log D + c·t
	VMOVUPD     (R11), Y7     // log D
	VMULPD      Y3, Y2, Y3
	VFMADD231PD (DI), Y7, Y3
	VADDPD      Y3, Y13, Y13

	ADDQ $32, SI
	ADDQ $32, DI
	ADDQ $32, R11
	SUBQ $4, CX
	JNZ  loop

done:
	VEXTRACTF128 $1, Y13, X0
	VADDPD       X0, X13, X13
	VUNPCKHPD    X13, X13, X0
	VADDSD       X0, X13, X13
	VMOVSD       X13, s+80(FP)
	VEXTRACTF128 $1, Y12, X0
	VADDPD       X0, X12, X12
	VUNPCKHPD    X12, X12, X0
	VADDSD       X0, X12, X12
	VMOVSD       X12, s2+88(FP)
	VZEROUPPER
	RET

#define C4(name, v) DATA name<>+0(SB)/8, v; DATA name<>+8(SB)/8, v; DATA name<>+16(SB)/8, v; DATA name<>+24(SB)/8, v; GLOBL name<>(SB), RODATA|NOPTR, $32

C4(ebone, $0x3ff0000000000000)
C4(ebhalf, $0x3fe0000000000000)
C4(ebthird, $0x3fd5555555555555)
C4(ebquarter, $0x3fd0000000000000)
C4(ebfifth, $0x3fc999999999999a)
C4(ebsixth, $0x3fc5555555555555)
