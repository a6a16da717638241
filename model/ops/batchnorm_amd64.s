//go:build amd64 && !purego

#include "textflag.h"
#include "kernels_amd64.h"

// BatchNorm's passes over an n×c float32 matrix with float64 statistics,
// 8 columns at a time (16 for the float32 output pass), a masked block for
// the last c % 8 (% 16) columns. Each column is visited in row order with
// the scalar loops' operations in their order (separate multiplies and
// adds, no fused multiply-add; float64 → float32 by VCVTPD2PS, which rounds
// to nearest as Go's conversion does), so every value has their bits.

// COLMASK8 sets K2 to the mask of the last c % 8 columns (c in DX) and R9 to
// c - c % 8.
#define COLMASK8 \
	MOVQ DX, CX \
	ANDQ $7, CX \
	LOWMASK(K2) \
	MOVQ DX, R9 \
	ANDQ $-8, R9

// func bnColSums32(sum *float64, x *float32, n, c int)
// sum[j] += float64(x[i*c+j]) for every row i in order.
TEXT ·bnColSums32(SB), NOSPLIT, $0-32
	MOVQ sum+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ n+16(FP), R8
	MOVQ c+24(FP), DX
	COLMASK8

cs_row:
	TESTQ R8, R8
	JZ    cs_done
	XORQ  BX, BX

cs_col:
	CMPQ BX, R9
	JGE  cs_tail
	VCVTPS2PD (SI)(BX*4), Z1
	VADDPD (DI)(BX*8), Z1, Z1
	VMOVUPD Z1, (DI)(BX*8)
	ADDQ $8, BX
	JMP  cs_col

cs_tail:
	CMPQ BX, DX
	JGE  cs_next
	VCVTPS2PD.Z (SI)(BX*4), K2, Z1
	VMOVUPD.Z (DI)(BX*8), K2, Z2
	VADDPD Z2, Z1, Z1
	VMOVUPD Z1, K2, (DI)(BX*8)

cs_next:
	LEAQ (SI)(DX*4), SI
	DECQ R8
	JMP  cs_row

cs_done:
	VZEROUPPER
	RET

// func bnColSqDev32(sum, mean *float64, x *float32, n, c int)
// d = float64(x[i*c+j]) - mean[j]; sum[j] += d*d, rows in order.
TEXT ·bnColSqDev32(SB), NOSPLIT, $0-40
	MOVQ sum+0(FP), DI
	MOVQ mean+8(FP), R10
	MOVQ x+16(FP), SI
	MOVQ n+24(FP), R8
	MOVQ c+32(FP), DX
	COLMASK8

sd_row:
	TESTQ R8, R8
	JZ    sd_done
	XORQ  BX, BX

sd_col:
	CMPQ BX, R9
	JGE  sd_tail
	VCVTPS2PD (SI)(BX*4), Z1
	VSUBPD (R10)(BX*8), Z1, Z1
	VMULPD Z1, Z1, Z1
	VADDPD (DI)(BX*8), Z1, Z1
	VMOVUPD Z1, (DI)(BX*8)
	ADDQ $8, BX
	JMP  sd_col

sd_tail:
	CMPQ BX, DX
	JGE  sd_next
	VCVTPS2PD.Z (SI)(BX*4), K2, Z1
	VMOVUPD.Z (R10)(BX*8), K2, Z3
	VSUBPD Z3, Z1, Z1
	VMULPD Z1, Z1, Z1
	VMOVUPD.Z (DI)(BX*8), K2, Z2
	VADDPD Z2, Z1, Z1
	VMOVUPD Z1, K2, (DI)(BX*8)

sd_next:
	LEAQ (SI)(DX*4), SI
	DECQ R8
	JMP  sd_row

sd_done:
	VZEROUPPER
	RET

// func bnAffine32(out, x, scale, shift *float32, n, c int)
// out[i*c+j] = x[i*c+j]*scale[j] + shift[j].
TEXT ·bnAffine32(SB), NOSPLIT, $0-48
	MOVQ out+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ scale+16(FP), R10
	MOVQ shift+24(FP), R11
	MOVQ n+32(FP), R8
	MOVQ c+40(FP), DX
	MOVQ DX, CX
	ANDQ $15, CX
	LOWMASK(K2)
	MOVQ DX, R9
	ANDQ $-16, R9

af_row:
	TESTQ R8, R8
	JZ    af_done
	XORQ  BX, BX

af_col:
	CMPQ BX, R9
	JGE  af_tail
	VMOVUPS (SI)(BX*4), Z1
	VMULPS (R10)(BX*4), Z1, Z1
	VADDPS (R11)(BX*4), Z1, Z1
	VMOVUPS Z1, (DI)(BX*4)
	ADDQ $16, BX
	JMP  af_col

af_tail:
	CMPQ BX, DX
	JGE  af_next
	VMOVUPS.Z (SI)(BX*4), K2, Z1
	VMOVUPS.Z (R10)(BX*4), K2, Z2
	VMOVUPS.Z (R11)(BX*4), K2, Z3
	VMULPS Z2, Z1, Z1
	VADDPS Z3, Z1, Z1
	VMOVUPS Z1, K2, (DI)(BX*4)

af_next:
	LEAQ (SI)(DX*4), SI
	LEAQ (DI)(DX*4), DI
	DECQ R8
	JMP  af_row

af_done:
	VZEROUPPER
	RET

// func bnBwdSums32(sdy, sdyx, mean, invStd *float64, x, dy *float32, n, c int)
// g = float64(dy); sdy[j] += g; sdyx[j] += (g*(float64(x)-mean[j]))*invStd[j].
TEXT ·bnBwdSums32(SB), NOSPLIT, $0-64
	MOVQ sdy+0(FP), DI
	MOVQ sdyx+8(FP), R12
	MOVQ mean+16(FP), R10
	MOVQ invStd+24(FP), R11
	MOVQ x+32(FP), SI
	MOVQ dy+40(FP), R13
	MOVQ n+48(FP), R8
	MOVQ c+56(FP), DX
	COLMASK8

bs_row:
	TESTQ R8, R8
	JZ    bs_done
	XORQ  BX, BX

bs_col:
	CMPQ BX, R9
	JGE  bs_tail
	VCVTPS2PD (R13)(BX*4), Z1 // g
	VCVTPS2PD (SI)(BX*4), Z2  // x
	VADDPD (DI)(BX*8), Z1, Z3
	VMOVUPD Z3, (DI)(BX*8)
	VSUBPD (R10)(BX*8), Z2, Z2
	VMULPD Z2, Z1, Z2
	VMULPD (R11)(BX*8), Z2, Z2
	VADDPD (R12)(BX*8), Z2, Z2
	VMOVUPD Z2, (R12)(BX*8)
	ADDQ $8, BX
	JMP  bs_col

bs_tail:
	CMPQ BX, DX
	JGE  bs_next
	VCVTPS2PD.Z (R13)(BX*4), K2, Z1
	VCVTPS2PD.Z (SI)(BX*4), K2, Z2
	VMOVUPD.Z (DI)(BX*8), K2, Z3
	VADDPD Z3, Z1, Z3
	VMOVUPD Z3, K2, (DI)(BX*8)
	VMOVUPD.Z (R10)(BX*8), K2, Z4
	VSUBPD Z4, Z2, Z2
	VMULPD Z2, Z1, Z2
	VMOVUPD.Z (R11)(BX*8), K2, Z4
	VMULPD Z4, Z2, Z2
	VMOVUPD.Z (R12)(BX*8), K2, Z4
	VADDPD Z4, Z2, Z2
	VMOVUPD Z2, K2, (R12)(BX*8)

bs_next:
	LEAQ (SI)(DX*4), SI
	LEAQ (R13)(DX*4), R13
	DECQ R8
	JMP  bs_row

bs_done:
	VZEROUPPER
	RET

// func bnBwdDx32(out *float32, x, dy *float32, mean, invStd, k, sdy, sdyx *float64, n, c int)
// xh = (float64(x)-mean[j])*invStd[j];
// out = float32(k[j]*((float64(dy)-sdy[j]) - xh*sdyx[j])).
TEXT ·bnBwdDx32(SB), NOSPLIT, $0-80
	MOVQ out+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ dy+16(FP), R13
	MOVQ mean+24(FP), R10
	MOVQ invStd+32(FP), R11
	MOVQ k+40(FP), R12
	MOVQ sdy+48(FP), R14
	MOVQ n+64(FP), R8
	MOVQ c+72(FP), DX
	COLMASK8
	MOVQ sdyx+56(FP), AX // after COLMASK8, which uses AX

dx_row:
	TESTQ R8, R8
	JZ    dx_done
	XORQ  BX, BX

dx_col:
	CMPQ BX, R9
	JGE  dx_tail
	VCVTPS2PD (SI)(BX*4), Z2
	VSUBPD (R10)(BX*8), Z2, Z2
	VMULPD (R11)(BX*8), Z2, Z2 // xh
	VMULPD (AX)(BX*8), Z2, Z2 // xh*sdyx
	VCVTPS2PD (R13)(BX*4), Z1
	VSUBPD (R14)(BX*8), Z1, Z1 // g - sdy
	VSUBPD Z2, Z1, Z1
	VMULPD (R12)(BX*8), Z1, Z1 // k*(...)
	VCVTPD2PS Z1, Y1
	VMOVUPS Y1, (DI)(BX*4)
	ADDQ $8, BX
	JMP  dx_col

dx_tail:
	CMPQ BX, DX
	JGE  dx_next
	VCVTPS2PD.Z (SI)(BX*4), K2, Z2
	VMOVUPD.Z (R10)(BX*8), K2, Z4
	VSUBPD Z4, Z2, Z2
	VMOVUPD.Z (R11)(BX*8), K2, Z4
	VMULPD Z4, Z2, Z2
	VMOVUPD.Z (AX)(BX*8), K2, Z4
	VMULPD Z4, Z2, Z2
	VCVTPS2PD.Z (R13)(BX*4), K2, Z1
	VMOVUPD.Z (R14)(BX*8), K2, Z4
	VSUBPD Z4, Z1, Z1
	VSUBPD Z2, Z1, Z1
	VMOVUPD.Z (R12)(BX*8), K2, Z4
	VMULPD Z4, Z1, Z1
	VCVTPD2PS Z1, Y1
	VMOVUPS Y1, K2, (DI)(BX*4)

dx_next:
	LEAQ (SI)(DX*4), SI
	LEAQ (R13)(DX*4), R13
	LEAQ (DI)(DX*4), DI
	DECQ R8
	JMP  dx_row

dx_done:
	VZEROUPPER
	RET

// BatchNorm2D's element-wise passes over one channel plane of n float32
// values, 16 at a time and the last n % 16 under a mask: the scalar loops'
// float32 operations in their order (no fused multiply-add), so every
// value has their bits.

// func bnPlaneAffine32(dst, src *float32, n int, m, scale, b float32, relu int)
// dst[i] = (src[i]-m)*scale + b, then with relu != 0 the value with its
// sign bit set becomes +0 (affine's bit trick: negative values, -0 and
// NaN with the sign set).
TEXT ·bnPlaneAffine32(SB), NOSPLIT, $0-48
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	VBROADCASTSS m+24(FP), Z4
	VBROADCASTSS scale+28(FP), Z5
	VBROADCASTSS b+32(FP), Z6
	MOVQ relu+40(FP), R8

pa_loop:
	CMPQ CX, $16
	JLT  pa_tail
	VMOVUPS (SI), Z1
	VSUBPS Z4, Z1, Z1
	VMULPS Z5, Z1, Z1
	VADDPS Z6, Z1, Z1
	TESTQ R8, R8
	JZ   pa_store
	VPSRAD $31, Z1, Z2
	VPANDND Z1, Z2, Z1

pa_store:
	VMOVUPS Z1, (DI)
	ADDQ $64, SI
	ADDQ $64, DI
	SUBQ $16, CX
	JMP  pa_loop

pa_tail:
	CMPQ CX, $0
	JLE  pa_done
	LOWMASK(K2)
	VMOVUPS.Z (SI), K2, Z1
	VSUBPS Z4, Z1, Z1
	VMULPS Z5, Z1, Z1
	VADDPS Z6, Z1, Z1
	TESTQ R8, R8
	JZ   pa_tstore
	VPSRAD $31, Z1, Z2
	VPANDND Z1, Z2, Z1

pa_tstore:
	VMOVUPS Z1, K2, (DI)

pa_done:
	VZEROUPPER
	RET

// func bnPlaneDx32(dst, gv, x *float32, n int, m, is, m1, m2, k float32)
// dst[i] = k*((gv[i]-m1) - ((x[i]-m)*is)*m2); dst may be gv.
TEXT ·bnPlaneDx32(SB), NOSPLIT, $0-52
	MOVQ dst+0(FP), DI
	MOVQ gv+8(FP), SI
	MOVQ x+16(FP), DX
	MOVQ n+24(FP), CX
	VBROADCASTSS m+32(FP), Z4
	VBROADCASTSS is+36(FP), Z5
	VBROADCASTSS m1+40(FP), Z6
	VBROADCASTSS m2+44(FP), Z7
	VBROADCASTSS k+48(FP), Z8

pd_loop:
	CMPQ CX, $16
	JLT  pd_tail
	VMOVUPS (DX), Z1
	VSUBPS Z4, Z1, Z1
	VMULPS Z5, Z1, Z1
	VMULPS Z7, Z1, Z1
	VMOVUPS (SI), Z2
	VSUBPS Z6, Z2, Z2
	VSUBPS Z1, Z2, Z2
	VMULPS Z8, Z2, Z2
	VMOVUPS Z2, (DI)
	ADDQ $64, SI
	ADDQ $64, DX
	ADDQ $64, DI
	SUBQ $16, CX
	JMP  pd_loop

pd_tail:
	CMPQ CX, $0
	JLE  pd_done
	LOWMASK(K2)
	VMOVUPS.Z (DX), K2, Z1
	VSUBPS Z4, Z1, Z1
	VMULPS Z5, Z1, Z1
	VMULPS Z7, Z1, Z1
	VMOVUPS.Z (SI), K2, Z2
	VSUBPS Z6, Z2, Z2
	VSUBPS Z1, Z2, Z2
	VMULPS Z8, Z2, Z2
	VMOVUPS Z2, K2, (DI)

pd_done:
	VZEROUPPER
	RET
