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

DATA  wgEvenIdx<>+0(SB)/4, $0
DATA  wgEvenIdx<>+4(SB)/4, $2
DATA  wgEvenIdx<>+8(SB)/4, $4
DATA  wgEvenIdx<>+12(SB)/4, $6
DATA  wgEvenIdx<>+16(SB)/4, $8
DATA  wgEvenIdx<>+20(SB)/4, $10
DATA  wgEvenIdx<>+24(SB)/4, $12
DATA  wgEvenIdx<>+28(SB)/4, $14
DATA  wgEvenIdx<>+32(SB)/4, $16
DATA  wgEvenIdx<>+36(SB)/4, $18
DATA  wgEvenIdx<>+40(SB)/4, $20
DATA  wgEvenIdx<>+44(SB)/4, $22
DATA  wgEvenIdx<>+48(SB)/4, $24
DATA  wgEvenIdx<>+52(SB)/4, $26
DATA  wgEvenIdx<>+56(SB)/4, $28
DATA  wgEvenIdx<>+60(SB)/4, $30
GLOBL wgEvenIdx<>(SB), RODATA|NOPTR, $64

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
	VMOVDQU32 wgEvenIdx<>(SB), Z4
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
	VMOVUPS (SI), Z0
	VMOVUPS 64(SI), Z1
	VMOVAPS Z0, Z2
	VPERMT2PS Z1, Z4, Z0
	VPERMT2PS Z1, Z5, Z2
	VMOVUPS Z0, (DI)
	VMOVUPS Z2, (DX)
	ADDQ $128, SI
	ADDQ $64, DI
	ADDQ $64, DX
	SUBQ $16, CX
	JMP  wf_loop

wf_tail:
	TESTQ CX, CX
	JZ   wf_odd
	// 2·CX values left: the first min(16, 2·CX) under K1, the rest under K2.
	LEAQ (CX)(CX*1), R8
	MOVQ R8, R14
	CMPQ R14, $16
	JLE  wf_m1
	MOVQ $16, R14

wf_m1:
	WGMASK(K1, R14)
	SUBQ R14, R8
	WGMASK(K2, R8)
	WGMASK(K3, CX)
	VMOVUPS.Z (SI), K1, Z0
	VMOVUPS.Z 64(SI), K2, Z1
	VMOVAPS Z0, Z2
	VPERMT2PS Z1, Z4, Z0
	VPERMT2PS Z1, Z5, Z2
	VMOVUPS Z0, K3, (DI)
	VMOVUPS Z2, K3, (DX)
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

// ---- F(4×4, 3×3) (winograd4.go) ----

DATA  wgFour<>+0(SB)/4, $4.0
GLOBL wgFour<>(SB), RODATA|NOPTR, $4
DATA  wgEight<>+0(SB)/4, $8.0
GLOBL wgEight<>(SB), RODATA|NOPTR, $4

// WG4ROW is wg4Row on 16 lanes: D0..D5 in, T0..T5 out, R, P, Q, S, X
// scratch; Z31 holds 4.0. T0..T5 must differ from D0..D5.
#define WG4ROW(D0, D1, D2, D3, D4, D5, T0, T1, T2, T3, T4, T5, R, P, Q, S, X) \
	VSUBPS D2, D4, R; \
	VMULPS Z31, D2, X; \
	VSUBPS X, D4, P; \
	VMULPS Z31, D1, X; \
	VSUBPS X, D3, Q; \
	VSUBPS D1, D3, S; \
	VADDPS S, S, S; \
	VSUBPS D2, D0, X; \
	VMULPS Z31, X, X; \
	VADDPS R, X, T0; \
	VADDPS Q, P, T1; \
	VSUBPS Q, P, T2; \
	VADDPS S, R, T3; \
	VSUBPS S, R, T4; \
	VSUBPS D3, D1, X; \
	VMULPS Z31, X, X; \
	VSUBPS D3, D5, R; \
	VADDPS R, X, T5

// WG4IN_ROW loads padded row at R10 (phase k at R10 + k·DX bytes) for the
// lanes of K1, transforms it and stores t0..t5 at OFF(R11).
#define WG4IN_ROW(OFF) \
	LEAQ (R10)(DX*2), R12; \
	VMOVUPS.Z (R10), K1, Z0; \
	VMOVUPS.Z (R10)(DX*1), K1, Z1; \
	VMOVUPS.Z (R12), K1, Z2; \
	VMOVUPS.Z (R12)(DX*1), K1, Z3; \
	VMOVUPS.Z 4(R10), K1, Z4; \
	VMOVUPS.Z 4(R10)(DX*1), K1, Z5; \
	WG4ROW(Z0, Z1, Z2, Z3, Z4, Z5, Z11, Z12, Z13, Z14, Z15, Z16, Z6, Z7, Z8, Z9, Z10); \
	VMOVUPS Z11, (OFF+0)(R11); \
	VMOVUPS Z12, (OFF+64)(R11); \
	VMOVUPS Z13, (OFF+128)(R11); \
	VMOVUPS Z14, (OFF+192)(R11); \
	VMOVUPS Z15, (OFF+256)(R11); \
	VMOVUPS Z16, (OFF+320)(R11)

// WG4IN_COL transforms column k of the scratch rows (t[i][k] at
// (6i+k)·64(R11)) and stores V[6r+k] at R10 + r·6·vs (R8 = vs bytes).
#define WG4IN_COL(K) \
	VMOVUPS (K*64)(R11), Z0; \
	VMOVUPS ((6+K)*64)(R11), Z1; \
	VMOVUPS ((12+K)*64)(R11), Z2; \
	VMOVUPS ((18+K)*64)(R11), Z3; \
	VMOVUPS ((24+K)*64)(R11), Z4; \
	VMOVUPS ((30+K)*64)(R11), Z5; \
	WG4ROW(Z0, Z1, Z2, Z3, Z4, Z5, Z11, Z12, Z13, Z14, Z15, Z16, Z6, Z7, Z8, Z9, Z10); \
	MOVQ R10, R12; \
	VMOVUPS Z11, K1, (R12); \
	LEAQ (R12)(R8*4), R12; \
	LEAQ (R12)(R8*2), R12; \
	VMOVUPS Z12, K1, (R12); \
	LEAQ (R12)(R8*4), R12; \
	LEAQ (R12)(R8*2), R12; \
	VMOVUPS Z13, K1, (R12); \
	LEAQ (R12)(R8*4), R12; \
	LEAQ (R12)(R8*2), R12; \
	VMOVUPS Z14, K1, (R12); \
	LEAQ (R12)(R8*4), R12; \
	LEAQ (R12)(R8*2), R12; \
	VMOVUPS Z15, K1, (R12); \
	LEAQ (R12)(R8*4), R12; \
	LEAQ (R12)(R8*2), R12; \
	VMOVUPS Z16, K1, (R12); \
	ADDQ R8, R10

// func wgIn4_32(v *float32, vs int, ph *float32, rs, wq, n, rows int, scratch *float32)
TEXT ·wgIn4_32(SB), NOSPLIT, $0-64
	MOVQ v+0(FP), R15
	MOVQ vs+8(FP), R8
	SHLQ $2, R8
	MOVQ ph+16(FP), R14
	MOVQ rs+24(FP), R9
	SHLQ $2, R9
	MOVQ wq+32(FP), DX
	SHLQ $2, DX
	MOVQ n+40(FP), R13
	MOVQ scratch+56(FP), R11
	VBROADCASTSS wgFour<>(SB), Z31

w4i_row:
	CMPQ rows+48(FP), $0
	JLE  w4i_done
	MOVQ R14, SI
	MOVQ R15, DI
	MOVQ R13, CX

w4i_loop:
	TESTQ CX, CX
	JLE   w4i_next
	MOVQ  CX, BX
	CMPQ  BX, $16
	JLE   w4i_mask
	MOVQ  $16, BX

w4i_mask:
	WGMASK(K1, BX)
	MOVQ SI, R10
	WG4IN_ROW(0)
	ADDQ R9, R10
	WG4IN_ROW(384)
	ADDQ R9, R10
	WG4IN_ROW(768)
	ADDQ R9, R10
	WG4IN_ROW(1152)
	ADDQ R9, R10
	WG4IN_ROW(1536)
	ADDQ R9, R10
	WG4IN_ROW(1920)

	MOVQ DI, R10
	WG4IN_COL(0)
	WG4IN_COL(1)
	WG4IN_COL(2)
	WG4IN_COL(3)
	WG4IN_COL(4)
	WG4IN_COL(5)

	ADDQ $64, SI
	ADDQ $64, DI
	SUBQ $16, CX
	JMP  w4i_loop

w4i_next:
	// Next tile row: four padded rows down, n tiles on.
	LEAQ (R14)(R9*4), R14
	LEAQ (R15)(R13*4), R15
	DECQ rows+48(FP)
	JMP  w4i_row

w4i_done:
	VZEROUPPER
	RET

// WG4OUT is wg4Out6 on 16 lanes: M0..M5 in, O0..O3 out, A, B, C, E, X
// scratch; Z31 = 4.0, Z30 = 8.0.
#define WG4OUT(M0, M1, M2, M3, M4, M5, O0, O1, O2, O3, A, B, C, E, X) \
	VADDPS M2, M1, A; \
	VSUBPS M2, M1, B; \
	VADDPS M4, M3, C; \
	VSUBPS M4, M3, E; \
	VADDPS A, M0, O0; \
	VADDPS C, O0, O0; \
	VADDPS E, E, X; \
	VADDPS X, B, O1; \
	VMULPS Z31, C, X; \
	VADDPS X, A, O2; \
	VMULPS Z30, E, X; \
	VADDPS X, B, O3; \
	VADDPS M5, O3, O3

// WG4OUT_COL loads M[6i+K] (i = 0..5) from R10 + i·6·ms (R8 = ms bytes)
// under K1 and stores s[r][K] at (6r+K)·64(R11).
#define WG4OUT_COL(K) \
	MOVQ R10, R12; \
	VMOVUPS.Z (R12), K1, Z0; \
	LEAQ (R12)(R8*4), R12; \
	LEAQ (R12)(R8*2), R12; \
	VMOVUPS.Z (R12), K1, Z1; \
	LEAQ (R12)(R8*4), R12; \
	LEAQ (R12)(R8*2), R12; \
	VMOVUPS.Z (R12), K1, Z2; \
	LEAQ (R12)(R8*4), R12; \
	LEAQ (R12)(R8*2), R12; \
	VMOVUPS.Z (R12), K1, Z3; \
	LEAQ (R12)(R8*4), R12; \
	LEAQ (R12)(R8*2), R12; \
	VMOVUPS.Z (R12), K1, Z4; \
	LEAQ (R12)(R8*4), R12; \
	LEAQ (R12)(R8*2), R12; \
	VMOVUPS.Z (R12), K1, Z5; \
	WG4OUT(Z0, Z1, Z2, Z3, Z4, Z5, Z11, Z12, Z13, Z14, Z6, Z7, Z8, Z9, Z10); \
	VMOVUPS Z11, (K*64)(R11); \
	VMOVUPS Z12, ((6+K)*64)(R11); \
	VMOVUPS Z13, ((12+K)*64)(R11); \
	VMOVUPS Z14, ((18+K)*64)(R11); \
	ADDQ R8, R10

// WG4OUT_ROW transforms scratch row R (s[R][k] at (6R+k)·64(R11)) into the
// four outputs of 16 tiles, interleaves them (tile tx's four values at
// 4·tx) and stores 4·BX floats at R10 under K2..K5.
#define WG4OUT_ROW(R) \
	VMOVUPS ((6*R)*64)(R11), Z0; \
	VMOVUPS ((6*R+1)*64)(R11), Z1; \
	VMOVUPS ((6*R+2)*64)(R11), Z2; \
	VMOVUPS ((6*R+3)*64)(R11), Z3; \
	VMOVUPS ((6*R+4)*64)(R11), Z4; \
	VMOVUPS ((6*R+5)*64)(R11), Z5; \
	WG4OUT(Z0, Z1, Z2, Z3, Z4, Z5, Z11, Z12, Z13, Z14, Z6, Z7, Z8, Z9, Z10); \
	VMOVAPS Z11, Z15; \
	VMOVAPS Z11, Z16; \
	VPERMT2PS Z13, Z29, Z15; \
	VPERMT2PS Z13, Z28, Z16; \
	VMOVAPS Z12, Z17; \
	VMOVAPS Z12, Z18; \
	VPERMT2PS Z14, Z29, Z17; \
	VPERMT2PS Z14, Z28, Z18; \
	VMOVAPS Z15, Z19; \
	VMOVAPS Z15, Z20; \
	VPERMT2PS Z17, Z29, Z19; \
	VPERMT2PS Z17, Z28, Z20; \
	VMOVAPS Z16, Z21; \
	VMOVAPS Z16, Z22; \
	VPERMT2PS Z18, Z29, Z21; \
	VPERMT2PS Z18, Z28, Z22; \
	VMOVUPS Z19, K2, (R10); \
	VMOVUPS Z20, K3, 64(R10); \
	VMOVUPS Z21, K4, 128(R10); \
	VMOVUPS Z22, K5, 192(R10)

// WG4CLAMP clamps AX to [0, 16]. Clobbers R12.
#define WG4CLAMP \
	XORQ    R12, R12; \
	CMPQ    AX, $0; \
	CMOVQLT R12, AX; \
	MOVQ    $16, R12; \
	CMPQ    AX, R12; \
	CMOVQGT R12, AX

// func wgOut4_32(y *float32, ys int, m *float32, ms, n, rows int, scratch *float32)
TEXT ·wgOut4_32(SB), NOSPLIT, $0-56
	MOVQ y+0(FP), R15
	MOVQ ys+8(FP), R9
	SHLQ $2, R9
	MOVQ m+16(FP), R14
	MOVQ ms+24(FP), R8
	SHLQ $2, R8
	MOVQ n+32(FP), R13
	MOVQ scratch+48(FP), R11
	VBROADCASTSS wgFour<>(SB), Z31
	VBROADCASTSS wgEight<>(SB), Z30
	VMOVDQU32 wgLoIdx<>(SB), Z29
	VMOVDQU32 wgHiIdx<>(SB), Z28

w4o_row:
	CMPQ rows+40(FP), $0
	JLE  w4o_done
	MOVQ R15, DI
	MOVQ R14, SI
	MOVQ R13, CX

w4o_loop:
	TESTQ CX, CX
	JLE   w4o_next
	MOVQ  CX, BX
	CMPQ  BX, $16
	JLE   w4o_mask
	MOVQ  $16, BX

w4o_mask:
	// K1: BX lanes; K2..K5: the 4·BX outputs in four blocks of 16.
	MOVQ BX, DX
	WGMASK(K1, DX)
	LEAQ (BX*4), DX
	MOVQ DX, AX
	WG4CLAMP
	MOVQ AX, R12
	WGMASK(K2, R12)
	LEAQ -16(DX), AX
	WG4CLAMP
	MOVQ AX, R12
	WGMASK(K3, R12)
	LEAQ -32(DX), AX
	WG4CLAMP
	MOVQ AX, R12
	WGMASK(K4, R12)
	LEAQ -48(DX), AX
	WG4CLAMP
	MOVQ AX, R12
	WGMASK(K5, R12)

	MOVQ SI, R10
	WG4OUT_COL(0)
	WG4OUT_COL(1)
	WG4OUT_COL(2)
	WG4OUT_COL(3)
	WG4OUT_COL(4)
	WG4OUT_COL(5)

	MOVQ DI, R10
	WG4OUT_ROW(0)
	ADDQ R9, R10
	WG4OUT_ROW(1)
	ADDQ R9, R10
	WG4OUT_ROW(2)
	ADDQ R9, R10
	WG4OUT_ROW(3)

	ADDQ $64, SI
	ADDQ $256, DI
	SUBQ $16, CX
	JMP  w4o_loop

w4o_next:
	// Next tile row: four output rows down, n tiles on.
	LEAQ (R15)(R9*4), R15
	LEAQ (R14)(R13*4), R14
	DECQ rows+40(FP)
	JMP  w4o_row

w4o_done:
	VZEROUPPER
	RET

// WG4DY is wg4Dy4 on 16 lanes: G0..G3 in, H1..H4 out (h0 = g0, h5 = g3),
// U, W, A, B scratch; Z31 = 4.0.
#define WG4DY(G0, G1, G2, G3, H1, H2, H3, H4, U, W, A, B) \
	VADDPS G2, G0, U; \
	VADDPS G3, G1, W; \
	VMULPS Z31, G2, A; \
	VADDPS A, G0, A; \
	VMULPS Z31, G3, B; \
	VADDPS B, G1, B; \
	VADDPS B, B, B; \
	VADDPS W, U, H1; \
	VSUBPS W, U, H2; \
	VADDPS B, A, H3; \
	VSUBPS B, A, H4

// WG4DY_ROW loads gradient row at R10 (column phase c at R10 + c·DX
// bytes) under K1 and stores h[R][0..5] at (6R+j)·64(R11).
#define WG4DY_ROW(R) \
	LEAQ (R10)(DX*2), R12; \
	VMOVUPS.Z (R10), K1, Z0; \
	VMOVUPS.Z (R10)(DX*1), K1, Z1; \
	VMOVUPS.Z (R12), K1, Z2; \
	VMOVUPS.Z (R12)(DX*1), K1, Z3; \
	WG4DY(Z0, Z1, Z2, Z3, Z11, Z12, Z13, Z14, Z6, Z7, Z8, Z9); \
	VMOVUPS Z0, ((6*R)*64)(R11); \
	VMOVUPS Z11, ((6*R+1)*64)(R11); \
	VMOVUPS Z12, ((6*R+2)*64)(R11); \
	VMOVUPS Z13, ((6*R+3)*64)(R11); \
	VMOVUPS Z14, ((6*R+4)*64)(R11); \
	VMOVUPS Z3, ((6*R+5)*64)(R11)

// WG4DY_COL transforms column J of the scratch rows and stores
// dM[6i+J] at R10 + i·6·ms (R8 = ms bytes).
#define WG4DY_COL(J) \
	VMOVUPS (J*64)(R11), Z0; \
	VMOVUPS ((6+J)*64)(R11), Z1; \
	VMOVUPS ((12+J)*64)(R11), Z2; \
	VMOVUPS ((18+J)*64)(R11), Z3; \
	WG4DY(Z0, Z1, Z2, Z3, Z11, Z12, Z13, Z14, Z6, Z7, Z8, Z9); \
	MOVQ R10, R12; \
	VMOVUPS Z0, K1, (R12); \
	LEAQ (R12)(R8*4), R12; \
	LEAQ (R12)(R8*2), R12; \
	VMOVUPS Z11, K1, (R12); \
	LEAQ (R12)(R8*4), R12; \
	LEAQ (R12)(R8*2), R12; \
	VMOVUPS Z12, K1, (R12); \
	LEAQ (R12)(R8*4), R12; \
	LEAQ (R12)(R8*2), R12; \
	VMOVUPS Z13, K1, (R12); \
	LEAQ (R12)(R8*4), R12; \
	LEAQ (R12)(R8*2), R12; \
	VMOVUPS Z14, K1, (R12); \
	LEAQ (R12)(R8*4), R12; \
	LEAQ (R12)(R8*2), R12; \
	VMOVUPS Z3, K1, (R12); \
	ADDQ R8, R10

// func wgDy4_32(dm *float32, ms int, q *float32, rs, wd, n, rows int, scratch *float32)
TEXT ·wgDy4_32(SB), NOSPLIT, $0-64
	MOVQ dm+0(FP), R15
	MOVQ ms+8(FP), R8
	SHLQ $2, R8
	MOVQ q+16(FP), R14
	MOVQ rs+24(FP), R9
	SHLQ $2, R9
	MOVQ wd+32(FP), DX
	SHLQ $2, DX
	MOVQ n+40(FP), R13
	MOVQ scratch+56(FP), R11
	VBROADCASTSS wgFour<>(SB), Z31

w4d_row:
	CMPQ rows+48(FP), $0
	JLE  w4d_done
	MOVQ R14, SI
	MOVQ R15, DI
	MOVQ R13, CX

w4d_loop:
	TESTQ CX, CX
	JLE   w4d_next
	MOVQ  CX, BX
	CMPQ  BX, $16
	JLE   w4d_mask
	MOVQ  $16, BX

w4d_mask:
	WGMASK(K1, BX)
	MOVQ SI, R10
	WG4DY_ROW(0)
	ADDQ R9, R10
	WG4DY_ROW(1)
	ADDQ R9, R10
	WG4DY_ROW(2)
	ADDQ R9, R10
	WG4DY_ROW(3)

	MOVQ DI, R10
	WG4DY_COL(0)
	WG4DY_COL(1)
	WG4DY_COL(2)
	WG4DY_COL(3)
	WG4DY_COL(4)
	WG4DY_COL(5)

	ADDQ $64, SI
	ADDQ $64, DI
	SUBQ $16, CX
	JMP  w4d_loop

w4d_next:
	LEAQ (R14)(R9*4), R14
	LEAQ (R15)(R13*4), R15
	DECQ rows+48(FP)
	JMP  w4d_row

w4d_done:
	VZEROUPPER
	RET
