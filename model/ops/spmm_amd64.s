//go:build amd64 && !purego

#include "textflag.h"
#include "kernels_amd64.h"

// The rows of SpMM and WSpMM with AVX-512: out[0:f] = Σ_k w_k·x[col_k·f : col_k·f+f]
// (w_k = 1 for spmmRow32, no multiply). Each output lane computes the same
// float32 operations in the same order as the scalar loop (acc = 0; acc = acc
// + round(w·x) for k = 0, 1, ...; separate VMULPS and VADDPS, never a fused
// multiply-add), so results are bit-identical to it. Columns go in blocks of
// 128 (eight accumulators, eight independent chains), then 16 at a time with a
// mask for the last partial block.

// ROWSETUP loads the arguments common to both kernels: DX = nnz, R10 = bytes
// in a row of x and out, R11 = byte offset of the current column block.
#define ROWSETUP \
	MOVQ out+0(FP), DI \
	MOVQ x+8(FP), SI \
	MOVQ col+16(FP), R8 \
	MOVQ nnz+32(FP), DX \
	MOVQ f+40(FP), R10 \
	SHLQ $2, R10 \
	XORQ R11, R11

// func wspmmRow32(out, x *float32, col *int32, val *float32, nnz, f int)
TEXT ·wspmmRow32(SB), NOSPLIT, $0-48
	ROWSETUP
	MOVQ val+24(FP), R9

w128:
	MOVQ R10, AX
	SUBQ R11, AX // AX: bytes left in the row
	CMPQ AX, $512
	JLT  w16
	VXORPS Z0, Z0, Z0
	VXORPS Z1, Z1, Z1
	VXORPS Z2, Z2, Z2
	VXORPS Z3, Z3, Z3
	VXORPS Z4, Z4, Z4
	VXORPS Z5, Z5, Z5
	VXORPS Z6, Z6, Z6
	VXORPS Z7, Z7, Z7
	XORQ BX, BX

w128loop:
	CMPQ BX, DX
	JGE  w128store
	MOVLQSX (R8)(BX*4), R12
	IMULQ R10, R12
	ADDQ SI, R12
	ADDQ R11, R12 // R12: &x[col_k*f + block]
	VBROADCASTSS (R9)(BX*4), Z8
	VMULPS 0(R12), Z8, Z9
	VADDPS Z9, Z0, Z0
	VMULPS 64(R12), Z8, Z10
	VADDPS Z10, Z1, Z1
	VMULPS 128(R12), Z8, Z11
	VADDPS Z11, Z2, Z2
	VMULPS 192(R12), Z8, Z12
	VADDPS Z12, Z3, Z3
	VMULPS 256(R12), Z8, Z13
	VADDPS Z13, Z4, Z4
	VMULPS 320(R12), Z8, Z14
	VADDPS Z14, Z5, Z5
	VMULPS 384(R12), Z8, Z15
	VADDPS Z15, Z6, Z6
	VMULPS 448(R12), Z8, Z16
	VADDPS Z16, Z7, Z7
	INCQ BX
	JMP  w128loop

w128store:
	LEAQ (DI)(R11*1), R13
	VMOVUPS Z0, 0(R13)
	VMOVUPS Z1, 64(R13)
	VMOVUPS Z2, 128(R13)
	VMOVUPS Z3, 192(R13)
	VMOVUPS Z4, 256(R13)
	VMOVUPS Z5, 320(R13)
	VMOVUPS Z6, 384(R13)
	VMOVUPS Z7, 448(R13)
	ADDQ $512, R11
	JMP  w128

w16:
	CMPQ AX, $0
	JLE  wdone
	MOVQ AX, CX
	SHRQ $2, CX // lanes left
	CMPQ CX, $16
	JLE  w16mask
	MOVQ $16, CX

w16mask:
	LOWMASK(K1)
	VXORPS Z0, Z0, Z0
	XORQ BX, BX

w16loop:
	CMPQ BX, DX
	JGE  w16store
	MOVLQSX (R8)(BX*4), R12
	IMULQ R10, R12
	ADDQ SI, R12
	ADDQ R11, R12
	VBROADCASTSS (R9)(BX*4), Z8
	VMOVUPS.Z (R12), K1, Z9
	VMULPS Z9, Z8, Z9
	VADDPS Z9, Z0, Z0
	INCQ BX
	JMP  w16loop

w16store:
	LEAQ (DI)(R11*1), R13
	VMOVUPS Z0, K1, (R13)
	ADDQ $64, R11
	MOVQ R10, AX
	SUBQ R11, AX
	JMP  w16

wdone:
	VZEROUPPER
	RET

// func spmmRow32(out, x *float32, col *int32, unused *float32, nnz, f int)
TEXT ·spmmRow32(SB), NOSPLIT, $0-48
	ROWSETUP

s128:
	MOVQ R10, AX
	SUBQ R11, AX
	CMPQ AX, $512
	JLT  s16
	VXORPS Z0, Z0, Z0
	VXORPS Z1, Z1, Z1
	VXORPS Z2, Z2, Z2
	VXORPS Z3, Z3, Z3
	VXORPS Z4, Z4, Z4
	VXORPS Z5, Z5, Z5
	VXORPS Z6, Z6, Z6
	VXORPS Z7, Z7, Z7
	XORQ BX, BX

s128loop:
	CMPQ BX, DX
	JGE  s128store
	MOVLQSX (R8)(BX*4), R12
	IMULQ R10, R12
	ADDQ SI, R12
	ADDQ R11, R12
	VADDPS 0(R12), Z0, Z0
	VADDPS 64(R12), Z1, Z1
	VADDPS 128(R12), Z2, Z2
	VADDPS 192(R12), Z3, Z3
	VADDPS 256(R12), Z4, Z4
	VADDPS 320(R12), Z5, Z5
	VADDPS 384(R12), Z6, Z6
	VADDPS 448(R12), Z7, Z7
	INCQ BX
	JMP  s128loop

s128store:
	LEAQ (DI)(R11*1), R13
	VMOVUPS Z0, 0(R13)
	VMOVUPS Z1, 64(R13)
	VMOVUPS Z2, 128(R13)
	VMOVUPS Z3, 192(R13)
	VMOVUPS Z4, 256(R13)
	VMOVUPS Z5, 320(R13)
	VMOVUPS Z6, 384(R13)
	VMOVUPS Z7, 448(R13)
	ADDQ $512, R11
	JMP  s128

s16:
	CMPQ AX, $0
	JLE  sdone
	MOVQ AX, CX
	SHRQ $2, CX // lanes left
	CMPQ CX, $16
	JLE  s16mask
	MOVQ $16, CX

s16mask:
	LOWMASK(K1)
	VXORPS Z0, Z0, Z0
	XORQ BX, BX

s16loop:
	CMPQ BX, DX
	JGE  s16store
	MOVLQSX (R8)(BX*4), R12
	IMULQ R10, R12
	ADDQ SI, R12
	ADDQ R11, R12
	VMOVUPS.Z (R12), K1, Z9
	VADDPS Z9, Z0, Z0
	INCQ BX
	JMP  s16loop

s16store:
	LEAQ (DI)(R11*1), R13
	VMOVUPS Z0, K1, (R13)
	ADDQ $64, R11
	MOVQ R10, AX
	SUBQ R11, AX
	JMP  s16

sdone:
	VZEROUPPER
	RET
