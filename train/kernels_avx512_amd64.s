//go:build !purego

#include "textflag.h"

// The AVX-512 loops of train's kernels (kernels_amd64.go), used where the
// CPU has AVX-512 (cpu.AVX512). Each computes exactly what its AVX2 loop in
// kernels_amd64.s computes — the same operations on every entry, the same
// sums added in the same order — eight entries at a time; their Go twins
// are in kernels.go.

// func ratiosMomentsAVX512Asm(mu, logMu, nu, hs []float64, key []int32, mom []float64, sign float64, acc *ratiosAcc)
//
// ratiosMomentsAVX2Asm eight entries at a time (len(mu) a positive multiple
// of 8): entries j … j+3 of each eight are the AVX2 loop's group j, added
// first into the four lanes of acc's sums, then entries j+4 … j+7, its
// group j+4. Keys, h and the moments added into the slots (entry e's eight
// numbers d·[1, h, h², h³, h⁴, h⁵, h⁶] and 1 into copy e mod 4 of its
// key's slot, entries in order) are those of the AVX2 loop bit for bit.
TEXT ·ratiosMomentsAVX512Asm(SB), NOSPLIT, $0-160
	MOVQ mu_base+0(FP), SI
	MOVQ mu_len+8(FP), CX
	MOVQ logMu_base+24(FP), R8
	MOVQ nu_base+48(FP), DI
	MOVQ hs_base+72(FP), R9
	MOVQ key_base+96(FP), R10
	MOVQ mom_base+120(FP), R11
	MOVQ acc+152(FP), R13

	VBROADCASTSD sign+144(FP), Z23
	VPBROADCASTQ zminnorm<>(SB), Z31
	VPBROADCASTQ zbias963<>(SB), Z30
	VPBROADCASTQ zmant<>(SB), Z29
	VPBROADCASTQ zone<>(SB), Z28
	VPBROADCASTQ zcell<>(SB), Z27
	VPBROADCASTQ zcentre<>(SB), Z26
	VPBROADCASTQ zlow5<>(SB), Z25
	VPBROADCASTD zsentinel<>(SB), Y24
	VPBROADCASTQ zmax120<>(SB), Z19
	VMOVUPD      0(R13), Y12  // Σ μ log μ, four lanes
	VMOVUPD      32(R13), Y13 // Σ δ log μ, four lanes
	VPBROADCASTD 64(R13), Y20 // least key so far
	VPBROADCASTD 68(R13), Y21 // greatest key so far

rloop:
	VMOVUPD   (SI), Z0               // μ
	VMOVUPD   (DI), Z1               // ν
	VCMPPD    $0x1d, Z31, Z0, K1     // μ ≥ 2^-1022: normal
	VMOVUPD.Z (R8), K1, Z2           // log μ where μ is normal, else 0
	VSUBPD    Z0, Z1, Z4             // δ
	VEXTRACTF64X4 $1, Z0, Y16
	VEXTRACTF64X4 $1, Z2, Y17
	VEXTRACTF64X4 $1, Z4, Y18
	VFMADD231PD Y2, Y0, Y12          // the AVX2 loop's group j …
	VFMADD231PD Y2, Y4, Y13
	VFMADD231PD Y17, Y16, Y12        // … then its group j+4
	VFMADD231PD Y17, Y18, Y13
	VDIVPD    Z0, Z1, Z5             // ρ

	VPSRLQ     $52, Z5, Z6
	VPSUBQ     Z30, Z6, Z6           // e
	VPCMPUQ    $2, Z19, Z6, K1, K2   // ok = μ normal and 0 ≤ e ≤ 120
	VPSLLQ     $5, Z6, Z10
	VPSRLQ     $47, Z5, Z9
	VPTERNLOGQ $0xea, Z10, Z25, Z9   // e<<5 | (bits(ρ)>>47 & 31)
	VPMOVQD    Z9, Y10               // the eight keys
	VPBLENDMD  Y10, Y24, K2, Y10     // binKeys where not ok
	VPMINSD    Y10, Y20, Y20
	VPMAXSD    Y10, Y21, K2, Y21
	VMOVDQU32  Y10, (R10)

	VPANDQ   Z29, Z5, Z9
	VPORQ    Z28, Z9, Z9             // m
	VPANDQ   Z27, Z5, Z11
	VPORQ    Z26, Z11, Z11           // c
	VSUBPD.Z Z11, Z9, K2, Z9         // h = m − c where ok, else 0
	VMOVUPD  Z9, (R9)

	// The moments, eight rows of eight entries …
	VMULPD Z23, Z4, Z4 // d
	VMULPD Z9, Z4, Z0  // d·h
	VMULPD Z9, Z9, Z1  // h²
	VMULPD Z1, Z4, Z2  // d·h²
	VMULPD Z1, Z0, Z3  // d·h³
	VMULPD Z1, Z2, Z5  // d·h⁴
	VMULPD Z1, Z3, Z6  // d·h⁵
	VMULPD Z1, Z5, Z7  // d·h⁶

	// … transposed: entry e's eight numbers in one vector.
	VUNPCKLPD  Z0, Z4, Z8          // (d, d·h) of entries 0, 2, 4, 6
	VUNPCKHPD  Z0, Z4, Z9          // of entries 1, 3, 5, 7
	VUNPCKLPD  Z3, Z2, Z10         // (d·h², d·h³)
	VUNPCKHPD  Z3, Z2, Z11
	VUNPCKLPD  Z6, Z5, Z14         // (d·h⁴, d·h⁵)
	VUNPCKHPD  Z6, Z5, Z15
	VUNPCKLPD  Z28, Z7, Z16        // (d·h⁶, 1)
	VUNPCKHPD  Z28, Z7, Z17
	VSHUFF64X2 $0x88, Z10, Z8, Z0  // entries 0 and 4, numbers 0-3
	VSHUFF64X2 $0xdd, Z10, Z8, Z1  // 2 and 6
	VSHUFF64X2 $0x88, Z11, Z9, Z2  // 1 and 5
	VSHUFF64X2 $0xdd, Z11, Z9, Z3  // 3 and 7
	VSHUFF64X2 $0x88, Z16, Z14, Z4 // entries 0 and 4, numbers 4-7
	VSHUFF64X2 $0xdd, Z16, Z14, Z5
	VSHUFF64X2 $0x88, Z17, Z15, Z6
	VSHUFF64X2 $0xdd, Z17, Z15, Z7
	VSHUFF64X2 $0x88, Z4, Z0, Z8   // entry 0
	VSHUFF64X2 $0xdd, Z4, Z0, Z9   // entry 4
	VSHUFF64X2 $0x88, Z6, Z2, Z10  // entry 1
	VSHUFF64X2 $0xdd, Z6, Z2, Z11  // entry 5
	VSHUFF64X2 $0x88, Z5, Z1, Z14  // entry 2
	VSHUFF64X2 $0xdd, Z5, Z1, Z15  // entry 6
	VSHUFF64X2 $0x88, Z7, Z3, Z16  // entry 3
	VSHUFF64X2 $0xdd, Z7, Z3, Z17  // entry 7

	// Each into copy e mod 4 of its key's slot (key·256 bytes into mom),
	// entries 0-3 before 4-7, which may add into the same copies.
	MOVLQZX 0(R10), AX
	MOVLQZX 4(R10), BX
	MOVLQZX 8(R10), DX
	MOVLQZX 12(R10), R12
	SHLQ    $8, AX
	SHLQ    $8, BX
	SHLQ    $8, DX
	SHLQ    $8, R12
	VADDPD  0(R11)(AX*1), Z8, Z8
	VMOVUPD Z8, 0(R11)(AX*1)
	VADDPD  64(R11)(BX*1), Z10, Z10
	VMOVUPD Z10, 64(R11)(BX*1)
	VADDPD  128(R11)(DX*1), Z14, Z14
	VMOVUPD Z14, 128(R11)(DX*1)
	VADDPD  192(R11)(R12*1), Z16, Z16
	VMOVUPD Z16, 192(R11)(R12*1)
	MOVLQZX 16(R10), AX
	MOVLQZX 20(R10), BX
	MOVLQZX 24(R10), DX
	MOVLQZX 28(R10), R12
	SHLQ    $8, AX
	SHLQ    $8, BX
	SHLQ    $8, DX
	SHLQ    $8, R12
	VADDPD  0(R11)(AX*1), Z9, Z9
	VMOVUPD Z9, 0(R11)(AX*1)
	VADDPD  64(R11)(BX*1), Z11, Z11
	VMOVUPD Z11, 64(R11)(BX*1)
	VADDPD  128(R11)(DX*1), Z15, Z15
	VMOVUPD Z15, 128(R11)(DX*1)
	VADDPD  192(R11)(R12*1), Z17, Z17
	VMOVUPD Z17, 192(R11)(R12*1)

	ADDQ $64, SI
	ADDQ $64, DI
	ADDQ $64, R8
	ADDQ $64, R9
	ADDQ $32, R10
	SUBQ $8, CX
	JNZ  rloop

	VMOVUPD         Y12, 0(R13)
	VMOVUPD         Y13, 32(R13)
	VEXTRACTI32X4   $1, Y20, X0
	VPMINSD         X0, X20, X0
	VPSHUFD         $0x4e, X0, X1
	VPMINSD         X1, X0, X0
	VPSHUFD         $0xb1, X0, X1
	VPMINSD         X1, X0, X0
	VMOVD           X0, 64(R13)
	VEXTRACTI32X4   $1, Y21, X0
	VPMAXSD         X0, X21, X0
	VPSHUFD         $0x4e, X0, X1
	VPMAXSD         X1, X0, X0
	VPSHUFD         $0xb1, X0, X1
	VPMAXSD         X1, X0, X0
	VMOVD           X0, 68(R13)
	VZEROUPPER
	RET

// Constants, one 64-bit (Q) or 32-bit (D) value each, broadcast where used.
#define Q(name, v) DATA name<>+0(SB)/8, v; GLOBL name<>(SB), RODATA|NOPTR, $8
#define D(name, v) DATA name<>+0(SB)/4, v; GLOBL name<>(SB), RODATA|NOPTR, $4

Q(zone, $0x3ff0000000000000)     // 1.0
Q(zminnorm, $0x0010000000000000) // 2^-1022, the least normal float64
Q(zbias963, $963)                // 1023 − binExpSpan
Q(zmax120, $120)                 // 2·binExpSpan
Q(zlow5, $31)                    // the five key bits of the mantissa
Q(zmant, $0x000fffffffffffff)    // a float64's mantissa bits
Q(zcell, $0x000f800000000000)    // the top five bits of the mantissa
Q(zcentre, $0x3ff0400000000000)  // 1.0 with the half-cell bit
D(zsentinel, $3872)              // binKeys
