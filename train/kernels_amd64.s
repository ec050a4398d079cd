//go:build !purego

#include "textflag.h"

// The loops of train's vector kernels (kernels_amd64.go), one TEXT per
// kernel; their Go twins, which define what each computes, are in
// kernels.go.

// func mixAVX2Asm(gamma float64, mu, nu []float64)
//
// mu[j] = (1−g)·mu[j] + g·nu[j] for j < len(mu), a multiple of 4: the
// update μ ← μ + γδ, written so as not to lose ν ≪ μ near γ = 1.
TEXT ·mixAVX2Asm(SB), NOSPLIT, $0-56
	MOVQ         mu_base+8(FP), SI
	MOVQ         mu_len+16(FP), CX
	MOVQ         nu_base+32(FP), DI
	VBROADCASTSD gamma+0(FP), Y15
	VBROADCASTSD one4<>(SB), Y13
	VSUBPD       Y15, Y13, Y14 // 1 − g

xloop:
	CMPQ        CX, $4
	JB          xdone
	VMULPD      (DI), Y15, Y0
	VFMADD231PD (SI), Y14, Y0
	VMOVUPD     Y0, (SI)
	ADDQ        $32, SI
	ADDQ        $32, DI
	SUBQ        $4, CX
	JMP         xloop

xdone:
	VZEROUPPER
	RET

// SCATTER4(off) adds four entries' vectors into their slots: Y5/Y6 hold
// lanes 0, 2 / 1, 3 of the first two quantities (as VUNPCKLPD/VUNPCKHPD
// leave them) and Y7/Y11 those of the next two; entry e's four numbers go to
// off + 64·e bytes into its key's slot (key·256 in AX, BX, DX, R12 for
// e = 0 … 3) at R11. Clobbers Y0.
#define SCATTER4(off) \
	VPERM2F128 $0x20, Y7, Y5, Y0; \
	VADDPD     off(R11)(AX*1), Y0, Y0; \
	VMOVUPD    Y0, off(R11)(AX*1); \
	VPERM2F128 $0x20, Y11, Y6, Y0; \
	VADDPD     off+64(R11)(BX*1), Y0, Y0; \
	VMOVUPD    Y0, off+64(R11)(BX*1); \
	VPERM2F128 $0x31, Y7, Y5, Y0; \
	VADDPD     off+128(R11)(DX*1), Y0, Y0; \
	VMOVUPD    Y0, off+128(R11)(DX*1); \
	VPERM2F128 $0x31, Y11, Y6, Y0; \
	VADDPD     off+192(R11)(R12*1), Y0, Y0; \
	VMOVUPD    Y0, off+192(R11)(R12*1)

// func ratiosMomentsAVX2Asm(mu, logMu, nu, hs []float64, key []int32, mom []float64, sign float64, acc *ratiosAcc)
//
// Four entries at a time: with ok = μ normal (≥ 2^-1022), log μ from logMu,
// ρ = ν/μ, e = (bits(ρ)>>52) − 963, lane e of acc's sums gains
//   xlogx += ok ? μ·log μ : 0,  s0 += ok ? (ν − μ)·log μ : 0,
// then ok &= 0 ≤ e ≤ 120 and
//   key = ok ? e<<5 | (bits(ρ)>>47 & 31) : binKeys (3872)
//   h   = ok ? m − c : 0, m = ρ's mantissa in [1,2), c its cell's centre,
// acc.lo, acc.hi become the least and greatest of themselves and the keys
// below binKeys; and in the same sweep the moments of every entry with
// d = sign·(ν − μ): lane e of each group of four adds into copy e of its
// key's slot, H = mom[256·key + 64·e:],
//   H[0:4] += d·[1, h, h², h³],  H[4:8] += [d·h⁴, d·h⁵, d·h⁶, 1]
// (the powers formed as momentsGo forms them). len(mu) is a positive
// multiple of 4; sign is 1 or −1.
TEXT ·ratiosMomentsAVX2Asm(SB), NOSPLIT, $32-160
	MOVQ mu_base+0(FP), SI
	MOVQ mu_len+8(FP), CX
	MOVQ logMu_base+24(FP), R8
	MOVQ nu_base+48(FP), DI
	MOVQ hs_base+72(FP), R9
	MOVQ key_base+96(FP), R10
	MOVQ mom_base+120(FP), R11
	MOVQ acc+152(FP), R13

	VBROADCASTSD sign+144(FP), Y0
	VMOVUPD      Y0, sgn-32(SP)
	VXORPD       Y15, Y15, Y15 // 0
	VPBROADCASTD 68(R13), X8   // greatest key so far, per lane
	VPBROADCASTD 64(R13), X14  // least key so far, per lane
	VMOVUPD      0(R13), Y12   // Σ μ log μ, per lane
	VMOVUPD      32(R13), Y13  // Σ δ log μ, per lane

qloop:
	VMOVUPD     (SI), Y0          // μ
	VMOVUPD     (DI), Y1          // ν
	VCMPPD      $0x1d, minnorm<>(SB), Y0, Y3 // μ ≥ 2^-1022: normal
	VANDPD      (R8), Y3, Y2      // log μ where μ is normal, else 0
	VFMADD231PD Y2, Y0, Y12
	VSUBPD      Y0, Y1, Y4        // δ
	VFMADD231PD Y2, Y4, Y13
	VDIVPD      Y0, Y1, Y5        // ρ

	VPSRLQ   $52, Y5, Y6
	VPSUBQ   bias963<>(SB), Y6, Y6 // e
	VPCMPGTQ max120<>(SB), Y6, Y7  // e > 120
	VPCMPGTQ Y6, Y15, Y2           // e < 0
	VPOR     Y2, Y7, Y7
	VPANDN   Y3, Y7, Y3            // ok = μ normal and 0 ≤ e ≤ 120

	VPSLLQ   $5, Y6, Y10
	VPSRLQ   $47, Y5, Y9
	VPAND    low5<>(SB), Y9, Y9
	VPOR     Y9, Y10, Y10          // e<<5 | i
	VPCMPEQQ Y7, Y7, Y7
	VPXOR    Y7, Y3, Y9            // not ok
	VPOR     Y9, Y10, Y10          // −1 where not ok
	VMOVDQU  evens<>(SB), Y11
	VPERMD   Y10, Y11, Y10         // the four keys' low halves first
	VPERMD   Y9, Y11, Y9           // and the four masks'
	VPMAXSD  X10, X8, X8
	VPAND    sentp1<>(SB), X9, X9  // binKeys+1 where not ok
	VPADDD   X9, X10, X10          // binKeys where not ok
	VPMINSD  X10, X14, X14
	VMOVDQU  X10, (R10)

	VPAND  mant<>(SB), Y5, Y9
	VPOR   one4<>(SB), Y9, Y9     // m
	VPAND  cell<>(SB), Y5, Y11
	VPOR   centre<>(SB), Y11, Y11 // c
	VSUBPD Y11, Y9, Y9            // m − c, exact
	VANDPD Y3, Y9, Y9
	VMOVUPD Y9, (R9)

	// The moments. Y4 = δ, Y9 = h, X10 = the four keys.
	VMULPD  sgn-32(SP), Y4, Y4 // d
	VMOVD   X10, AX
	VPEXTRD $1, X10, BX
	VPEXTRD $2, X10, DX
	VPEXTRD $3, X10, R12
	SHLQ    $8, AX
	SHLQ    $8, BX
	SHLQ    $8, DX
	SHLQ    $8, R12
	VMULPD  Y9, Y4, Y0  // d·h
	VMULPD  Y9, Y9, Y1  // h²
	VMULPD  Y1, Y4, Y2  // d·h²
	VMULPD  Y1, Y0, Y3  // d·h³
	VUNPCKLPD Y0, Y4, Y5  // lanes 0 and 2 of d, d·h
	VUNPCKHPD Y0, Y4, Y6  // lanes 1 and 3
	VUNPCKLPD Y3, Y2, Y7  // lanes 0 and 2 of d·h², d·h³
	VUNPCKHPD Y3, Y2, Y11 // lanes 1 and 3
	SCATTER4(0)
	VMULPD       Y1, Y2, Y2 // d·h⁴
	VMULPD       Y1, Y3, Y3 // d·h⁵
	VMULPD       Y1, Y2, Y4 // d·h⁶
	VBROADCASTSD one4<>(SB), Y0
	VUNPCKLPD    Y3, Y2, Y5  // lanes 0 and 2 of d·h⁴, d·h⁵
	VUNPCKHPD    Y3, Y2, Y6  // lanes 1 and 3
	VUNPCKLPD    Y0, Y4, Y7  // lanes 0 and 2 of d·h⁶, 1
	VUNPCKHPD    Y0, Y4, Y11 // lanes 1 and 3
	SCATTER4(32)

	ADDQ $32, SI
	ADDQ $32, DI
	ADDQ $32, R8
	ADDQ $32, R9
	ADDQ $16, R10
	SUBQ $4, CX
	JNZ  qloop

	// The lanes' sums, least and greatest.
	VMOVUPD  Y12, 0(R13)
	VMOVUPD  Y13, 32(R13)
	VPSHUFD  $0x4e, X14, X0
	VPMINSD  X0, X14, X14
	VPSHUFD  $0xb1, X14, X0
	VPMINSD  X0, X14, X14
	VMOVD    X14, 64(R13)
	VPSHUFD  $0x4e, X8, X0
	VPMAXSD  X0, X8, X8
	VPSHUFD  $0xb1, X8, X0
	VPMAXSD  X0, X8, X8
	VMOVD    X8, 68(R13)
	VZEROUPPER
	RET

// func blockRowsAVX2Asm(blk []float64, K int, B, node, sum []float64) (muB float64)
//
// For the K×K block blk (row-major, K ≥ 1) and y < K:
//   node[y] = Σ_y' blk[y·K+y'],  sum[y·K+y'] += blk[y·K+y'],
// and muB = Σ_j blk[j]·B[j]. Each row is K/4 vectors and a masked tail of
// K mod 4 lanes.
TEXT ·blockRowsAVX2Asm(SB), NOSPLIT, $0-112
	MOVQ blk_base+0(FP), SI
	MOVQ K+24(FP), DX
	MOVQ B_base+32(FP), R8
	MOVQ node_base+56(FP), R10
	MOVQ sum_base+80(FP), R9

	MOVQ DX, BX
	SHRQ $2, BX        // full vectors per row
	MOVQ DX, AX
	ANDQ $3, AX        // tail lanes
	MOVQ AX, R11
	SHLQ $3, R11       // tail bytes
	SHLQ $5, AX
	LEAQ tailmask<>(SB), R12
	VMOVDQU (R12)(AX*1), Y15 // the tail's mask
	VXORPD  Y14, Y14, Y14    // Σ blk·B
	MOVQ    DX, R13          // rows left

row:
	VXORPD Y0, Y0, Y0 // the row's sum
	MOVQ   BX, CX
	TESTQ  CX, CX
	JZ     tail

vec:
	VMOVUPD     (SI), Y1
	VADDPD      Y1, Y0, Y0
	VFMADD231PD (R8), Y1, Y14
	VADDPD      (R9), Y1, Y2
	VMOVUPD     Y2, (R9)
	ADDQ        $32, SI
	ADDQ        $32, R8
	ADDQ        $32, R9
	DECQ        CX
	JNZ         vec

tail:
	TESTQ       R11, R11
	JZ          rowdone
	VMASKMOVPD  (SI), Y15, Y1
	VADDPD      Y1, Y0, Y0
	VMASKMOVPD  (R8), Y15, Y2
	VFMADD231PD Y2, Y1, Y14
	VMASKMOVPD  (R9), Y15, Y2
	VADDPD      Y1, Y2, Y2
	VMASKMOVPD  Y2, Y15, (R9)
	ADDQ        R11, SI
	ADDQ        R11, R8
	ADDQ        R11, R9

rowdone:
	VEXTRACTF128 $1, Y0, X1
	VADDPD       X1, X0, X0
	VHADDPD      X0, X0, X0
	VMOVSD       X0, (R10)
	ADDQ         $8, R10
	DECQ         R13
	JNZ          row

	VEXTRACTF128 $1, Y14, X1
	VADDPD       X1, X14, X1
	VHADDPD      X1, X1, X1
	VMOVSD       X1, muB+104(FP)
	VZEROUPPER
	RET

// func axpyRowsAVX2Asm(dst []float64, dstRow []int32, src []float64, srcRow []int32, scale []float64, c float64, K int)
//
// For k < len(dstRow) (> 0), with d = dstRow[k], s = srcRow[k] (k when
// srcRow is nil) and f = c·scale[k] (c when scale is nil):
//   dst[d·K : d·K+K] += f·src[s·K : s·K+K].
// A row is K/4 vectors and a masked tail of K mod 4 lanes.
TEXT ·axpyRowsAVX2Asm(SB), NOSPLIT, $0-136
	MOVQ dst_base+0(FP), SI
	MOVQ dstRow_base+24(FP), DI
	MOVQ dstRow_len+32(FP), R12
	MOVQ src_base+48(FP), R8
	MOVQ srcRow_base+72(FP), R9
	MOVQ scale_base+96(FP), R13
	MOVQ K+128(FP), DX

	MOVQ DX, BX
	SHRQ $2, BX
	SHLQ $5, BX        // bytes in full vectors per row
	MOVQ DX, AX
	ANDQ $3, AX
	MOVQ AX, R11
	SHLQ $3, R11       // tail bytes
	SHLQ $5, AX
	LEAQ tailmask<>(SB), R10
	VMOVDQU (R10)(AX*1), Y15 // the tail's mask
	SHLQ $3, DX              // row bytes
	XORQ R14, R14            // k

job:
	// AX = &dst[d·K], R10 = &src[s·K], Y0 = f
	MOVLQSX (DI)(R14*4), AX
	IMULQ   DX, AX
	ADDQ    SI, AX
	MOVQ    R14, R10
	TESTQ   R9, R9
	JZ      srcset
	MOVLQSX (R9)(R14*4), R10

srcset:
	IMULQ        DX, R10
	ADDQ         R8, R10
	VBROADCASTSD c+120(FP), Y0
	TESTQ        R13, R13
	JZ           scaled
	VBROADCASTSD (R13)(R14*8), Y1
	VMULPD       Y1, Y0, Y0

scaled:
	XORQ  CX, CX
	TESTQ BX, BX
	JZ    tail

vec:
	VMOVUPD     (R10)(CX*1), Y1
	VFMADD213PD (AX)(CX*1), Y0, Y1
	VMOVUPD     Y1, (AX)(CX*1)
	ADDQ        $32, CX
	CMPQ        CX, BX
	JB          vec

tail:
	TESTQ       R11, R11
	JZ          next
	VMASKMOVPD  (R10)(CX*1), Y15, Y1
	VMASKMOVPD  (AX)(CX*1), Y15, Y2
	VFMADD231PD Y1, Y0, Y2
	VMASKMOVPD  Y2, Y15, (AX)(CX*1)

next:
	INCQ R14
	CMPQ R14, R12
	JB   job

	VZEROUPPER
	RET

// func dotAVX2Asm(a, b []float64) float64
//
// Σ a[i]·b[i] over len(a), a positive multiple of 8, with two accumulators.
TEXT ·dotAVX2Asm(SB), NOSPLIT, $0-56
	MOVQ   a_base+0(FP), SI
	MOVQ   a_len+8(FP), CX
	MOVQ   b_base+24(FP), DI
	VXORPD Y0, Y0, Y0
	VXORPD Y1, Y1, Y1

dloop:
	VMOVUPD     (SI), Y2
	VFMADD231PD (DI), Y2, Y0
	VMOVUPD     32(SI), Y3
	VFMADD231PD 32(DI), Y3, Y1
	ADDQ        $64, SI
	ADDQ        $64, DI
	SUBQ        $8, CX
	JNZ         dloop

	VADDPD       Y1, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VADDPD       X1, X0, X0
	VHADDPD      X0, X0, X0
	VMOVSD       X0, ret+48(FP)
	VZEROUPPER
	RET

// func prefetchRowsAsm(w []float64, rows []int32, K int)
//
// For every a in rows (len(rows) > 0): PREFETCHT0 of each cache line of
// w[a·K : a·K+K] — the lines at byte offsets 0, 64, … below 8K from the
// row's start, and the line of its last word.
TEXT ·prefetchRowsAsm(SB), NOSPLIT, $0-56
	MOVQ w_base+0(FP), SI
	MOVQ rows_base+24(FP), DI
	MOVQ rows_len+32(FP), CX
	MOVQ K+48(FP), DX
	SHLQ $3, DX // row bytes

prow:
	MOVLQSX (DI), AX
	IMULQ   DX, AX
	ADDQ    SI, AX
	XORQ    BX, BX

pline:
	PREFETCHT0 (AX)(BX*1)
	ADDQ       $64, BX
	CMPQ       BX, DX
	JB         pline
	PREFETCHT0 -8(AX)(DX*1)
	ADDQ       $4, DI
	DECQ       CX
	JNZ        prow
	RET

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
	VMOVUPD      one4<>(SB), Y14
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
	VSUBPD      one4<>(SB), Y0, Y6
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

// Constants. C4 repeats a 64-bit value in the four lanes of a vector, L4 a
// 32-bit one in four lanes of 32 bits.
#define C4(name, v) DATA name<>+0(SB)/8, v; DATA name<>+8(SB)/8, v; DATA name<>+16(SB)/8, v; DATA name<>+24(SB)/8, v; GLOBL name<>(SB), RODATA|NOPTR, $32
#define L4(name, v) DATA name<>+0(SB)/4, v; DATA name<>+4(SB)/4, v; DATA name<>+8(SB)/4, v; DATA name<>+12(SB)/4, v; GLOBL name<>(SB), RODATA|NOPTR, $16

C4(one4, $0x3ff0000000000000)      // 1.0
C4(ebhalf, $0x3fe0000000000000)    // 1/2
C4(ebthird, $0x3fd5555555555555)   // 1/3
C4(ebquarter, $0x3fd0000000000000) // 1/4
C4(ebfifth, $0x3fc999999999999a)   // 1/5
C4(ebsixth, $0x3fc5555555555555)   // 1/6
C4(minnorm, $0x0010000000000000)   // 2^-1022, the least normal float64
C4(bias963, $963)                  // 1023 − binExpSpan
C4(max120, $120)                   // 2·binExpSpan
C4(low5, $31)                      // the five key bits of the mantissa
C4(mant, $0x000fffffffffffff)      // a float64's mantissa bits
C4(cell, $0x000f800000000000)      // the top five bits of the mantissa
C4(centre, $0x3ff0400000000000)    // 1.0 with the half-cell bit: OR the cell, get 1 + (i+½)/32
L4(sentp1, $3873)                  // binKeys + 1

// evens permutes the 32-bit halves of four 64-bit lanes: the low halves first.
DATA evens<>+0(SB)/4, $0
DATA evens<>+4(SB)/4, $2
DATA evens<>+8(SB)/4, $4
DATA evens<>+12(SB)/4, $6
DATA evens<>+16(SB)/4, $1
DATA evens<>+20(SB)/4, $3
DATA evens<>+24(SB)/4, $5
DATA evens<>+28(SB)/4, $7
GLOBL evens<>(SB), RODATA|NOPTR, $32

// tailmask<>[32·r:] has the first r of four lanes set: the masked tails of
// rows of K mod 4 = r entries (blockRowsAVX2Asm, axpyRowsAVX2Asm).
DATA tailmask<>+0(SB)/8, $0
DATA tailmask<>+8(SB)/8, $0
DATA tailmask<>+16(SB)/8, $0
DATA tailmask<>+24(SB)/8, $0
DATA tailmask<>+32(SB)/8, $-1
DATA tailmask<>+40(SB)/8, $0
DATA tailmask<>+48(SB)/8, $0
DATA tailmask<>+56(SB)/8, $0
DATA tailmask<>+64(SB)/8, $-1
DATA tailmask<>+72(SB)/8, $-1
DATA tailmask<>+80(SB)/8, $0
DATA tailmask<>+88(SB)/8, $0
DATA tailmask<>+96(SB)/8, $-1
DATA tailmask<>+104(SB)/8, $-1
DATA tailmask<>+112(SB)/8, $-1
DATA tailmask<>+120(SB)/8, $0
GLOBL tailmask<>(SB), RODATA|NOPTR, $128
