//go:build amd64 && !purego

#include "textflag.h"

// func pprTermAVX512(rows *int32, nrows int, rowptr, col *int32, w, x, next, acc, am, norm *float64)
//
// pprTermGo for AVX-512: one ZMM holds the 8 columns of a row. For every
// row j of rows: s = Σ_k w[k]·x[col[k]] over k in [rowptr[j], rowptr[j+1])
// (a multiply, then an add, per entry), next[j] = s, acc[j] += am·s,
// norm += s·s.
TEXT ·pprTermAVX512(SB), NOSPLIT, $0-80
	MOVQ rows+0(FP), SI
	MOVQ nrows+8(FP), CX
	MOVQ rowptr+16(FP), R8
	MOVQ col+24(FP), R9
	MOVQ w+32(FP), R10
	MOVQ x+40(FP), R11
	MOVQ next+48(FP), R12
	MOVQ acc+56(FP), R13
	MOVQ am+64(FP), DX
	VMOVUPD (DX), Z30
	MOVQ norm+72(FP), DX
	VMOVUPD (DX), Z31
	TESTQ CX, CX
	JZ   done

rowloop:
	MOVLQSX (SI), AX
	MOVLQSX (R8)(AX*4), BX
	MOVLQSX 4(R8)(AX*4), DI
	VPXORQ Z0, Z0, Z0
	CMPQ BX, DI
	JGE  rowdone

nnzloop:
	MOVLQSX (R9)(BX*4), DX
	SHLQ $6, DX
	VBROADCASTSD (R10)(BX*8), Z1
	VMULPD (R11)(DX*1), Z1, Z1
	VADDPD Z1, Z0, Z0
	INCQ BX
	CMPQ BX, DI
	JLT  nnzloop

rowdone:
	SHLQ $6, AX
	VMOVUPD Z0, (R12)(AX*1)
	VMULPD Z30, Z0, Z2
	VADDPD (R13)(AX*1), Z2, Z2
	VMOVUPD Z2, (R13)(AX*1)
	VMULPD Z0, Z0, Z3
	VADDPD Z3, Z31, Z31
	ADDQ $4, SI
	DECQ CX
	JNZ  rowloop

done:
	MOVQ norm+72(FP), DX
	VMOVUPD Z31, (DX)
	VZEROUPPER
	RET
