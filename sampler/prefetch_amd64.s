//go:build amd64 && !purego

#include "textflag.h"

// func prefetchLines(p *byte, lines int)
TEXT ·prefetchLines(SB), NOSPLIT, $0-16
	MOVQ p+0(FP), SI
	MOVQ lines+8(FP), CX
	TESTQ CX, CX
	JLE  done
loop:
	PREFETCHT0 (SI)
	ADDQ $64, SI
	DECQ CX
	JNZ  loop
done:
	RET

// func gatherRows64(dst, base *byte, idx *int32, n, rowBytes int)
//
// Copies rows idx[j] of rowBytes bytes (a multiple of 64) from base to dst
// (row j at dst + j·rowBytes), 64 bytes a load, asking (PREFETCHT0) for the
// lines of row idx[j+8] before copying row j.
TEXT ·gatherRows64(SB), NOSPLIT, $0-40
	MOVQ dst+0(FP), DI
	MOVQ base+8(FP), SI
	MOVQ idx+16(FP), BX
	MOVQ n+24(FP), CX
	MOVQ rowBytes+32(FP), DX
	XORQ R8, R8                  // j
	// rows 0..7 asked for first
	XORQ R9, R9
first:
	CMPQ R9, CX
	JGE  rows
	CMPQ R9, $8
	JGE  rows
	MOVLQSX (BX)(R9*4), R10
	IMULQ DX, R10
	ADDQ SI, R10
	MOVQ DX, R11
pf0:
	PREFETCHT0 (R10)
	ADDQ $64, R10
	SUBQ $64, R11
	JG   pf0
	INCQ R9
	JMP  first
rows:
	CMPQ R8, CX
	JGE  done
	LEAQ 8(R8), R9
	CMPQ R9, CX
	JGE  copy
	MOVLQSX (BX)(R9*4), R10
	IMULQ DX, R10
	ADDQ SI, R10
	MOVQ DX, R11
pf:
	PREFETCHT0 (R10)
	ADDQ $64, R10
	SUBQ $64, R11
	JG   pf
copy:
	MOVLQSX (BX)(R8*4), R10
	IMULQ DX, R10
	ADDQ SI, R10
	MOVQ DX, R11
cp:
	VMOVDQU64 (R10), Z0
	VMOVDQU64 Z0, (DI)
	ADDQ $64, R10
	ADDQ $64, DI
	SUBQ $64, R11
	JG   cp
	INCQ R8
	JMP  rows
done:
	VZEROUPPER
	RET
