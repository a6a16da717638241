//go:build amd64 && !purego

#include "textflag.h"

// func dots16F64(d int, ri *float64, base *float32, offs *int32, out *float64, groups int)
//
// out[e] = Σ_{k<d} float64(base[offs[e]+k])·ri[k] for e < 16·groups, each
// sum in order of k from 0 (a multiply, then an add, in float64): 16 edges'
// dot products side by side, groups of 16 taken in turn at every chunk of
// coordinates so that one group's chain of adds overlaps the next group's
// loads and shuffles. The rows are read 16 coordinates at a time
// (one ZMM a row, the last chunk under a mask) and transposed in registers
// (32-bit and 64-bit unpacks, then two rounds of 128-bit lane shuffles), so
// that Z_k holds coordinate k of the 16 rows; the two float64 accumulators
// of a group (its edges 0–7 and 8–15) live in out between chunks.

// ROW(e, zr) loads this chunk's coordinates of row e of the group (offset
// e at R13) into zr, zeros past the chunk (mask K1).
#define ROW(e, zr) \
	MOVLQSX e*4(R13), R9; \
	VMOVUPS.Z (BX)(R9*4), K1, zr

// COL(k, Yk, Zk) adds coordinate k of the chunk (Zk: the 16 rows) times
// ri[k] to the group's sums, edges 0–7 in Z16 and 8–15 in Z17.
#define COL(k, Yk, Zk) \
	VBROADCASTSD k*8(SI), Z20; \
	VCVTPS2PD Yk, Z18; \
	VEXTRACTF32X8 $1, Zk, Y19; \
	VCVTPS2PD Y19, Z19; \
	VMULPD Z20, Z18, Z18; \
	VMULPD Z20, Z19, Z19; \
	VADDPD Z18, Z16, Z16; \
	VADDPD Z19, Z17, Z17

TEXT ·dots16F64(SB), NOSPLIT, $0-48
	MOVQ d+0(FP), CX
	MOVQ ri+8(FP), SI
	MOVQ base+16(FP), BX
	MOVQ offs+24(FP), DI
	MOVQ out+32(FP), DX
	MOVQ groups+40(FP), R10
	TESTQ R10, R10
	JZ   done
	VPXORQ Z16, Z16, Z16
	MOVQ DX, R12
	MOVQ R10, R11
zero:
	VMOVUPD Z16, (R12)
	VMOVUPD Z16, 64(R12)
	ADDQ $128, R12
	DECQ R11
	JNZ  zero
	TESTQ CX, CX
	JZ   done

chunk:
	// R8 = coordinates in this chunk (16, or the rest); K1 = their mask.
	MOVQ CX, R8
	CMPQ R8, $16
	JLE  maskset
	MOVQ $16, R8
maskset:
	MOVL $1, AX
	SHLXL R8, AX, AX
	DECL AX
	KMOVW AX, K1
	MOVQ DI, R13   // this group's offsets
	MOVQ DX, R12   // this group's sums
	MOVQ R10, R11  // groups left in this chunk

group:
	ROW(0, Z0)
	ROW(1, Z1)
	ROW(2, Z2)
	ROW(3, Z3)
	ROW(4, Z4)
	ROW(5, Z5)
	ROW(6, Z6)
	ROW(7, Z7)
	ROW(8, Z8)
	ROW(9, Z9)
	ROW(10, Z10)
	ROW(11, Z11)
	ROW(12, Z12)
	ROW(13, Z13)
	ROW(14, Z14)
	ROW(15, Z15)
	// 32-bit unpacks of row pairs.
	VUNPCKLPS Z1, Z0, Z16
	VUNPCKHPS Z1, Z0, Z17
	VUNPCKLPS Z3, Z2, Z18
	VUNPCKHPS Z3, Z2, Z19
	VUNPCKLPS Z5, Z4, Z20
	VUNPCKHPS Z5, Z4, Z21
	VUNPCKLPS Z7, Z6, Z22
	VUNPCKHPS Z7, Z6, Z23
	VUNPCKLPS Z9, Z8, Z24
	VUNPCKHPS Z9, Z8, Z25
	VUNPCKLPS Z11, Z10, Z26
	VUNPCKHPS Z11, Z10, Z27
	VUNPCKLPS Z13, Z12, Z28
	VUNPCKHPS Z13, Z12, Z29
	VUNPCKLPS Z15, Z14, Z30
	VUNPCKHPS Z15, Z14, Z31
	// 64-bit unpacks: Z(4b+c) lane L = coordinate 4L+c of rows 4b..4b+3.
	VUNPCKLPD Z18, Z16, Z0
	VUNPCKHPD Z18, Z16, Z1
	VUNPCKLPD Z19, Z17, Z2
	VUNPCKHPD Z19, Z17, Z3
	VUNPCKLPD Z22, Z20, Z4
	VUNPCKHPD Z22, Z20, Z5
	VUNPCKLPD Z23, Z21, Z6
	VUNPCKHPD Z23, Z21, Z7
	VUNPCKLPD Z26, Z24, Z8
	VUNPCKHPD Z26, Z24, Z9
	VUNPCKLPD Z27, Z25, Z10
	VUNPCKHPD Z27, Z25, Z11
	VUNPCKLPD Z30, Z28, Z12
	VUNPCKHPD Z30, Z28, Z13
	VUNPCKLPD Z31, Z29, Z14
	VUNPCKHPD Z31, Z29, Z15
	// 128-bit lane shuffles, twice: Z_k = coordinate k of the 16 rows.
	VSHUFF32X4 $0x88, Z4, Z0, Z16
	VSHUFF32X4 $0xDD, Z4, Z0, Z20
	VSHUFF32X4 $0x88, Z12, Z8, Z24
	VSHUFF32X4 $0xDD, Z12, Z8, Z28
	VSHUFF32X4 $0x88, Z5, Z1, Z17
	VSHUFF32X4 $0xDD, Z5, Z1, Z21
	VSHUFF32X4 $0x88, Z13, Z9, Z25
	VSHUFF32X4 $0xDD, Z13, Z9, Z29
	VSHUFF32X4 $0x88, Z6, Z2, Z18
	VSHUFF32X4 $0xDD, Z6, Z2, Z22
	VSHUFF32X4 $0x88, Z14, Z10, Z26
	VSHUFF32X4 $0xDD, Z14, Z10, Z30
	VSHUFF32X4 $0x88, Z7, Z3, Z19
	VSHUFF32X4 $0xDD, Z7, Z3, Z23
	VSHUFF32X4 $0x88, Z15, Z11, Z27
	VSHUFF32X4 $0xDD, Z15, Z11, Z31
	VSHUFF32X4 $0x88, Z24, Z16, Z0
	VSHUFF32X4 $0xDD, Z24, Z16, Z8
	VSHUFF32X4 $0x88, Z28, Z20, Z4
	VSHUFF32X4 $0xDD, Z28, Z20, Z12
	VSHUFF32X4 $0x88, Z25, Z17, Z1
	VSHUFF32X4 $0xDD, Z25, Z17, Z9
	VSHUFF32X4 $0x88, Z29, Z21, Z5
	VSHUFF32X4 $0xDD, Z29, Z21, Z13
	VSHUFF32X4 $0x88, Z26, Z18, Z2
	VSHUFF32X4 $0xDD, Z26, Z18, Z10
	VSHUFF32X4 $0x88, Z30, Z22, Z6
	VSHUFF32X4 $0xDD, Z30, Z22, Z14
	VSHUFF32X4 $0x88, Z27, Z19, Z3
	VSHUFF32X4 $0xDD, Z27, Z19, Z11
	VSHUFF32X4 $0x88, Z31, Z23, Z7
	VSHUFF32X4 $0xDD, Z31, Z23, Z15
	VMOVUPD (R12), Z16
	VMOVUPD 64(R12), Z17
	CMPQ R8, $16
	JLT  partial
	COL(0, Y0, Z0)
	COL(1, Y1, Z1)
	COL(2, Y2, Z2)
	COL(3, Y3, Z3)
	COL(4, Y4, Z4)
	COL(5, Y5, Z5)
	COL(6, Y6, Z6)
	COL(7, Y7, Z7)
	COL(8, Y8, Z8)
	COL(9, Y9, Z9)
	COL(10, Y10, Z10)
	COL(11, Y11, Z11)
	COL(12, Y12, Z12)
	COL(13, Y13, Z13)
	COL(14, Y14, Z14)
	COL(15, Y15, Z15)
	JMP  next

partial:
	COL(0, Y0, Z0)
	CMPQ R8, $1
	JLE  next
	COL(1, Y1, Z1)
	CMPQ R8, $2
	JLE  next
	COL(2, Y2, Z2)
	CMPQ R8, $3
	JLE  next
	COL(3, Y3, Z3)
	CMPQ R8, $4
	JLE  next
	COL(4, Y4, Z4)
	CMPQ R8, $5
	JLE  next
	COL(5, Y5, Z5)
	CMPQ R8, $6
	JLE  next
	COL(6, Y6, Z6)
	CMPQ R8, $7
	JLE  next
	COL(7, Y7, Z7)
	CMPQ R8, $8
	JLE  next
	COL(8, Y8, Z8)
	CMPQ R8, $9
	JLE  next
	COL(9, Y9, Z9)
	CMPQ R8, $10
	JLE  next
	COL(10, Y10, Z10)
	CMPQ R8, $11
	JLE  next
	COL(11, Y11, Z11)
	CMPQ R8, $12
	JLE  next
	COL(12, Y12, Z12)
	CMPQ R8, $13
	JLE  next
	COL(13, Y13, Z13)
	CMPQ R8, $14
	JLE  next
	COL(14, Y14, Z14)
	CMPQ R8, $15
	JLE  next
	COL(15, Y15, Z15)

next:
	VMOVUPD Z16, (R12)
	VMOVUPD Z17, 64(R12)
	ADDQ $64, R13
	ADDQ $128, R12
	DECQ R11
	JNZ  group
	ADDQ $64, BX
	ADDQ $128, SI
	SUBQ R8, CX
	JNZ  chunk

done:
	VZEROUPPER
	RET
