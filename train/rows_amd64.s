//go:build !purego

#include "textflag.h"

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
	LEAQ ·tailMask(SB), R10
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
