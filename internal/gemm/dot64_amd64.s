//go:build amd64 && !purego

#include "textflag.h"

// func dot64x4x8(kb int, a *float64, lda int, bp *float64, c *float64, ldc int, alpha float64, mode int)
//
// s[r][j] = the dot product of row r of A (r < 4, a + r·lda, kb values)
// with column j of the kb×8 row-major panel bp, summed in the order of
// gonum's f64.DotUnitary: four partial sums s_u over the elements
// 4t+u of the whole quads, the kb mod 4 remaining elements added to s_0 in
// order, then (s_0+s_2) + (s_1+s_3). Products and sums are rounded
// separately (VMULPD, VADDPD; no FMA), as MULPD and ADDPD round them there.
// Accumulator Z(4r+u) holds s_u of row r for the 8 columns. Row r of the
// 4×8 tile of C is at c + r·ldc; mode 0 stores s there, mode 1 adds
// alpha·s (C + round(alpha·s)), mode 2 stores alpha·s.
TEXT ·dot64x4x8(SB), NOSPLIT, $0-64
	MOVQ kb+0(FP), CX
	MOVQ a+8(FP), R8
	MOVQ lda+16(FP), R9
	SHLQ $3, R9
	LEAQ (R9)(R9*2), R10
	MOVQ bp+24(FP), SI
	MOVQ c+32(FP), DI
	MOVQ ldc+40(FP), R11
	SHLQ $3, R11
	LEAQ (DI)(R11*2), R12
	ADDQ R11, R12 // row 3 of C
	VPXORQ Z0, Z0, Z0
	VPXORQ Z1, Z1, Z1
	VPXORQ Z2, Z2, Z2
	VPXORQ Z3, Z3, Z3
	VPXORQ Z4, Z4, Z4
	VPXORQ Z5, Z5, Z5
	VPXORQ Z6, Z6, Z6
	VPXORQ Z7, Z7, Z7
	VPXORQ Z8, Z8, Z8
	VPXORQ Z9, Z9, Z9
	VPXORQ Z10, Z10, Z10
	VPXORQ Z11, Z11, Z11
	VPXORQ Z12, Z12, Z12
	VPXORQ Z13, Z13, Z13
	VPXORQ Z14, Z14, Z14
	VPXORQ Z15, Z15, Z15
	MOVQ CX, DX
	SHRQ $2, DX
	ANDQ $3, CX
	TESTQ DX, DX
	JZ   d64_tail
d64_quad:
	VMOVUPD 0(SI), Z16
	VMOVUPD 64(SI), Z17
	VMOVUPD 128(SI), Z18
	VMOVUPD 192(SI), Z19
	VMULPD.BCST 0(R8), Z16, Z20
	VMULPD.BCST 8(R8), Z17, Z21
	VMULPD.BCST 16(R8), Z18, Z22
	VMULPD.BCST 24(R8), Z19, Z23
	VADDPD Z20, Z0, Z0
	VADDPD Z21, Z1, Z1
	VADDPD Z22, Z2, Z2
	VADDPD Z23, Z3, Z3
	VMULPD.BCST 0(R8)(R9*1), Z16, Z24
	VMULPD.BCST 8(R8)(R9*1), Z17, Z25
	VMULPD.BCST 16(R8)(R9*1), Z18, Z26
	VMULPD.BCST 24(R8)(R9*1), Z19, Z27
	VADDPD Z24, Z4, Z4
	VADDPD Z25, Z5, Z5
	VADDPD Z26, Z6, Z6
	VADDPD Z27, Z7, Z7
	VMULPD.BCST 0(R8)(R9*2), Z16, Z28
	VMULPD.BCST 8(R8)(R9*2), Z17, Z29
	VMULPD.BCST 16(R8)(R9*2), Z18, Z30
	VMULPD.BCST 24(R8)(R9*2), Z19, Z31
	VADDPD Z28, Z8, Z8
	VADDPD Z29, Z9, Z9
	VADDPD Z30, Z10, Z10
	VADDPD Z31, Z11, Z11
	VMULPD.BCST 0(R8)(R10*1), Z16, Z20
	VMULPD.BCST 8(R8)(R10*1), Z17, Z21
	VMULPD.BCST 16(R8)(R10*1), Z18, Z22
	VMULPD.BCST 24(R8)(R10*1), Z19, Z23
	VADDPD Z20, Z12, Z12
	VADDPD Z21, Z13, Z13
	VADDPD Z22, Z14, Z14
	VADDPD Z23, Z15, Z15
	ADDQ $32, R8
	ADDQ $256, SI
	DECQ DX
	JNZ  d64_quad
d64_tail:
	TESTQ CX, CX
	JZ   d64_done
d64_one:
	VMOVUPD (SI), Z16
	VMULPD.BCST (R8), Z16, Z20
	VMULPD.BCST (R8)(R9*1), Z16, Z21
	VMULPD.BCST (R8)(R9*2), Z16, Z22
	VMULPD.BCST (R8)(R10*1), Z16, Z23
	VADDPD Z20, Z0, Z0
	VADDPD Z21, Z4, Z4
	VADDPD Z22, Z8, Z8
	VADDPD Z23, Z12, Z12
	ADDQ $8, R8
	ADDQ $64, SI
	DECQ CX
	JNZ  d64_one
d64_done:
	VADDPD Z2, Z0, Z0
	VADDPD Z3, Z1, Z1
	VADDPD Z1, Z0, Z0
	VADDPD Z6, Z4, Z4
	VADDPD Z7, Z5, Z5
	VADDPD Z5, Z4, Z4
	VADDPD Z10, Z8, Z8
	VADDPD Z11, Z9, Z9
	VADDPD Z9, Z8, Z8
	VADDPD Z14, Z12, Z12
	VADDPD Z15, Z13, Z13
	VADDPD Z13, Z12, Z12
	MOVQ mode+56(FP), AX
	TESTQ AX, AX
	JZ   d64_store
	VBROADCASTSD alpha+48(FP), Z16
	VMULPD Z16, Z0, Z0
	VMULPD Z16, Z4, Z4
	VMULPD Z16, Z8, Z8
	VMULPD Z16, Z12, Z12
	CMPQ AX, $1
	JNE  d64_store
	VADDPD (DI), Z0, Z0
	VADDPD (DI)(R11*1), Z4, Z4
	VADDPD (DI)(R11*2), Z8, Z8
	VADDPD (R12), Z12, Z12
d64_store:
	VMOVUPD Z0, (DI)
	VMOVUPD Z4, (DI)(R11*1)
	VMOVUPD Z8, (DI)(R11*2)
	VMOVUPD Z12, (R12)
	VZEROUPPER
	RET
