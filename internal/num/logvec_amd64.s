//go:build !purego

#include "textflag.h"

// The vector logarithm behind LogVec: LogInto, crf's edge factors, and
// train's log μ sweep and line-search bins all take their logarithms here.

// LOG4(X, L, F, K, S, Z) sets L = log X lane by lane for four doubles X that
// are positive, finite and normal (X is left alone; F, K, S and Z are
// clobbered). It is fdlibm's log (Go's math.Log) without the special cases:
//
//   X = 2^k·m with m in [√½, √2): u = bits(X) + (bits(1) − bits(√½)),
//     k = (u >> 52) − 1023, bits(m) = (u & mantissa) + bits(√½);
//     k as a double by 2^52-or-ing: (2^52 | (u >> 52)) − (2^52 + 1023);
//   f = m − 1 (exact), s = f/(2 + f), z = s² ≤ 0.0295,
//   R = z·(L1 + z·(L2 + … + z·L7)) ≈ log((1+s)/(1−s))/s − 2 (|error| < 2^-58.45),
//   hfsq = f²/2,
//   log X = k·ln2hi − ((hfsq − (s·(hfsq + R) + k·ln2lo)) − f).
//
// Near X = 1 (k = 0) the result is f − hfsq + s·(hfsq + R) with f exact, so
// it is accurate relative to log X itself, not just absolutely.
#define LOG4(X, L, F, K, S, Z) \
	VPADDQ      eblogoff<>(SB), X, F; \
	VPSRLQ      $52, F, K; \
	VPOR        ebtwo52<>(SB), K, K; \
	VSUBPD      ebbias<>(SB), K, K; \
	VPAND       ebmant<>(SB), F, F; \
	VPADDQ      ebsqrth<>(SB), F, F; \
	VSUBPD      ebone<>(SB), F, F; \
	VADDPD      ebtwo<>(SB), F, S; \
	VDIVPD      S, F, S; \
	VMULPD      S, S, Z; \
	VMOVUPD     ebL7<>(SB), L; \
	VFMADD213PD ebL6<>(SB), Z, L; \
	VFMADD213PD ebL5<>(SB), Z, L; \
	VFMADD213PD ebL4<>(SB), Z, L; \
	VFMADD213PD ebL3<>(SB), Z, L; \
	VFMADD213PD ebL2<>(SB), Z, L; \
	VFMADD213PD ebL1<>(SB), Z, L; \
	VMULPD      Z, L, L; \
	VMULPD      F, F, Z; \
	VMULPD      ebhalf<>(SB), Z, Z; \
	VADDPD      Z, L, L; \
	VMULPD      S, L, L; \
	VFMADD231PD ebln2lo<>(SB), K, L; \
	VSUBPD      L, Z, Z; \
	VSUBPD      F, Z, Z; \
	VMOVAPD     Z, L; \
	VFMSUB231PD ebln2hi<>(SB), K, L

// func logVecAsm(dst, src []float64)
//
// dst[i] = log src[i] by LOG4, for len(src) a multiple of 4 and
// len(dst) ≥ len(src); every src[i] must be positive, finite and normal.
TEXT ·logVecAsm(SB), NOSPLIT, $0-48
	MOVQ dst_base+0(FP), DI
	MOVQ src_base+24(FP), SI
	MOVQ src_len+32(FP), CX
	TESTQ CX, CX
	JZ    vdone

vloop:
	VMOVUPD (SI), Y0
	LOG4(Y0, Y1, Y2, Y3, Y4, Y5)
	VMOVUPD Y1, (DI)
	ADDQ    $32, SI
	ADDQ    $32, DI
	SUBQ    $4, CX
	JNZ     vloop

vdone:
	VZEROUPPER
	RET

#define C4(name, v) DATA name<>+0(SB)/8, v; DATA name<>+8(SB)/8, v; DATA name<>+16(SB)/8, v; DATA name<>+24(SB)/8, v; GLOBL name<>(SB), RODATA|NOPTR, $32
C4(eblogoff, $0x00095f619980c433) // bits(1) − bits(√½)
C4(ebsqrth, $0x3fe6a09e667f3bcd)  // bits(√½)
C4(ebmant, $0x000fffffffffffff)
C4(ebtwo52, $0x4330000000000000)  // 2^52
C4(ebbias, $0x43300000000003ff)   // 2^52 + 1023
C4(ebone, $0x3ff0000000000000)
C4(ebtwo, $0x4000000000000000)
C4(ebhalf, $0x3fe0000000000000)
C4(ebln2hi, $0x3fe62e42fee00000)
C4(ebln2lo, $0x3dea39ef35793c76)
C4(ebL1, $0x3fe5555555555593)
C4(ebL2, $0x3fd999999997fa04)
C4(ebL3, $0x3fd2492494229359)
C4(ebL4, $0x3fcc71c51d8e78af)
C4(ebL5, $0x3fc7466496cb03de)
C4(ebL6, $0x3fc39a09d078c69f)
C4(ebL7, $0x3fc2f112df3e5244)
