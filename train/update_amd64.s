#include "textflag.h"

// func updateAVX2Asm(gamma float64, mu, logMu, nu, hs []float64, bin []int32, dc []float64)
//
// For j in [0, len(mu)) in steps of 4, with k = bin[j], (log D, c) = dc[2k:2k+2]:
//   mu[j]    = (1−g)·mu[j] + g·nu[j]
//   q        = c·hs[j]
//   logMu[j] += log D + q·((1 − q/2) + q²(1/3 − q/4) + q⁴((1/5 − q/6) + q²(1/7 − q/8)))
TEXT ·updateAVX2Asm(SB), NOSPLIT, $0-152
	MOVQ mu_base+8(FP), SI
	MOVQ mu_len+16(FP), CX
	MOVQ logMu_base+32(FP), R8
	MOVQ nu_base+56(FP), DI
	MOVQ hs_base+80(FP), R9
	MOVQ bin_base+104(FP), R10
	MOVQ dc_base+128(FP), R11

	VBROADCASTSD gamma+0(FP), Y15
	VBROADCASTSD one<>(SB), Y13
	VSUBPD       Y15, Y13, Y14 // 1 − g
	VBROADCASTSD half<>(SB), Y12
	VBROADCASTSD third<>(SB), Y11
	VBROADCASTSD quarter<>(SB), Y10
	VBROADCASTSD fifth<>(SB), Y9
	VBROADCASTSD sixth<>(SB), Y8
	VBROADCASTSD seventh<>(SB), Y7
	VBROADCASTSD eighth<>(SB), Y6

loop:
	CMPQ CX, $4
	JB   done

	// μ ← g·ν + (1−g)·μ
	VMULPD      (DI), Y15, Y0
	VFMADD231PD (SI), Y14, Y0
	VMOVUPD     Y0, (SI)

	// Y3 = c_k, Y4 = log D_k for the four bins
	VMOVDQU    (R10), X1
	VPSLLD     $1, X1, X1
	VPCMPEQD   Y2, Y2, Y2
	VGATHERDPD Y2, 8(R11)(X1*8), Y3
	VPCMPEQD   Y2, Y2, Y2
	VGATHERDPD Y2, (R11)(X1*8), Y4

	VMULPD (R9), Y3, Y3 // q
	VMULPD Y3, Y3, Y5   // q²

	VMOVAPD      Y13, Y0
	VFNMADD231PD Y12, Y3, Y0 // 1 − q/2
	VMOVAPD      Y11, Y1
	VFNMADD231PD Y10, Y3, Y1 // 1/3 − q/4
	VFMADD231PD  Y1, Y5, Y0  // (1 − q/2) + q²(1/3 − q/4)
	VMOVAPD      Y9, Y1
	VFNMADD231PD Y8, Y3, Y1  // 1/5 − q/6
	VMOVAPD      Y7, Y2
	VFNMADD231PD Y6, Y3, Y2  // 1/7 − q/8
	VFMADD231PD  Y2, Y5, Y1  // (1/5 − q/6) + q²(1/7 − q/8)
	VMULPD       Y5, Y5, Y5  // q⁴
	VFMADD231PD  Y1, Y5, Y0  // l
	VFMADD231PD  Y0, Y3, Y4  // log D + q·l
	VADDPD       (R8), Y4, Y4
	VMOVUPD      Y4, (R8)

	ADDQ $32, SI
	ADDQ $32, DI
	ADDQ $32, R8
	ADDQ $32, R9
	ADDQ $16, R10
	SUBQ $4, CX
	JMP  loop

done:
	VZEROUPPER
	RET

// func momentsAVX2Asm(mu, nu, hs []float64, bin []int32, mom []float64)
//
// For every j: d = nu[j] − mu[j], h = hs[j], H = mom[8·bin[j]:]:
//   H[0:4] += d·[1, h, h², h³],  H[4:8] += d·h⁴·[1, h, h², h³].
TEXT ·momentsAVX2Asm(SB), NOSPLIT, $0-120
	MOVQ mu_base+0(FP), SI
	MOVQ mu_len+8(FP), CX
	MOVQ nu_base+24(FP), DI
	MOVQ hs_base+48(FP), R8
	MOVQ bin_base+72(FP), R9
	MOVQ mom_base+96(FP), R10
	VMOVSD one<>(SB), X15

mloop:
	VMOVSD       (DI), X0
	VSUBSD       (SI), X0, X0 // d
	VMOVSD       (R8), X1     // h
	VMULSD       X1, X1, X2   // h²
	VMULSD       X2, X1, X3   // h³
	VMULSD       X2, X2, X4   // h⁴
	VUNPCKLPD    X1, X15, X5  // [1, h]
	VUNPCKLPD    X3, X2, X6   // [h², h³]
	VINSERTF128  $1, X6, Y5, Y5
	VBROADCASTSD X0, Y0
	VMULPD       Y5, Y0, Y5   // d·[1, h, h², h³]
	VBROADCASTSD X4, Y4
	VMULPD       Y4, Y5, Y6   // d·[h⁴, h⁵, h⁶, h⁷]
	MOVLQSX      (R9), AX
	SHLQ         $6, AX
	VADDPD       (R10)(AX*1), Y5, Y5
	VMOVUPD      Y5, (R10)(AX*1)
	VADDPD       32(R10)(AX*1), Y6, Y6
	VMOVUPD      Y6, 32(R10)(AX*1)
	ADDQ         $8, SI
	ADDQ         $8, DI
	ADDQ         $8, R8
	ADDQ         $4, R9
	DECQ         CX
	JNZ          mloop

	VZEROUPPER
	RET

DATA one<>+0(SB)/8, $1.0
GLOBL one<>(SB), RODATA|NOPTR, $8
DATA half<>+0(SB)/8, $0.5
GLOBL half<>(SB), RODATA|NOPTR, $8
DATA third<>+0(SB)/8, $0.3333333333333333
GLOBL third<>(SB), RODATA|NOPTR, $8
DATA quarter<>+0(SB)/8, $0.25
GLOBL quarter<>(SB), RODATA|NOPTR, $8
DATA fifth<>+0(SB)/8, $0.2
GLOBL fifth<>(SB), RODATA|NOPTR, $8
DATA sixth<>+0(SB)/8, $0.16666666666666666
GLOBL sixth<>(SB), RODATA|NOPTR, $8
DATA seventh<>+0(SB)/8, $0.14285714285714285
GLOBL seventh<>(SB), RODATA|NOPTR, $8
DATA eighth<>+0(SB)/8, $0.125
GLOBL eighth<>(SB), RODATA|NOPTR, $8
