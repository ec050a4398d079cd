//go:build !purego

#include "textflag.h"

// The AVX-512 loop of LogVec, used where the CPU has AVX-512 (cpu.AVX512):
// LOG4 of logvec_amd64.s eight lanes at a time, the same operations in the
// same order on every lane with the same constants, so that each result is
// LOG4's bit for bit.

// LOG8(X, L, F, K, S, Z) is LOG4 on eight doubles, with its constants held
// in Z16 … Z31 (loaded by logVecAVX512Asm before its loop).
#define LOG8(X, L, F, K, S, Z) \
	VPADDQ      Z16, X, F; \
	VPSRLQ      $52, F, K; \
	VPORQ       Z17, K, K; \
	VSUBPD      Z18, K, K; \
	VPANDQ      Z19, F, F; \
	VPADDQ      Z20, F, F; \
	VSUBPD      Z21, F, F; \
	VADDPD      Z22, F, S; \
	VDIVPD      S, F, S; \
	VMULPD      S, S, Z; \
	VMOVAPD     Z31, L; \
	VFMADD213PD Z30, Z, L; \
	VFMADD213PD Z29, Z, L; \
	VFMADD213PD Z28, Z, L; \
	VFMADD213PD Z27, Z, L; \
	VFMADD213PD Z26, Z, L; \
	VFMADD213PD Z25, Z, L; \
	VMULPD      Z, L, L; \
	VMULPD      F, F, Z; \
	VMULPD      Z23, Z, Z; \
	VADDPD      Z, L, L; \
	VMULPD      S, L, L; \
	VFMADD231PD Z15, K, L; \
	VSUBPD      L, Z, Z; \
	VSUBPD      F, Z, Z; \
	VMOVAPD     Z, L; \
	VFMSUB231PD Z24, K, L

// func logVecAVX512Asm(dst, src []float64)
//
// dst[i] = log src[i] by LOG8, for len(src) a positive multiple of 8 and
// len(dst) ≥ len(src); every src[i] must be positive, finite and normal
// (for other entries dst[i] is what LOG4 gives).
TEXT ·logVecAVX512Asm(SB), NOSPLIT, $0-48
	MOVQ dst_base+0(FP), DI
	MOVQ src_base+24(FP), SI
	MOVQ src_len+32(FP), CX

	VPBROADCASTQ zlogoff<>(SB), Z16
	VPBROADCASTQ ztwo52<>(SB), Z17
	VPBROADCASTQ zbias<>(SB), Z18
	VPBROADCASTQ zmant<>(SB), Z19
	VPBROADCASTQ zsqrth<>(SB), Z20
	VPBROADCASTQ zone<>(SB), Z21
	VPBROADCASTQ ztwo<>(SB), Z22
	VPBROADCASTQ zhalf<>(SB), Z23
	VPBROADCASTQ zln2hi<>(SB), Z24
	VPBROADCASTQ zln2lo<>(SB), Z15
	VPBROADCASTQ zL1<>(SB), Z25
	VPBROADCASTQ zL2<>(SB), Z26
	VPBROADCASTQ zL3<>(SB), Z27
	VPBROADCASTQ zL4<>(SB), Z28
	VPBROADCASTQ zL5<>(SB), Z29
	VPBROADCASTQ zL6<>(SB), Z30
	VPBROADCASTQ zL7<>(SB), Z31

zloop:
	VMOVUPD (SI), Z0
	LOG8(Z0, Z1, Z2, Z3, Z4, Z5)
	VMOVUPD Z1, (DI)
	ADDQ    $64, SI
	ADDQ    $64, DI
	SUBQ    $8, CX
	JNZ     zloop

	VZEROUPPER
	RET

// The constants of LOG4 (logvec_amd64.s), one each, broadcast when loaded.
#define Q(name, v) DATA name<>+0(SB)/8, v; GLOBL name<>(SB), RODATA|NOPTR, $8
Q(zlogoff, $0x00095f619980c433) // bits(1) − bits(√½)
Q(zsqrth, $0x3fe6a09e667f3bcd)  // bits(√½)
Q(zmant, $0x000fffffffffffff)
Q(ztwo52, $0x4330000000000000)  // 2^52
Q(zbias, $0x43300000000003ff)   // 2^52 + 1023
Q(zone, $0x3ff0000000000000)
Q(ztwo, $0x4000000000000000)
Q(zhalf, $0x3fe0000000000000)
Q(zln2hi, $0x3fe62e42fee00000)
Q(zln2lo, $0x3dea39ef35793c76)
Q(zL1, $0x3fe5555555555593)
Q(zL2, $0x3fd999999997fa04)
Q(zL3, $0x3fd2492494229359)
Q(zL4, $0x3fcc71c51d8e78af)
Q(zL5, $0x3fc7466496cb03de)
Q(zL6, $0x3fc39a09d078c69f)
Q(zL7, $0x3fc2f112df3e5244)
