//go:build !purego

#include "textflag.h"

// The loops of the BFloat16 codec's vector kernels (codec16_amd64.go): the Float32
// kernels' loops (codec_amd64.s) with each stored number a bfloat16 (2 bytes) —
// loaded by widening to float32 bits, stored rounded from float32 to the nearest
// (ties to even) — every sum in the same order. Their Go twins are in codec16.go.

// ROWSETUP sets, for rows of K (DX) entries: BX the full vectors per row,
// R11 the tail's bytes of bfloat16, R10 the tail's bytes of float64, X15
// the tail's float32 mask and Y14 its float64 mask. Clobbers AX, R12.
#define ROWSETUP \
	MOVQ    DX, BX; \
	SHRQ    $2, BX; \
	MOVQ    DX, AX; \
	ANDQ    $3, AX; \
	MOVQ    AX, R11; \
	SHLQ    $1, R11; \
	MOVQ    AX, R10; \
	SHLQ    $3, R10; \
	SHLQ    $5, AX; \
	LEAQ    b16mask64<>(SB), R12; \
	VMOVDQU (R12)(AX*1), Y14; \
	SHRQ    $1, AX; \
	LEAQ    b16mask32<>(SB), R12; \
	VMOVDQU (R12)(AX*1), X15

// HSUM reduces Y0's lanes to (0 + 2) + (1 + 3) in X0's low lane. Clobbers X1.
#define HSUM \
	VEXTRACTF128 $1, Y0, X1; \
	VADDPD       X1, X0, X0; \
	VHADDPD      X0, X0, X0

// func sumRows16Asm(q *uint16, K, rows int) float64
//
// Σ over rows r = 0 … rows−1 (in order, from 0) of the sum of the float32
// row q[r·K : r·K+K], each entry in float64. rows ≥ 1, K ≥ 1.
TEXT ·sumRows16Asm(SB), NOSPLIT, $0-32
	MOVQ q+0(FP), SI
	MOVQ K+8(FP), DX
	MOVQ rows+16(FP), R13
	ROWSETUP
	VXORPD X13, X13, X13

srow:
	VXORPD Y0, Y0, Y0
	MOVQ   BX, CX
	TESTQ  CX, CX
	JZ     stail

svec:
	VPMOVZXWD (SI), X1
	VPSLLD    $16, X1, X1
	VCVTPS2PD X1, Y1
	VADDPD    Y1, Y0, Y0
	ADDQ      $8, SI
	DECQ      CX
	JNZ       svec

stail:
	TESTQ      R11, R11
	JZ         sdone
	VPXOR     X1, X1, X1
	VPINSRW   $0, (SI), X1, X1
	CMPQ      R11, $4
	JB        b0
	VPINSRW   $1, 2(SI), X1, X1
	CMPQ      R11, $6
	JB        b0
	VPINSRW   $2, 4(SI), X1, X1

b0:
	VPMOVZXWD X1, X1
	VPSLLD    $16, X1, X1
	VCVTPS2PD X1, Y1
	VADDPD     Y1, Y0, Y0
	ADDQ       R11, SI

sdone:
	HSUM
	VADDSD X0, X13, X13
	DECQ   R13
	JNZ    srow
	VMOVSD X13, ret+24(FP)
	VZEROUPPER
	RET

// func scaleRows16Asm(mu *float64, q *uint16, K, rows int, f float64, next *float64)
//
// For rows r = 0 … rows−1 in order: mu[r·K+j] = float64(q[r·K+j])·f and,
// when next is not nil, next[j] += mu[r·K+j]. rows ≥ 1, K ≥ 1.
TEXT ·scaleRows16Asm(SB), NOSPLIT, $0-48
	MOVQ         mu+0(FP), DI
	MOVQ         q+8(FP), SI
	MOVQ         K+16(FP), DX
	MOVQ         rows+24(FP), R13
	VBROADCASTSD f+32(FP), Y13
	MOVQ         next+40(FP), R9
	ROWSETUP

frow:
	MOVQ  R9, R8
	MOVQ  BX, CX
	TESTQ CX, CX
	JZ    frtail

frvec:
	VPMOVZXWD (SI), X1
	VPSLLD    $16, X1, X1
	VCVTPS2PD X1, Y1
	VMULPD    Y13, Y1, Y1
	VMOVUPD   Y1, (DI)
	TESTQ     R8, R8
	JZ        frnonext
	VADDPD    (R8), Y1, Y2
	VMOVUPD   Y2, (R8)
	ADDQ      $32, R8

frnonext:
	ADDQ $8, SI
	ADDQ $32, DI
	DECQ CX
	JNZ  frvec

frtail:
	TESTQ      R11, R11
	JZ         frdone
	VPXOR     X1, X1, X1
	VPINSRW   $0, (SI), X1, X1
	CMPQ      R11, $4
	JB        b1
	VPINSRW   $1, 2(SI), X1, X1
	CMPQ      R11, $6
	JB        b1
	VPINSRW   $2, 4(SI), X1, X1

b1:
	VPMOVZXWD X1, X1
	VPSLLD    $16, X1, X1
	VCVTPS2PD X1, Y1
	VMULPD     Y13, Y1, Y1
	VMOVSD       X1, (DI)
	CMPQ         R10, $16
	JB           t15
	VMOVHPD      X1, 8(DI)
	CMPQ         R10, $24
	JB           t15
	VEXTRACTF128 $1, Y1, X3
	VMOVSD       X3, 16(DI)

t15:
	TESTQ      R8, R8
	JZ         frtailnonext
	VMASKMOVPD (R8), Y14, Y2
	VADDPD     Y1, Y2, Y2
	VMOVSD       X2, (R8)
	CMPQ         R10, $16
	JB           t16
	VMOVHPD      X2, 8(R8)
	CMPQ         R10, $24
	JB           t16
	VEXTRACTF128 $1, Y2, X3
	VMOVSD       X3, 16(R8)

t16:

frtailnonext:
	ADDQ R11, SI
	ADDQ R10, DI

frdone:
	DECQ R13
	JNZ  frow
	VZEROUPPER
	RET

// func decodeEdge16Asm(mu *float64, q *uint16, K int, a *float64, next *float64)
//
// Decodes one edge of K×K conditionals q into mu: first, for every row
// y, with r its conditionals' sum (in float64), the factor f_y = a[y]/r if
// r > 0, else −(a[y]/K), into the place of mu's last row; then the rows in
// order, row y float64(q)·f_y, or |f_y| in every entry when f_y's sign is
// set, each added into next when next is not nil. a may be mu's first K
// entries. K ≥ 1.
TEXT ·decodeEdge16Asm(SB), NOSPLIT, $0-40
	MOVQ       mu+0(FP), DI
	MOVQ       q+8(FP), SI
	MOVQ       K+16(FP), DX
	MOVQ       a+24(FP), R15
	MOVQ       next+32(FP), R9
	ROWSETUP
	MOVQ       BX, R8
	SHLQ       $3, R8 // the full vectors' bytes of a bfloat16 row
	MOVQ       DX, BX
	SHLQ       $1, BX // a bfloat16 row's bytes
	VCVTSI2SDQ DX, X12, X12 // K
	VXORPD     X11, X11, X11 // 0
	VMOVSD     b16signbit<>(SB), X10
	MOVQ       DX, AX
	IMULQ      DX, AX
	SUBQ       DX, AX
	LEAQ       (DI)(AX*8), R14 // the factors: mu's last row
	XORQ       R13, R13

e1row:
	VXORPD Y0, Y0, Y0
	XORQ   CX, CX
	TESTQ  R8, R8
	JZ     e1tail

e1vec:
	VPMOVZXWD (SI)(CX*1), X1
	VPSLLD    $16, X1, X1
	VCVTPS2PD X1, Y1
	VADDPD    Y1, Y0, Y0
	ADDQ      $8, CX
	CMPQ      CX, R8
	JB        e1vec

e1tail:
	TESTQ      R11, R11
	JZ         e1sum
	VPXOR     X1, X1, X1
	VPINSRW   $0, (SI)(CX*1), X1, X1
	CMPQ      R11, $4
	JB        b2
	VPINSRW   $1, 2(SI)(CX*1), X1, X1
	CMPQ      R11, $6
	JB        b2
	VPINSRW   $2, 4(SI)(CX*1), X1, X1

b2:
	VPMOVZXWD X1, X1
	VPSLLD    $16, X1, X1
	VCVTPS2PD X1, Y1
	VADDPD     Y1, Y0, Y0

e1sum:
	HSUM
	ADDQ     BX, SI
	VMOVSD   (R15)(R13*8), X2 // a[y]
	VUCOMISD X11, X0
	JA       e1div
	VDIVSD   X12, X2, X2 // a[y]/K
	VXORPD   X10, X2, X2 // its sign set: a uniform row
	JMP      e1put

e1div:
	VDIVSD X0, X2, X2 // a[y]/r

e1put:
	VMOVSD X2, (R14)(R13*8)
	INCQ   R13
	CMPQ   R13, DX
	JB     e1row

	// The rows, in order, from the start of q.
	MOVQ  DX, AX
	IMULQ DX, AX
	SHLQ  $1, AX
	SUBQ  AX, SI
	XORQ  R13, R13

	TESTQ R9, R9
	JZ    e3row

e2row:
	VMOVSD    (R14)(R13*8), X2 // read before row y is written
	VMOVMSKPD X2, AX
	TESTQ     $1, AX
	JNZ       e2uniform
	VBROADCASTSD X2, Y13
	XORQ  CX, CX
	TESTQ R8, R8
	JZ    estail

esvec:
	VPMOVZXWD (SI)(CX*1), X1
	VPSLLD    $16, X1, X1
	VCVTPS2PD X1, Y1
	VMULPD    Y13, Y1, Y1
	VMOVUPD   Y1, (DI)(CX*4)
	VADDPD  (R9)(CX*4), Y1, Y2
	VMOVUPD Y2, (R9)(CX*4)
	ADDQ      $8, CX
	CMPQ      CX, R8
	JB        esvec

estail:
	TESTQ      R11, R11
	JZ         esdone
	VPXOR     X1, X1, X1
	VPINSRW   $0, (SI)(CX*1), X1, X1
	CMPQ      R11, $4
	JB        b3
	VPINSRW   $1, 2(SI)(CX*1), X1, X1
	CMPQ      R11, $6
	JB        b3
	VPINSRW   $2, 4(SI)(CX*1), X1, X1

b3:
	VPMOVZXWD X1, X1
	VPSLLD    $16, X1, X1
	VCVTPS2PD X1, Y1
	VMULPD     Y13, Y1, Y1
	VMOVSD       X1, (DI)(CX*4)
	CMPQ         R10, $16
	JB           t1
	VMOVHPD      X1, 8(DI)(CX*4)
	CMPQ         R10, $24
	JB           t1
	VEXTRACTF128 $1, Y1, X3
	VMOVSD       X3, 16(DI)(CX*4)

t1:
	VMASKMOVPD (R9)(CX*4), Y14, Y2
	VADDPD     Y1, Y2, Y2
	VMOVSD       X2, (R9)(CX*4)
	CMPQ         R10, $16
	JB           t0
	VMOVHPD      X2, 8(R9)(CX*4)
	CMPQ         R10, $24
	JB           t0
	VEXTRACTF128 $1, Y2, X3
	VMOVSD       X3, 16(R9)(CX*4)

t0:

esdone:
	JMP e2next

e2uniform:
	VXORPD       X10, X2, X2
	VBROADCASTSD X2, Y13
	XORQ  CX, CX
	TESTQ R8, R8
	JZ    eutail

euvec:
	VMOVUPD Y13, (DI)(CX*4)
	VADDPD  (R9)(CX*4), Y13, Y2
	VMOVUPD Y2, (R9)(CX*4)
	ADDQ    $8, CX
	CMPQ    CX, R8
	JB      euvec

eutail:
	TESTQ R11, R11
	JZ    eudone
	VMOVSD       X13, (DI)(CX*4)
	CMPQ         R10, $16
	JB           t3
	VMOVHPD      X13, 8(DI)(CX*4)
	CMPQ         R10, $24
	JB           t3
	VEXTRACTF128 $1, Y13, X3
	VMOVSD       X3, 16(DI)(CX*4)

t3:
	VMASKMOVPD (R9)(CX*4), Y14, Y2
	VADDPD     Y13, Y2, Y2
	VMOVSD       X2, (R9)(CX*4)
	CMPQ         R10, $16
	JB           t2
	VMOVHPD      X2, 8(R9)(CX*4)
	CMPQ         R10, $24
	JB           t2
	VEXTRACTF128 $1, Y2, X3
	VMOVSD       X3, 16(R9)(CX*4)

t2:

eudone:

e2next:
	ADDQ BX, SI
	LEAQ (DI)(BX*4), DI
	INCQ R13
	CMPQ R13, DX
	JB   e2row
	VZEROUPPER
	RET

	// No next: the same rows, nothing added.
e3row:
	VMOVSD    (R14)(R13*8), X2
	VMOVMSKPD X2, AX
	TESTQ     $1, AX
	JNZ       e3uniform
	VBROADCASTSD X2, Y13
	XORQ  CX, CX
	TESTQ R8, R8
	JZ    ettail

etvec:
	VPMOVZXWD (SI)(CX*1), X1
	VPSLLD    $16, X1, X1
	VCVTPS2PD X1, Y1
	VMULPD    Y13, Y1, Y1
	VMOVUPD   Y1, (DI)(CX*4)
	ADDQ      $8, CX
	CMPQ      CX, R8
	JB        etvec

ettail:
	TESTQ      R11, R11
	JZ         etdone
	VPXOR     X1, X1, X1
	VPINSRW   $0, (SI)(CX*1), X1, X1
	CMPQ      R11, $4
	JB        b4
	VPINSRW   $1, 2(SI)(CX*1), X1, X1
	CMPQ      R11, $6
	JB        b4
	VPINSRW   $2, 4(SI)(CX*1), X1, X1

b4:
	VPMOVZXWD X1, X1
	VPSLLD    $16, X1, X1
	VCVTPS2PD X1, Y1
	VMULPD     Y13, Y1, Y1
	VMOVSD       X1, (DI)(CX*4)
	CMPQ         R10, $16
	JB           t4
	VMOVHPD      X1, 8(DI)(CX*4)
	CMPQ         R10, $24
	JB           t4
	VEXTRACTF128 $1, Y1, X3
	VMOVSD       X3, 16(DI)(CX*4)

t4:

etdone:
	JMP e3next

e3uniform:
	VXORPD       X10, X2, X2
	VBROADCASTSD X2, Y13
	XORQ  CX, CX
	TESTQ R8, R8
	JZ    evtail

evvec:
	VMOVUPD Y13, (DI)(CX*4)
	ADDQ    $8, CX
	CMPQ    CX, R8
	JB      evvec

evtail:
	TESTQ R11, R11
	JZ    evdone
	VMOVSD       X13, (DI)(CX*4)
	CMPQ         R10, $16
	JB           t5
	VMOVHPD      X13, 8(DI)(CX*4)
	CMPQ         R10, $24
	JB           t5
	VEXTRACTF128 $1, Y13, X3
	VMOVSD       X3, 16(DI)(CX*4)

t5:

evdone:

e3next:
	ADDQ BX, SI
	LEAQ (DI)(BX*4), DI
	INCQ R13
	CMPQ R13, DX
	JB   e3row
	VZEROUPPER
	RET

// func encodeRows16Asm(q *uint16, mu *float64, K, rows int)
//
// For rows r = 0 … rows−1 of K entries of mu: with s the row's sum, if
// 2^-1000 ≤ s < +Inf then q = the bfloat16 nearest float32(mu·(1/s)) over the row, else every
// q of the row is 1. rows ≥ 1, K ≥ 1.
TEXT ·encodeRows16Asm(SB), NOSPLIT, $0-32
	MOVQ         q+0(FP), DI
	MOVQ         mu+8(FP), SI
	MOVQ         K+16(FP), DX
	MOVQ         rows+24(FP), R13
	ROWSETUP
	VMOVSD       b16tinyrow<>(SB), X10
	VMOVSD       b16inf64<>(SB), X9
	VMOVSD       b16one64<>(SB), X8
	VMOVQ        bf16ones<>(SB), X7

crow:
	MOVQ   SI, R14
	VXORPD Y0, Y0, Y0
	MOVQ   BX, CX
	TESTQ  CX, CX
	JZ     ctail

cvec:
	VADDPD (SI), Y0, Y0
	ADDQ   $32, SI
	DECQ   CX
	JNZ    cvec

ctail:
	TESTQ      R10, R10
	JZ         csum
	VMASKMOVPD (SI), Y14, Y1
	VADDPD     Y1, Y0, Y0

csum:
	HSUM
	MOVQ         R14, SI
	VUCOMISD     X10, X0
	JB           cuniform // below 2^-1000, or not a number
	VUCOMISD     X9, X0
	JAE          cuniform // +Inf
	VDIVSD       X0, X8, X2 // 1/s
	VBROADCASTSD X2, Y13
	MOVQ         BX, CX
	TESTQ        CX, CX
	JZ           cstail

csvec:
	VMULPD     (SI), Y13, Y1
	VCVTPD2PSY Y1, X1
	VPSRLD    $16, X1, X2
	VPAND     bf16lsb<>(SB), X2, X2
	VPADDD    bf16bias<>(SB), X1, X1
	VPADDD    X2, X1, X1
	VPSRLD    $16, X1, X1
	VPACKUSDW X1, X1, X1
	VMOVQ      X1, (DI)
	ADDQ       $32, SI
	ADDQ       $8, DI
	DECQ       CX
	JNZ        csvec

cstail:
	TESTQ      R10, R10
	JZ         cnext
	VMASKMOVPD (SI), Y14, Y1
	VMULPD     Y13, Y1, Y1
	VCVTPD2PSY Y1, X1
	VPSRLD    $16, X1, X2
	VPAND     bf16lsb<>(SB), X2, X2
	VPADDD    bf16bias<>(SB), X1, X1
	VPADDD    X2, X1, X1
	VPSRLD    $16, X1, X1
	VPACKUSDW X1, X1, X1
	VPEXTRW $0, X1, (DI)
	CMPQ    R11, $4
	JB      b5
	VPEXTRW $1, X1, 2(DI)
	CMPQ    R11, $6
	JB      b5
	VPEXTRW $2, X1, 4(DI)

b5:
	ADDQ       R10, SI
	ADDQ       R11, DI
	JMP        cnext

cuniform:
	MOVQ  BX, CX
	TESTQ CX, CX
	JZ    cutail

cuvec:
	VMOVQ   X7, (DI)
	ADDQ    $32, SI
	ADDQ    $8, DI
	DECQ    CX
	JNZ     cuvec

cutail:
	TESTQ R10, R10
	JZ    cnext
	VPEXTRW $0, X7, (DI)
	CMPQ    R11, $4
	JB      b6
	VPEXTRW $1, X7, 2(DI)
	CMPQ    R11, $6
	JB      b6
	VPEXTRW $2, X7, 4(DI)

b6:
	ADDQ  R10, SI
	ADDQ  R11, DI

cnext:
	DECQ R13
	JNZ  crow
	VZEROUPPER
	RET

// func rowSums16Asm(q *uint16, K, rows int, out *float64)
//
// out[r] = the sum of the bfloat16 row q[r·K : r·K+K], each entry in
// float64, for r < rows (≥ 1); K ≥ 1.
TEXT ·rowSums16Asm(SB), NOSPLIT, $0-32
	MOVQ q+0(FP), SI
	MOVQ K+8(FP), DX
	MOVQ rows+16(FP), R13
	MOVQ out+24(FP), DI
	ROWSETUP

rrow:
	VXORPD Y0, Y0, Y0
	MOVQ   BX, CX
	TESTQ  CX, CX
	JZ     rtail

rvec:
	VPMOVZXWD (SI), X1
	VPSLLD    $16, X1, X1
	VCVTPS2PD X1, Y1
	VADDPD    Y1, Y0, Y0
	ADDQ      $8, SI
	DECQ      CX
	JNZ       rvec

rtail:
	TESTQ      R11, R11
	JZ         rdone
	VPXOR     X1, X1, X1
	VPINSRW   $0, (SI), X1, X1
	CMPQ      R11, $4
	JB        b7
	VPINSRW   $1, 2(SI), X1, X1
	CMPQ      R11, $6
	JB        b7
	VPINSRW   $2, 4(SI), X1, X1

b7:
	VPMOVZXWD X1, X1
	VPSLLD    $16, X1, X1
	VCVTPS2PD X1, Y1
	VADDPD     Y1, Y0, Y0
	ADDQ       R11, SI

rdone:
	HSUM
	VMOVSD X0, (DI)
	ADDQ   $8, DI
	DECQ   R13
	JNZ    rrow
	VZEROUPPER
	RET

// func scaleRowsSum16Asm(mu *float64, q *uint16, K int, f float64, next, sum *float64)
//
// For the K rows y = 0 … K−1 of a K×K edge in order: mu[y·K+j] =
// float64(q[y·K+j])·f, added into next[j] and into sum[y·K+j]. K ≥ 1.
TEXT ·scaleRowsSum16Asm(SB), NOSPLIT, $0-48
	MOVQ         mu+0(FP), DI
	MOVQ         q+8(FP), SI
	MOVQ         K+16(FP), DX
	VBROADCASTSD f+24(FP), Y13
	MOVQ         next+32(FP), R9
	ROWSETUP
	MOVQ         sum+40(FP), R12
	MOVQ         DX, R13

grow:
	MOVQ  R9, R8
	MOVQ  BX, CX
	TESTQ CX, CX
	JZ    grtail

grvec:
	VPMOVZXWD (SI), X1
	VPSLLD    $16, X1, X1
	VCVTPS2PD X1, Y1
	VMULPD    Y13, Y1, Y1
	VMOVUPD   Y1, (DI)
	VADDPD    (R8), Y1, Y2
	VMOVUPD   Y2, (R8)
	VADDPD    (R12), Y1, Y2
	VMOVUPD   Y2, (R12)
	ADDQ      $32, R8
	ADDQ      $32, R12
	ADDQ      $8, SI
	ADDQ      $32, DI
	DECQ      CX
	JNZ       grvec

grtail:
	TESTQ      R11, R11
	JZ         grdone
	VPXOR     X1, X1, X1
	VPINSRW   $0, (SI), X1, X1
	CMPQ      R11, $4
	JB        b8
	VPINSRW   $1, 2(SI), X1, X1
	CMPQ      R11, $6
	JB        b8
	VPINSRW   $2, 4(SI), X1, X1

b8:
	VPMOVZXWD X1, X1
	VPSLLD    $16, X1, X1
	VCVTPS2PD X1, Y1
	VMULPD     Y13, Y1, Y1
	VMOVSD       X1, (DI)
	CMPQ         R10, $16
	JB           t12
	VMOVHPD      X1, 8(DI)
	CMPQ         R10, $24
	JB           t12
	VEXTRACTF128 $1, Y1, X3
	VMOVSD       X3, 16(DI)

t12:
	VMASKMOVPD (R8), Y14, Y2
	VADDPD     Y1, Y2, Y2
	VMOVSD       X2, (R8)
	CMPQ         R10, $16
	JB           t13
	VMOVHPD      X2, 8(R8)
	CMPQ         R10, $24
	JB           t13
	VEXTRACTF128 $1, Y2, X3
	VMOVSD       X3, 16(R8)

t13:
	VMASKMOVPD (R12), Y14, Y2
	VADDPD     Y1, Y2, Y2
	VMOVSD       X2, (R12)
	CMPQ         R10, $16
	JB           t14
	VMOVHPD      X2, 8(R12)
	CMPQ         R10, $24
	JB           t14
	VEXTRACTF128 $1, Y2, X3
	VMOVSD       X3, 16(R12)

t14:
	ADDQ R11, SI
	ADDQ R10, DI
	ADDQ R10, R12

grdone:
	DECQ R13
	JNZ  grow
	VZEROUPPER
	RET

// func decodeEdgeSum16Asm(mu *float64, q *uint16, K int, a, next, sum *float64)
//
// decodeEdge16Asm whose rows are also added into next (never nil) and
// sum[y·K+j] (K×K).
TEXT ·decodeEdgeSum16Asm(SB), NOSPLIT, $0-48
	MOVQ       mu+0(FP), DI
	MOVQ       q+8(FP), SI
	MOVQ       K+16(FP), DX
	MOVQ       a+24(FP), R15
	MOVQ       next+32(FP), R9
	ROWSETUP
	MOVQ       sum+40(FP), R12
	MOVQ       BX, R8
	SHLQ       $3, R8 // the full vectors' bytes of a bfloat16 row
	MOVQ       DX, BX
	SHLQ       $1, BX // a bfloat16 row's bytes
	VCVTSI2SDQ DX, X12, X12 // K
	VXORPD     X11, X11, X11 // 0
	VMOVSD     b16signbit<>(SB), X10
	MOVQ       DX, AX
	IMULQ      DX, AX
	SUBQ       DX, AX
	LEAQ       (DI)(AX*8), R14 // the factors: mu's last row
	XORQ       R13, R13

h1row:
	VXORPD Y0, Y0, Y0
	XORQ   CX, CX
	TESTQ  R8, R8
	JZ     h1tail

h1vec:
	VPMOVZXWD (SI)(CX*1), X1
	VPSLLD    $16, X1, X1
	VCVTPS2PD X1, Y1
	VADDPD    Y1, Y0, Y0
	ADDQ      $8, CX
	CMPQ      CX, R8
	JB        h1vec

h1tail:
	TESTQ      R11, R11
	JZ         h1sum
	VPXOR     X1, X1, X1
	VPINSRW   $0, (SI)(CX*1), X1, X1
	CMPQ      R11, $4
	JB        b9
	VPINSRW   $1, 2(SI)(CX*1), X1, X1
	CMPQ      R11, $6
	JB        b9
	VPINSRW   $2, 4(SI)(CX*1), X1, X1

b9:
	VPMOVZXWD X1, X1
	VPSLLD    $16, X1, X1
	VCVTPS2PD X1, Y1
	VADDPD     Y1, Y0, Y0

h1sum:
	HSUM
	ADDQ     BX, SI
	VMOVSD   (R15)(R13*8), X2 // a[y]
	VUCOMISD X11, X0
	JA       h1div
	VDIVSD   X12, X2, X2 // a[y]/K
	VXORPD   X10, X2, X2 // its sign set: a uniform row
	JMP      h1put

h1div:
	VDIVSD X0, X2, X2 // a[y]/r

h1put:
	VMOVSD X2, (R14)(R13*8)
	INCQ   R13
	CMPQ   R13, DX
	JB     h1row

	// The rows, in order, from the start of q.
	MOVQ  DX, AX
	IMULQ DX, AX
	SHLQ  $1, AX
	SUBQ  AX, SI
	XORQ  R13, R13

h2row:
	VMOVSD    (R14)(R13*8), X2 // read before row y is written
	VMOVMSKPD X2, AX
	TESTQ     $1, AX
	JNZ       h2uniform
	VBROADCASTSD X2, Y13
	XORQ  CX, CX
	TESTQ R8, R8
	JZ    hstail

hsvec:
	VPMOVZXWD (SI)(CX*1), X1
	VPSLLD    $16, X1, X1
	VCVTPS2PD X1, Y1
	VMULPD    Y13, Y1, Y1
	VMOVUPD   Y1, (DI)(CX*4)
	VADDPD  (R9)(CX*4), Y1, Y2
	VMOVUPD Y2, (R9)(CX*4)
	VADDPD  (R12)(CX*4), Y1, Y2
	VMOVUPD Y2, (R12)(CX*4)
	ADDQ      $8, CX
	CMPQ      CX, R8
	JB        hsvec

hstail:
	TESTQ      R11, R11
	JZ         hsdone
	VPXOR     X1, X1, X1
	VPINSRW   $0, (SI)(CX*1), X1, X1
	CMPQ      R11, $4
	JB        b10
	VPINSRW   $1, 2(SI)(CX*1), X1, X1
	CMPQ      R11, $6
	JB        b10
	VPINSRW   $2, 4(SI)(CX*1), X1, X1

b10:
	VPMOVZXWD X1, X1
	VPSLLD    $16, X1, X1
	VCVTPS2PD X1, Y1
	VMULPD     Y13, Y1, Y1
	VMOVSD       X1, (DI)(CX*4)
	CMPQ         R10, $16
	JB           t8
	VMOVHPD      X1, 8(DI)(CX*4)
	CMPQ         R10, $24
	JB           t8
	VEXTRACTF128 $1, Y1, X3
	VMOVSD       X3, 16(DI)(CX*4)

t8:
	VMASKMOVPD (R9)(CX*4), Y14, Y2
	VADDPD     Y1, Y2, Y2
	VMOVSD       X2, (R9)(CX*4)
	CMPQ         R10, $16
	JB           t6
	VMOVHPD      X2, 8(R9)(CX*4)
	CMPQ         R10, $24
	JB           t6
	VEXTRACTF128 $1, Y2, X3
	VMOVSD       X3, 16(R9)(CX*4)

t6:
	VMASKMOVPD (R12)(CX*4), Y14, Y2
	VADDPD     Y1, Y2, Y2
	VMOVSD       X2, (R12)(CX*4)
	CMPQ         R10, $16
	JB           t7
	VMOVHPD      X2, 8(R12)(CX*4)
	CMPQ         R10, $24
	JB           t7
	VEXTRACTF128 $1, Y2, X3
	VMOVSD       X3, 16(R12)(CX*4)

t7:

hsdone:
	JMP h2next

h2uniform:
	VXORPD       X10, X2, X2
	VBROADCASTSD X2, Y13
	XORQ  CX, CX
	TESTQ R8, R8
	JZ    hutail

huvec:
	VMOVUPD Y13, (DI)(CX*4)
	VADDPD  (R9)(CX*4), Y13, Y2
	VMOVUPD Y2, (R9)(CX*4)
	VADDPD  (R12)(CX*4), Y13, Y2
	VMOVUPD Y2, (R12)(CX*4)
	ADDQ    $8, CX
	CMPQ    CX, R8
	JB      huvec

hutail:
	TESTQ R11, R11
	JZ    hudone
	VMOVSD       X13, (DI)(CX*4)
	CMPQ         R10, $16
	JB           t11
	VMOVHPD      X13, 8(DI)(CX*4)
	CMPQ         R10, $24
	JB           t11
	VEXTRACTF128 $1, Y13, X3
	VMOVSD       X3, 16(DI)(CX*4)

t11:
	VMASKMOVPD (R9)(CX*4), Y14, Y2
	VADDPD     Y13, Y2, Y2
	VMOVSD       X2, (R9)(CX*4)
	CMPQ         R10, $16
	JB           t9
	VMOVHPD      X2, 8(R9)(CX*4)
	CMPQ         R10, $24
	JB           t9
	VEXTRACTF128 $1, Y2, X3
	VMOVSD       X3, 16(R9)(CX*4)

t9:
	VMASKMOVPD (R12)(CX*4), Y14, Y2
	VADDPD     Y13, Y2, Y2
	VMOVSD       X2, (R12)(CX*4)
	CMPQ         R10, $16
	JB           t10
	VMOVHPD      X2, 8(R12)(CX*4)
	CMPQ         R10, $24
	JB           t10
	VEXTRACTF128 $1, Y2, X3
	VMOVSD       X3, 16(R12)(CX*4)

t10:

hudone:

h2next:
	ADDQ BX, SI
	LEAQ (DI)(BX*4), DI
	LEAQ (R12)(BX*4), R12
	INCQ R13
	CMPQ R13, DX
	JB   h2row
	VZEROUPPER
	RET

// func cvt64to16Asm(q *uint16, mu *float64, n int)
//
// q[j] = the bfloat16 nearest float32(mu[j]) for j < n, a positive multiple of 4.
TEXT ·cvt64to16Asm(SB), NOSPLIT, $0-24
	MOVQ q+0(FP), DI
	MOVQ mu+8(FP), SI
	MOVQ n+16(FP), CX
	SHRQ $2, CX

vloop:
	VCVTPD2PSY (SI), X1
	VPSRLD    $16, X1, X2
	VPAND     bf16lsb<>(SB), X2, X2
	VPADDD    bf16bias<>(SB), X1, X1
	VPADDD    X2, X1, X1
	VPSRLD    $16, X1, X1
	VPACKUSDW X1, X1, X1
	VMOVQ      X1, (DI)
	ADDQ       $32, SI
	ADDQ       $8, DI
	DECQ       CX
	JNZ        vloop
	VZEROUPPER
	RET

// b16mask64<> holds at 32·r bytes the float64 mask of the first r lanes.
DATA b16mask64<>+0(SB)/8, $0
DATA b16mask64<>+8(SB)/8, $0
DATA b16mask64<>+16(SB)/8, $0
DATA b16mask64<>+24(SB)/8, $0
DATA b16mask64<>+32(SB)/8, $-1
DATA b16mask64<>+40(SB)/8, $0
DATA b16mask64<>+48(SB)/8, $0
DATA b16mask64<>+56(SB)/8, $0
DATA b16mask64<>+64(SB)/8, $-1
DATA b16mask64<>+72(SB)/8, $-1
DATA b16mask64<>+80(SB)/8, $0
DATA b16mask64<>+88(SB)/8, $0
DATA b16mask64<>+96(SB)/8, $-1
DATA b16mask64<>+104(SB)/8, $-1
DATA b16mask64<>+112(SB)/8, $-1
DATA b16mask64<>+120(SB)/8, $0
GLOBL b16mask64<>(SB), RODATA|NOPTR, $128

// b16mask32<> holds at 16·r bytes the float32 mask of the first r lanes.
DATA b16mask32<>+0(SB)/8, $0
DATA b16mask32<>+8(SB)/8, $0
DATA b16mask32<>+16(SB)/8, $0x00000000ffffffff
DATA b16mask32<>+24(SB)/8, $0
DATA b16mask32<>+32(SB)/8, $-1
DATA b16mask32<>+40(SB)/8, $0
DATA b16mask32<>+48(SB)/8, $-1
DATA b16mask32<>+56(SB)/8, $0x00000000ffffffff
GLOBL b16mask32<>(SB), RODATA|NOPTR, $64

DATA b16signbit<>+0(SB)/8, $0x8000000000000000
GLOBL b16signbit<>(SB), RODATA|NOPTR, $8
DATA b16tinyrow<>+0(SB)/8, $0x0170000000000000 // 2^-1000
GLOBL b16tinyrow<>(SB), RODATA|NOPTR, $8
DATA b16inf64<>+0(SB)/8, $0x7ff0000000000000
GLOBL b16inf64<>(SB), RODATA|NOPTR, $8
DATA b16one64<>+0(SB)/8, $0x3ff0000000000000
GLOBL b16one64<>(SB), RODATA|NOPTR, $8
// bf16lsb<> and bf16bias<> are the rounding's 1 and 0x7fff in each 32-bit lane;
// bf16ones<> is four bfloat16 ones.
DATA bf16lsb<>+0(SB)/8, $0x0000000100000001
DATA bf16lsb<>+8(SB)/8, $0x0000000100000001
GLOBL bf16lsb<>(SB), RODATA|NOPTR, $16
DATA bf16bias<>+0(SB)/8, $0x00007fff00007fff
DATA bf16bias<>+8(SB)/8, $0x00007fff00007fff
GLOBL bf16bias<>(SB), RODATA|NOPTR, $16
DATA bf16ones<>+0(SB)/8, $0x3f803f803f803f80
GLOBL bf16ones<>(SB), RODATA|NOPTR, $8
