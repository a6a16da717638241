//go:build amd64 && !purego

#include "textflag.h"

DATA iota16<>+0(SB)/4, $0
DATA iota16<>+4(SB)/4, $1
DATA iota16<>+8(SB)/4, $2
DATA iota16<>+12(SB)/4, $3
DATA iota16<>+16(SB)/4, $4
DATA iota16<>+20(SB)/4, $5
DATA iota16<>+24(SB)/4, $6
DATA iota16<>+28(SB)/4, $7
DATA iota16<>+32(SB)/4, $8
DATA iota16<>+36(SB)/4, $9
DATA iota16<>+40(SB)/4, $10
DATA iota16<>+44(SB)/4, $11
DATA iota16<>+48(SB)/4, $12
DATA iota16<>+52(SB)/4, $13
DATA iota16<>+56(SB)/4, $14
DATA iota16<>+60(SB)/4, $15
GLOBL iota16<>(SB), RODATA|NOPTR, $64

// func filterKeysAVX512(seg *float32, m int, buf *int64, n int, base, thr int32) int
//
// 16 scores a step: their keys (floatKey: bits ^ ((bits >> 31) & 0x7fffffff))
// are compared with thr; the entries (key << 32 | id) of the two halves are
// built by zero-extending keys and ids to 64 bits, compressed under the
// halves of the mask and stored at buf[n:] (8 entries written, popcount kept).
TEXT ·filterKeysAVX512(SB), NOSPLIT, $0-48
	MOVQ seg+0(FP), SI
	MOVQ m+8(FP), CX
	MOVQ buf+16(FP), DI
	MOVQ n+24(FP), DX
	MOVL base+32(FP), AX
	MOVL thr+36(FP), BX
	VPBROADCASTD BX, Z31         // thr
	MOVL $0x7fffffff, BX
	VPBROADCASTD BX, Z30         // 0x7fffffff
	VPBROADCASTD AX, Z29
	MOVL $16, BX
	VPBROADCASTD BX, Z28         // 16
	VMOVDQU32 iota16<>(SB), Z27  // 0, 1, ..., 15
	VPADDD Z29, Z27, Z29         // ids of this step: base + 0..15
	TESTQ CX, CX
	JZ   fdone
floop:
	VMOVDQU32 (SI), Z0
	VPSRAD $31, Z0, Z1
	VPANDD Z30, Z1, Z1
	VPXORD Z1, Z0, Z0            // keys
	VPCMPGTD Z31, Z0, K1         // K1 = keys > thr
	KSHIFTRW $8, K1, K2
	// entries 0..7
	VPMOVZXDQ Y0, Z2
	VPSLLQ $32, Z2, Z2
	VPMOVZXDQ Y29, Z3
	VPORQ Z3, Z2, Z2
	VPCOMPRESSQ Z2, K1, Z4
	VMOVDQU64 Z4, (DI)(DX*8)
	KMOVW K1, AX
	ANDL $0xff, AX
	POPCNTL AX, AX
	ADDQ AX, DX
	// entries 8..15
	VEXTRACTI64X4 $1, Z0, Y5
	VPMOVZXDQ Y5, Z2
	VPSLLQ $32, Z2, Z2
	VEXTRACTI64X4 $1, Z29, Y6
	VPMOVZXDQ Y6, Z3
	VPORQ Z3, Z2, Z2
	VPCOMPRESSQ Z2, K2, Z4
	VMOVDQU64 Z4, (DI)(DX*8)
	KMOVW K2, AX
	POPCNTL AX, AX
	ADDQ AX, DX
	VPADDD Z28, Z29, Z29
	ADDQ $64, SI
	SUBQ $16, CX
	JNZ  floop
fdone:
	MOVQ DX, ret+40(FP)
	VZEROUPPER
	RET

// func partitionAVX512(x *int64, m int, pk int64, v *int64, n int, q *int64, hd, tl int) (int, int, int)
//
// 8 entries a step: K1 = entries > pk; the front part gets them compressed
// (8 entries stored at v[n:], popcount kept); the queue gets the step's
// entries with those > pk replaced, in order, by the entries popped from its
// head (VPEXPANDQ of q[hd:hd+8] under K1, merged into the step's entries),
// stored at q[tl:]. The queue holds at least 8 entries, so the popped ones
// were all written before the step.
TEXT ·partitionAVX512(SB), NOSPLIT, $0-88
	MOVQ x+0(FP), SI
	MOVQ m+8(FP), CX
	MOVQ pk+16(FP), AX
	MOVQ v+24(FP), DI
	MOVQ n+32(FP), DX
	MOVQ q+40(FP), R8
	MOVQ hd+48(FP), R9
	MOVQ tl+56(FP), R10
	VPBROADCASTQ AX, Z31
	TESTQ CX, CX
	JZ   pdone
ploop:
	VMOVDQU64 (SI), Z0
	VPCMPGTQ Z31, Z0, K1         // K1 = x > pk
	VPCOMPRESSQ Z0, K1, Z1
	VMOVDQU64 (R8)(R9*8), Z2     // queue head
	VPEXPANDQ Z2, K1, Z0         // entries > pk replaced by popped ones
	VMOVDQU64 Z1, (DI)(DX*8)
	VMOVDQU64 Z0, (R8)(R10*8)
	KMOVW K1, AX
	POPCNTL AX, AX
	ADDQ AX, DX
	ADDQ AX, R9
	ADDQ $8, R10
	ADDQ $64, SI
	SUBQ $8, CX
	JNZ  ploop
pdone:
	MOVQ DX, ret+64(FP)
	MOVQ R9, ret1+72(FP)
	MOVQ R10, ret2+80(FP)
	VZEROUPPER
	RET
