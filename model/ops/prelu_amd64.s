//go:build amd64 && !purego

#include "textflag.h"
#include "kernels_amd64.h"

// PReLU with one shared slope, 16 float32 lanes at a time: a lane where
// x > 0 (ordered: NaN is not) takes its value (x, resp. dy), every other
// lane a·value, one VMULPS, as the scalar loops compute it; the tail of
// n % 16 goes under a mask.

// func preluShared32(out, x, v *float32, n int, a float32)
//
// out[i] = x[i] > 0 ? v[i] : a*v[i]: the forward pass with v = x, the
// gradient with respect to x with v = dy.
TEXT ·preluShared32(SB), NOSPLIT, $0-36
	MOVQ out+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ v+16(FP), DX
	MOVQ n+24(FP), CX
	VBROADCASTSS a+32(FP), Z0
	VXORPS Z1, Z1, Z1

loop:
	CMPQ CX, $16
	JLT  tail
	VMOVUPS (SI), Z2
	VMOVUPS (DX), Z3
	VCMPPS $0x1e, Z1, Z2, K1 // x > 0 (GT_OQ)
	VMULPS Z3, Z0, Z4
	VMOVAPS Z3, K1, Z4
	VMOVUPS Z4, (DI)
	ADDQ $64, SI
	ADDQ $64, DX
	ADDQ $64, DI
	SUBQ $16, CX
	JMP  loop

tail:
	CMPQ CX, $0
	JLE  done
	LOWMASK(K2)
	VMOVUPS.Z (SI), K2, Z2
	VMOVUPS.Z (DX), K2, Z3
	VCMPPS $0x1e, Z1, Z2, K2, K1
	VMULPS Z3, Z0, Z4
	VMOVAPS Z3, K1, Z4
	VMOVUPS Z4, K2, (DI)

done:
	VZEROUPPER
	RET
