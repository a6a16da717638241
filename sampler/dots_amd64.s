//go:build amd64 && !purego

#include "textflag.h"

// func dots16F64(d int, ri, base *float32, offs *int32, out *float64)
//
// out[e] = Σ_{k<d} float64(base[offs[e]+k])·float64(ri[k]) for e < 16, each
// sum in order of k from 0 (a multiply, then an add, in float64): 16 edges'
// dot products side by side, the rows gathered one column at a time.
TEXT ·dots16F64(SB), NOSPLIT, $0-40
	MOVQ d+0(FP), CX
	MOVQ ri+8(FP), SI
	MOVQ base+16(FP), BX
	MOVQ offs+24(FP), DI
	VMOVDQU32 (DI), Y4
	VMOVDQU32 32(DI), Y5
	VPXORQ Z0, Z0, Z0
	VPXORQ Z1, Z1, Z1
	TESTQ CX, CX
	JZ   d16done

d16loop:
	KXNORW K1, K1, K1
	KXNORW K2, K2, K2
	VGATHERDPS (BX)(Y4*4), K1, Y2
	VGATHERDPS (BX)(Y5*4), K2, Y3
	VCVTPS2PD Y2, Z2
	VCVTPS2PD Y3, Z3
	VCVTSS2SD (SI), X6, X6
	VBROADCASTSD X6, Z6
	VMULPD Z6, Z2, Z2
	VMULPD Z6, Z3, Z3
	VADDPD Z2, Z0, Z0
	VADDPD Z3, Z1, Z1
	ADDQ $4, BX
	ADDQ $4, SI
	DECQ CX
	JNZ  d16loop

d16done:
	MOVQ out+32(FP), DX
	VMOVUPD Z0, (DX)
	VMOVUPD Z1, 64(DX)
	VZEROUPPER
	RET
