//go:build amd64 && !purego

#include "textflag.h"

// The stride-2 column splits of the strided convolutions' im2col: two ZMM
// loads of 32 consecutive values, VPERMT2PS picks the 16 even (odd) ones.
// Partial blocks are masked, so no value past the last one used is read.

DATA  evenIdx<>+0(SB)/4, $0
DATA  evenIdx<>+4(SB)/4, $2
DATA  evenIdx<>+8(SB)/4, $4
DATA  evenIdx<>+12(SB)/4, $6
DATA  evenIdx<>+16(SB)/4, $8
DATA  evenIdx<>+20(SB)/4, $10
DATA  evenIdx<>+24(SB)/4, $12
DATA  evenIdx<>+28(SB)/4, $14
DATA  evenIdx<>+32(SB)/4, $16
DATA  evenIdx<>+36(SB)/4, $18
DATA  evenIdx<>+40(SB)/4, $20
DATA  evenIdx<>+44(SB)/4, $22
DATA  evenIdx<>+48(SB)/4, $24
DATA  evenIdx<>+52(SB)/4, $26
DATA  evenIdx<>+56(SB)/4, $28
DATA  evenIdx<>+60(SB)/4, $30
GLOBL evenIdx<>(SB), RODATA|NOPTR, $64

// SETMASK(K, R) sets K to the low R bits (R in 0..16). Clobbers AX.
#define SETMASK(K, R) \
	MOVQ $1, AX; \
	SHLXQ R, AX, AX; \
	DECQ AX; \
	KMOVW AX, K

// SPLIT16 splits 32 values at SI into 16 evens at DI and 16 odds at DX
// (indices in Z4, Z5) and advances the three pointers. Clobbers Z0–Z2.
#define SPLIT16 \
	VMOVUPS (SI), Z0; \
	VMOVUPS 64(SI), Z1; \
	VMOVAPS Z0, Z2; \
	VPERMT2PS Z1, Z4, Z0; \
	VPERMT2PS Z1, Z5, Z2; \
	VMOVUPS Z0, (DI); \
	VMOVUPS Z2, (DX); \
	ADDQ $128, SI; \
	ADDQ $64, DI; \
	ADDQ $64, DX

// SPLITTAIL is SPLIT16 for CX < 16 pairs under masks: the 2·CX values
// read, the first min(16, 2·CX) under K1 and the rest under K2, the CX
// outputs of each kind under K3; no value past them is touched. The
// pointers stay. Clobbers Z0–Z2, K1–K3, AX, R8, R14.
#define SPLITTAIL \
	LEAQ (CX)(CX*1), R8; \
	MOVQ $16, R14; \
	CMPQ R8, R14; \
	CMOVQLT R8, R14; \
	SETMASK(K1, R14); \
	SUBQ R14, R8; \
	SETMASK(K2, R8); \
	SETMASK(K3, CX); \
	VMOVUPS.Z (SI), K1, Z0; \
	VMOVUPS.Z 64(SI), K2, Z1; \
	VMOVAPS Z0, Z2; \
	VPERMT2PS Z1, Z4, Z0; \
	VPERMT2PS Z1, Z5, Z2; \
	VMOVUPS Z0, K3, (DI); \
	VMOVUPS Z2, K3, (DX)

// func split32(e, o, row *float32, n int)
// e[j] = row[2j], o[j] = row[2j+1] for j < n; reads row[0:2n].
TEXT ·split32(SB), NOSPLIT, $0-32
	MOVQ e+0(FP), DI
	MOVQ o+8(FP), DX
	MOVQ row+16(FP), SI
	MOVQ n+24(FP), CX
	VMOVDQU32 evenIdx<>(SB), Z4
	VPTERNLOGD $0xff, Z5, Z5, Z5
	VPSUBD Z5, Z4, Z5 // odd indices: even + 1

sp_loop:
	CMPQ CX, $16
	JLT  sp_tail
	SPLIT16
	SUBQ $16, CX
	JMP  sp_loop

sp_tail:
	TESTQ CX, CX
	JZ   sp_done
	SPLITTAIL

sp_done:
	VZEROUPPER
	RET

// func even32(dst, src *float32, n int)
// dst[j] = src[2j] for j < n; reads src[0:2n−1].
TEXT ·even32(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	VMOVDQU32 evenIdx<>(SB), Z4

ev_loop:
	CMPQ CX, $17 // a full block reads 32 values: 2n−1 ≥ 32
	JLT  ev_tail
	VMOVUPS (SI), Z0
	VPERMT2PS 64(SI), Z4, Z0
	VMOVUPS Z0, (DI)
	ADDQ $128, SI
	ADDQ $64, DI
	SUBQ $16, CX
	JMP  ev_loop

ev_tail:
	TESTQ CX, CX
	JZ   ev_done
	// n ≤ 16 outputs from 2n−1 values.
	LEAQ -1(CX)(CX*1), R8
	MOVQ R8, R9
	CMPQ R9, $16
	JLE  ev_m1
	MOVQ $16, R9
ev_m1:
	SETMASK(K1, R9)
	SUBQ R9, R8
	SETMASK(K2, R8)
	SETMASK(K3, CX)
	VMOVUPS.Z (SI), K1, Z0
	VMOVUPS.Z 64(SI), K2, Z1
	VPERMT2PS Z1, Z4, Z0
	VMOVUPS Z0, K3, (DI)

ev_done:
	VZEROUPPER
	RET

// wgFill32 is split32 over rows, for the Winograd convolutions
// (winograd.go): the even and odd values of every row land at offsets of
// a strided destination row, and an odd row's last value after the evens.
// func wgFill32(dst, x *float32, rows, w, rs, aoff, boff int)
// For each of rows rows of w values (x, consecutive) and destination rows
// (dst, stride rs): dst[aoff + j] = x[2j], dst[boff + j] = x[2j+1] for
// j < w/2, and dst[aoff + w/2] = x[w−1] when w is odd.
TEXT ·wgFill32(SB), NOSPLIT, $0-56
	MOVQ dst+0(FP), R10
	MOVQ x+8(FP), SI
	MOVQ rows+16(FP), R15
	MOVQ w+24(FP), R13
	MOVQ rs+32(FP), R9
	SHLQ $2, R9
	MOVQ aoff+40(FP), R11
	SHLQ $2, R11
	MOVQ boff+48(FP), R12
	SHLQ $2, R12
	VMOVDQU32 evenIdx<>(SB), Z4
	VPTERNLOGD $0xff, Z5, Z5, Z5
	VPSUBD Z5, Z4, Z5 // odd indices: even + 1

wf_row:
	TESTQ R15, R15
	JLE   wf_done
	LEAQ  (R10)(R11*1), DI
	LEAQ  (R10)(R12*1), DX
	MOVQ  R13, CX
	SHRQ  $1, CX // pairs

wf_loop:
	CMPQ CX, $16
	JLT  wf_tail
	SPLIT16
	SUBQ $16, CX
	JMP  wf_loop

wf_tail:
	TESTQ CX, CX
	JZ   wf_odd
	SPLITTAIL
	LEAQ (SI)(CX*8), SI
	LEAQ (DI)(CX*4), DI

wf_odd:
	TESTQ $1, R13
	JZ    wf_next
	MOVL  (SI), AX
	MOVL  AX, (DI)
	ADDQ  $4, SI

wf_next:
	ADDQ R9, R10
	DECQ R15
	JMP  wf_row

wf_done:
	VZEROUPPER
	RET
