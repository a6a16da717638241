//go:build amd64 && !purego

#include "textflag.h"

// Winograd F(2×2, 3×3) transforms (winograd.go), 16 tiles of one tile row
// per block, one tile per ZMM lane; the last block is masked, so nothing
// past the n-th tile is read or written. Every value is computed by the
// same additions, in the same order, as wgInGo and wgOutGo.

// Interleave indices: lo = a0 b0 a1 b1 … a7 b7, hi = a8 b8 … a15 b15.
DATA  wgLoIdx<>+0(SB)/4, $0
DATA  wgLoIdx<>+4(SB)/4, $16
DATA  wgLoIdx<>+8(SB)/4, $1
DATA  wgLoIdx<>+12(SB)/4, $17
DATA  wgLoIdx<>+16(SB)/4, $2
DATA  wgLoIdx<>+20(SB)/4, $18
DATA  wgLoIdx<>+24(SB)/4, $3
DATA  wgLoIdx<>+28(SB)/4, $19
DATA  wgLoIdx<>+32(SB)/4, $4
DATA  wgLoIdx<>+36(SB)/4, $20
DATA  wgLoIdx<>+40(SB)/4, $5
DATA  wgLoIdx<>+44(SB)/4, $21
DATA  wgLoIdx<>+48(SB)/4, $6
DATA  wgLoIdx<>+52(SB)/4, $22
DATA  wgLoIdx<>+56(SB)/4, $7
DATA  wgLoIdx<>+60(SB)/4, $23
GLOBL wgLoIdx<>(SB), RODATA|NOPTR, $64

DATA  wgHiIdx<>+0(SB)/4, $8
DATA  wgHiIdx<>+4(SB)/4, $24
DATA  wgHiIdx<>+8(SB)/4, $9
DATA  wgHiIdx<>+12(SB)/4, $25
DATA  wgHiIdx<>+16(SB)/4, $10
DATA  wgHiIdx<>+20(SB)/4, $26
DATA  wgHiIdx<>+24(SB)/4, $11
DATA  wgHiIdx<>+28(SB)/4, $27
DATA  wgHiIdx<>+32(SB)/4, $12
DATA  wgHiIdx<>+36(SB)/4, $28
DATA  wgHiIdx<>+40(SB)/4, $13
DATA  wgHiIdx<>+44(SB)/4, $29
DATA  wgHiIdx<>+48(SB)/4, $14
DATA  wgHiIdx<>+52(SB)/4, $30
DATA  wgHiIdx<>+56(SB)/4, $15
DATA  wgHiIdx<>+60(SB)/4, $31
GLOBL wgHiIdx<>(SB), RODATA|NOPTR, $64

// WGMASK(K, R) sets K to the low R bits (R in 0..16). Clobbers AX.
#define WGMASK(K, R) \
	MOVQ $1, AX; \
	SHLXQ R, AX, AX; \
	DECQ AX; \
	KMOVW AX, K

// WGROW loads padded row i of 16 patches (even columns at R10, odd at
// R10+DX) into D0..D3 and writes the row transform d·B into T0..T3.
#define WGROW(D0, D1, D2, D3, T0, T1, T2, T3) \
	VMOVUPS.Z (R10), K1, D0; \
	VMOVUPS.Z (R10)(DX*1), K1, D1; \
	VMOVUPS.Z 4(R10), K1, D2; \
	VMOVUPS.Z 4(R10)(DX*1), K1, D3; \
	VSUBPS D2, D0, T0; \
	VADDPS D2, D1, T1; \
	VSUBPS D1, D2, T2; \
	VSUBPS D3, D1, T3

// func wgIn32(v *float32, vs int, e, o *float32, rs, n, rows int)
TEXT ·wgIn32(SB), NOSPLIT, $0-56
	MOVQ v+0(FP), R15
	MOVQ vs+8(FP), R8
	SHLQ $2, R8
	MOVQ e+16(FP), R14
	MOVQ o+24(FP), DX
	SUBQ R14, DX // odd columns at e + DX
	MOVQ rs+32(FP), R9
	SHLQ $2, R9
	MOVQ n+40(FP), R13
	MOVQ rows+48(FP), R11

wi_row:
	TESTQ R11, R11
	JLE   wi_done
	MOVQ  R14, SI
	MOVQ  R15, DI
	MOVQ  R13, CX

wi_loop:
	TESTQ CX, CX
	JLE   wi_next
	MOVQ  CX, BX
	CMPQ  BX, $16
	JLE   wi_mask
	MOVQ  $16, BX

wi_mask:
	WGMASK(K1, BX)
	MOVQ SI, R10
	WGROW(Z0, Z1, Z2, Z3, Z16, Z17, Z18, Z19)
	ADDQ R9, R10
	WGROW(Z4, Z5, Z6, Z7, Z20, Z21, Z22, Z23)
	ADDQ R9, R10
	WGROW(Z8, Z9, Z10, Z11, Z24, Z25, Z26, Z27)
	ADDQ R9, R10
	WGROW(Z12, Z13, Z14, Z15, Z28, Z29, Z30, Z31)

	// Columns: V[0][j] = t0j − t2j, V[1][j] = t1j + t2j, V[2][j] = t2j − t1j,
	// V[3][j] = t1j − t3j, stored at ξ = 4r + j.
	MOVQ DI, R12
	VSUBPS Z24, Z16, Z0
	VMOVUPS Z0, K1, (R12)
	ADDQ R8, R12
	VSUBPS Z25, Z17, Z1
	VMOVUPS Z1, K1, (R12)
	ADDQ R8, R12
	VSUBPS Z26, Z18, Z2
	VMOVUPS Z2, K1, (R12)
	ADDQ R8, R12
	VSUBPS Z27, Z19, Z3
	VMOVUPS Z3, K1, (R12)
	ADDQ R8, R12

	VADDPS Z24, Z20, Z4
	VMOVUPS Z4, K1, (R12)
	ADDQ R8, R12
	VADDPS Z25, Z21, Z5
	VMOVUPS Z5, K1, (R12)
	ADDQ R8, R12
	VADDPS Z26, Z22, Z6
	VMOVUPS Z6, K1, (R12)
	ADDQ R8, R12
	VADDPS Z27, Z23, Z7
	VMOVUPS Z7, K1, (R12)
	ADDQ R8, R12

	VSUBPS Z20, Z24, Z8
	VMOVUPS Z8, K1, (R12)
	ADDQ R8, R12
	VSUBPS Z21, Z25, Z9
	VMOVUPS Z9, K1, (R12)
	ADDQ R8, R12
	VSUBPS Z22, Z26, Z10
	VMOVUPS Z10, K1, (R12)
	ADDQ R8, R12
	VSUBPS Z23, Z27, Z11
	VMOVUPS Z11, K1, (R12)
	ADDQ R8, R12

	VSUBPS Z28, Z20, Z12
	VMOVUPS Z12, K1, (R12)
	ADDQ R8, R12
	VSUBPS Z29, Z21, Z13
	VMOVUPS Z13, K1, (R12)
	ADDQ R8, R12
	VSUBPS Z30, Z22, Z14
	VMOVUPS Z14, K1, (R12)
	ADDQ R8, R12
	VSUBPS Z31, Z23, Z15
	VMOVUPS Z15, K1, (R12)

	ADDQ $64, SI
	ADDQ $64, DI
	SUBQ $16, CX
	JMP  wi_loop

wi_next:
	// Next tile row: two padded rows down, n tiles on.
	LEAQ (R14)(R9*2), R14
	LEAQ (R15)(R13*4), R15
	DECQ R11
	JMP  wi_row

wi_done:
	VZEROUPPER
	RET

// func wgOut32(y *float32, ys int, m *float32, ms, n, rows int)
TEXT ·wgOut32(SB), NOSPLIT, $0-48
	MOVQ y+0(FP), R10
	MOVQ ys+8(FP), R9
	SHLQ $2, R9
	MOVQ m+16(FP), R11
	MOVQ ms+24(FP), R8
	SHLQ $2, R8
	MOVQ n+32(FP), DX
	MOVQ rows+40(FP), R15
	VMOVDQU32 wgLoIdx<>(SB), Z30
	VMOVDQU32 wgHiIdx<>(SB), Z31

wo_row:
	TESTQ R15, R15
	JLE   wo_done
	MOVQ  R10, DI
	MOVQ  R11, SI
	MOVQ  DX, CX

wo_loop:
	TESTQ CX, CX
	JLE   wo_next
	MOVQ  CX, BX
	CMPQ  BX, $16
	JLE   wo_mask
	MOVQ  $16, BX

wo_mask:
	WGMASK(K1, BX)
	// 2·BX outputs per row: the first min(16, 2·BX) under K2, the rest under K3.
	LEAQ (BX)(BX*1), R13
	MOVQ R13, R14
	CMPQ R14, $16
	JLE  wo_m2
	MOVQ $16, R14

wo_m2:
	WGMASK(K2, R14)
	SUBQ R14, R13
	WGMASK(K3, R13)

	MOVQ SI, R12
	VMOVUPS.Z (R12), K1, Z0
	ADDQ R8, R12
	VMOVUPS.Z (R12), K1, Z1
	ADDQ R8, R12
	VMOVUPS.Z (R12), K1, Z2
	ADDQ R8, R12
	VMOVUPS.Z (R12), K1, Z3
	ADDQ R8, R12
	VMOVUPS.Z (R12), K1, Z4
	ADDQ R8, R12
	VMOVUPS.Z (R12), K1, Z5
	ADDQ R8, R12
	VMOVUPS.Z (R12), K1, Z6
	ADDQ R8, R12
	VMOVUPS.Z (R12), K1, Z7
	ADDQ R8, R12
	VMOVUPS.Z (R12), K1, Z8
	ADDQ R8, R12
	VMOVUPS.Z (R12), K1, Z9
	ADDQ R8, R12
	VMOVUPS.Z (R12), K1, Z10
	ADDQ R8, R12
	VMOVUPS.Z (R12), K1, Z11
	ADDQ R8, R12
	VMOVUPS.Z (R12), K1, Z12
	ADDQ R8, R12
	VMOVUPS.Z (R12), K1, Z13
	ADDQ R8, R12
	VMOVUPS.Z (R12), K1, Z14
	ADDQ R8, R12
	VMOVUPS.Z (R12), K1, Z15

	// s0j = (m0j + m1j) + m2j in Z16..Z19; s1j = (m1j − m2j) − m3j in Z20..Z23.
	VADDPS Z4, Z0, Z16
	VADDPS Z8, Z16, Z16
	VADDPS Z5, Z1, Z17
	VADDPS Z9, Z17, Z17
	VADDPS Z6, Z2, Z18
	VADDPS Z10, Z18, Z18
	VADDPS Z7, Z3, Z19
	VADDPS Z11, Z19, Z19
	VSUBPS Z8, Z4, Z20
	VSUBPS Z12, Z20, Z20
	VSUBPS Z9, Z5, Z21
	VSUBPS Z13, Z21, Z21
	VSUBPS Z10, Z6, Z22
	VSUBPS Z14, Z22, Z22
	VSUBPS Z11, Z7, Z23
	VSUBPS Z15, Z23, Z23

	// Yr0 = (sr0 + sr1) + sr2, Yr1 = (sr1 − sr2) − sr3.
	VADDPS Z17, Z16, Z24
	VADDPS Z18, Z24, Z24
	VSUBPS Z18, Z17, Z25
	VSUBPS Z19, Z25, Z25
	VADDPS Z21, Z20, Z26
	VADDPS Z22, Z26, Z26
	VSUBPS Z22, Z21, Z27
	VSUBPS Z23, Z27, Z27

	// Row 0: Y00, Y01 interleaved.
	VMOVAPS Z24, Z28
	VMOVAPS Z24, Z29
	VPERMT2PS Z25, Z30, Z28
	VPERMT2PS Z25, Z31, Z29
	VMOVUPS Z28, K2, (DI)
	VMOVUPS Z29, K3, 64(DI)
	// Row 1: Y10, Y11.
	VMOVAPS Z26, Z28
	VMOVAPS Z26, Z29
	VPERMT2PS Z27, Z30, Z28
	VPERMT2PS Z27, Z31, Z29
	VMOVUPS Z28, K2, (DI)(R9*1)
	VMOVUPS Z29, K3, 64(DI)(R9*1)

	ADDQ $64, SI
	ADDQ $128, DI
	SUBQ $16, CX
	JMP  wo_loop

wo_next:
	// Next tile row: two output rows down, n tiles on.
	LEAQ (R10)(R9*2), R10
	LEAQ (R11)(DX*4), R11
	DECQ R15
	JMP  wo_row

wo_done:
	VZEROUPPER
	RET

DATA  wgSign<>+0(SB)/4, $0x80000000
GLOBL wgSign<>(SB), RODATA|NOPTR, $4

// func wgDy32(dm *float32, ms int, e, o *float32, rs, n, rows int)
// The adjoint of the output transform, A·dY·Aᵀ, for rows tile rows of n
// tiles: dY's rows 2ty and 2ty+1 have their even columns at e + 2ty·rs
// and odd columns at o + 2ty·rs; dM_ξ of tile (ty, tx) goes to
// dm[ξ·ms + ty·n + tx]. Negation flips the sign bit, as Go's unary minus.
TEXT ·wgDy32(SB), NOSPLIT, $0-56
	MOVQ dm+0(FP), R15
	MOVQ ms+8(FP), R8
	SHLQ $2, R8
	MOVQ e+16(FP), R14
	MOVQ o+24(FP), DX
	SUBQ R14, DX // odd columns at e + DX
	MOVQ rs+32(FP), R9
	SHLQ $2, R9
	MOVQ n+40(FP), R13
	MOVQ rows+48(FP), R11
	VBROADCASTSS wgSign<>(SB), Z31

wd_row:
	TESTQ R11, R11
	JLE   wd_done
	MOVQ  R14, SI
	MOVQ  R15, DI
	MOVQ  R13, CX

wd_loop:
	TESTQ CX, CX
	JLE   wd_next
	MOVQ  CX, BX
	CMPQ  BX, $16
	JLE   wd_mask
	MOVQ  $16, BX

wd_mask:
	WGMASK(K1, BX)
	// d00, d01 (row 0), d10, d11 (row 1).
	VMOVUPS.Z (SI), K1, Z0
	VMOVUPS.Z (SI)(DX*1), K1, Z1
	LEAQ (SI)(R9*1), R10
	VMOVUPS.Z (R10), K1, Z2
	VMOVUPS.Z (R10)(DX*1), K1, Z3
	// q[i][c]: q0c = d0c, q1c = d0c + d1c, q2c = d0c − d1c, q3c = −d1c.
	VADDPS Z2, Z0, Z4  // q10
	VADDPS Z3, Z1, Z5  // q11
	VSUBPS Z2, Z0, Z6  // q20
	VSUBPS Z3, Z1, Z7  // q21
	VXORPS Z31, Z2, Z8 // q30
	VXORPS Z31, Z3, Z9 // q31
	// dM[i][0] = qi0, dM[i][1] = qi0 + qi1, dM[i][2] = qi0 − qi1, dM[i][3] = −qi1.
	MOVQ DI, R12
	VMOVUPS Z0, K1, (R12)
	ADDQ R8, R12
	VADDPS Z1, Z0, Z10
	VMOVUPS Z10, K1, (R12)
	ADDQ R8, R12
	VSUBPS Z1, Z0, Z11
	VMOVUPS Z11, K1, (R12)
	ADDQ R8, R12
	VXORPS Z31, Z1, Z12
	VMOVUPS Z12, K1, (R12)
	ADDQ R8, R12

	VMOVUPS Z4, K1, (R12)
	ADDQ R8, R12
	VADDPS Z5, Z4, Z10
	VMOVUPS Z10, K1, (R12)
	ADDQ R8, R12
	VSUBPS Z5, Z4, Z11
	VMOVUPS Z11, K1, (R12)
	ADDQ R8, R12
	VXORPS Z31, Z5, Z12
	VMOVUPS Z12, K1, (R12)
	ADDQ R8, R12

	VMOVUPS Z6, K1, (R12)
	ADDQ R8, R12
	VADDPS Z7, Z6, Z10
	VMOVUPS Z10, K1, (R12)
	ADDQ R8, R12
	VSUBPS Z7, Z6, Z11
	VMOVUPS Z11, K1, (R12)
	ADDQ R8, R12
	VXORPS Z31, Z7, Z12
	VMOVUPS Z12, K1, (R12)
	ADDQ R8, R12

	VMOVUPS Z8, K1, (R12)
	ADDQ R8, R12
	VADDPS Z9, Z8, Z10
	VMOVUPS Z10, K1, (R12)
	ADDQ R8, R12
	VSUBPS Z9, Z8, Z11
	VMOVUPS Z11, K1, (R12)
	ADDQ R8, R12
	VXORPS Z31, Z9, Z12
	VMOVUPS Z12, K1, (R12)

	ADDQ $64, SI
	ADDQ $64, DI
	SUBQ $16, CX
	JMP  wd_loop

wd_next:
	// Next tile row: two dY rows down, n tiles on.
	LEAQ (R14)(R9*2), R14
	LEAQ (R15)(R13*4), R15
	DECQ R11
	JMP  wd_row

wd_done:
	VZEROUPPER
	RET

