//go:build !purego

#include "textflag.h"

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

// func evalBinsAVX2Asm(gamma float64, rho, pm []float64) (s, s2 float64)
//
// evalBinsGo four bins at a time; len(rho) is a multiple of 4 and
// len(pm) ≥ 7·len(rho). Per lane, with r = ρ_b, H_k = pm[k·len(rho) + b]:
//   D  = g·r + (1−g),  c = g·r/D
//   t  = H1 − c·(H2/2 − c·(H3/3 − c·(H4/4 − c·(H5/5 − c·H6/6))))
//   s  += H0·log D + c·t
//   p0 = H0 − c·(H1 − c·(… − c·H5)),  p1 = H1 − c·(H2 − c·(… − c·H6))
//   s2 += ((r − 1)·p0 + r·p1)/D
// and s, s2 are the sums of the four lanes.
TEXT ·evalBinsAVX2Asm(SB), NOSPLIT, $0-72
	MOVQ rho_base+8(FP), SI
	MOVQ rho_len+16(FP), CX
	MOVQ pm_base+32(FP), DI
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
	LOG4(Y1, Y7, Y8, Y9, Y10, Y11)
	VMULPD      Y3, Y2, Y3
	VFMADD231PD (DI), Y7, Y3
	VADDPD      Y3, Y13, Y13

	ADDQ $32, SI
	ADDQ $32, DI
	SUBQ $4, CX
	JNZ  loop

done:
	VEXTRACTF128 $1, Y13, X0
	VADDPD       X0, X13, X13
	VUNPCKHPD    X13, X13, X0
	VADDSD       X0, X13, X13
	VMOVSD       X13, s+56(FP)
	VEXTRACTF128 $1, Y12, X0
	VADDPD       X0, X12, X12
	VUNPCKHPD    X12, X12, X0
	VADDSD       X0, X12, X12
	VMOVSD       X12, s2+64(FP)
	VZEROUPPER
	RET

// func logAVX2Asm(dst, src []float64)
//
// dst[i] = log src[i] by LOG4, for len(src) a multiple of 4 and
// len(dst) ≥ len(src); every src[i] must be positive, finite and normal.
TEXT ·logAVX2Asm(SB), NOSPLIT, $0-48
	MOVQ dst_base+0(FP), DI
	MOVQ src_base+24(FP), SI
	MOVQ src_len+32(FP), CX
	TESTQ CX, CX
	JZ    ldone

lloop:
	VMOVUPD (SI), Y0
	LOG4(Y0, Y1, Y2, Y3, Y4, Y5)
	VMOVUPD Y1, (DI)
	ADDQ    $32, SI
	ADDQ    $32, DI
	SUBQ    $4, CX
	JNZ     lloop

ldone:
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
C4(ebthird, $0x3fd5555555555555)
C4(ebquarter, $0x3fd0000000000000)
C4(ebfifth, $0x3fc999999999999a)
C4(ebsixth, $0x3fc5555555555555)
C4(ebln2hi, $0x3fe62e42fee00000)
C4(ebln2lo, $0x3dea39ef35793c76)
C4(ebL1, $0x3fe5555555555593)
C4(ebL2, $0x3fd999999997fa04)
C4(ebL3, $0x3fd2492494229359)
C4(ebL4, $0x3fcc71c51d8e78af)
C4(ebL5, $0x3fc7466496cb03de)
C4(ebL6, $0x3fc39a09d078c69f)
C4(ebL7, $0x3fc2f112df3e5244)
