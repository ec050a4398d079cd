//go:build !purego

#include "textflag.h"

// The AVX-512 loops of train's kernels (kernels_amd64.go), used where the
// CPU has AVX-512 (cpu.AVX512). Each computes exactly what its AVX2 loop in
// kernels_amd64.s computes — the same operations on every entry, the same
// sums added in the same order — eight entries at a time; their Go twins
// are in kernels.go.

// RATIOS8_SETUP loads the constants of RATIO8 (Z19, Z23, Z25 … Z31, with
// sign at R14) and acc's sums and key range (R13) into Y12, Y13, Y20, Y21.
#define RATIOS8_SETUP \
	VBROADCASTSD (R14), Z23; \
	VPBROADCASTQ zminnorm<>(SB), Z31; \
	VPBROADCASTQ zbias963<>(SB), Z30; \
	VPBROADCASTQ zmant<>(SB), Z29; \
	VPBROADCASTQ zone<>(SB), Z28; \
	VPBROADCASTQ zcell<>(SB), Z27; \
	VPBROADCASTQ zcentre<>(SB), Z26; \
	VPBROADCASTQ zlow5<>(SB), Z25; \
	VPBROADCASTD zsentinel<>(SB), Y24; \
	VPBROADCASTQ zmax120<>(SB), Z19; \
	VMOVUPD      0(R13), Y12; \
	VMOVUPD      32(R13), Y13; \
	VPBROADCASTD 64(R13), Y20; \
	VPBROADCASTD 68(R13), Y21

// RATIO8 is one step of the AVX2 loop's sweep on eight entries, with
// Z0 = μ, Z1 = ν, K1 = μ normal (≥ 2^-1022), Z2 = log μ where K1, else 0;
// keys to (R10), h to (R9), moments into the slots at R11:
//
//   δ = ν − μ; the AVX2 loop's group j (entries 0-3: the low halves) adds
//   μ·log μ and δ·log μ into the four lanes of Y12, Y13, then its group
//   j+4 (the high halves); ρ = ν/μ, e = (bits(ρ)>>52) − 963;
//   K2 = ok = K1 and 0 ≤ e ≤ 120 (unsigned e ≤ 120);
//   key = ok ? e<<5 | (bits(ρ)>>47 & 31) : binKeys, the least into Y20,
//   the greatest of the ok keys into Y21;
//   h = ok ? m − c : 0 (m ρ's mantissa in [1,2), c its cell's centre);
//   d = sign·δ and d·h, h², d·h², d·h³, d·h⁴, d·h⁵, d·h⁶ formed as the
//   AVX2 loop forms them, transposed so that entry e's eight numbers
//   [d, d·h, …, d·h⁶, 1] are one vector, added into copy e mod 4 of its
//   key's slot (key·256 bytes into mom), entries 0-3 before 4-7, which may
//   add into the same copies.
//
// Clobbers Z0 … Z11, Z14 … Z18, AX, BX, DX, R12.
#define RATIO8 \
	VSUBPD        Z0, Z1, Z4; \
	VEXTRACTF64X4 $1, Z0, Y16; \
	VEXTRACTF64X4 $1, Z2, Y17; \
	VEXTRACTF64X4 $1, Z4, Y18; \
	VFMADD231PD   Y2, Y0, Y12; \
	VFMADD231PD   Y2, Y4, Y13; \
	VFMADD231PD   Y17, Y16, Y12; \
	VFMADD231PD   Y17, Y18, Y13; \
	VDIVPD        Z0, Z1, Z5; \
	VPSRLQ        $52, Z5, Z6; \
	VPSUBQ        Z30, Z6, Z6; \
	VPCMPUQ       $2, Z19, Z6, K1, K2; \
	VPSLLQ        $5, Z6, Z10; \
	VPSRLQ        $47, Z5, Z9; \
	VPTERNLOGQ    $0xea, Z10, Z25, Z9; \
	VPMOVQD       Z9, Y10; \
	VPBLENDMD     Y10, Y24, K2, Y10; \
	VPMINSD       Y10, Y20, Y20; \
	VPMAXSD       Y10, Y21, K2, Y21; \
	VMOVDQU32     Y10, (R10); \
	VPANDQ        Z29, Z5, Z9; \
	VPORQ         Z28, Z9, Z9; \
	VPANDQ        Z27, Z5, Z11; \
	VPORQ         Z26, Z11, Z11; \
	VSUBPD.Z      Z11, Z9, K2, Z9; \
	VMOVUPD       Z9, (R9); \
	VMULPD        Z23, Z4, Z4; \
	VMULPD        Z9, Z4, Z0; \
	VMULPD        Z9, Z9, Z1; \
	VMULPD        Z1, Z4, Z2; \
	VMULPD        Z1, Z0, Z3; \
	VMULPD        Z1, Z2, Z5; \
	VMULPD        Z1, Z3, Z6; \
	VMULPD        Z1, Z5, Z7; \
	VUNPCKLPD     Z0, Z4, Z8; \
	VUNPCKHPD     Z0, Z4, Z9; \
	VUNPCKLPD     Z3, Z2, Z10; \
	VUNPCKHPD     Z3, Z2, Z11; \
	VUNPCKLPD     Z6, Z5, Z14; \
	VUNPCKHPD     Z6, Z5, Z15; \
	VUNPCKLPD     Z28, Z7, Z16; \
	VUNPCKHPD     Z28, Z7, Z17; \
	VSHUFF64X2    $0x88, Z10, Z8, Z0; \
	VSHUFF64X2    $0xdd, Z10, Z8, Z1; \
	VSHUFF64X2    $0x88, Z11, Z9, Z2; \
	VSHUFF64X2    $0xdd, Z11, Z9, Z3; \
	VSHUFF64X2    $0x88, Z16, Z14, Z4; \
	VSHUFF64X2    $0xdd, Z16, Z14, Z5; \
	VSHUFF64X2    $0x88, Z17, Z15, Z6; \
	VSHUFF64X2    $0xdd, Z17, Z15, Z7; \
	VSHUFF64X2    $0x88, Z4, Z0, Z8; \
	VSHUFF64X2    $0xdd, Z4, Z0, Z9; \
	VSHUFF64X2    $0x88, Z6, Z2, Z10; \
	VSHUFF64X2    $0xdd, Z6, Z2, Z11; \
	VSHUFF64X2    $0x88, Z5, Z1, Z14; \
	VSHUFF64X2    $0xdd, Z5, Z1, Z15; \
	VSHUFF64X2    $0x88, Z7, Z3, Z16; \
	VSHUFF64X2    $0xdd, Z7, Z3, Z17; \
	MOVLQZX       0(R10), AX; \
	MOVLQZX       4(R10), BX; \
	MOVLQZX       8(R10), DX; \
	MOVLQZX       12(R10), R12; \
	SHLQ          $8, AX; \
	SHLQ          $8, BX; \
	SHLQ          $8, DX; \
	SHLQ          $8, R12; \
	VADDPD        0(R11)(AX*1), Z8, Z8; \
	VMOVUPD       Z8, 0(R11)(AX*1); \
	VADDPD        64(R11)(BX*1), Z10, Z10; \
	VMOVUPD       Z10, 64(R11)(BX*1); \
	VADDPD        128(R11)(DX*1), Z14, Z14; \
	VMOVUPD       Z14, 128(R11)(DX*1); \
	VADDPD        192(R11)(R12*1), Z16, Z16; \
	VMOVUPD       Z16, 192(R11)(R12*1); \
	MOVLQZX       16(R10), AX; \
	MOVLQZX       20(R10), BX; \
	MOVLQZX       24(R10), DX; \
	MOVLQZX       28(R10), R12; \
	SHLQ          $8, AX; \
	SHLQ          $8, BX; \
	SHLQ          $8, DX; \
	SHLQ          $8, R12; \
	VADDPD        0(R11)(AX*1), Z9, Z9; \
	VMOVUPD       Z9, 0(R11)(AX*1); \
	VADDPD        64(R11)(BX*1), Z11, Z11; \
	VMOVUPD       Z11, 64(R11)(BX*1); \
	VADDPD        128(R11)(DX*1), Z15, Z15; \
	VMOVUPD       Z15, 128(R11)(DX*1); \
	VADDPD        192(R11)(R12*1), Z17, Z17; \
	VMOVUPD       Z17, 192(R11)(R12*1)

// RATIOS8_DONE stores the lanes' sums (Y12, Y13) and the least and
// greatest keys (of Y20, Y21) back into acc (R13).
#define RATIOS8_DONE \
	VMOVUPD       Y12, 0(R13); \
	VMOVUPD       Y13, 32(R13); \
	VEXTRACTI32X4 $1, Y20, X0; \
	VPMINSD       X0, X20, X0; \
	VPSHUFD       $0x4e, X0, X1; \
	VPMINSD       X1, X0, X0; \
	VPSHUFD       $0xb1, X0, X1; \
	VPMINSD       X1, X0, X0; \
	VMOVD         X0, 64(R13); \
	VEXTRACTI32X4 $1, Y21, X0; \
	VPMAXSD       X0, X21, X0; \
	VPSHUFD       $0x4e, X0, X1; \
	VPMAXSD       X1, X0, X0; \
	VPSHUFD       $0xb1, X0, X1; \
	VPMAXSD       X1, X0, X0; \
	VMOVD         X0, 68(R13)

// func ratiosMomentsAVX512Asm(mu, logMu, nu, hs []float64, key []int32, mom []float64, sign float64, acc *ratiosAcc)
//
// ratiosMomentsAVX2Asm eight entries at a time (len(mu) a positive multiple
// of 8), by RATIO8: entries j … j+3 of each eight are the AVX2 loop's
// group j, added first into the four lanes of acc's sums, then entries
// j+4 … j+7, its group j+4. Keys, h and the moments added into the slots
// (entry e's eight numbers into copy e mod 4 of its key's slot, entries in
// order) are those of the AVX2 loop bit for bit.
TEXT ·ratiosMomentsAVX512Asm(SB), NOSPLIT, $0-160
	MOVQ mu_base+0(FP), SI
	MOVQ mu_len+8(FP), CX
	MOVQ logMu_base+24(FP), R8
	MOVQ nu_base+48(FP), DI
	MOVQ hs_base+72(FP), R9
	MOVQ key_base+96(FP), R10
	MOVQ mom_base+120(FP), R11
	LEAQ sign+144(FP), R14
	MOVQ acc+152(FP), R13
	RATIOS8_SETUP

rloop:
	VMOVUPD   (SI), Z0           // μ
	VMOVUPD   (DI), Z1           // ν
	VCMPPD    $0x1d, Z31, Z0, K1 // μ ≥ 2^-1022: normal
	VMOVUPD.Z (R8), K1, Z2       // log μ where μ is normal, else 0
	RATIO8
	ADDQ      $64, SI
	ADDQ      $64, DI
	ADDQ      $64, R8
	ADDQ      $64, R9
	ADDQ      $32, R10
	SUBQ      $8, CX
	JNZ       rloop

	RATIOS8_DONE
	VZEROUPPER
	RET

// LOG8M(X, L, F, K, S, Z) is crf's LOG4 (crf/logvec_amd64.s; LOG8 in
// crf/logvec_avx512_amd64.s) on eight doubles, its constants broadcast
// from memory: the same operations in the same order with the same
// constants, so L is what crf.LogVec computes, bit for bit.
#define LOG8M(X, L, F, K, S, Z) \
	VPADDQ.BCST      zlogoff<>(SB), X, F; \
	VPSRLQ           $52, F, K; \
	VPORQ.BCST       ztwo52<>(SB), K, K; \
	VSUBPD.BCST      zbias<>(SB), K, K; \
	VPANDQ           Z29, F, F; \
	VPADDQ.BCST      zsqrth<>(SB), F, F; \
	VSUBPD           Z28, F, F; \
	VADDPD.BCST      ztwo<>(SB), F, S; \
	VDIVPD           S, F, S; \
	VMULPD           S, S, Z; \
	VBROADCASTSD     zL7<>(SB), L; \
	VFMADD213PD.BCST zL6<>(SB), Z, L; \
	VFMADD213PD.BCST zL5<>(SB), Z, L; \
	VFMADD213PD.BCST zL4<>(SB), Z, L; \
	VFMADD213PD.BCST zL3<>(SB), Z, L; \
	VFMADD213PD.BCST zL2<>(SB), Z, L; \
	VFMADD213PD.BCST zL1<>(SB), Z, L; \
	VMULPD           Z, L, L; \
	VMULPD           F, F, Z; \
	VMULPD.BCST      zhalf<>(SB), Z, Z; \
	VADDPD           Z, L, L; \
	VMULPD           S, L, L; \
	VFMADD231PD.BCST zln2lo<>(SB), K, L; \
	VSUBPD           L, Z, Z; \
	VSUBPD           F, Z, Z; \
	VMOVAPD          Z, L; \
	VFMSUB231PD.BCST zln2hi<>(SB), K, L

// func logRatiosMomentsAVX512Asm(mu, nu, hs []float64, key []int32, mom []float64, sign float64, acc *ratiosAcc)
//
// ratiosMomentsAVX512Asm with log μ computed in the sweep (LOG8M) instead
// of read from logMu: what crf.LogVec followed by ratiosMomentsAVX512Asm
// computes, bit for bit, without storing log μ. len(mu) is a positive
// multiple of 8.
TEXT ·logRatiosMomentsAVX512Asm(SB), NOSPLIT, $0-136
	MOVQ mu_base+0(FP), SI
	MOVQ mu_len+8(FP), CX
	MOVQ nu_base+24(FP), DI
	MOVQ hs_base+48(FP), R9
	MOVQ key_base+72(FP), R10
	MOVQ mom_base+96(FP), R11
	LEAQ sign+120(FP), R14
	MOVQ acc+128(FP), R13
	RATIOS8_SETUP

lloop:
	VMOVUPD   (SI), Z0           // μ
	VMOVUPD   (DI), Z1           // ν
	VCMPPD    $0x1d, Z31, Z0, K1 // μ ≥ 2^-1022: normal
	LOG8M(Z0, Z3, Z6, Z7, Z8, Z9)
	VMOVAPD.Z Z3, K1, Z2         // log μ where μ is normal, else 0
	RATIO8
	ADDQ      $64, SI
	ADDQ      $64, DI
	ADDQ      $64, R9
	ADDQ      $32, R10
	SUBQ      $8, CX
	JNZ       lloop

	RATIOS8_DONE
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

// LOG8M's constants (those of crf's LOG4; zone and zmant above are its
// ebone and ebmant, held in Z28 and Z29).
Q(zlogoff, $0x00095f619980c433) // bits(1) − bits(√½)
Q(zsqrth, $0x3fe6a09e667f3bcd)  // bits(√½)
Q(ztwo52, $0x4330000000000000)  // 2^52
Q(zbias, $0x43300000000003ff)   // 2^52 + 1023
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
