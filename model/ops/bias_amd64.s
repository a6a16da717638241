//go:build amd64 && !purego

#include "textflag.h"
#include "kernels_amd64.h"

// bias.go's loops (ReLU in place, column sums) and ReLU's backward mask, 16 float32
// lanes at a time on the bit patterns, as the scalar loops compute them
// (reluInPlace, positiveMask32): bit-identical by construction. The tail of
// n % 16 goes under a mask.

// func reluInPlace32(v *float32, n int)
// v[i] = bits(v[i]) &^ (int32(bits)>>31): +0 where the sign bit is set.
TEXT ·reluInPlace32(SB), NOSPLIT, $0-16
	MOVQ v+0(FP), DI
	MOVQ n+8(FP), CX

ri_loop:
	CMPQ CX, $16
	JLT  ri_tail
	VMOVDQU32 (DI), Z1
	VPSRAD $31, Z1, Z2
	VPANDND Z1, Z2, Z1
	VMOVDQU32 Z1, (DI)
	ADDQ $64, DI
	SUBQ $16, CX
	JMP  ri_loop

ri_tail:
	CMPQ CX, $0
	JLE  ri_done
	LOWMASK(K1)
	VMOVDQU32.Z (DI), K1, Z1
	VPSRAD $31, Z1, Z2
	VPANDND Z1, Z2, Z1
	VMOVDQU32 Z1, K1, (DI)

ri_done:
	VZEROUPPER
	RET

// func reluMask32(out, y, dy *float32, n int)
// out[i] = dy[i] where int32(bits(y[i])) > 0 (y > 0, NaN with the sign
// clear included), +0 elsewhere.
TEXT ·reluMask32(SB), NOSPLIT, $0-32
	MOVQ out+0(FP), DI
	MOVQ y+8(FP), SI
	MOVQ dy+16(FP), DX
	MOVQ n+24(FP), CX
	VPXORD Z0, Z0, Z0

rm_loop:
	CMPQ CX, $16
	JLT  rm_tail
	VMOVDQU32 (SI), Z1
	VPCMPGTD Z0, Z1, K1
	VMOVDQU32.Z (DX), K1, Z2
	VMOVDQU32 Z2, (DI)
	ADDQ $64, SI
	ADDQ $64, DX
	ADDQ $64, DI
	SUBQ $16, CX
	JMP  rm_loop

rm_tail:
	CMPQ CX, $0
	JLE  rm_done
	LOWMASK(K2)
	VMOVDQU32.Z (SI), K2, Z1
	VPCMPGTD Z0, Z1, K2, K1
	VMOVDQU32.Z (DX), K1, Z2
	VMOVDQU32 Z2, K2, (DI)

rm_done:
	VZEROUPPER
	RET

// func colSum32(out, x *float32, n, c int)
// out[j] += x[i*c+j] for every row i in order (out zeroed by the caller),
// 16 columns at a time, the last c % 16 under a mask: the scalar loop's
// float32 additions in its order, lane by lane.
TEXT ·colSum32(SB), NOSPLIT, $0-32
	MOVQ out+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ n+16(FP), R8
	MOVQ c+24(FP), DX
	MOVQ DX, CX
	ANDQ $15, CX
	LOWMASK(K2)
	MOVQ DX, R9
	ANDQ $-16, R9

cs_row:
	TESTQ R8, R8
	JZ    cs_done
	XORQ  BX, BX

cs_col:
	CMPQ BX, R9
	JGE  cs_tail
	VMOVUPS (DI)(BX*4), Z1
	VADDPS (SI)(BX*4), Z1, Z1
	VMOVUPS Z1, (DI)(BX*4)
	ADDQ $16, BX
	JMP  cs_col

cs_tail:
	CMPQ BX, DX
	JGE  cs_next
	VMOVUPS.Z (DI)(BX*4), K2, Z1
	VMOVUPS.Z (SI)(BX*4), K2, Z2
	VADDPS Z2, Z1, Z1
	VMOVUPS Z1, K2, (DI)(BX*4)

cs_next:
	LEAQ (SI)(DX*4), SI
	DECQ R8
	JMP  cs_row

cs_done:
	VZEROUPPER
	RET

// func reluAdd32(dst, a, b *float32, n int)
// dst[i] = bits(a[i]+b[i]) &^ (int32(bits)>>31): reluTo's loop with b.
TEXT ·reluAdd32(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ a+8(FP), SI
	MOVQ b+16(FP), DX
	MOVQ n+24(FP), CX

ra_loop:
	CMPQ CX, $16
	JLT  ra_tail
	VMOVUPS (SI), Z1
	VADDPS (DX), Z1, Z1
	VPSRAD $31, Z1, Z2
	VPANDND Z1, Z2, Z1
	VMOVDQU32 Z1, (DI)
	ADDQ $64, SI
	ADDQ $64, DX
	ADDQ $64, DI
	SUBQ $16, CX
	JMP  ra_loop

ra_tail:
	CMPQ CX, $0
	JLE  ra_done
	LOWMASK(K1)
	VMOVUPS.Z (SI), K1, Z1
	VMOVUPS.Z (DX), K1, Z3
	VADDPS Z3, Z1, Z1
	VPSRAD $31, Z1, Z2
	VPANDND Z1, Z2, Z1
	VMOVDQU32 Z1, K1, (DI)

ra_done:
	VZEROUPPER
	RET

// func reluCopy32(dst, a *float32, n int)
// dst[i] = bits(a[i]) &^ (int32(bits)>>31): reluTo's loop without b.
TEXT ·reluCopy32(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ a+8(FP), SI
	MOVQ n+16(FP), CX

rc_loop:
	CMPQ CX, $16
	JLT  rc_tail
	VMOVDQU32 (SI), Z1
	VPSRAD $31, Z1, Z2
	VPANDND Z1, Z2, Z1
	VMOVDQU32 Z1, (DI)
	ADDQ $64, SI
	ADDQ $64, DI
	SUBQ $16, CX
	JMP  rc_loop

rc_tail:
	CMPQ CX, $0
	JLE  rc_done
	LOWMASK(K1)
	VMOVDQU32.Z (SI), K1, Z1
	VPSRAD $31, Z1, Z2
	VPANDND Z1, Z2, Z1
	VMOVDQU32 Z1, K1, (DI)

rc_done:
	VZEROUPPER
	RET
