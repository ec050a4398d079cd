//go:build !purego

#include "textflag.h"

// Row strides are in bytes in the code below: Kp·8 for the padded message
// rows (a multiple of 32), K·8 for θ, B and the marginal blocks.

// func expRowsAsm(dst, src, m []float64, rows, K, Kp int) (ok bool)
//
// For r < rows: if m is not nil, m[r] = max_{y<K} src[r·K+y] (else the
// shift is 0); dst[r·Kp+y] = exp(src[r·K+y] − m[r]) for y < K and 0 for
// K ≤ y < Kp. exp is 2^n·p(x − n·ln2) with p Taylor's polynomial of degree
// 13, correct for x in [−708, 709]; ok is false if some x is outside
// that range or NaN, and then dst holds garbage.
// Preconditions: rows ≥ 1, Kp = K rounded up to a multiple of 4, src
// readable up to (rows−1)·K + Kp.
TEXT ·expRowsAsm(SB), NOSPLIT, $0-97
	MOVQ dst_base+0(FP), DI
	MOVQ src_base+24(FP), SI
	MOVQ m_base+48(FP), R8
	MOVQ rows+72(FP), R9
	MOVQ K+80(FP), R10
	MOVQ Kp+88(FP), R11
	MOVQ R10, AX
	SUBQ R11, AX
	ADDQ $4, AX             // lanes of the last block that are < K
	SHLQ $3, R10            // src row stride
	SHLQ $3, R11            // dst row stride
	LEAQ -32(R11), R12      // offset of the last block
	VMOVQ        AX, X0
	VPBROADCASTQ X0, Y0
	VMOVDQU      lanes<>(SB), Y1
	VPCMPGTQ     Y1, Y0, Y14  // Y14: lane < K in the last block
	VPCMPEQQ     Y13, Y13, Y13 // Y13: all x so far in range
	VXORPD       Y15, Y15, Y15 // Y15: the shift

erow:
	TESTQ R8, R8
	JZ    eexp
	VMOVUPD negInf4<>(SB), Y0
	XORQ    DX, DX

emax:
	CMPQ   DX, R12
	JAE    emaxlast
	VMAXPD (SI)(DX*1), Y0, Y0
	ADDQ   $32, DX
	JMP    emax

emaxlast:
	VMOVUPD      (SI)(DX*1), Y1
	VMOVUPD      negInf4<>(SB), Y2
	VBLENDVPD    Y14, Y1, Y2, Y1
	VMAXPD       Y1, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VMAXPD       X1, X0, X0
	VPERMILPD    $1, X0, X1
	VMAXSD       X1, X0, X0
	VMOVSD       X0, (R8)
	VBROADCASTSD X0, Y15
	ADDQ         $8, R8

eexp:
	XORQ DX, DX

eblock:
	VMOVUPD (SI)(DX*1), Y0
	VSUBPD  Y15, Y0, Y0 // x
	CMPQ    DX, R12
	JNE     erange
	VANDPD  Y14, Y0, Y0 // padding: x = 0

erange:
	VCMPPD $0x1d, expLo<>(SB), Y0, Y1 // x ≥ −708
	VCMPPD $0x12, expHi<>(SB), Y0, Y2 // x ≤ 709
	VANDPD Y2, Y1, Y1
	VANDPD Y1, Y13, Y13

	VMOVUPD      expMagic<>(SB), Y2
	VFMADD231PD  expLog2e<>(SB), Y0, Y2 // 1.5·2^52 + n, n = round(x/ln2)
	VSUBPD       expMagic<>(SB), Y2, Y3 // n
	VFNMADD231PD expLn2Hi<>(SB), Y3, Y0
	VFNMADD231PD expLn2Lo<>(SB), Y3, Y0 // r = x − n·ln2
	VMOVUPD      expC13<>(SB), Y1
	VFMADD213PD  expC12<>(SB), Y0, Y1
	VFMADD213PD  expC11<>(SB), Y0, Y1
	VFMADD213PD  expC10<>(SB), Y0, Y1
	VFMADD213PD  expC9<>(SB), Y0, Y1
	VFMADD213PD  expC8<>(SB), Y0, Y1
	VFMADD213PD  expC7<>(SB), Y0, Y1
	VFMADD213PD  expC6<>(SB), Y0, Y1
	VFMADD213PD  expC5<>(SB), Y0, Y1
	VFMADD213PD  expC4<>(SB), Y0, Y1
	VFMADD213PD  expC3<>(SB), Y0, Y1
	VFMADD213PD  expC2<>(SB), Y0, Y1
	VFMADD213PD  one4<>(SB), Y0, Y1
	VFMADD213PD  one4<>(SB), Y0, Y1     // p(r) = Σ_{k≤13} r^k/k!
	VPADDQ       bias1023<>(SB), Y2, Y2
	VPSLLQ       $52, Y2, Y2            // 2^n
	VMULPD       Y2, Y1, Y1
	CMPQ         DX, R12
	JNE          estore
	VANDPD       Y14, Y1, Y1            // padding: 0

estore:
	VMOVUPD Y1, (DI)(DX*1)
	ADDQ    $32, DX
	CMPQ    DX, R11
	JB      eblock

	ADDQ R10, SI
	ADDQ R11, DI
	DECQ R9
	JNZ  erow

	VMOVMSKPD Y13, AX
	CMPQ      AX, $15
	SETEQ     ok+96(FP)
	VZEROUPPER
	RET

// The forward and backward recursions (and the marginals) share their
// inner loops through the macros below. Both recursions multiply a vector
// v (K doubles at the address in the register v) by the K×Kp matrix at
// R10 whose rows are R14 bytes apart, K in R13, one column block at a
// time from byte offset DX: forward with v = α̂_{t−1} and E, backward with
// v = w (below) and Eᵀ.

// MATVEC16(v, loop) sets Y0…Y3 to the sixteen columns from DX of v·M.
// Clobbers SI, CX, Y4.
#define MATVEC16(v, loop) \
	VXORPD Y0, Y0, Y0; \
	VXORPD Y1, Y1, Y1; \
	VXORPD Y2, Y2, Y2; \
	VXORPD Y3, Y3, Y3; \
	LEAQ   (R10)(DX*1), SI; \
	XORQ   CX, CX; \
loop: \
	VBROADCASTSD (v)(CX*8), Y4; \
	VFMADD231PD  (SI), Y4, Y0; \
	VFMADD231PD  32(SI), Y4, Y1; \
	VFMADD231PD  64(SI), Y4, Y2; \
	VFMADD231PD  96(SI), Y4, Y3; \
	ADDQ         R14, SI; \
	INCQ         CX; \
	CMPQ         CX, R13; \
	JB           loop

// MATVEC4(v, loop) sets Y0 to the four columns from DX of v·M. Clobbers
// SI, CX, Y4.
#define MATVEC4(v, loop) \
	VXORPD Y0, Y0, Y0; \
	LEAQ   (R10)(DX*1), SI; \
	XORQ   CX, CX; \
loop: \
	VBROADCASTSD (v)(CX*8), Y4; \
	VFMADD231PD  (SI), Y4, Y0; \
	ADDQ         R14, SI; \
	INCQ         CX; \
	CMPQ         CX, R13; \
	JB           loop

// SCALED(psi, beta, dst, loop) sets the R14 bytes at dst to psi ∘ beta ∘ Y5
// (Y5 = 1/c_{t+1} in every lane): the w = ψ_{t+1} ∘ β̂_{t+1} / c_{t+1} of the
// backward recursion and of the marginals. Clobbers DX, Y0.
#define SCALED(psi, beta, dst, loop) \
	XORQ DX, DX; \
loop: \
	VMOVUPD (psi)(DX*1), Y0; \
	VMULPD  (beta)(DX*1), Y0, Y0; \
	VMULPD  Y5, Y0, Y0; \
	VMOVUPD Y0, (dst)(DX*1); \
	ADDQ    $32, DX; \
	CMPQ    DX, R14; \
	JB      loop

// func forwardAsm(alpha, psi, etr, scale []float64, K, Kp int)
//
// forwardGo with fused multiply–adds and the row sum added four lanes at a
// time: for t = 1..len(scale)−1,
//   u = Σ_{y<K} alpha[(t−1)·Kp+y]·etr[y·Kp : (y+1)·Kp] ∘ psi[t·Kp : (t+1)·Kp],
//   scale[t] = Σ u, alpha[t·Kp : (t+1)·Kp] = u/scale[t].
// Preconditions: K ≥ 1, Kp a multiple of 4 ≥ K, padding of etr and psi zero.
TEXT ·forwardAsm(SB), NOSPLIT, $0-112
	MOVQ alpha_base+0(FP), R8 // α̂_{t−1}
	MOVQ psi_base+24(FP), R9  // ψ_t (after the first ADDQ)
	MOVQ etr_base+48(FP), R10
	MOVQ scale_base+72(FP), R11
	MOVQ scale_len+80(FP), R12
	MOVQ K+96(FP), R13
	MOVQ Kp+104(FP), R14
	SHLQ $3, R14
	VMOVSD one4<>(SB), X15
	MOVQ $1, BX

ft:
	CMPQ BX, R12
	JAE  fdone
	ADDQ R14, R9
	LEAQ (R8)(R14*1), DI // α̂_t
	XORQ DX, DX          // offset of the column block

	// Sixteen columns at a time while there are sixteen.
fgroup:
	MOVQ    R14, AX
	SUBQ    DX, AX
	CMPQ    AX, $128
	JB      fsingle
	MATVEC16(R8, fgy)
	VMULPD  (R9)(DX*1), Y0, Y0
	VMULPD  32(R9)(DX*1), Y1, Y1
	VMULPD  64(R9)(DX*1), Y2, Y2
	VMULPD  96(R9)(DX*1), Y3, Y3
	VMOVUPD Y0, (DI)(DX*1)
	VMOVUPD Y1, 32(DI)(DX*1)
	VMOVUPD Y2, 64(DI)(DX*1)
	VMOVUPD Y3, 96(DI)(DX*1)
	ADDQ    $128, DX
	JMP     fgroup

	// Then four at a time.
fsingle:
	CMPQ    DX, R14
	JAE     fsum
	MATVEC4(R8, fsy)
	VMULPD  (R9)(DX*1), Y0, Y0
	VMOVUPD Y0, (DI)(DX*1)
	ADDQ    $32, DX
	JMP     fsingle

fsum:
	VXORPD Y0, Y0, Y0
	XORQ   DX, DX

fsl:
	VADDPD (DI)(DX*1), Y0, Y0
	ADDQ   $32, DX
	CMPQ   DX, R14
	JB     fsl
	VEXTRACTF128 $1, Y0, X1
	VADDPD       X1, X0, X0
	VPERMILPD    $1, X0, X1
	VADDSD       X1, X0, X0
	VMOVSD       X0, (R11)(BX*8)
	VDIVSD       X0, X15, X1
	VBROADCASTSD X1, Y1
	XORQ         DX, DX

fnl:
	VMULPD  (DI)(DX*1), Y1, Y0
	VMOVUPD Y0, (DI)(DX*1)
	ADDQ    $32, DX
	CMPQ    DX, R14
	JB      fnl

	MOVQ DI, R8
	INCQ BX
	JMP  ft

fdone:
	VZEROUPPER
	RET

// func backwardAsm(beta, psi, etrT, scale, tmp []float64, K, Kp int)
//
// backwardGo with fused multiply–adds: for t = len(scale)−2 down to 0,
//   w = psi[(t+1)·Kp:] ∘ beta[(t+1)·Kp:] · (1/scale[t+1])   (Kp entries, into tmp),
//   beta[t·Kp : (t+1)·Kp] = Σ_{y'<K} w[y']·etrT[y'·Kp : (y'+1)·Kp].
// Preconditions: K ≥ 1, Kp a multiple of 4 ≥ K, len(tmp) ≥ Kp.
TEXT ·backwardAsm(SB), NOSPLIT, $0-136
	MOVQ scale_len+80(FP), BX
	DECQ BX                   // index of β̂_{t+1}
	JLE  bdone
	MOVQ Kp+128(FP), R14
	SHLQ $3, R14
	MOVQ BX, AX
	IMULQ R14, AX
	MOVQ beta_base+0(FP), R8
	ADDQ AX, R8               // β̂_{t+1}
	MOVQ psi_base+24(FP), R9
	ADDQ AX, R9               // ψ_{t+1}
	MOVQ etrT_base+48(FP), R10
	MOVQ scale_base+72(FP), R11
	MOVQ tmp_base+96(FP), R12
	MOVQ K+120(FP), R13
	VMOVSD one4<>(SB), X15

bt:
	VDIVSD       (R11)(BX*8), X15, X5
	VBROADCASTSD X5, Y5
	SCALED(R9, R8, R12, bw)

	MOVQ R8, DI
	SUBQ R14, DI // β̂_t
	XORQ DX, DX

bgroup:
	MOVQ    R14, AX
	SUBQ    DX, AX
	CMPQ    AX, $128
	JB      bsingle
	MATVEC16(R12, bgy)
	VMOVUPD Y0, (DI)(DX*1)
	VMOVUPD Y1, 32(DI)(DX*1)
	VMOVUPD Y2, 64(DI)(DX*1)
	VMOVUPD Y3, 96(DI)(DX*1)
	ADDQ    $128, DX
	JMP     bgroup

bsingle:
	CMPQ    DX, R14
	JAE     bnext
	MATVEC4(R12, bsy)
	VMOVUPD Y0, (DI)(DX*1)
	ADDQ    $32, DX
	JMP     bsingle

bnext:
	MOVQ DI, R8
	SUBQ R14, R9
	DECQ BX
	JNZ  bt

bdone:
	VZEROUPPER
	RET

// func marginalsAsm(dst, sum, alpha, beta, psi, etr, scale, tmp []float64, K, Kp int, tail *float64)
//
// marginalsGo: for t < len(scale)−1, with w = psi[(t+1)·Kp:] ∘
// beta[(t+1)·Kp:] · (1/scale[t+1]) (into tmp), and for y < K,
//   dst[(t·K+y)·K : +K] = (alpha[t·Kp+y]·etr[y·Kp : +K]) ∘ w,
// and sum[y·Kp : +Kp] += the same row (padded with zeros) when sum is not
// nil. Each row is stored Kp wide, its padding landing on the next rows
// before those are stored, except for the rows from tail on (those whose
// padding would fall past dst's end), whose last block is stored under a
// mask.
// Preconditions: len(scale) ≥ 2, K ≥ 1, Kp a multiple of 4 ≥ K, padding of
// etr, psi and beta zero, tail = tailRow(dst, K, Kp) with len(dst) =
// (len(scale)−1)·K·K.
TEXT ·marginalsAsm(SB), NOSPLIT, $0-216
	MOVQ K+192(FP), R13
	MOVQ Kp+200(FP), R14
	MOVQ R13, AX
	SUBQ R14, AX
	ADDQ $4, AX
	SHLQ $3, R14
	VMOVQ        AX, X0
	VPBROADCASTQ X0, Y0
	VMOVDQU      lanes<>(SB), Y1
	VPCMPGTQ     Y1, Y0, Y14 // lane < K in the last block
	LEAQ         -32(R14), R12
	VMOVSD       one4<>(SB), X15
	MOVQ         dst_base+0(FP), DI
	MOVQ         scale_base+144(FP), SI // &c_t
	XORQ         BX, BX                 // t·Kp·8

mt:
	// w = ψ_{t+1} ∘ β̂_{t+1} / c_{t+1}
	MOVQ         BX, AX
	ADDQ         R14, AX
	MOVQ         beta_base+72(FP), R8
	ADDQ         AX, R8
	ADDQ         psi_base+96(FP), AX
	VDIVSD       8(SI), X15, X5
	VBROADCASTSD X5, Y5
	MOVQ         tmp_base+168(FP), R9
	SCALED(AX, R8, R9, mw)

	MOVQ alpha_base+48(FP), R8
	ADDQ BX, R8 // α̂_t
	MOVQ etr_base+120(FP), R10
	XORQ CX, CX // y

my:
	VBROADCASTSD (R8)(CX*8), Y4
	MOVQ         sum_base+24(FP), R11
	TESTQ        R11, R11
	JZ           mrow
	ADDQ         R10, R11
	SUBQ         etr_base+120(FP), R11 // sum's row y

mrow:
	XORQ DX, DX

mblk:
	VMULPD (R10)(DX*1), Y4, Y0
	VMULPD (R9)(DX*1), Y0, Y0
	TESTQ  R11, R11
	JZ     mstore
	VADDPD (R11)(DX*1), Y0, Y1
	VMOVUPD Y1, (R11)(DX*1)

mstore:
	CMPQ       DX, R12
	JNE        mfull
	CMPQ       DI, tail+208(FP)
	JB         mfull
	VMASKMOVPD Y0, Y14, (DI)(DX*1)
	JMP        mnext

mfull:
	VMOVUPD Y0, (DI)(DX*1)

mnext:
	ADDQ $32, DX
	CMPQ DX, R14
	JB   mblk

	LEAQ (DI)(R13*8), DI
	ADDQ R14, R10
	INCQ CX
	CMPQ CX, R13
	JB   my

	ADDQ R14, BX
	ADDQ $8, SI
	MOVQ scale_len+152(FP), AX
	DECQ AX
	IMULQ R14, AX
	CMPQ BX, AX
	JB   mt

	VZEROUPPER
	RET

// func logMarginalsAsm(dst, fa, fc, transP []float64, K, Kp int, tail *float64)
//
// logMarginalsGo: for t < len(fa)/Kp and y < K,
//   dst[(t·K+y)·K : +K] = (fa[t·Kp+y] + transP[y·Kp : +K]) + fc[t·Kp : +K],
// each row stored Kp wide as in marginalsAsm, the rows from tail on with
// their last block under a mask.
// Preconditions: len(fa) a positive multiple of Kp, K ≥ 1, Kp a multiple
// of 4 ≥ K, tail = tailRow(dst, K, Kp) with len(dst) = len(fa)/Kp·K·K.
TEXT ·logMarginalsAsm(SB), NOSPLIT, $0-120
	MOVQ K+96(FP), R13
	MOVQ Kp+104(FP), R14
	MOVQ R13, AX
	SUBQ R14, AX
	ADDQ $4, AX
	SHLQ $3, R14
	VMOVQ        AX, X0
	VPBROADCASTQ X0, Y0
	VMOVDQU      lanes<>(SB), Y1
	VPCMPGTQ     Y1, Y0, Y14
	LEAQ         -32(R14), R12
	MOVQ         dst_base+0(FP), DI
	MOVQ         fa_base+24(FP), R8  // a_t
	MOVQ         fc_base+48(FP), R9  // c_t
	MOVQ         fa_len+32(FP), BX
	SHLQ         $3, BX
	ADDQ         R8, BX              // end of fa

lt:
	MOVQ transP_base+72(FP), R10
	XORQ CX, CX

ly:
	VBROADCASTSD (R8)(CX*8), Y4
	XORQ         DX, DX

lblk:
	VADDPD (R10)(DX*1), Y4, Y0
	VADDPD (R9)(DX*1), Y0, Y0
	CMPQ   DX, R12
	JNE    lfull
	CMPQ   DI, tail+112(FP)
	JB     lfull
	VMASKMOVPD Y0, Y14, (DI)(DX*1)
	JMP    lnext

lfull:
	VMOVUPD Y0, (DI)(DX*1)

lnext:
	ADDQ $32, DX
	CMPQ DX, R14
	JB   lblk

	LEAQ (DI)(R13*8), DI
	ADDQ R14, R10
	INCQ CX
	CMPQ CX, R13
	JB   ly

	ADDQ R14, R8
	ADDQ R14, R9
	CMPQ R8, BX
	JB   lt

	VZEROUPPER
	RET

DATA expLog2e<>+0(SB)/8, $0x3ff71547652b82fe
DATA expLog2e<>+8(SB)/8, $0x3ff71547652b82fe
DATA expLog2e<>+16(SB)/8, $0x3ff71547652b82fe
DATA expLog2e<>+24(SB)/8, $0x3ff71547652b82fe
GLOBL expLog2e<>(SB), RODATA|NOPTR, $32
DATA expMagic<>+0(SB)/8, $0x4338000000000000
DATA expMagic<>+8(SB)/8, $0x4338000000000000
DATA expMagic<>+16(SB)/8, $0x4338000000000000
DATA expMagic<>+24(SB)/8, $0x4338000000000000
GLOBL expMagic<>(SB), RODATA|NOPTR, $32
DATA expLn2Hi<>+0(SB)/8, $0x3fe62e42fee00000
DATA expLn2Hi<>+8(SB)/8, $0x3fe62e42fee00000
DATA expLn2Hi<>+16(SB)/8, $0x3fe62e42fee00000
DATA expLn2Hi<>+24(SB)/8, $0x3fe62e42fee00000
GLOBL expLn2Hi<>(SB), RODATA|NOPTR, $32
DATA expLn2Lo<>+0(SB)/8, $0x3dea39ef35793c76
DATA expLn2Lo<>+8(SB)/8, $0x3dea39ef35793c76
DATA expLn2Lo<>+16(SB)/8, $0x3dea39ef35793c76
DATA expLn2Lo<>+24(SB)/8, $0x3dea39ef35793c76
GLOBL expLn2Lo<>(SB), RODATA|NOPTR, $32
DATA expLo<>+0(SB)/8, $0xc086200000000000
DATA expLo<>+8(SB)/8, $0xc086200000000000
DATA expLo<>+16(SB)/8, $0xc086200000000000
DATA expLo<>+24(SB)/8, $0xc086200000000000
GLOBL expLo<>(SB), RODATA|NOPTR, $32
DATA expHi<>+0(SB)/8, $0x4086280000000000
DATA expHi<>+8(SB)/8, $0x4086280000000000
DATA expHi<>+16(SB)/8, $0x4086280000000000
DATA expHi<>+24(SB)/8, $0x4086280000000000
GLOBL expHi<>(SB), RODATA|NOPTR, $32
DATA expC2<>+0(SB)/8, $0x3fe0000000000000
DATA expC2<>+8(SB)/8, $0x3fe0000000000000
DATA expC2<>+16(SB)/8, $0x3fe0000000000000
DATA expC2<>+24(SB)/8, $0x3fe0000000000000
GLOBL expC2<>(SB), RODATA|NOPTR, $32
DATA expC3<>+0(SB)/8, $0x3fc5555555555555
DATA expC3<>+8(SB)/8, $0x3fc5555555555555
DATA expC3<>+16(SB)/8, $0x3fc5555555555555
DATA expC3<>+24(SB)/8, $0x3fc5555555555555
GLOBL expC3<>(SB), RODATA|NOPTR, $32
DATA expC4<>+0(SB)/8, $0x3fa5555555555555
DATA expC4<>+8(SB)/8, $0x3fa5555555555555
DATA expC4<>+16(SB)/8, $0x3fa5555555555555
DATA expC4<>+24(SB)/8, $0x3fa5555555555555
GLOBL expC4<>(SB), RODATA|NOPTR, $32
DATA expC5<>+0(SB)/8, $0x3f81111111111111
DATA expC5<>+8(SB)/8, $0x3f81111111111111
DATA expC5<>+16(SB)/8, $0x3f81111111111111
DATA expC5<>+24(SB)/8, $0x3f81111111111111
GLOBL expC5<>(SB), RODATA|NOPTR, $32
DATA expC6<>+0(SB)/8, $0x3f56c16c16c16c17
DATA expC6<>+8(SB)/8, $0x3f56c16c16c16c17
DATA expC6<>+16(SB)/8, $0x3f56c16c16c16c17
DATA expC6<>+24(SB)/8, $0x3f56c16c16c16c17
GLOBL expC6<>(SB), RODATA|NOPTR, $32
DATA expC7<>+0(SB)/8, $0x3f2a01a01a01a01a
DATA expC7<>+8(SB)/8, $0x3f2a01a01a01a01a
DATA expC7<>+16(SB)/8, $0x3f2a01a01a01a01a
DATA expC7<>+24(SB)/8, $0x3f2a01a01a01a01a
GLOBL expC7<>(SB), RODATA|NOPTR, $32
DATA expC8<>+0(SB)/8, $0x3efa01a01a01a01a
DATA expC8<>+8(SB)/8, $0x3efa01a01a01a01a
DATA expC8<>+16(SB)/8, $0x3efa01a01a01a01a
DATA expC8<>+24(SB)/8, $0x3efa01a01a01a01a
GLOBL expC8<>(SB), RODATA|NOPTR, $32
DATA expC9<>+0(SB)/8, $0x3ec71de3a556c734
DATA expC9<>+8(SB)/8, $0x3ec71de3a556c734
DATA expC9<>+16(SB)/8, $0x3ec71de3a556c734
DATA expC9<>+24(SB)/8, $0x3ec71de3a556c734
GLOBL expC9<>(SB), RODATA|NOPTR, $32
DATA expC10<>+0(SB)/8, $0x3e927e4fb7789f5c
DATA expC10<>+8(SB)/8, $0x3e927e4fb7789f5c
DATA expC10<>+16(SB)/8, $0x3e927e4fb7789f5c
DATA expC10<>+24(SB)/8, $0x3e927e4fb7789f5c
GLOBL expC10<>(SB), RODATA|NOPTR, $32
DATA expC11<>+0(SB)/8, $0x3e5ae64567f544e4
DATA expC11<>+8(SB)/8, $0x3e5ae64567f544e4
DATA expC11<>+16(SB)/8, $0x3e5ae64567f544e4
DATA expC11<>+24(SB)/8, $0x3e5ae64567f544e4
GLOBL expC11<>(SB), RODATA|NOPTR, $32
DATA expC12<>+0(SB)/8, $0x3e21eed8eff8d898
DATA expC12<>+8(SB)/8, $0x3e21eed8eff8d898
DATA expC12<>+16(SB)/8, $0x3e21eed8eff8d898
DATA expC12<>+24(SB)/8, $0x3e21eed8eff8d898
GLOBL expC12<>(SB), RODATA|NOPTR, $32
DATA expC13<>+0(SB)/8, $0x3de6124613a86d09
DATA expC13<>+8(SB)/8, $0x3de6124613a86d09
DATA expC13<>+16(SB)/8, $0x3de6124613a86d09
DATA expC13<>+24(SB)/8, $0x3de6124613a86d09
GLOBL expC13<>(SB), RODATA|NOPTR, $32
DATA one4<>+0(SB)/8, $0x3ff0000000000000
DATA one4<>+8(SB)/8, $0x3ff0000000000000
DATA one4<>+16(SB)/8, $0x3ff0000000000000
DATA one4<>+24(SB)/8, $0x3ff0000000000000
GLOBL one4<>(SB), RODATA|NOPTR, $32
DATA negInf4<>+0(SB)/8, $0xfff0000000000000
DATA negInf4<>+8(SB)/8, $0xfff0000000000000
DATA negInf4<>+16(SB)/8, $0xfff0000000000000
DATA negInf4<>+24(SB)/8, $0xfff0000000000000
GLOBL negInf4<>(SB), RODATA|NOPTR, $32
DATA bias1023<>+0(SB)/8, $1023
DATA bias1023<>+8(SB)/8, $1023
DATA bias1023<>+16(SB)/8, $1023
DATA bias1023<>+24(SB)/8, $1023
GLOBL bias1023<>(SB), RODATA|NOPTR, $32
DATA lanes<>+0(SB)/8, $0
DATA lanes<>+8(SB)/8, $1
DATA lanes<>+16(SB)/8, $2
DATA lanes<>+24(SB)/8, $3
GLOBL lanes<>(SB), RODATA|NOPTR, $32

// func scoreRowsAsm(theta, w []float64, attrs []int32, attrStart []int, bias []float64, K, Kp, limit int) (ok bool)
//
// scoreRowsGo, adding in the same order (so bit for bit the same): for
// t < len(attrStart)−1, theta[t·K : t·K+Kp] = bias[:Kp] (or 0 if bias is
// nil) + Σ_j w[attrs[j]·K : attrs[j]·K+Kp] over j in [attrStart[t],
// attrStart[t+1]). Rows are stored Kp wide, the padding landing on the
// next row before it is stored. ok is false, with theta partly written, if
// some attrs[j]·K is negative or above limit.
// Preconditions: len(attrStart) ≥ 1, Kp a multiple of 4 ≥ K, theta
// writable up to (len(attrStart)−2)·K + Kp, bias (if not nil) readable up
// to Kp, w readable up to limit + Kp.
TEXT ·scoreRowsAsm(SB), NOSPLIT, $0-145
	MOVQ theta_base+0(FP), DI
	MOVQ w_base+24(FP), R8
	MOVQ limit+136(FP), R9
	MOVQ attrs_base+48(FP), R10
	MOVQ attrStart_base+72(FP), R11
	MOVQ attrStart_len+80(FP), R12
	DECQ R12                    // tokens left
	MOVQ bias_base+96(FP), R13
	MOVQ K+120(FP), R14
	MOVQ Kp+128(FP), BX
	SHLQ $3, BX

st:
	TESTQ R12, R12
	JZ    sok
	XORQ  DX, DX

sgroup:
	MOVQ  BX, AX
	SUBQ  DX, AX
	CMPQ  AX, $128
	JB    ssingle
	TESTQ R13, R13
	JZ    sgzero
	VMOVUPD (R13)(DX*1), Y0
	VMOVUPD 32(R13)(DX*1), Y1
	VMOVUPD 64(R13)(DX*1), Y2
	VMOVUPD 96(R13)(DX*1), Y3
	JMP   sgattrs

sgzero:
	VXORPD Y0, Y0, Y0
	VXORPD Y1, Y1, Y1
	VXORPD Y2, Y2, Y2
	VXORPD Y3, Y3, Y3

sgattrs:
	MOVQ (R11), CX
	MOVQ 8(R11), SI

sgj:
	CMPQ    CX, SI
	JAE     sgstore
	MOVLQSX (R10)(CX*4), AX
	IMULQ   R14, AX
	CMPQ    AX, R9
	JA      sfail               // unsigned: negative offsets too
	LEAQ    (R8)(AX*8), AX
	VADDPD  (AX)(DX*1), Y0, Y0
	VADDPD  32(AX)(DX*1), Y1, Y1
	VADDPD  64(AX)(DX*1), Y2, Y2
	VADDPD  96(AX)(DX*1), Y3, Y3
	INCQ    CX
	JMP     sgj

sgstore:
	VMOVUPD Y0, (DI)(DX*1)
	VMOVUPD Y1, 32(DI)(DX*1)
	VMOVUPD Y2, 64(DI)(DX*1)
	VMOVUPD Y3, 96(DI)(DX*1)
	ADDQ    $128, DX
	JMP     sgroup

ssingle:
	CMPQ  DX, BX
	JAE   snext
	TESTQ R13, R13
	JZ    sszero
	VMOVUPD (R13)(DX*1), Y0
	JMP   ssattrs

sszero:
	VXORPD Y0, Y0, Y0

ssattrs:
	MOVQ (R11), CX
	MOVQ 8(R11), SI

ssj:
	CMPQ    CX, SI
	JAE     ssstore
	MOVLQSX (R10)(CX*4), AX
	IMULQ   R14, AX
	CMPQ    AX, R9
	JA      sfail
	LEAQ    (R8)(AX*8), AX
	VADDPD  (AX)(DX*1), Y0, Y0
	INCQ    CX
	JMP     ssj

ssstore:
	VMOVUPD Y0, (DI)(DX*1)
	ADDQ    $32, DX
	JMP     ssingle

snext:
	LEAQ (DI)(R14*8), DI
	ADDQ $8, R11
	DECQ R12
	JMP  st

sok:
	MOVB $1, ok+144(FP)
	VZEROUPPER
	RET

sfail:
	MOVB $0, ok+144(FP)
	VZEROUPPER
	RET
