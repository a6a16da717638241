//go:build amd64 && !purego

#include "textflag.h"

// func cpuid(eaxArg, ecxArg uint32) (eax, ebx, ecx, edx uint32)
TEXT ·cpuid(SB), NOSPLIT, $0-24
	MOVL eaxArg+0(FP), AX
	MOVL ecxArg+4(FP), CX
	CPUID
	MOVL AX, eax+8(FP)
	MOVL BX, ebx+12(FP)
	MOVL CX, ecx+16(FP)
	MOVL DX, edx+20(FP)
	RET

// func scaledKernel(dst *float32, src *uint16, n int, scale float64)
// n is a positive multiple of 4. Per 4 values: 4 halves (8 bytes) → 4
// floats (exact) → 4 doubles (exact) → ×scale in float64 → 4 floats
// (rounded to nearest even, MXCSR's default, as Go's float32()).
TEXT ·scaledKernel(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	VBROADCASTSD scale+24(FP), Y15
	CMPQ CX, $8
	JLT  tail4

loop8:
	VCVTPH2PS (SI), X0
	VCVTPH2PS 8(SI), X1
	VCVTPS2PD X0, Y0
	VCVTPS2PD X1, Y1
	VMULPD    Y15, Y0, Y0
	VMULPD    Y15, Y1, Y1
	VCVTPD2PSY Y0, X0
	VCVTPD2PSY Y1, X1
	VMOVUPS   X0, (DI)
	VMOVUPS   X1, 16(DI)
	ADDQ $16, SI
	ADDQ $32, DI
	SUBQ $8, CX
	CMPQ CX, $8
	JGE  loop8

tail4:
	TESTQ CX, CX
	JZ    done
	VCVTPH2PS (SI), X0
	VCVTPS2PD X0, Y0
	VMULPD    Y15, Y0, Y0
	VCVTPD2PSY Y0, X0
	VMOVUPS   X0, (DI)

done:
	VZEROUPPER
	RET
