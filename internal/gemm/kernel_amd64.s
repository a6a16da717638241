//go:build amd64 && !purego

#include "textflag.h"

// One step of the 6×16 update: Y12/Y13 hold row l of the B panel, A
// elements are broadcast from the packed A panel at byte offset off.
#define STEP(aoff, boff) \
	VMOVUPS boff(BX), Y12 \
	VMOVUPS boff+32(BX), Y13 \
	VBROADCASTSS aoff(SI), Y14 \
	VFMADD231PS Y12, Y14, Y0 \
	VFMADD231PS Y13, Y14, Y1 \
	VBROADCASTSS aoff+4(SI), Y15 \
	VFMADD231PS Y12, Y15, Y2 \
	VFMADD231PS Y13, Y15, Y3 \
	VBROADCASTSS aoff+8(SI), Y14 \
	VFMADD231PS Y12, Y14, Y4 \
	VFMADD231PS Y13, Y14, Y5 \
	VBROADCASTSS aoff+12(SI), Y15 \
	VFMADD231PS Y12, Y15, Y6 \
	VFMADD231PS Y13, Y15, Y7 \
	VBROADCASTSS aoff+16(SI), Y14 \
	VFMADD231PS Y12, Y14, Y8 \
	VFMADD231PS Y13, Y14, Y9 \
	VBROADCASTSS aoff+20(SI), Y15 \
	VFMADD231PS Y12, Y15, Y10 \
	VFMADD231PS Y13, Y15, Y11

// Store one row of the tile: C = T (beta == 0) or C = T + beta·C, T already
// scaled by alpha.
#define STOREROW(lo, hi) \
	VMOVUPS lo, (DX) \
	VMOVUPS hi, 32(DX)

#define UPDATEROW(lo, hi) \
	VFMADD231PS (DX), Y15, lo \
	VFMADD231PS 32(DX), Y15, hi \
	VMOVUPS lo, (DX) \
	VMOVUPS hi, 32(DX)

// func kern6x16AVX2(k int, a, b, c *float32, ldc, rows int, alpha, beta float32)
//
// T = A·B for a packed A panel (k groups of 6 floats) and a packed B panel
// (k rows of 16 floats); then C[r][0:16] = alpha·T[r] + beta·C[r] for
// r < rows, C row-major with stride ldc (elements). C is not read when
// beta == 0. Registers: Y0-Y11 hold T (two YMM per row), Y12/Y13 a B row,
// Y14/Y15 broadcast A elements.
TEXT ·kern6x16AVX2(SB), NOSPLIT, $0-56
	MOVQ k+0(FP), CX
	MOVQ a+8(FP), SI
	MOVQ b+16(FP), BX
	MOVQ c+24(FP), DX
	MOVQ ldc+32(FP), R9
	SHLQ $2, R9
	MOVQ rows+40(FP), R10
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	VXORPS Y8, Y8, Y8
	VXORPS Y9, Y9, Y9
	VXORPS Y10, Y10, Y10
	VXORPS Y11, Y11, Y11
	MOVQ CX, AX
	SHRQ $2, AX
	JZ   tail

loop4:
	STEP(0, 0)
	STEP(24, 64)
	STEP(48, 128)
	STEP(72, 192)
	ADDQ $96, SI
	ADDQ $256, BX
	DECQ AX
	JNZ  loop4

tail:
	ANDQ $3, CX
	JZ   epilogue

loop1:
	STEP(0, 0)
	ADDQ $24, SI
	ADDQ $64, BX
	DECQ CX
	JNZ  loop1

epilogue:
	VBROADCASTSS alpha+48(FP), Y14
	VMULPS Y14, Y0, Y0
	VMULPS Y14, Y1, Y1
	VMULPS Y14, Y2, Y2
	VMULPS Y14, Y3, Y3
	VMULPS Y14, Y4, Y4
	VMULPS Y14, Y5, Y5
	VMULPS Y14, Y6, Y6
	VMULPS Y14, Y7, Y7
	VMULPS Y14, Y8, Y8
	VMULPS Y14, Y9, Y9
	VMULPS Y14, Y10, Y10
	VMULPS Y14, Y11, Y11
	MOVL beta+52(FP), AX
	ANDL $0x7fffffff, AX
	JNZ  update

	STOREROW(Y0, Y1)
	DECQ R10
	JZ   done
	ADDQ R9, DX
	STOREROW(Y2, Y3)
	DECQ R10
	JZ   done
	ADDQ R9, DX
	STOREROW(Y4, Y5)
	DECQ R10
	JZ   done
	ADDQ R9, DX
	STOREROW(Y6, Y7)
	DECQ R10
	JZ   done
	ADDQ R9, DX
	STOREROW(Y8, Y9)
	DECQ R10
	JZ   done
	ADDQ R9, DX
	STOREROW(Y10, Y11)
	JMP  done

update:
	VBROADCASTSS beta+52(FP), Y15
	UPDATEROW(Y0, Y1)
	DECQ R10
	JZ   done
	ADDQ R9, DX
	UPDATEROW(Y2, Y3)
	DECQ R10
	JZ   done
	ADDQ R9, DX
	UPDATEROW(Y4, Y5)
	DECQ R10
	JZ   done
	ADDQ R9, DX
	UPDATEROW(Y6, Y7)
	DECQ R10
	JZ   done
	ADDQ R9, DX
	UPDATEROW(Y8, Y9)
	DECQ R10
	JZ   done
	ADDQ R9, DX
	UPDATEROW(Y10, Y11)

done:
	VZEROUPPER
	RET

// func copy16AVX2(kb int, src *float32, lds int, dst *float32)
//
// dst[l*16+j] = src[l*lds+j] for l < kb, j < 16: one panel of an
// untransposed B. The 16 floats that follow each row (the next panel) are
// prefetched, so that they arrive while the micro-kernels run.
TEXT ·copy16AVX2(SB), NOSPLIT, $0-32
	MOVQ kb+0(FP), CX
	MOVQ src+8(FP), SI
	MOVQ lds+16(FP), R8
	SHLQ $2, R8
	MOVQ dst+24(FP), DI
	TESTQ CX, CX
	JE   pbdone

pbloop:
	PREFETCHT0 64(SI) // the same rows of the next panel
	VMOVUPS (SI), Y0
	VMOVUPS 32(SI), Y1
	VMOVUPS Y0, (DI)
	VMOVUPS Y1, 32(DI)
	ADDQ R8, SI
	ADDQ $64, DI
	DECQ CX
	JNZ  pbloop

pbdone:
	VZEROUPPER
	RET

// func gather16AVX2(kb int, src *float32, lds int, dst *float32)
//
// dst[l*16+j] = src[j*lds+l] for l < kb, j < 16, kb a multiple of 8: one
// panel of a transposed B, in 8×8 blocks transposed in registers.
TEXT ·gather16AVX2(SB), NOSPLIT, $0-32
	MOVQ kb+0(FP), CX
	SHRQ $3, CX
	JE   ptdone
	MOVQ src+8(FP), SI
	MOVQ lds+16(FP), R8
	SHLQ $2, R8
	MOVQ dst+24(FP), DI
	LEAQ (R8)(R8*2), R9  // 3·lds
	LEAQ (SI)(R8*8), R10 // rows 8..15

ptloop:
	// Rows 0..7 of the panel, 8 values of l each.
	MOVQ SI, AX
	MOVQ DI, DX
	CALL transpose8x8<>(SB)
	// Rows 8..15.
	MOVQ R10, AX
	LEAQ 32(DI), DX
	CALL transpose8x8<>(SB)
	ADDQ $32, SI
	ADDQ $32, R10
	ADDQ $512, DI
	DECQ CX
	JNZ  ptloop

ptdone:
	VZEROUPPER
	RET

// TRANSPOSE8 transposes the 8×8 block in Y0-Y7 (one row each) into Y8-Y15
// (Y8 holds column 0, ..., Y15 column 7). Clobbers Y0-Y7.
#define TRANSPOSE8 \
	VUNPCKLPS Y1, Y0, Y8 \
	VUNPCKHPS Y1, Y0, Y9 \
	VUNPCKLPS Y3, Y2, Y10 \
	VUNPCKHPS Y3, Y2, Y11 \
	VUNPCKLPS Y5, Y4, Y12 \
	VUNPCKHPS Y5, Y4, Y13 \
	VUNPCKLPS Y7, Y6, Y14 \
	VUNPCKHPS Y7, Y6, Y15 \
	VSHUFPS $0x44, Y10, Y8, Y0 \
	VSHUFPS $0xEE, Y10, Y8, Y1 \
	VSHUFPS $0x44, Y11, Y9, Y2 \
	VSHUFPS $0xEE, Y11, Y9, Y3 \
	VSHUFPS $0x44, Y14, Y12, Y4 \
	VSHUFPS $0xEE, Y14, Y12, Y5 \
	VSHUFPS $0x44, Y15, Y13, Y6 \
	VSHUFPS $0xEE, Y15, Y13, Y7 \
	VPERM2F128 $0x20, Y4, Y0, Y8 \
	VPERM2F128 $0x20, Y5, Y1, Y9 \
	VPERM2F128 $0x20, Y6, Y2, Y10 \
	VPERM2F128 $0x20, Y7, Y3, Y11 \
	VPERM2F128 $0x31, Y4, Y0, Y12 \
	VPERM2F128 $0x31, Y5, Y1, Y13 \
	VPERM2F128 $0x31, Y6, Y2, Y14 \
	VPERM2F128 $0x31, Y7, Y3, Y15

// transpose8x8 loads 8 rows of 8 floats from AX (row stride R8 bytes, R9 =
// 3·R8) and stores their transpose as 8 rows of 8 floats at DX with a row
// stride of 64 bytes. Clobbers Y0-Y15, BX.
TEXT transpose8x8<>(SB), NOSPLIT|NOFRAME, $0-0
	VMOVUPS (AX), Y0
	VMOVUPS (AX)(R8*1), Y1
	VMOVUPS (AX)(R8*2), Y2
	VMOVUPS (AX)(R9*1), Y3
	LEAQ (AX)(R8*4), BX
	VMOVUPS (BX), Y4
	VMOVUPS (BX)(R8*1), Y5
	VMOVUPS (BX)(R8*2), Y6
	VMOVUPS (BX)(R9*1), Y7
	TRANSPOSE8
	VMOVUPS Y8, (DX)
	VMOVUPS Y9, 64(DX)
	VMOVUPS Y10, 128(DX)
	VMOVUPS Y11, 192(DX)
	VMOVUPS Y12, 256(DX)
	VMOVUPS Y13, 320(DX)
	VMOVUPS Y14, 384(DX)
	VMOVUPS Y15, 448(DX)
	RET

// STORE6 stores the first 6 floats of Y register y (X register x) at
// off(DX), clobbering X0.
#define STORE6(y, x, off) \
	VMOVUPS x, off(DX) \
	VEXTRACTF128 $1, y, X0 \
	VMOVSD X0, off+16(DX)

// func gather6AVX2(kb int, src *float32, lds int, dst *float32)
//
// dst[l*6+r] = src[r*lds+l] for l < kb, r < 6, kb a multiple of 8: one panel
// of an untransposed A, in 6×8 blocks transposed in registers.
TEXT ·gather6AVX2(SB), NOSPLIT, $0-32
	MOVQ kb+0(FP), CX
	SHRQ $3, CX
	JE   padone
	MOVQ src+8(FP), AX
	MOVQ lds+16(FP), R8
	SHLQ $2, R8
	MOVQ dst+24(FP), DX
	LEAQ (R8)(R8*2), R9 // 3·lds
	LEAQ (AX)(R9*1), BX // rows 3..5

paloop:
	VMOVUPS (AX), Y0
	VMOVUPS (AX)(R8*1), Y1
	VMOVUPS (AX)(R8*2), Y2
	VMOVUPS (BX), Y3
	VMOVUPS (BX)(R8*1), Y4
	VMOVUPS (BX)(R8*2), Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	TRANSPOSE8
	STORE6(Y8, X8, 0)
	STORE6(Y9, X9, 24)
	STORE6(Y10, X10, 48)
	STORE6(Y11, X11, 72)
	STORE6(Y12, X12, 96)
	STORE6(Y13, X13, 120)
	STORE6(Y14, X14, 144)
	STORE6(Y15, X15, 168)
	ADDQ $32, AX
	ADDQ $32, BX
	ADDQ $192, DX
	DECQ CX
	JNZ  paloop

padone:
	VZEROUPPER
	RET

// One step of the 16×16 update: zb holds row l of B (loaded from baddr),
// the 16 A elements of step l are broadcast from memory by the FMAs.
#define STEP16(aoff, baddr, zb) \
	VMOVUPS baddr, zb \
	VFMADD231PS.BCST aoff(SI), zb, Z0 \
	VFMADD231PS.BCST aoff+4(SI), zb, Z1 \
	VFMADD231PS.BCST aoff+8(SI), zb, Z2 \
	VFMADD231PS.BCST aoff+12(SI), zb, Z3 \
	VFMADD231PS.BCST aoff+16(SI), zb, Z4 \
	VFMADD231PS.BCST aoff+20(SI), zb, Z5 \
	VFMADD231PS.BCST aoff+24(SI), zb, Z6 \
	VFMADD231PS.BCST aoff+28(SI), zb, Z7 \
	VFMADD231PS.BCST aoff+32(SI), zb, Z8 \
	VFMADD231PS.BCST aoff+36(SI), zb, Z9 \
	VFMADD231PS.BCST aoff+40(SI), zb, Z10 \
	VFMADD231PS.BCST aoff+44(SI), zb, Z11 \
	VFMADD231PS.BCST aoff+48(SI), zb, Z12 \
	VFMADD231PS.BCST aoff+52(SI), zb, Z13 \
	VFMADD231PS.BCST aoff+56(SI), zb, Z14 \
	VFMADD231PS.BCST aoff+60(SI), zb, Z15

// STEP16 for A read in place: the 16 A elements of step l are broadcast
// from rows 4q+s at (SI, DI, R8, R9 for q) + s·lda (R12 = lda, R13 = 3·lda
// in bytes), byte offset aoff into the rows.
#define STEP16D(aoff, baddr, zb) \
	VMOVUPS baddr, zb \
	VFMADD231PS.BCST aoff(SI), zb, Z0 \
	VFMADD231PS.BCST aoff(SI)(R12*1), zb, Z1 \
	VFMADD231PS.BCST aoff(SI)(R12*2), zb, Z2 \
	VFMADD231PS.BCST aoff(SI)(R13*1), zb, Z3 \
	VFMADD231PS.BCST aoff(DI), zb, Z4 \
	VFMADD231PS.BCST aoff(DI)(R12*1), zb, Z5 \
	VFMADD231PS.BCST aoff(DI)(R12*2), zb, Z6 \
	VFMADD231PS.BCST aoff(DI)(R13*1), zb, Z7 \
	VFMADD231PS.BCST aoff(R8), zb, Z8 \
	VFMADD231PS.BCST aoff(R8)(R12*1), zb, Z9 \
	VFMADD231PS.BCST aoff(R8)(R12*2), zb, Z10 \
	VFMADD231PS.BCST aoff(R8)(R13*1), zb, Z11 \
	VFMADD231PS.BCST aoff(R9), zb, Z12 \
	VFMADD231PS.BCST aoff(R9)(R12*1), zb, Z13 \
	VFMADD231PS.BCST aoff(R9)(R12*2), zb, Z14 \
	VFMADD231PS.BCST aoff(R9)(R13*1), zb, Z15

// Store (beta == 0) or update (C = T + beta·C, beta in Z17) one row of the
// 16×16 tile, then advance to the next row or finish.
#define STORE16(z) \
	VMOVUPS z, (DX) \
	DECQ R10 \
	JZ   done16 \
	ADDQ R9, DX

#define UPDATE16(z) \
	VFMADD231PS (DX), Z17, z \
	VMOVUPS z, (DX) \
	DECQ R10 \
	JZ   done16 \
	ADDQ R9, DX

// func kern16x16AVX512(k int, a, b *float32, ldb int, offs *int32, lda, astep int, c *float32, ldc, rows int, alpha, beta float32)
//
// T = A·B for 16 rows of A and k rows of 16 floats of B; then
// C[r][0:16] = alpha·T[r] + beta·C[r] for r < rows, C row-major with stride
// ldc (elements). C is not read when beta == 0. A is a packed panel (k
// groups of 16 floats) when lda and astep are 0; with astep != 0 the
// groups are astep floats apart (a transposed A read in place); with
// lda != 0 A is read in place by rows: row r at a[r*lda], all 16 rows. In
// both in-place cases B is read with stride ldb. B row l is at
// b[l*ldb] (ldb 16 for a packed panel, or B in place), or at b[offs[l]]
// when offs is not nil (an indirect B, e.g. the shifted rows of a padded
// image; A packed). Every way runs the same FMA sequence.
// Registers: Z0-Z15 hold T (one ZMM per row), Z16-Z19 B rows.
TEXT ·kern16x16AVX512(SB), NOSPLIT, $0-88
	MOVQ k+0(FP), CX
	MOVQ a+8(FP), SI
	MOVQ b+16(FP), BX
	MOVQ ldb+24(FP), R11
	SHLQ $2, R11
	LEAQ (R11)(R11*2), R12 // 3·ldb
	LEAQ (R11*4), R13      // 4·ldb
	MOVQ offs+32(FP), DI
	MOVQ c+56(FP), DX
	MOVQ ldc+64(FP), R9
	SHLQ $2, R9
	MOVQ rows+72(FP), R10
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	VPXORD Z4, Z4, Z4
	VPXORD Z5, Z5, Z5
	VPXORD Z6, Z6, Z6
	VPXORD Z7, Z7, Z7
	VPXORD Z8, Z8, Z8
	VPXORD Z9, Z9, Z9
	VPXORD Z10, Z10, Z10
	VPXORD Z11, Z11, Z11
	VPXORD Z12, Z12, Z12
	VPXORD Z13, Z13, Z13
	VPXORD Z14, Z14, Z14
	VPXORD Z15, Z15, Z15
	MOVQ CX, AX
	SHRQ $2, AX
	TESTQ DI, DI
	JNZ  indirect16
	MOVQ lda+40(FP), R8
	TESTQ R8, R8
	JNZ  directa16
	MOVQ astep+48(FP), R8
	TESTQ R8, R8
	JNZ  strideda16
	TESTQ AX, AX
	JZ   tail16

loop16x4:
	STEP16(0, (BX), Z16)
	STEP16(64, (BX)(R11*1), Z17)
	STEP16(128, (BX)(R11*2), Z18)
	STEP16(192, (BX)(R12*1), Z19)
	ADDQ $256, SI
	ADDQ R13, BX
	DECQ AX
	JNZ  loop16x4

tail16:
	ANDQ $3, CX
	JZ   epilogue16

loop16x1:
	STEP16(0, (BX), Z16)
	ADDQ $64, SI
	ADDQ R11, BX
	DECQ CX
	JNZ  loop16x1

	JMP  epilogue16

	// B row l at BX + 4·offs[l] (DI walks offs).
indirect16:
	TESTQ AX, AX
	JZ   itail16

iloop16x4:
	MOVLQSX (DI), R8
	MOVLQSX 4(DI), R12
	MOVLQSX 8(DI), R13
	MOVLQSX 12(DI), R11
	STEP16(0, (BX)(R8*4), Z16)
	STEP16(64, (BX)(R12*4), Z17)
	STEP16(128, (BX)(R13*4), Z18)
	STEP16(192, (BX)(R11*4), Z19)
	ADDQ $256, SI
	ADDQ $16, DI
	DECQ AX
	JNZ  iloop16x4

itail16:
	ANDQ $3, CX
	JZ   epilogue16

iloop16x1:
	MOVLQSX (DI), R8
	STEP16(0, (BX)(R8*4), Z16)
	ADDQ $64, SI
	ADDQ $4, DI
	DECQ CX
	JNZ  iloop16x1
	JMP  epilogue16

	// A in place: rows 4q..4q+3 at SI, DI, R8, R9 + {0, 1, 2, 3}·R12
	// (R12 = lda, R13 = 3·lda in bytes); B with stride R11. C's pointer,
	// stride and rows are reloaded for the epilogue.
directa16:
	SHLQ $2, R8
	MOVQ R8, R12
	LEAQ (R8)(R8*2), R13
	LEAQ (SI)(R12*4), DI
	LEAQ (DI)(R12*4), R8
	LEAQ (R8)(R12*4), R9
	TESTQ AX, AX
	JZ   dtail16

dloop16x4:
	STEP16D(0, (BX), Z16)
	ADDQ R11, BX
	STEP16D(4, (BX), Z17)
	ADDQ R11, BX
	STEP16D(8, (BX), Z18)
	ADDQ R11, BX
	STEP16D(12, (BX), Z19)
	ADDQ R11, BX
	ADDQ $16, SI
	ADDQ $16, DI
	ADDQ $16, R8
	ADDQ $16, R9
	DECQ AX
	JNZ  dloop16x4

dtail16:
	ANDQ $3, CX
	JZ   dreload16

dloop16x1:
	STEP16D(0, (BX), Z16)
	ADDQ R11, BX
	ADDQ $4, SI
	ADDQ $4, DI
	ADDQ $4, R8
	ADDQ $4, R9
	DECQ CX
	JNZ  dloop16x1

dreload16:
	MOVQ c+56(FP), DX
	MOVQ ldc+64(FP), R9
	SHLQ $2, R9
	MOVQ rows+72(FP), R10
	JMP  epilogue16

	// A's groups of 16 floats R8 bytes apart, B with stride R11.
strideda16:
	SHLQ $2, R8
	TESTQ AX, AX
	JZ   stail16

sloop16x4:
	STEP16(0, (BX), Z16)
	ADDQ R8, SI
	ADDQ R11, BX
	STEP16(0, (BX), Z17)
	ADDQ R8, SI
	ADDQ R11, BX
	STEP16(0, (BX), Z18)
	ADDQ R8, SI
	ADDQ R11, BX
	STEP16(0, (BX), Z19)
	ADDQ R8, SI
	ADDQ R11, BX
	DECQ AX
	JNZ  sloop16x4

stail16:
	ANDQ $3, CX
	JZ   epilogue16

sloop16x1:
	STEP16(0, (BX), Z16)
	ADDQ R8, SI
	ADDQ R11, BX
	DECQ CX
	JNZ  sloop16x1

epilogue16:
	VBROADCASTSS alpha+80(FP), Z16
	VMULPS Z16, Z0, Z0
	VMULPS Z16, Z1, Z1
	VMULPS Z16, Z2, Z2
	VMULPS Z16, Z3, Z3
	VMULPS Z16, Z4, Z4
	VMULPS Z16, Z5, Z5
	VMULPS Z16, Z6, Z6
	VMULPS Z16, Z7, Z7
	VMULPS Z16, Z8, Z8
	VMULPS Z16, Z9, Z9
	VMULPS Z16, Z10, Z10
	VMULPS Z16, Z11, Z11
	VMULPS Z16, Z12, Z12
	VMULPS Z16, Z13, Z13
	VMULPS Z16, Z14, Z14
	VMULPS Z16, Z15, Z15
	MOVL beta+84(FP), AX
	ANDL $0x7fffffff, AX
	JNZ  update16

	STORE16(Z0)
	STORE16(Z1)
	STORE16(Z2)
	STORE16(Z3)
	STORE16(Z4)
	STORE16(Z5)
	STORE16(Z6)
	STORE16(Z7)
	STORE16(Z8)
	STORE16(Z9)
	STORE16(Z10)
	STORE16(Z11)
	STORE16(Z12)
	STORE16(Z13)
	STORE16(Z14)
	VMOVUPS Z15, (DX)
	JMP  done16

update16:
	VBROADCASTSS beta+84(FP), Z17
	UPDATE16(Z0)
	UPDATE16(Z1)
	UPDATE16(Z2)
	UPDATE16(Z3)
	UPDATE16(Z4)
	UPDATE16(Z5)
	UPDATE16(Z6)
	UPDATE16(Z7)
	UPDATE16(Z8)
	UPDATE16(Z9)
	UPDATE16(Z10)
	UPDATE16(Z11)
	UPDATE16(Z12)
	UPDATE16(Z13)
	UPDATE16(Z14)
	VFMADD231PS (DX), Z17, Z15
	VMOVUPS Z15, (DX)

done16:
	VZEROUPPER
	RET

// Dot-product kernel for C = alpha·A·Bᵀ + beta·C with both A and B read
// along their contiguous rows (no packing). Accumulator Z(4j+r) holds the
// 16 lane-wise partial sums of A[r]·B[j].
#define DOTLOADS \
	VMOVUPS (SI), Z16 \
	VMOVUPS (SI)(R8*1), Z17 \
	VMOVUPS (SI)(R8*2), Z18 \
	VMOVUPS (SI)(R9*1), Z19 \
	VMOVUPS (DI), Z20 \
	VMOVUPS (DI)(R10*1), Z21 \
	VMOVUPS (DI)(R10*2), Z22 \
	VMOVUPS (DI)(R11*1), Z23

#define DOTFMAS \
	VFMADD231PS Z16, Z20, Z0 \
	VFMADD231PS Z17, Z20, Z1 \
	VFMADD231PS Z18, Z20, Z2 \
	VFMADD231PS Z19, Z20, Z3 \
	VFMADD231PS Z16, Z21, Z4 \
	VFMADD231PS Z17, Z21, Z5 \
	VFMADD231PS Z18, Z21, Z6 \
	VFMADD231PS Z19, Z21, Z7 \
	VFMADD231PS Z16, Z22, Z8 \
	VFMADD231PS Z17, Z22, Z9 \
	VFMADD231PS Z18, Z22, Z10 \
	VFMADD231PS Z19, Z22, Z11 \
	VFMADD231PS Z16, Z23, Z12 \
	VFMADD231PS Z17, Z23, Z13 \
	VFMADD231PS Z18, Z23, Z14 \
	VFMADD231PS Z19, Z23, Z15

// Store (beta == 0) or update one row of 4 floats of the C tile from X24.
#define DOTSTORE(q) \
	VEXTRACTF32X4 $q, Z24, X25 \
	VMOVUPS X25, (DX) \
	ADDQ R12, DX

#define DOTUPDATE(q) \
	VEXTRACTF32X4 $q, Z24, X25 \
	VFMADD231PS (DX), X26, X25 \
	VMOVUPS X25, (DX) \
	ADDQ R12, DX

// func dot4x4AVX512(k int, a *float32, lda int, b *float32, ldb int, boffs, seg *int32, c *float32, ldc int, alpha, beta float32)
//
// C[r][j] = alpha·Σ_{l<k} A[r][l]·B[j][l] + beta·C[r][j] for r, j < 4; A and
// C row-major with strides lda, ldc (elements). B is row-major with stride
// ldb when seg is nil; otherwise B is indirect: B[j][16t+i] =
// b[boffs[j]+seg[t]+i] for i < 16 (k a multiple of 16), e.g. the columns of
// a convolution read from its padded input. Both ways run the same FMA
// sequence. C is not read when beta == 0.
TEXT ·dot4x4AVX512(SB), NOSPLIT, $0-80
	MOVQ k+0(FP), CX
	MOVQ a+8(FP), SI
	MOVQ lda+16(FP), R8
	SHLQ $2, R8
	LEAQ (R8)(R8*2), R9
	MOVQ b+24(FP), DI
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	VPXORD Z4, Z4, Z4
	VPXORD Z5, Z5, Z5
	VPXORD Z6, Z6, Z6
	VPXORD Z7, Z7, Z7
	VPXORD Z8, Z8, Z8
	VPXORD Z9, Z9, Z9
	VPXORD Z10, Z10, Z10
	VPXORD Z11, Z11, Z11
	VPXORD Z12, Z12, Z12
	VPXORD Z13, Z13, Z13
	VPXORD Z14, Z14, Z14
	VPXORD Z15, Z15, Z15
	MOVQ seg+48(FP), BX
	TESTQ BX, BX
	JNZ  dotindirect
	MOVQ ldb+32(FP), R10
	SHLQ $2, R10
	LEAQ (R10)(R10*2), R11
	MOVQ CX, AX
	SHRQ $4, AX
	JZ   dottail

dotloop:
	DOTLOADS
	DOTFMAS
	ADDQ $64, SI
	ADDQ $64, DI
	DECQ AX
	JNZ  dotloop

dottail:
	ANDQ $15, CX
	JZ   dotreduce
	MOVL $1, AX
	SHLL CX, AX
	DECL AX
	KMOVW AX, K1
	VMOVUPS.Z (SI), K1, Z16
	VMOVUPS.Z (SI)(R8*1), K1, Z17
	VMOVUPS.Z (SI)(R8*2), K1, Z18
	VMOVUPS.Z (SI)(R9*1), K1, Z19
	VMOVUPS.Z (DI), K1, Z20
	VMOVUPS.Z (DI)(R10*1), K1, Z21
	VMOVUPS.Z (DI)(R10*2), K1, Z22
	VMOVUPS.Z (DI)(R11*1), K1, Z23
	DOTFMAS
	JMP  dotreduce

	// Indirect B: R10-R13 hold the byte offsets of its 4 rows, BX walks
	// seg, AX is b + 4·seg[t].
dotindirect:
	MOVQ boffs+40(FP), AX
	MOVLQSX (AX), R10
	MOVLQSX 4(AX), R11
	MOVLQSX 8(AX), R12
	MOVLQSX 12(AX), R13
	SHLQ $2, R10
	SHLQ $2, R11
	SHLQ $2, R12
	SHLQ $2, R13
	SHRQ $4, CX
	JZ   dotreduce

dotiloop:
	MOVLQSX (BX), AX
	LEAQ (DI)(AX*4), AX
	VMOVUPS (SI), Z16
	VMOVUPS (SI)(R8*1), Z17
	VMOVUPS (SI)(R8*2), Z18
	VMOVUPS (SI)(R9*1), Z19
	VMOVUPS (AX)(R10*1), Z20
	VMOVUPS (AX)(R11*1), Z21
	VMOVUPS (AX)(R12*1), Z22
	VMOVUPS (AX)(R13*1), Z23
	DOTFMAS
	ADDQ $64, SI
	ADDQ $4, BX
	DECQ CX
	JNZ  dotiloop

dotreduce:
	MOVQ c+56(FP), DX
	MOVQ ldc+64(FP), R12
	SHLQ $2, R12
	// Step 1: pairs of accumulators, 16 lanes -> 8 partial sums each.
	VSHUFF32X4 $0x44, Z1, Z0, Z16
	VSHUFF32X4 $0xEE, Z1, Z0, Z17
	VADDPS Z17, Z16, Z0
	VSHUFF32X4 $0x44, Z3, Z2, Z16
	VSHUFF32X4 $0xEE, Z3, Z2, Z17
	VADDPS Z17, Z16, Z1
	VSHUFF32X4 $0x44, Z5, Z4, Z16
	VSHUFF32X4 $0xEE, Z5, Z4, Z17
	VADDPS Z17, Z16, Z2
	VSHUFF32X4 $0x44, Z7, Z6, Z16
	VSHUFF32X4 $0xEE, Z7, Z6, Z17
	VADDPS Z17, Z16, Z3
	VSHUFF32X4 $0x44, Z9, Z8, Z16
	VSHUFF32X4 $0xEE, Z9, Z8, Z17
	VADDPS Z17, Z16, Z4
	VSHUFF32X4 $0x44, Z11, Z10, Z16
	VSHUFF32X4 $0xEE, Z11, Z10, Z17
	VADDPS Z17, Z16, Z5
	VSHUFF32X4 $0x44, Z13, Z12, Z16
	VSHUFF32X4 $0xEE, Z13, Z12, Z17
	VADDPS Z17, Z16, Z6
	VSHUFF32X4 $0x44, Z15, Z14, Z16
	VSHUFF32X4 $0xEE, Z15, Z14, Z17
	VADDPS Z17, Z16, Z7
	// Step 2: 8 -> 4 partial sums; 128-bit lane q of Zp now holds
	// accumulator 4p+q.
	VSHUFF32X4 $0x88, Z1, Z0, Z16
	VSHUFF32X4 $0xDD, Z1, Z0, Z17
	VADDPS Z17, Z16, Z0
	VSHUFF32X4 $0x88, Z3, Z2, Z16
	VSHUFF32X4 $0xDD, Z3, Z2, Z17
	VADDPS Z17, Z16, Z1
	VSHUFF32X4 $0x88, Z5, Z4, Z16
	VSHUFF32X4 $0xDD, Z5, Z4, Z17
	VADDPS Z17, Z16, Z2
	VSHUFF32X4 $0x88, Z7, Z6, Z16
	VSHUFF32X4 $0xDD, Z7, Z6, Z17
	VADDPS Z17, Z16, Z3
	// Step 3: 4 -> 1 inside each 128-bit lane; lane 4q+p of Z24 is the sum
	// of accumulator 4p+q, that is C[q][p].
	VUNPCKLPS Z1, Z0, Z16
	VUNPCKHPS Z1, Z0, Z17
	VADDPS Z17, Z16, Z18
	VUNPCKLPS Z3, Z2, Z16
	VUNPCKHPS Z3, Z2, Z17
	VADDPS Z17, Z16, Z19
	VUNPCKLPD Z19, Z18, Z16
	VUNPCKHPD Z19, Z18, Z17
	VADDPS Z17, Z16, Z24
	VBROADCASTSS alpha+72(FP), Z16
	VMULPS Z16, Z24, Z24
	MOVL beta+76(FP), AX
	ANDL $0x7fffffff, AX
	JNZ  dotupdate
	DOTSTORE(0)
	DOTSTORE(1)
	DOTSTORE(2)
	DOTSTORE(3)
	VZEROUPPER
	RET

dotupdate:
	VBROADCASTSS beta+76(FP), X26
	DOTUPDATE(0)
	DOTUPDATE(1)
	DOTUPDATE(2)
	DOTUPDATE(3)
	VZEROUPPER
	RET

// One group of 16 columns of axpyRows64AVX512: Zc += (a·B row)[q], the
// product under mask k (zero outside it).
#define AXPYGROUP(off, k, zc) \
	VMULPS.Z off(BX), Z31, k, Z16 \
	VADDPS Z16, zc, zc

// func axpyRows64AVX512(m, k int, a *float32, lda int, b *float32, ldb int, c *float32, ldc int, masks *uint16, relu int)
//
// For r < m: C[r][0:64] += Σ_{l<k, A[r][l] != 0} A[r][l]·B[l][0:64] in order
// of l, a multiply and then an add per lane (gonum's serial kernel: an axpy
// of B's row l for every nonzero A[r][l]); with relu != 0 the values below
// zero then become +0 (−0 and NaN stay). masks[q] selects the columns of
// group q (16 columns each); the others are neither read nor written.
TEXT ·axpyRows64AVX512(SB), NOSPLIT, $0-80
	MOVQ masks+64(FP), AX
	KMOVW (AX), K1
	KMOVW 2(AX), K2
	KMOVW 4(AX), K3
	KMOVW 6(AX), K4
	MOVQ m+0(FP), CX
	MOVQ a+16(FP), R9
	MOVQ lda+24(FP), R10
	SHLQ $2, R10
	MOVQ ldb+40(FP), R11
	SHLQ $2, R11
	MOVQ c+48(FP), DX
	MOVQ ldc+56(FP), R12
	SHLQ $2, R12
	TESTQ CX, CX
	JZ   axdone

axrow:
	VMOVUPS.Z (DX), K1, Z0
	VMOVUPS.Z 64(DX), K2, Z1
	VMOVUPS.Z 128(DX), K3, Z2
	VMOVUPS.Z 192(DX), K4, Z3
	MOVQ R9, SI
	MOVQ b+32(FP), BX
	MOVQ k+8(FP), R8
	TESTQ R8, R8
	JZ   axstore

axl:
	MOVL (SI), AX
	ANDL $0x7fffffff, AX
	JZ   axskip
	VBROADCASTSS (SI), Z31
	AXPYGROUP(0, K1, Z0)
	AXPYGROUP(64, K2, Z1)
	AXPYGROUP(128, K3, Z2)
	AXPYGROUP(192, K4, Z3)

axskip:
	ADDQ $4, SI
	ADDQ R11, BX
	DECQ R8
	JNZ  axl

axstore:
	MOVQ relu+72(FP), AX
	TESTQ AX, AX
	JZ   axput
	VPXORD Z30, Z30, Z30
	VCMPPS $1, Z30, Z0, K5
	VMOVUPS Z30, K5, Z0
	VCMPPS $1, Z30, Z1, K5
	VMOVUPS Z30, K5, Z1
	VCMPPS $1, Z30, Z2, K5
	VMOVUPS Z30, K5, Z2
	VCMPPS $1, Z30, Z3, K5
	VMOVUPS Z30, K5, Z3

axput:
	VMOVUPS Z0, K1, (DX)
	VMOVUPS Z1, K2, 64(DX)
	VMOVUPS Z2, K3, 128(DX)
	VMOVUPS Z3, K4, 192(DX)
	ADDQ R10, R9
	ADDQ R12, DX
	DECQ CX
	JNZ  axrow

axdone:
	VZEROUPPER
	RET
