//go:build !purego

#include "textflag.h"

// func prefetchAsm(p *byte, n int)
//
// PREFETCHT1 of every cache line of p[0:n] (n > 0): the lines at byte
// offsets 0, 64, … below n, and the line of its last byte.
TEXT ·prefetchAsm(SB), NOSPLIT, $0-16
	MOVQ p+0(FP), SI
	MOVQ n+8(FP), DX
	XORQ BX, BX

pline:
	PREFETCHT1 (SI)(BX*1)
	ADDQ       $64, BX
	CMPQ       BX, DX
	JB         pline
	PREFETCHT1 -1(SI)(DX*1)
	RET
